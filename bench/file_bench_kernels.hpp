#pragma once
// The reading threads of `bam bench file`, written once for CPU workers and GPU threads: each
// reads blocks (raw commands through the queues) or one element per line (through the cache)
// until its deadline, checks what it read against the pattern, and adds its counts.

#include <cstdint>

#include <bam/array_ref.hpp>
#include <bam/nvme/command.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/device_set.hpp>

#include "bench_pattern.hpp"

namespace bam::bench {

/// The block read `k`-th by reading stream `s` of `streams`: uniform over the file (random),
/// or the next block of the stream's own stretch of it (seq).
struct block_picker {
  std::uint64_t blocks;
  std::uint64_t streams;
  bool random;
  std::uint32_t seed;
  [[nodiscard]] BAM_HD std::uint64_t operator()(std::uint64_t s, std::uint64_t k) const {
    if (random) return pick64((s << 32) | (k & 0xffffffffu), seed, blocks);
    const std::uint64_t stretch = blocks / streams > 0 ? blocks / streams : 1;
    return (s * stretch + k % stretch) % blocks;
  }
};

/// Counts of reading threads: completed, failed, wrong.
struct read_counts {
  std::uint64_t completed;
  std::uint64_t failed;
  std::uint64_t wrong;
};

BAM_HD inline void add_read_counts(read_counts* to, std::uint64_t c, std::uint64_t f,
                                   std::uint64_t w) {
  // relaxed: totals the host reads after the launch has finished.
  atomic_ref<std::uint64_t>(to->completed).fetch_add(c, order::relaxed);
  atomic_ref<std::uint64_t>(to->failed).fetch_add(f, order::relaxed);
  atomic_ref<std::uint64_t>(to->wrong).fetch_add(w, order::relaxed);
}

/// Raw block reads through the set's queues (device 0), one command in flight per thread.
struct raw_block_reader {
  device_set_ref set;
  std::uint8_t* buffers;  ///< `block` bytes per thread
  std::uint32_t block;
  block_picker pick;
  bool patterned;
  std::uint64_t duration_ns;
  read_counts* counts;

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t end = now_ns() + duration_ns;
    const queue_pair_ref& q =
        set.queue(0, static_cast<std::uint32_t>(t.id % set.queues_per_device));
    std::uint8_t* buffer = buffers + t.id * block;
    const std::uint32_t per_block = block / set.block_bytes;
    std::uint64_t done = 0, bad = 0, wrong = 0;
    for (std::uint64_t k = 0; now_ns() < end; ++k) {
      const std::uint64_t b = pick(t.id, k);
      const auto cmd = nvme::make_rw(nvme::io_opcode::read, 1, b * per_block, per_block,
                                     reinterpret_cast<std::uint64_t>(buffer), 0);
      queue_ticket ticket;
      if (!q.execute(cmd, ticket).ok()) {
        ++bad;
        continue;
      }
      ++done;
      const std::uint64_t w = *reinterpret_cast<const std::uint64_t*>(buffer);
      if (patterned && w != pattern_word(b * block)) ++wrong;
    }
    add_read_counts(counts, done, bad, wrong);
  }
};

/// One 8-byte element of a picked line per read, through a bam::array and its cache.
struct line_element_reader {
  array_ref<const std::uint64_t> a;
  std::uint32_t block;  ///< the line size
  block_picker pick;
  bool patterned;
  std::uint64_t duration_ns;
  read_counts* counts;

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t end = now_ns() + duration_ns;
    const std::uint64_t words = block / 8;
    std::uint64_t done = 0, bad = 0, wrong = 0;
    for (std::uint64_t k = 0; now_ns() < end; ++k) {
      const std::uint64_t i = pick(t.id, k) * words + t.id % words;
      std::uint64_t v = 0;
      if (!a.try_read(i, v).ok()) {
        ++bad;
        continue;
      }
      ++done;
      if (patterned && v != pattern_word(i * 8)) ++wrong;
    }
    add_read_counts(counts, done, bad, wrong);
  }
};

}  // namespace bam::bench
