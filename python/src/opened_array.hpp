#pragma once
/// @file
/// One bam.open(): the data source and the array over it, with the checks that come before
/// any I/O (indices in range, buffer sizes). Plain C++; the bindings (module.cpp) turn
/// Python arrays into pointers and exceptions into Python ones.
///
/// Thread safety: every call takes the object's lock, so Python threads may share an array
/// (their gathers run one at a time); close() may race with them safely.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "any_array.hpp"
#include "data_source.hpp"

namespace bam::python {

struct open_request {
  source_options source;
  element_type type = element_type::u64;
  /// Elements per row; 0 rows: as many whole rows as the data holds.
  array_shape shape{.rows = 0, .row_len = 1};
};

class opened_array {
 public:
  /// Opens the source and the array; throws bam::input_error for bad arguments or files.
  explicit opened_array(const open_request& request);
  ~opened_array();
  opened_array(const opened_array&) = delete;
  opened_array& operator=(const opened_array&) = delete;

  /// Throws std::out_of_range naming the first row outside [0, rows) and its position;
  /// otherwise gathers (any_array::gather). Throws std::invalid_argument once closed.
  void gather(const std::int64_t* rows, std::uint64_t n, void* out, row_failures& failures);
  /// As gather; throws bam::input_error for a read-only array.
  void scatter(const std::int64_t* rows, std::uint64_t n, const void* values,
               row_failures& failures);
  /// device="cuda": rows, out and values in GPU memory, the kernels on `stream`
  /// (any_array::gather_device, which checks the rows on the GPU before any I/O).
  void gather_device(const std::int64_t* rows, std::uint64_t n, void* out, stream_handle stream,
                     bool wait, row_failures& failures);
  void scatter_device(const std::int64_t* rows, std::uint64_t n, const void* values,
                      stream_handle stream, row_failures& failures);
  /// Waits for the gathers that did not wait (any_array::synchronize).
  void synchronize(row_failures& failures);
  /// Writes dirty lines back and flushes the devices; throws bam::nvme_error.
  void flush();
  [[nodiscard]] cache_stats stats();
  /// Flushes a writable array (throwing its error after freeing everything), then frees the
  /// array, the cache and the devices. Idempotent.
  void close();

  [[nodiscard]] bool closed() const;
  [[nodiscard]] array_shape shape() const { return shape_; }
  [[nodiscard]] element_type type() const { return type_; }
  [[nodiscard]] bool writable() const { return writable_; }
  /// The CUDA device the array runs on; -1 on the CPU path.
  [[nodiscard]] int gpu_device() const { return gpu_device_; }
  [[nodiscard]] const std::string& description() const { return description_; }
  /// data_source::gathers_wait, kept after close.
  [[nodiscard]] bool gathers_always_wait() const { return gathers_always_wait_; }

 private:
  void require_open() const;
  void check_rows(const std::int64_t* rows, std::uint64_t n) const;

  mutable std::mutex lock_;
  element_type type_;
  array_shape shape_;
  bool writable_;
  int gpu_device_;
  std::string name_;
  std::string description_;
  bool gathers_always_wait_ = true;
  std::unique_ptr<data_source> source_;
  std::unique_ptr<any_array> array_;  // destroyed before source_
};

}  // namespace bam::python
