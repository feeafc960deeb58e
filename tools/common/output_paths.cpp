#include "common/output_paths.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <bam/error.hpp>

namespace bam::tools {

namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& path) {
  std::string text = "'";
  text += path.string();
  text += '\'';
  return text;
}

// The folder a new file at `path` goes into ("." for a bare name).
fs::path folder_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string folder_problem(const fs::path& folder) {
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) return "folder " + quoted(folder) + " does not exist";
  if (!fs::is_directory(status)) return quoted(folder) + " is not a folder";
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    return "folder " + quoted(folder) + " is not writable (" + std::strerror(errno) + ")";
  }
  return {};
}

}  // namespace

std::string output_path_problem(const std::string& path, const output_rules& rules) {
  if (path.empty()) return "empty file name";
  if (path == "-" && rules.standard_output) return {};
  const fs::path p(path);
  std::error_code ec;
  const fs::file_status status = fs::status(p, ec);
  if (fs::is_directory(status)) return quoted(p) + " is a folder, not a file";
  if (path.back() == '/') return quoted(p) + " names a folder, not a file";
  if (fs::exists(status)) {
    if (!rules.renamed_into_place) {
      // The writer opens the path itself (a file, or /dev/null and the like).
      if (::access(p.c_str(), W_OK) != 0) {
        return quoted(p) + " is not writable (" + std::strerror(errno) + ")";
      }
      return {};
    }
    // A new file is renamed over it: only the folder must be writable.
    if (!fs::is_regular_file(status)) {
      return quoted(p) + " is not a regular file (the output would replace it)";
    }
  }
  fs::path folder = folder_of(p);
  if (rules.makes_folders) {
    // The nearest folder that exists must let the missing ones be made.
    while (!fs::exists(folder, ec)) {
      const fs::path up = folder.parent_path();
      if (up.empty() || up == folder) {
        folder = up.empty() ? fs::path(".") : up;
        break;
      }
      folder = up;
    }
  }
  if (std::string why = folder_problem(folder); !why.empty()) return why;
  return {};
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    return !ec && same;
  }
  const fs::path left = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path right = fs::weakly_canonical(b, ec);
  return !ec && left == right;
}

void refuse_same_file(const fs::path& input, std::string_view input_option, const fs::path& output,
                      std::string_view output_option) {
  if (!same_file(input, output)) return;
  throw input_error(std::string(output_option) + " " + quoted(output) + " is the same file as " +
                    std::string(input_option) + " " + quoted(input) +
                    ": writing it would destroy the input; choose another output");
}

void refuse_overlaps(std::span<const named_path> inputs, std::span<const named_path> outputs) {
  auto skipped = [](const named_path& p) { return p.path.empty() || p.path == "-"; };
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    if (skipped(outputs[o])) continue;
    for (const named_path& in : inputs) {
      if (!skipped(in)) refuse_same_file(in.path, in.option, outputs[o].path, outputs[o].option);
    }
    for (std::size_t earlier = 0; earlier < o; ++earlier) {
      const named_path& other = outputs[earlier];
      if (skipped(other) || !same_file(other.path, outputs[o].path)) continue;
      throw input_error(std::string(outputs[o].option) + " " + quoted(outputs[o].path) +
                        " is the same file as " + std::string(other.option) + " " +
                        quoted(other.path) + ": one would overwrite the other");
    }
  }
}

}  // namespace bam::tools
