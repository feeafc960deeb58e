#pragma once
/// @file
/// `bam bench queue`: commands per second through the queue protocol, ticketed or naive, with
/// many threads sharing few queues.

#include <cstdint>
#include <string>

namespace bam::bench {

struct queue_bench_options {
  std::string protocol = "ticket";  ///< ticket | naive
  unsigned threads = 64;
  std::uint64_t commands = 1'000'000;
  std::uint32_t depth = 64;
  std::uint32_t queues = 4;
  std::uint32_t io_bytes = 512;
  double latency_us = 0;  ///< modelled device latency (0: the protocol alone)
  std::string json;       ///< where to write JSON ("" = nowhere)
};

/// Runs the benchmark on CPU threads against the CPU controller; prints a table.
void run_queue_bench(const queue_bench_options& options);

}  // namespace bam::bench
