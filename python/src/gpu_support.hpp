#pragma once
/// @file
/// What every GPU array of the module needs around its kernels, compiled once
/// (gpu_support.cu): the range check that runs before any I/O, and the per-row failure flags
/// the gather and scatter kernels set.

#include <cstdint>
#include <string>
#include <vector>

#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

namespace bam::python {

/// Makes a device current on the calling thread for a scope and restores the one that was, so
/// a caller's framework (which keeps its own current device) sees no change.
class device_guard {
 public:
  explicit device_guard(int device);
  ~device_guard();
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
};

namespace detail {
struct row_word;
template <class E>
struct gather_rows;
}  // namespace detail

/// Launches the gather by 16-byte words (row_kernels.hpp: with_gather_kernel), one kernel for
/// every element type, compiled once (gpu_word_gather.cu).
void launch_word_gather(stream_handle stream, std::uint32_t grid,
                        const detail::gather_rows<const detail::row_word>& kernel);

/// Scratch memory of one GPU array. Not thread safe: the array's owner serializes calls.
class gpu_scratch {
 public:
  explicit gpu_scratch(int device);

  /// Makes the array's device current on the calling thread until the guard goes (Python
  /// calls come from any thread, with any device current).
  [[nodiscard]] device_guard use_device() const { return device_guard(device_); }

  /// Queues the range-check kernel over `rows` (GPU memory) on `stream`, and the copy of its
  /// verdict for the host; returns the verdict in GPU memory for the kernels queued after it
  /// (row_kernels.hpp: detail::may_run), which do no I/O unless every row is in range.
  [[nodiscard]] const std::uint64_t* start_check(const std::int64_t* rows, std::uint64_t n,
                                                 std::uint64_t limit, stream_handle stream);
  /// Once the stream has passed start_check's work: throws std::out_of_range naming the first
  /// row outside [0, limit) (start_check's limit), its position and `name`, if there was one.
  void finish_check(gpu_runtime& rt, const std::int64_t* rows, std::uint64_t limit,
                    stream_handle stream, const std::string& name);

  /// `n` zeroed flags in pinned memory, one per row, that the kernels set for rows whose I/O
  /// failed. Valid until the next call.
  [[nodiscard]] std::uint32_t* failed_flags(std::uint64_t n);

  /// After the kernel ended: the rows whose flags are set (sorted, each once), read back from
  /// `rows` (GPU memory) only when there are some; clears the flags.
  [[nodiscard]] std::vector<std::int64_t> failed_rows(gpu_runtime& rt, const std::int64_t* rows,
                                                      std::uint64_t n, stream_handle stream);

 private:
  int device_;
  device_memory first_bad_;   // the smallest position out of range (the kernel's atomic min)
  pinned_memory word_;        // its copy for the host, and the row there
  pinned_memory flags_;       // failed_flags(), grown on demand
  std::uint64_t handed_ = 0;  // flags handed out and not yet read back (maybe set)
};

}  // namespace bam::python
