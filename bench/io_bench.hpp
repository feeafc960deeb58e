#pragma once
/// @file
/// `bam bench io`: BaM's raw I/O figures on the GPU (figures 1-6 of docs/results.md, and the
/// round-trip decomposition), each beside the ceiling it is judged against, measured in the same
/// run.
///
///   --figure controller  (1) the controller alone: submission queues filled before the clock
///                        starts, doorbells rung at once, time until every completion is
///                        posted; commands/s against the controller's SM count
///   --figure e2e         (2) GPU threads submit and wait random reads through the queues (no
///                        cache), caps off, GPU-memory image
///   --figure host        (3) the same with a pinned host image, 512 B and 4 KiB, against the
///                        random zero-copy ceiling over the same footprint
///   --figure devices     (4) 1..N Optane-like devices (caps on), 512 B and 4 KiB, reads and
///                        writes, pinned image, against the modelled cap and zero-copy ceiling
///   --figure latency     (5) in-flight commands (threads) needed for 90% of the modelled peak
///                        at each modelled latency, against Little's law
///   --figure queues      (6) ticketed vs naive queue, with the naive rate predicted from a
///                        lock hand-off time measured in the same run
///   --figure decompose   the round trip split into stages by %globaltimer stamps of sampled
///                        commands: submit, doorbell -> fetch, fetch -> post, post -> seen
///                        (and post -> stored, the controller's fence and release); beside it
///                        the cost of each fence and scoped load/store the queue protocol
///                        uses, timed by one thread with the controller stopped and running;
///                        --lanes-per-warp and --edges (lists) vary how the working threads
///                        fill their warps and the scope of the doorbell and completion fences
///   --figure sleep       how long __nanosleep really sleeps, against the request, with one
///                        warp per SM and with full SMs, converged and with diverged lanes
///                        (every wait loop of bam backs off with it)
///
/// --wait-sleep-ns (a list for the latency and decompose figures, each value a run of its own)
/// and --controller-sleep-ns set the longest sleep of a waiting thread and of an idle
/// controller warp (0: poll without sleeping).
///
/// Every timed run lasts --seconds (threads stop submitting at a deadline), so a figure's run
/// time does not depend on the rate it finds. Every read is checked against the pattern.
/// Needs a GPU: a build without CUDA, or a machine without a GPU, throws bam::input_error.

#include <cstdint>
#include <string>
#include <vector>

#include <bam/storage/emulated_storage.hpp>

namespace bam::bench {

struct io_bench_options {
  std::string figure;                                        ///< see the file comment
  std::vector<std::uint32_t> controller_sms = {8};           ///< controller: the sweep; else [0]
  std::vector<std::uint32_t> devices = {1, 2, 4, 6, 8, 10};  ///< devices: the sweep
  std::vector<std::uint64_t> footprints = {1ull << 30, 4ull << 30};  ///< host: image bytes
  std::vector<double> latencies_us = {11, 100};  ///< latency: modelled latencies
  std::vector<std::uint64_t> threads;  ///< latency: the sweep (default powers of two from 32);
                                       ///< other figures: [0] (0 or absent: every resident)
  std::uint32_t queues = 0;            ///< queue pairs per device (0: the figure's default)
  std::uint32_t depth = 0;             ///< entries per queue (0: the figure's default)
  std::uint32_t rounds = 5;            ///< controller: rounds per SM count (median)
  double seconds = 0.2;                ///< length of one timed run
  std::uint32_t latency_devices = 4;   ///< latency: devices (modelled peak = devices x IOPS)
  std::uint32_t fetch_batches = 0;     ///< controller knob (emulated_storage.hpp); 0: all
  std::vector<std::uint32_t> wait_sleep_ns = {4096};  ///< latency, decompose: the sweep; else [0]
  std::uint32_t controller_sleep_ns = 1024;           ///< gpu_controller_options::idle_sleep_ns
  /// gpu_controller_options::stop_poll_ns / 1000 (the controller's only periodic read of host
  /// memory)
  std::uint32_t controller_stop_poll_us =
      static_cast<std::uint32_t>(gpu_controller_options{}.stop_poll_ns / 1000);
  std::vector<std::uint32_t> sleep_requests_ns = {0, 100, 1000, 4096};  ///< sleep figure
  /// decompose: working lanes per warp, each value a run of its own (1, 2, 4, 8, 16 or 32;
  /// 32 working threads on a queue are one full warp, or 32 warps of one lane at 1)
  std::vector<std::uint32_t> lanes_per_warp = {32};
  /// decompose: scope of the fences and release stores that publish doorbells and completions
  /// ("system" or "gpu": gpu_controller_options::gpu_scope_edges), each a set of its own
  std::vector<std::string> edges = {"system"};
  std::string json;  ///< where to write JSON ("" = nowhere)
};

/// Runs one figure; prints a table (progress on stderr) and writes JSON if asked. Throws
/// bam::input_error for bad options or without a GPU, bam::error when commands fail or
/// return wrong bytes (after printing and writing what was measured).
void run_io_bench(const io_bench_options& options);

}  // namespace bam::bench
