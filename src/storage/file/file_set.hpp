#pragma once
// The files of a file device set, opened: an O_DIRECT descriptor where the file system takes
// it, a buffered one always (tail blocks, unaligned memory), sizes checked against the stripe.

#include <cstdint>
#include <string>
#include <vector>

namespace bam::file_io {

struct file_device {
  std::string path;
  int direct_fd = -1;    ///< O_DIRECT, or -1 where the file system refuses it
  int buffered_fd = -1;  ///< always open
  std::uint64_t bytes = 0;
  std::uint64_t capacity_blocks = 0;  ///< blocks holding any of the file's bytes

  [[nodiscard]] int fd() const { return direct_fd >= 0 ? direct_fd : buffered_fd; }
};

struct open_options {
  bool writable = false;
  bool direct = true;
  std::uint32_t block_bytes = 512;
  std::uint64_t stripe_bytes = 64 * 1024;
};

/// Owner of the descriptors.
class file_set {
 public:
  /// Opens `paths` (throws bam::input_error naming the file and the reason); `notices` gets a
  /// line per file that could not be opened with O_DIRECT.
  file_set(const std::vector<std::string>& paths, const open_options& options,
           std::vector<std::string>& notices);
  ~file_set();
  file_set(const file_set&) = delete;
  file_set& operator=(const file_set&) = delete;

  [[nodiscard]] const std::vector<file_device>& devices() const { return devices_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  [[nodiscard]] bool all_direct() const;

 private:
  std::vector<file_device> devices_;
  std::uint64_t bytes_ = 0;
};

}  // namespace bam::file_io
