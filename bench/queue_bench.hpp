#pragma once
/// @file
/// `bam bench queue`: commands per second through the queue protocol, ticketed or naive, with
/// many threads sharing few queues.
///
/// --side cpu: CPU threads against the CPU controller (a host thread).
/// --side gpu: GPU threads against the GPU controller kernel (its own SMs), random reads of
///             a pinned (default) or GPU-memory image; the grid defaults to every thread that
///             can be resident on the applications' SMs.

#include <cstdint>
#include <string>

namespace bam::bench {

struct queue_bench_options {
  std::string side;                 ///< gpu | cpu; "" picks gpu when a GPU is present
  std::string protocol = "ticket";  ///< ticket | naive
  unsigned threads = 0;             ///< 0: cpu 64, gpu every resident thread
  std::uint64_t commands = 1'000'000;
  std::uint32_t depth = 0;   ///< 0: cpu 64, gpu 1024
  std::uint32_t queues = 0;  ///< queues per device; 0: cpu 4, gpu 128
  std::uint32_t devices = 1;
  std::uint32_t io_bytes = 512;
  double latency_us = 0;             ///< modelled device latency (0: the protocol alone)
  std::string image = "pinned";      ///< gpu side: pinned | device
  std::uint32_t controller_sms = 8;  ///< gpu side: SMs of the controller's green context
  std::string json;                  ///< where to write JSON ("" = nowhere)
};

/// Runs the benchmark on the chosen side; prints a table, writes JSON if asked. Throws
/// bam::error when commands fail or return wrong bytes.
void run_queue_bench(const queue_bench_options& options);

/// The GPU side (queue_bench_gpu.cu; throws in a build without CUDA).
void run_queue_bench_gpu(const queue_bench_options& options);

}  // namespace bam::bench
