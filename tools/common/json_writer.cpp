#include "common/json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <bam/error.hpp>

namespace bam::tools {

void json_writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

json_writer& json_writer::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  first_.pop_back();
  out_ += '}';
  return *this;
}

json_writer& json_writer::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  first_.pop_back();
  out_ += ']';
  return *this;
}

json_writer& json_writer::key(std::string_view name) {
  before_value();
  write_string(name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view text) {
  before_value();
  write_string(text);
  return *this;
}

void json_writer::write_string(std::string_view text) {
  out_ += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out_ += buffer;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

json_writer& json_writer::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ += "null";
    return *this;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", number);
  out_ += buffer;
  return *this;
}

json_writer& json_writer::value(std::int64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

json_writer& json_writer::value(std::uint64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

json_writer& json_writer::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

json_writer& json_writer::null() {
  before_value();
  out_ += "null";
  return *this;
}

void json_writer::save(const std::string& path) const {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
  }
  std::ofstream file(p);
  file << out_ << '\n';
  file.flush();
  if (!file) throw error("cannot write JSON to '" + path + "'");
}

}  // namespace bam::tools
