#pragma once
/// @file
/// The GPU compaction agent: compaction_agent_ref's loop (compaction_agent.hpp) on one GPU
/// thread, on a non-blocking stream of its own, for a two_level cache in GPU memory (whose
/// frame table a CPU thread cannot touch). It runs beside the application's kernels and the
/// persistent controller, and compacts while free frames run low.
///
///     bam::gpu_runtime rt;
///     bam::page_cache cache(cfg, rt);                        // two_level, in GPU memory
///     bam::array<float> features(cache, devs, {.dense = true});
///     gpu_compaction_agent agent(rt, cache, {.low_free_frames = 2});   // before rt.start()
///     rt.start();
///     agent.start();                                         // asynchronous
///     bam::launch(rt.stream(), grid, block, my_kernel{features.ref()});
///     rt.synchronize(rt.stream());
///     const compaction_counts c = agent.stop();              // bounded wait
///
/// Living beside a persistent controller (DESIGN 6 and 11): everything the agent needs (its
/// words in GPU memory, pinned staging, two streams) is allocated and its kernel is loaded and
/// launched once by the constructor, which must therefore run before gpu_runtime::start().
/// The stop word lives in GPU memory and is set by a host-to-device copy from pinned memory on
/// the agent's second stream: a copy of that kind does not wait for running kernels, and the
/// agent never reads mapped host memory (warps polling host memory slow every system-scope
/// fence of the GPU; docs/results.md, "The stop poll").
///
/// Thread safety: every call from one thread (the one that drives the runtime). The cache's
/// dense arrays must be attached before start() and stay attached until stop() returns.

#include <cstdint>
#include <memory>

#include <bam/cache/mosaic/compaction_agent.hpp>
#include <bam/runtime/resources.hpp>

namespace bam {
class gpu_runtime;
class page_cache;
}  // namespace bam

namespace bam::cache::mosaic {

class gpu_compaction_agent {
 public:
  /// Allocates the agent's memory and streams, loads its kernel (gpu_runtime::preload) and
  /// launches it once with no work on its own stream (a first launch beside a running
  /// controller can deadlock, DESIGN 11). Before rt.start(). `cache` must live in GPU memory
  /// (constructed on `rt`) and outlive the agent. `stop_timeout_ns` bounds stop()'s wait;
  /// 0: the cache's victim timeout (the longest a compaction step can wait) plus 10 s.
  /// Throws bam::error without a GPU or a CUDA build, bam::input_error for a cache in host
  /// memory, bam::cuda_error when CUDA fails.
  gpu_compaction_agent(gpu_runtime& rt, const page_cache& cache,
                       const compaction_agent_options& options = {},
                       std::uint64_t stop_timeout_ns = 0);
  /// Stops a running agent (logging a failure, never throwing). An agent that would not
  /// stop keeps its memory for good: freeing it would wait for the kernel.
  ~gpu_compaction_agent();
  gpu_compaction_agent(const gpu_compaction_agent&) = delete;
  gpu_compaction_agent& operator=(const gpu_compaction_agent&) = delete;

  /// Zeroes the agent's words (waiting, bounded, for that small copy) and launches its loop
  /// on stream() (asynchronous). Before or after gpu_runtime::start(). Nothing if it runs
  /// already; throws bam::error if an earlier run never stopped.
  void start();
  /// Sets the stop word and waits (bounded, polling) for the loop to end, then returns its
  /// counters (also kept for counts()). The loop sees the word within max_idle_ns or one
  /// compaction step. Throws bam::error naming the agent when it did not end in time (its
  /// kernel then still runs: the caller should end the process rather than free what the
  /// kernel uses), bam::cuda_error when its kernel failed. Nothing if it is not running.
  compaction_counts stop();
  [[nodiscard]] bool running() const;
  /// The counters of the last run that stopped (zero before the first).
  [[nodiscard]] compaction_counts counts() const;
  /// The counters now, copied out on the agent's second stream while the loop runs (a look:
  /// totals still moving). Waits (bounded) for the copy.
  [[nodiscard]] compaction_counts counts_now() const;
  /// The stream the loop runs on (non-blocking, in the primary context).
  [[nodiscard]] stream_handle stream() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace bam::cache::mosaic
