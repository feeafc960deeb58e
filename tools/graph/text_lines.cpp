#include "graph/text_lines.hpp"

#include <charconv>
#include <cmath>

#include <bam/error.hpp>

namespace bam::graph {

bool text_lines::next(std::string_view& line) {
  if (rest_.empty()) return false;
  const std::size_t end = rest_.find('\n');
  line = rest_.substr(0, end);
  rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++number_;
  return true;
}

void text_lines::fail(const std::string& what) const {
  // An empty file has no line 1, but "file:1" still points the reader at its start.
  throw input_error(name_ + ":" + std::to_string(number_ == 0 ? 1 : number_) + ": " + what);
}

std::size_t split_fields(std::string_view line, std::span<std::string_view> fields) {
  std::size_t count = 0;
  std::size_t at = 0;
  while (true) {
    at = line.find_first_not_of(" \t", at);
    if (at == std::string_view::npos) break;
    std::size_t end = line.find_first_of(" \t", at);
    if (end == std::string_view::npos) end = line.size();
    if (count < fields.size()) fields[count] = line.substr(at, end - at);
    ++count;
    at = end;
  }
  return count;
}

bool is_blank_or_comment(std::string_view line, std::string_view comment_marks) {
  const std::size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos ||
         comment_marks.find(line[first]) != std::string_view::npos;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view field) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc{} || end != field.data() + field.size() || field.empty()) return {};
  return value;
}

std::optional<std::int64_t> parse_signed(std::string_view field) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc{} || end != field.data() + field.size() || field.empty()) return {};
  return value;
}

std::optional<float> parse_float(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);  // from_chars refuses '+'
  float value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc{} || end != field.data() + field.size() || field.empty()) return {};
  if (!std::isfinite(value)) return {};
  return value;
}

std::string quoted(std::string_view field) {
  constexpr std::size_t shown = 40;
  std::string text = "'";
  text += field.substr(0, shown);
  text += field.size() > shown ? "...'" : "'";
  return text;
}

}  // namespace bam::graph
