#pragma once
/// @file
/// The app kernel model, CPU side.
///
/// A kernel is a functor called once per logical thread with its thread_index; it walks its
/// share of the work with a grid-stride loop and uses no block barriers and no shared memory,
/// so the same source runs on GPU threads (launch.cuh) and on a CPU thread pool (here).
///
///     struct scale {
///       bam::array_ref<float> a;
///       BAM_HD void operator()(bam::thread_index t) const {
///         for (std::uint64_t i = t.id; i < a.size(); i += t.count) a.store(i, 2 * a[i]);
///       }
///     };
///     bam::launch(stream, grid, block, scale{a.ref()});   // asynchronous on `stream`

#include <cstdint>
#include <functional>
#include <memory>

#include <bam/platform/config.hpp>

namespace bam {

/// A logical thread: its global index and the number of logical threads in the launch.
struct thread_index {
  std::uint64_t id;
  std::uint64_t count;
};

/// A CPU stream: launches run in order on a pool of worker threads, asynchronously to the
/// caller. Thread safety: launch and synchronize may be called from one thread at a time.
class host_stream {
 public:
  /// `workers` 0 picks four per hardware thread: kernels that wait on I/O block their worker,
  /// so more workers than cores hide the emulated device's latency.
  explicit host_stream(unsigned workers = 0);
  ~host_stream();
  host_stream(host_stream&&) noexcept;
  host_stream& operator=(host_stream&&) noexcept;
  host_stream(const host_stream&) = delete;
  host_stream& operator=(const host_stream&) = delete;

  /// Queues `threads` logical threads of `body`; returns at once.
  void enqueue(std::uint64_t threads, std::function<void(thread_index)> body);

  /// Waits for every queued launch; rethrows the first exception a kernel body threw.
  void synchronize();

  [[nodiscard]] unsigned workers() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Launches `grid * block` logical threads of `kernel` on a CPU stream (asynchronous).
template <class Kernel>
void launch(host_stream& stream, std::uint32_t grid, std::uint32_t block, Kernel kernel) {
  stream.enqueue(std::uint64_t{grid} * block, [kernel](thread_index t) { kernel(t); });
}

}  // namespace bam
