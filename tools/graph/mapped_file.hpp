#pragma once
/// @file
/// A whole file mapped read-only: the readers parse text and binary graphs in place, so files
/// larger than memory are paged in as they are scanned.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

namespace bam::graph {

class mapped_file {
 public:
  /// Maps `path`. Throws bam::input_error when it cannot be opened or is not a regular file.
  explicit mapped_file(const std::filesystem::path& path);
  ~mapped_file();
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  /// The path as given, for messages.
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] const std::byte* data() const { return data_; }
  [[nodiscard]] std::string_view text() const {
    return {reinterpret_cast<const char*>(data_), static_cast<std::size_t>(size_)};
  }

  /// The T stored at `offset` (the caller checks the bounds; little-endian host).
  template <class T>
  [[nodiscard]] T load(std::uint64_t offset) const {
    T value;
    std::memcpy(&value, data_ + offset, sizeof value);
    return value;
  }

  /// Tells the kernel the file will be read front to back (more read-ahead).
  void advise_sequential() const;

 private:
  std::string name_;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace bam::graph
