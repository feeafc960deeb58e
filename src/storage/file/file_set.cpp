#include "storage/file/file_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <bam/error.hpp>
#include <bam/storage/file_storage.hpp>

namespace bam {

std::vector<std::uint64_t> striped_file_bytes(std::uint64_t total, std::uint32_t files,
                                              std::uint64_t stripe_bytes) {
  std::vector<std::uint64_t> out(files, 0);
  if (files == 0) return out;
  if (files == 1) {
    out[0] = total;
    return out;
  }
  const std::uint64_t stripes = total / stripe_bytes;
  const std::uint64_t rest = total % stripe_bytes;
  for (std::uint32_t i = 0; i < files; ++i) {
    out[i] = (stripes / files + (i < stripes % files ? 1 : 0)) * stripe_bytes;
  }
  out[stripes % files] += rest;  // the partial stripe follows the last whole one
  return out;
}

}  // namespace bam

namespace bam::file_io {

namespace {

std::string why(const std::string& path, const char* what) {
  return "'" + path + "': " + what + ": " + std::strerror(errno);
}

// Whether an O_DIRECT read of the first block works (some file systems accept the flag at
// open and refuse the read).
bool direct_reads_work(int fd, std::uint32_t block_bytes) {
  void* buffer = nullptr;
  if (::posix_memalign(&buffer, 4096, block_bytes) != 0) return false;
  const ssize_t n = ::pread(fd, buffer, block_bytes, 0);
  std::free(buffer);
  return n >= 0;
}

}  // namespace

file_set::file_set(const std::vector<std::string>& paths, const open_options& o,
                   std::vector<std::string>& notices) {
  if (paths.empty()) throw input_error("the file backend needs at least one file");
  const int access = o.writable ? O_RDWR : O_RDONLY;
  for (const std::string& path : paths) {
    file_device d;
    d.path = path;
    d.buffered_fd = ::open(path.c_str(), access | O_CLOEXEC);
    if (d.buffered_fd < 0) {
      const std::string what =
          why(path, o.writable ? "cannot open for reading and writing" : "cannot open for reading");
      devices_.push_back(d);  // closed by the destructor
      throw input_error(what);
    }
    struct stat st {};
    if (::fstat(d.buffered_fd, &st) != 0) {
      devices_.push_back(d);
      throw input_error(why(path, "fstat"));
    }
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
      devices_.push_back(d);
      throw input_error("'" + path + "' is not a regular file or block device");
    }
    d.bytes = static_cast<std::uint64_t>(st.st_size);
    if (S_ISBLK(st.st_mode)) {
      const off_t end = ::lseek(d.buffered_fd, 0, SEEK_END);
      d.bytes = end > 0 ? static_cast<std::uint64_t>(end) : 0;
    }
    d.capacity_blocks = (d.bytes + o.block_bytes - 1) / o.block_bytes;
    if (o.direct) {
      d.direct_fd = ::open(path.c_str(), access | O_CLOEXEC | O_DIRECT);
      if (d.direct_fd < 0) {
        notices.push_back("'" + path + "': no O_DIRECT on its file system (" +
                          std::strerror(errno) + "): its I/O goes through the page cache");
      } else if (d.bytes >= o.block_bytes && !direct_reads_work(d.direct_fd, o.block_bytes)) {
        notices.push_back("'" + path + "': O_DIRECT reads refused (" + std::strerror(errno) +
                          "): its I/O goes through the page cache");
        ::close(d.direct_fd);
        d.direct_fd = -1;
      }
    }
    bytes_ += d.bytes;
    devices_.push_back(d);
  }
  if (devices_.size() > 1) {
    const auto expected =
        striped_file_bytes(bytes_, static_cast<std::uint32_t>(devices_.size()), o.stripe_bytes);
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (expected[i] != devices_[i].bytes) {
        throw input_error(
            "the files do not form a striped set of " + std::to_string(devices_.size()) +
            " files in " + std::to_string(o.stripe_bytes) + "-byte stripes: '" + devices_[i].path +
            "' holds " + std::to_string(devices_[i].bytes) + " bytes, where a set of " +
            std::to_string(bytes_) + " bytes gives it " + std::to_string(expected[i]) +
            " (write such a set with bam copy --out A,B,...)");
      }
    }
  }
}

file_set::~file_set() {
  for (const file_device& d : devices_) {
    if (d.direct_fd >= 0) ::close(d.direct_fd);
    if (d.buffered_fd >= 0) ::close(d.buffered_fd);
  }
}

bool file_set::all_direct() const {
  for (const file_device& d : devices_) {
    if (d.direct_fd < 0) return false;
  }
  return true;
}

}  // namespace bam::file_io
