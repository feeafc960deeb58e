#pragma once
/// @file
/// Output files checked before a command does its work: a run that computes for minutes must
/// not fail only when it writes its result to a folder that does not exist.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace bam::tools {

/// How a command writes one output.
struct output_rules {
  bool standard_output = false;     ///< "-" means standard output
  bool makes_folders = false;       ///< missing folders are created (--json)
  bool renamed_into_place = false;  ///< written to a temporary file, then renamed over the path
                                    ///< (an existing file need not be writable, its folder must)
};

/// Why `path` cannot be written as an output under `rules`, or an empty string when it can:
/// an empty path, a folder, a missing or unwritable parent folder (or, with makes_folders, an
/// unwritable nearest existing ancestor), an existing file that cannot be opened for writing.
[[nodiscard]] std::string output_path_problem(const std::string& path, const output_rules& rules);

/// True when `a` and `b` name the same file: the same inode when both exist
/// (std::filesystem::equivalent, so links and other spellings count), else the same path
/// after normalizing.
[[nodiscard]] bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

/// A command's file option and its value.
struct named_path {
  std::string_view option;  ///< "--graph", "--depths-out", ...
  std::filesystem::path path;
};

/// Throws bam::input_error when an output is the same file as an input or as another output
/// (empty paths and "-", standard output, are skipped).
void refuse_overlaps(std::span<const named_path> inputs, std::span<const named_path> outputs);

/// Throws bam::input_error when `output` is the same file as `input`:
/// "<output_option> 'x' is the same file as <input_option> 'y': ...".
void refuse_same_file(const std::filesystem::path& input, std::string_view input_option,
                      const std::filesystem::path& output, std::string_view output_option);

}  // namespace bam::tools
