#pragma once
/// @file
/// The bytes behind an emulated device set: an image of the set's address space in memory,
/// optionally loaded from a file, with dirty chunks written back to the file on FLUSH.

#include <cstdint>
#include <memory>
#include <string>

namespace bam {

/// Where an image lives. `host` is ordinary memory; `pinned` (page-locked, mapped into the
/// GPU) and `device` (GPU memory) need a CUDA build and are allocated by the runtime.
enum class memory_kind { host, pinned, device };

/// Owner of a backing image. Thread safety: flush() may run while a controller writes other
/// chunks (dirty bits are taken atomically); everything else is set-up.
class backing_store {
 public:
  /// A zero-filled image of `bytes`.
  static std::shared_ptr<backing_store> in_memory(std::uint64_t bytes,
                                                  memory_kind kind = memory_kind::host);

  /// An image loaded from `path`. When `writable`, FLUSH writes dirty chunks back with
  /// pwrite + fsync. Throws bam::input_error if the file cannot be read.
  static std::shared_ptr<backing_store> from_file(const std::string& path, bool writable,
                                                  memory_kind kind = memory_kind::host);

  ~backing_store();
  backing_store(const backing_store&) = delete;
  backing_store& operator=(const backing_store&) = delete;

  [[nodiscard]] std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  [[nodiscard]] std::uint32_t* dirty_bits() const { return dirty_; }
  [[nodiscard]] std::uint32_t chunk_shift() const { return chunk_shift_; }
  [[nodiscard]] memory_kind kind() const { return kind_; }
  [[nodiscard]] const std::string& path() const { return path_; }

  /// Writes every dirty chunk back to the file and fsyncs it; a store without a file only
  /// clears its dirty bits. Returns the number of bytes written. Throws bam::error on an I/O
  /// error, leaving the failed chunks dirty.
  std::uint64_t flush();

  /// Bytes written back by flush() so far.
  [[nodiscard]] std::uint64_t flushed_bytes() const { return flushed_; }

 private:
  backing_store() = default;
  void allocate(std::uint64_t bytes, memory_kind kind);

  std::uint8_t* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint64_t allocated_ = 0;
  std::uint32_t* dirty_ = nullptr;
  std::uint64_t dirty_words_ = 0;
  std::uint32_t chunk_shift_ = 16;
  memory_kind kind_ = memory_kind::host;
  std::string path_;
  int fd_ = -1;
  std::uint64_t flushed_ = 0;
};

}  // namespace bam
