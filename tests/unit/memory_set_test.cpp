// A memory set (device_set_ref::over_memory): the cache loads and writes back lines by copies
// the issuing thread makes, with no queue, or, for cursors, that the lanes sharing a miss make
// together. Reads through tiny caches return the memory's words (plain threads and software
// warps, whose lanes split a line's copy and drop their cursors together), writes reach the memory
// through evictions and flush(), and a request past the end is refused like a device's.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/io.hpp>

#include "software_warp.hpp"

namespace {

using namespace bam;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_line = line_bytes / 8;

std::uint64_t word_at(std::uint64_t i) { return i * 0x9e3779b97f4a7c15ull + 7; }

/// `words` 64-bit words of word_at in a store, viewed as a memory set.
struct memory_rig {
  explicit memory_rig(std::uint64_t words, std::uint64_t cache_lines, unsigned workers = 8)
      : image(backing_store::in_memory(words * 8)), stream(workers) {
    auto* w = reinterpret_cast<std::uint64_t*>(image->data());
    for (std::uint64_t i = 0; i < words; ++i) w[i] = word_at(i);
    cache_config c;
    c.line_bytes = line_bytes;
    c.capacity_bytes = cache_lines * line_bytes;
    c.victim_timeout_ns = 5'000'000'000;  // a pin left behind fails a test in seconds
    cache = std::make_unique<page_cache>(c, stream);
  }
  [[nodiscard]] device_set_ref set() const {
    return device_set_ref::over_memory(image->data(), image->bytes(), 64 * 1024);
  }
  [[nodiscard]] std::uint64_t word(std::uint64_t i) const {
    return reinterpret_cast<const std::uint64_t*>(image->data())[i];
  }
  std::shared_ptr<backing_store> image;
  host_stream stream;
  std::unique_ptr<page_cache> cache;
};

struct sum_strided {
  array_ref<const std::uint64_t> a;
  std::uint64_t words;
  std::atomic<std::uint64_t>* wrong;
  void operator()(thread_index t) const {
    std::uint64_t bad = 0;
    // Threads walk the array from different lines, so lines are loaded, shared and evicted
    // under one another.
    for (std::uint64_t k = 0; k < words; ++k) {
      const std::uint64_t i = (t.id * 977 + k * 13) % words;
      bad += a[i] != word_at(i);
    }
    wrong->fetch_add(bad, std::memory_order_relaxed);
  }
};

// Cursor reads of `words` words from `first`, strided over the lanes of a warp (lane l reads
// l, l + width, ...), so a warp's lanes move onto each line together and share its miss.
std::uint64_t wrong_cursor_reads(const array_ref<const std::uint64_t>& a, std::uint64_t first,
                                 std::uint64_t words, unsigned lane, unsigned width) {
  std::uint64_t bad = 0;
  array_ref<const std::uint64_t>::cursor c(a);
  for (std::uint64_t k = lane; k < words; k += width) {
    const std::uint64_t i = (first + k) % a.size();
    std::uint64_t v = 0;
    if (!c.read_if_pinned(i, v) && !c.try_read(i, v).ok()) ++bad;
    bad += v != word_at(i);
  }
  c.drop();
  return bad;
}

// 32 threads through a 16-line cache, each reading a quarter of the array from its own start,
// element by element (`cursors` false) or through a cursor (true).
void read_through_a_tiny_cache(bool cursors) {
  constexpr std::uint64_t words = 256 * words_per_line;
  memory_rig r(words, 16);
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(4, 8);
  std::atomic<std::uint64_t> wrong{0};
  if (cursors) {
    launch(r.stream, 4, 8, [&](thread_index t) {
      wrong.fetch_add(wrong_cursor_reads(ref, t.id * 977, words / 4, 0, 1),
                      std::memory_order_relaxed);
    });
  } else {
    launch(r.stream, 4, 8, sum_strided{ref, words, &wrong});
  }
  r.stream.synchronize();
  EXPECT_EQ(wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_GT(s.loads, 256u) << "a 16-line cache reloads lines";
  EXPECT_EQ(s.bytes_moved, s.loads * line_bytes);
  EXPECT_EQ(s.errors, 0u);
}

TEST(MemorySet, ManyThreadsReadThroughATinyCache) { read_through_a_tiny_cache(false); }

TEST(MemorySet, CursorsOnPlainThreadsCopyTheirMisses) { read_through_a_tiny_cache(true); }

TEST(MemorySet, WarpsOfLanesSplitTheCopyOfALineTheyMiss) {
  constexpr std::uint64_t words = 128 * words_per_line;
  constexpr unsigned warps = 3;
  constexpr unsigned width = 8;
  memory_rig r(words, 16);
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(1, warps * width);
  std::atomic<std::uint64_t> wrong{0};
  bam::testing::run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    // Warps start on different lines and walk the array once each: lines are loaded, shared
    // and evicted under one another.
    wrong.fetch_add(wrong_cursor_reads(ref, warp * 41 * words_per_line, words, lane, width),
                    std::memory_order_relaxed);
  });
  EXPECT_EQ(wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_GE(s.loads, 128u) << "every line is loaded at least once";
  EXPECT_EQ(s.bytes_moved, s.loads * line_bytes);
  EXPECT_EQ(s.misses - s.miss_waits, s.loads) << "a miss that waited on no other load loaded";
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.accesses, std::uint64_t{warps} * words);
}

