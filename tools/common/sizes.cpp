#include "common/sizes.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include <bam/error.hpp>

namespace bam::tools {

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  const std::string shown(text);
  auto bad = [&](const char* why) {
    return input_error(std::string(what) + " '" + shown + "': " + why +
                       " (expected a byte count like 4096, 64K, 8G)");
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.empty()) throw bad("empty");
  std::size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) throw bad("no number");
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc{} || end != text.data() + digits) throw bad("not a number");
  std::string_view unit = text.substr(digits);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.remove_suffix(1);
  if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.remove_suffix(1);
  double scale = 1;
  if (unit.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K':
        scale = 0x1p10;
        break;
      case 'M':
        scale = 0x1p20;
        break;
      case 'G':
        scale = 0x1p30;
        break;
      case 'T':
        scale = 0x1p40;
        break;
      default:
        throw bad("unknown unit");
    }
  } else if (!unit.empty()) {
    throw bad("unknown unit");
  }
  const double bytes = value * scale;
  if (bytes >= 0x1p64) throw bad("too large");
  if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(double bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buffer[32];
  // %.3g would print 1.02e+03 for values between 1000 and 1024 of a unit.
  std::snprintf(buffer, sizeof buffer, u == 0 || bytes >= 1000 ? "%.0f %s" : "%.3g %s", bytes,
                units[u]);
  return buffer;
}

std::string format_count(double value) {
  static constexpr const char* units[] = {"", " K", " M", " G", " T"};
  int u = 0;
  while (std::fabs(value) >= 1000 && u < 4) {
    value /= 1000;
    ++u;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g%s", value, units[u]);
  return buffer;
}

}  // namespace bam::tools
