#pragma once
/// @file
/// What every GPU array of the module needs around its kernels, compiled once
/// (gpu_support.cu): the range check that runs before any I/O, the failure marks the gather
/// and scatter kernels set, and the calls in flight that a later call reads.

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

#include "any_array.hpp"
#include "row_kernels.hpp"

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

/// Launches the gather by 16-byte words (row_kernels.hpp: with_gather_kernel), one kernel for
/// every element type, compiled once (gpu_word_gather.cu).
void launch_word_gather(stream_handle stream, std::uint32_t grid,
                        const detail::gather_rows<const detail::row_word>& kernel);

/// One gather or scatter of a GPU array, from its launch until the host has read what its
/// kernel left: the range check's verdict (GPU memory), the report and the failure marks
/// (pinned memory, call_marks) and an event after the kernel. Reused call after call.
class gpu_call {
 public:
  /// Made with the array's device current.
  gpu_call();

  /// Queues the range check of `rows` (GPU memory) against [0, limit) on `stream` and returns
  /// the marks for the kernel queued after it, which does no I/O unless every row is in range.
  /// `earlier`: the call returns before its kernel ends, so a later one reports it.
  [[nodiscard]] detail::call_marks start(const std::int64_t* rows, std::uint64_t n,
                                         std::uint64_t limit, stream_handle stream, bool earlier);
  /// Marks the end of the kernel queued after start().
  void end();
  /// The same after a launch that threw, ignoring errors: the call stays in flight until
  /// what start() queued has run.
  void end_quietly() noexcept;
  /// Whether the kernel ended (a query, no wait); throws bam::cuda_error if it failed.
  [[nodiscard]] bool ended() const;
  /// Waits for the kernel (bounded: the runtime's deadline, naming `what`).
  void wait(const gpu_runtime& rt, const std::string& what) const;
  /// Once the kernel ended: throws std::out_of_range naming the first row out of range, its
  /// position and `name`; otherwise moves the failed rows into `failures`.
  void read(const std::string& name, row_failures& failures);
  [[nodiscard]] stream_handle stream() const { return stream_; }

 private:
  device_memory first_bad_;  // the smallest position out of range (the check's atomic min)
  pinned_memory marks_;      // a call_report, then a failure mark per row; grown on demand
  owned_event end_;
  stream_handle stream_ = nullptr;
  std::uint64_t n_ = 0;
  std::uint64_t limit_ = 0;
  bool earlier_ = false;
};

/// The calls of one GPU array in flight, oldest first: a gather may return before its kernel
/// ends (wait false), and a later call reads what it left. Not thread safe: the array's owner
/// serializes calls.
class gpu_calls {
 public:
  /// Settles a call that failed: the array's recorded error and its failed lines
  /// (settle_failures).
  using settle_function = std::function<void(row_failures&)>;

  gpu_calls(int device, std::string name, settle_function settle);

  /// Makes the array's device current on the calling thread until the guard goes (Python
  /// calls come from any thread, with any device current).
  [[nodiscard]] device_guard use_device() const { return device_guard(device_); }

  /// Reads the calls in flight, oldest first, until one failed (then true, its rows in
  /// `failures`, or read's exception). With `all`, every call, waiting for each; otherwise
  /// the calls that ended, and those it must wait for before a call on `stream` may start:
  /// the oldest while every call is taken, every one while they run on another stream.
  bool settle(const gpu_runtime& rt, stream_handle stream, bool all, row_failures& failures);
  /// Queues a call on `stream`, after settle() (which frees one): the range check of `rows`
  /// against [0, limit), then `launch(marks)`'s kernel, then the call's end. The call is in
  /// flight until a settle() reads it, also when `launch` threw after the check was queued:
  /// no later call reuses its verdict and marks before the stream has passed them.
  template <class Launch>
  void queue(const std::int64_t* rows, std::uint64_t n, std::uint64_t limit, stream_handle stream,
             bool earlier, Launch&& launch) {
    gpu_call& call = take();
    try {
      launch(call.start(rows, n, limit, stream, earlier));
    } catch (...) {
      call.end_quietly();
      throw;
    }
    call.end();
  }
  /// Waits for every call in flight without reading them (stats, flush and close may not
  /// overlap a kernel).
  void wait_all(const gpu_runtime& rt) const;

 private:
  gpu_call& take();

  static constexpr std::size_t depth = 4;  // gathers in flight at once
  int device_;
  std::string name_;
  std::string waiting_for_;  // what a wait for a call names
  settle_function settle_;
  std::array<gpu_call, depth> calls_;
  std::size_t oldest_ = 0;
  std::size_t in_flight_ = 0;
};

}  // namespace bam::python
