#pragma once
/// @file
/// Reading a text graph line by line with line numbers, so every parse error can say
/// "file:line: what is wrong".

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "graph/mapped_file.hpp"

namespace bam::graph {

class text_lines {
 public:
  explicit text_lines(const mapped_file& file) : name_(file.name()), rest_(file.text()) {
    file.advise_sequential();
  }

  /// The next line without its end ("\n" or "\r\n"); false at the end of the file.
  bool next(std::string_view& line);
  /// 1-based number of the line next() returned last (0 before the first).
  [[nodiscard]] std::uint64_t number() const { return number_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  /// Throws bam::input_error "name:line: what".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string name_;
  std::string_view rest_;
  std::uint64_t number_ = 0;
};

/// Splits `line` on spaces and tabs into `fields`; returns how many fields the line has (which
/// may exceed fields.size(): the extra ones are counted, not stored).
std::size_t split_fields(std::string_view line, std::span<std::string_view> fields);

/// True for blank lines and comment lines (first non-blank character in `comment_marks`).
bool is_blank_or_comment(std::string_view line, std::string_view comment_marks);

/// The whole field as a number, or nothing ("12x", "-3" and "" give nothing).
std::optional<std::uint64_t> parse_unsigned(std::string_view field);
std::optional<std::int64_t> parse_signed(std::string_view field);
std::optional<float> parse_float(std::string_view field);

/// Shows a field in a message, shortened if long.
std::string quoted(std::string_view field);

}  // namespace bam::graph
