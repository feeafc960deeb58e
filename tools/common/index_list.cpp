#include "common/index_list.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iostream>

#include <bam/error.hpp>

namespace bam::tools {

namespace {

// Parses one line; returns false for a line that holds no index (blank or comment).
bool parse_line(std::string_view line, std::uint64_t number, std::string_view shown,
                std::uint64_t& value) {
  const std::size_t a = line.find_first_not_of(" \t\r");
  if (a == std::string_view::npos || line[a] == '#') return false;
  const std::size_t b = line.find_last_not_of(" \t\r") + 1;
  const auto [end, ec] = std::from_chars(line.data() + a, line.data() + b, value);
  if (ec != std::errc{} || end != line.data() + b) {
    constexpr std::size_t shown_chars = 40;
    std::string text(line.substr(a, std::min(b - a, shown_chars)));
    if (b - a > shown_chars) text += "...";
    throw input_error("index file " + std::string(shown) + " line " + std::to_string(number) +
                      ": '" + text + "' is not a non-negative integer below 2^64");
  }
  return true;
}

}  // namespace

std::vector<std::uint64_t> parse_index_list(std::string_view text, std::string_view shown) {
  std::vector<std::uint64_t> out;
  std::uint64_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::uint64_t value = 0;
    if (parse_line(line, ++number, shown, value)) out.push_back(value);
  }
  return out;
}

std::vector<std::uint64_t> parse_index_list(std::istream& in, std::string_view shown) {
  std::vector<std::uint64_t> out;
  std::string line;
  for (std::uint64_t number = 1; std::getline(in, line); ++number) {
    std::uint64_t value = 0;
    if (parse_line(line, number, shown, value)) out.push_back(value);
  }
  if (in.bad()) throw input_error("cannot read index file " + std::string(shown));
  return out;
}

std::vector<std::uint64_t> read_index_list(const std::string& path) {
  if (path == "-") return parse_index_list(std::cin, "standard input");
  std::ifstream file(path);
  if (!file) throw input_error("cannot open index file '" + path + "'");
  return parse_index_list(file, "'" + path + "'");
}

}  // namespace bam::tools
