#include "apps/outputs.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <bam/error.hpp>

namespace bam::apps {

namespace {

// Buffered line output to a file or standard output; throws bam::error on a failed write.
class line_writer {
 public:
  explicit line_writer(const std::string& path) : path_(path) {
    if (path == "-") {
      file_ = stdout;
    } else {
      file_ = std::fopen(path.c_str(), "w");
      if (!file_) {
        throw input_error("cannot write '" + path + "': " + std::strerror(errno));
      }
    }
    buffer_.reserve(capacity);
  }
  ~line_writer() {
    if (file_ && file_ != stdout) std::fclose(file_);
  }
  line_writer(const line_writer&) = delete;
  line_writer& operator=(const line_writer&) = delete;

  template <class T>
  void line(T value) {
    char text[32];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
    (void)ec;  // 32 characters hold any 64-bit integer
    buffer_.append(text, end);
    buffer_.push_back('\n');
    if (buffer_.size() >= capacity) flush_buffer();
  }
  void line(double value) {
    char text[40];
    const int length = std::snprintf(text, sizeof text, "%.17g\n", value);
    buffer_.append(text, static_cast<std::size_t>(length));
    if (buffer_.size() >= capacity) flush_buffer();
  }

  void close() {
    flush_buffer();
    const bool failed = std::fflush(file_) != 0 || std::ferror(file_);
    if (file_ != stdout) {
      const bool close_failed = std::fclose(file_) != 0;
      file_ = nullptr;
      if (close_failed || failed) throw error("writing '" + path_ + "' failed");
    } else if (failed) {
      throw error("writing standard output failed");
    }
  }

 private:
  static constexpr std::size_t capacity = 1 << 20;
  void flush_buffer() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      throw error("writing '" + path_ + "' failed: " + std::strerror(errno));
    }
    buffer_.clear();
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
};

template <class T>
void write_lines(const std::string& path, std::span<const T> values) {
  line_writer out(path);
  for (const T& v : values) out.line(v);
  out.close();
}

}  // namespace

void write_depths(const std::string& path, std::span<const std::int32_t> depths) {
  write_lines(path, depths);
}

void write_labels(const std::string& path, std::span<const std::uint64_t> labels) {
  write_lines(path, labels);
}

void write_ranks(const std::string& path, std::span<const double> ranks) {
  write_lines(path, ranks);
}

}  // namespace bam::apps