TEST(MemorySet, WarpsDropTheirCursorsTogether) {
  constexpr std::uint64_t lines = 128;
  constexpr unsigned warps = 3;
  constexpr unsigned width = 8;
  memory_rig r(lines * words_per_line, 16);
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(1, warps * width);
  std::atomic<std::uint64_t> wrong{0};
  std::atomic<std::uint64_t> reads{0};
  bam::testing::run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    const std::uint32_t lanes = warp::active_mask();
    for (std::uint64_t step = 0; step < lines; ++step) {
      // Each tile is one line, read by the whole warp; on odd steps lanes 5 to 7 read the next
      // line instead, so the warp drops pins of two lines at once.
      const std::uint64_t line = (warp * 41 + step + (step % 2 && lane >= 5)) % lines;
      const std::uint64_t first = line * words_per_line;
      array_ref<const std::uint64_t>::cursor c(ref);
      for (std::uint64_t k = lane; k < words_per_line; k += width) {
        std::uint64_t v = 0;
        if (!c.read_if_pinned(first + k, v) && !c.try_read(first + k, v).ok()) wrong.fetch_add(1);
        if (v != word_at(first + k)) wrong.fetch_add(1);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
      c.drop_among(lanes);
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.errors, 0u) << "a pin left behind leaves evictions no victim";
  EXPECT_GT(s.evictions, 0u);
  EXPECT_EQ(s.accesses, reads.load()) << "every read counted once";
}

TEST(MemorySet, WritesReachTheMemoryThroughEvictionsAndFlush) {
  constexpr std::uint64_t words = 64 * words_per_line;
  memory_rig r(words, 8);
  {
    array<std::uint64_t> a(*r.cache, r.set());
    for (std::uint64_t first = 0; first < words; first += 3 * words_per_line) {
      a.write(first, std::vector<std::uint64_t>(words_per_line, first + 1));
    }
    a.flush();
    EXPECT_GT(a.stats().write_backs, 0u);
    EXPECT_EQ(a.read(3 * words_per_line, 1)[0], 3 * words_per_line + 1);
  }
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t first = i / (3 * words_per_line) * (3 * words_per_line);
    const bool written = i - first < words_per_line;
    ASSERT_EQ(r.word(i), written ? first + 1 : word_at(i)) << "word " << i;
  }
}

TEST(MemorySet, ARequestPastTheEndIsRefused) {
  memory_rig r(4 * words_per_line, 4);
  const device_set_ref set = r.set();
  std::vector<std::uint8_t> buffer(line_bytes);
  io_request q;
  q.set_byte = 4 * line_bytes;
  q.bytes = line_bytes;
  q.buffer = buffer.data();
  io_where where;
  EXPECT_EQ(device_io(set, q, where).source(), status_source::invalid_request);
  q.set_byte = 3 * line_bytes;
  EXPECT_TRUE(device_io(set, q, where).ok());
  EXPECT_EQ(reinterpret_cast<const std::uint64_t*>(buffer.data())[0], word_at(3 * words_per_line));
}

}  // namespace
