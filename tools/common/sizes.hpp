#pragma once
/// @file
/// Byte sizes on the command line: "4096", "64K", "8G", "1.5M" (binary units: K = 1024).

#include <cstdint>
#include <string>
#include <string_view>

namespace bam::tools {

/// Parses a size; throws bam::input_error naming `what` on a malformed or overflowing value.
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

/// Formats bytes with a binary unit ("4 KiB", "1.5 GiB").
std::string format_bytes(double bytes);

/// Formats a rate with a decimal unit ("45.8 M", "823 K").
std::string format_count(double value);

}  // namespace bam::tools
