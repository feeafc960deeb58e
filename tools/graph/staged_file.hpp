#pragma once
/// @file
/// Output files that appear only when complete: written under a temporary name in the
/// destination's folder, renamed into place by commit(), removed otherwise. The temporary
/// file is also removed when the process dies of SIGINT, SIGTERM or SIGHUP (a half-written
/// scale-26 graph is 17 GB).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bam::graph {

class staged_file {
 public:
  /// Creates the temporary file. Throws bam::input_error when the destination is a folder or
  /// its folder cannot be written.
  explicit staged_file(std::filesystem::path destination);
  /// Removes the temporary file unless commit() ran. Never throws.
  ~staged_file();
  staged_file(const staged_file&) = delete;
  staged_file& operator=(const staged_file&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::filesystem::path& destination() const { return destination_; }
  [[nodiscard]] const std::filesystem::path& temporary() const { return temporary_; }

  /// Sets the length to `bytes` with the disk space reserved, so a full disk fails here with
  /// a message rather than later as SIGBUS on a mapped store. Throws bam::error.
  void reserve(std::uint64_t bytes);
  /// Sets the length to `bytes` (shrinking gives space back). Throws bam::error.
  void truncate(std::uint64_t bytes);
  /// Closes the file and renames it to the destination (no fsync: see staged_file.cpp).
  void commit();

 private:
  [[noreturn]] void fail(std::string_view what) const;

  std::filesystem::path destination_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  int cleanup_slot_ = -1;
  bool committed_ = false;
};

/// Buffered sequential writes to a staged file (text and EMOGI binary exports).
class file_writer {
 public:
  explicit file_writer(staged_file& file) : file_(file) { buffer_.reserve(buffer_bytes); }
  void write(std::string_view bytes);
  void write_raw(const void* data, std::size_t bytes) {
    write(std::string_view(static_cast<const char*>(data), bytes));
  }
  void write_u64(std::uint64_t value) { write_raw(&value, sizeof value); }
  /// Writes what is buffered; call before staged_file::commit().
  void flush();

 private:
  static constexpr std::size_t buffer_bytes = std::size_t{1} << 20;
  staged_file& file_;
  std::string buffer_;
};

}  // namespace bam::graph
