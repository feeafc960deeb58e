#pragma once
/// @file
/// A small JSON writer for benchmark and command results: objects, arrays, numbers, strings.
///
///     json_writer j;
///     j.begin_object().key("protocol").value("ticket").key("commands_per_s").value(4.5e7);
///     j.end_object();
///     j.save(path);   // throws bam::error if the file cannot be written

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bam::tools {

class json_writer {
 public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view name);
  json_writer& value(std::string_view text);
  json_writer& value(const char* text) { return value(std::string_view(text)); }
  json_writer& value(const std::string& text) { return value(std::string_view(text)); }
  json_writer& value(double number);
  json_writer& value(std::int64_t number);
  json_writer& value(std::uint64_t number);
  json_writer& value(int number) { return value(static_cast<std::int64_t>(number)); }
  json_writer& value(unsigned number) { return value(static_cast<std::uint64_t>(number)); }
  json_writer& value(bool flag);
  json_writer& null();

  /// Shorthand for key(name).value(v).
  template <class T>
  json_writer& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  [[nodiscard]] const std::string& str() const { return out_; }
  /// Writes the document (with a trailing newline) to `path`, creating parent folders.
  void save(const std::string& path) const;

 private:
  void before_value();
  void write_string(std::string_view text);
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace bam::tools
