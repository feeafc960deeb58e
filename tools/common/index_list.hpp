#pragma once
/// @file
/// Index lists (`bam gather --indices`): one decimal index per line; blank lines and lines
/// starting with '#' are skipped; spaces, tabs and a '\r' around an index are ignored.

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace bam::tools {

/// Reads every index of `in`; `shown` names the input in messages ("'idx.txt'", "standard
/// input"). Throws bam::input_error naming the input, the line and the text that is not a
/// non-negative integer below 2^64.
[[nodiscard]] std::vector<std::uint64_t> parse_index_list(std::istream& in, std::string_view shown);

/// The same over text in memory.
[[nodiscard]] std::vector<std::uint64_t> parse_index_list(std::string_view text,
                                                          std::string_view shown);

/// Reads the index file at `path` ("-": standard input). Throws bam::input_error when it
/// cannot be opened or holds a bad line.
[[nodiscard]] std::vector<std::uint64_t> read_index_list(const std::string& path);

}  // namespace bam::tools
