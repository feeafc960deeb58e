// Prefetch tickets under many CPU threads: each thread scans tiles double buffered (two
// tickets: it starts the loads of tile k + 1, then reads tile k), pairs of threads scan the same
// tiles at once (both prefetch the same lines), the cache is a few times what the tickets pin
// (heavy eviction). Every read returns the right bytes or a reported error; failed, late and
// dropped reads leave nothing held once drained (or aborted); and prefetching issues the same
// loads as plain reads, none twice.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

#include <bam/prefetch_ticket.hpp>

#include "cache_stress_support.hpp"
#include "late_io.hpp"

#ifndef BAM_STRESS_SLOWDOWN
#define BAM_STRESS_SLOWDOWN 1
#endif

namespace {

using namespace bam;
using namespace bam::stress;
using bam::testing::describe;
using bam::testing::drain_until_released;
using bam::testing::finishes_within;

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t words_per_line = 512 / 8;
constexpr std::uint64_t tile_lines = 4;
constexpr std::uint64_t tile_words = tile_lines * words_per_line;
constexpr io_status unrecovered_read =
    io_status::from_device(nvme::make_status_field(nvme::media_status::unrecovered_read_error));

using ticket = prefetch_ticket<const std::uint64_t, tile_lines>;

/// What the scanning threads saw.
struct scan_tally {
  std::atomic<std::uint64_t> reads{0};
  std::atomic<std::uint64_t> wrong{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> unexpected_status{0};
};

/// Reads tiles `tiles[0..]` of `ref` in order, checking every word against the pattern; with
/// `prefetch` through two tickets (the loads of the next tile in flight while it reads this
/// one), else through a cursor. Failures must have status `failure` (or be timeouts when
/// `timeouts`).
void scan(const array_ref<const std::uint64_t>& ref, const std::vector<std::uint64_t>& tiles,
          bool prefetch, io_status failure, bool timeouts, scan_tally& tally) {
  std::uint64_t wrong = 0, failed = 0, unexpected = 0, reads = 0;
  auto check = [&](std::uint64_t i, io_status s, std::uint64_t v) {
    ++reads;
    if (!s.ok()) {
      ++failed;
      if (s != failure && !(timeouts && s.source() == status_source::timeout)) ++unexpected;
    } else if (v != pattern_word(i)) {
      ++wrong;
    }
  };
  if (!prefetch) {
    for (const std::uint64_t tile : tiles) {
      auto cursor = ref.reader();
      for (std::uint64_t i = tile * tile_words; i < (tile + 1) * tile_words; ++i) {
        std::uint64_t v = 0;
        const io_status s = cursor.try_read(i, v);
        check(i, s, v);
      }
    }
  } else {
    ticket t0(ref), t1(ref);
    ticket* cur = &t0;
    ticket* next = &t1;
    auto start = [&](ticket& t, std::uint64_t tile) {
      for (std::uint64_t i = tile * tile_words; i < (tile + 1) * tile_words; i += words_per_line) {
        EXPECT_TRUE(t.prefetch(i));
      }
    };
    if (!tiles.empty()) start(*cur, tiles[0]);
    for (std::size_t k = 0; k < tiles.size(); ++k) {
      cur->wait();
      if (k + 1 < tiles.size()) start(*next, tiles[k + 1]);
      for (std::uint64_t i = tiles[k] * tile_words; i < (tiles[k] + 1) * tile_words; ++i) {
        std::uint64_t v = 0;
        const io_status s = cur->try_read(i, v);
        check(i, s, v);
      }
      cur->release();
      std::swap(cur, next);
    }
  }
  tally.reads += reads;
  tally.wrong += wrong;
  tally.failed += failed;
  tally.unexpected_status += unexpected;
}

/// The tiles thread `t` scans: threads 2m and 2m + 1 scan the same ones, at once.
std::vector<std::uint64_t> tiles_of(unsigned t, std::uint64_t count, std::uint64_t tiles) {
  rng g(t / 2 + 1);
  std::vector<std::uint64_t> out(count);
  for (auto& tile : out) tile = g.below(tiles);
  return out;
}

/// `threads` threads scanning `per_thread` tiles each, four lines per tile, through a cache of
/// 512-byte lines that holds 2.5 times what their tickets can pin, over 16 times that data.
struct scan_case {
  unsigned threads = static_cast<unsigned>(scaled(32, 8));
  std::uint64_t per_thread = scaled(256, 16);
  std::uint64_t cache_lines() const { return threads * 2 * tile_lines * 5 / 2; }
  std::uint64_t words() const { return cache_lines() * 16 * words_per_line; }
};

cache_config cache_for(const scan_case& c, std::uint64_t victim_timeout_ns = 2'000 * ms) {
  cache_config cc;
  cc.line_bytes = 512;
  cc.capacity_bytes = c.cache_lines() * 512;
  cc.victim_timeout_ns = victim_timeout_ns;
  return cc;
}

void run_scan(rig& r, const array_ref<const std::uint64_t>& ref, const scan_case& c, bool prefetch,
              io_status failure, bool timeouts, scan_tally& tally) {
  const std::uint64_t tiles = c.words() / tile_words;
  finishes_within(
      std::chrono::milliseconds(120'000 * BAM_STRESS_SLOWDOWN),
      [&] {
        run_threads(c.threads, [&](unsigned t) {
          scan(ref, tiles_of(t, c.per_thread, tiles), prefetch, failure, timeouts, tally);
        });
      },
      "the scanning threads");
  (void)r;
}

TEST(CachePrefetchStress, ThreadsPrefetchingTilesOfASmallCacheReadExactValues) {
  const scan_case c;
  storage_config s = fast_storage();
  s.model = device_model::latency_only(20);  // 20 us: reads stay in flight while others probe
  rig r(pattern_image(c.words()), s, cache_for(c), 4);
  array<const std::uint64_t> a(r.cache(), r.set(), {.name = "tiles"});
  scan_tally tally;
  run_scan(r, a.ref(), c, true, {}, false, tally);
  EXPECT_EQ(tally.reads.load(), c.threads * c.per_thread * tile_words);
  EXPECT_EQ(tally.wrong.load(), 0u);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_NO_THROW(a.check());
  const cache_stats st = a.stats();
  EXPECT_GT(st.prefetched, 0u);
  EXPECT_GT(st.evictions, 0u);
  EXPECT_EQ(st.accesses, tally.reads.load());
  const cache_holds h = r.cache().held_resources();
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST(CachePrefetchStress, InjectedMediaErrorsAreReportedAndNeverWrongBytes) {
  const scan_case c;
  storage_config s = fast_storage();
  s.faults.error_rate = 0.05;
  s.faults.seed = 23;
  rig r(pattern_image(c.words()), s, cache_for(c), 4);
  array<const std::uint64_t> a(r.cache(), r.set(), {.name = "faulty"});
  scan_tally tally;
  for (int round = 0; round < 2; ++round) {
    run_scan(r, a.ref(), c, true, unrecovered_read, false, tally);
    EXPECT_THROW(a.check(), nvme_error);
    a.clear_failures();
  }
  EXPECT_GT(tally.failed.load(), 0u);
  EXPECT_EQ(tally.unexpected_status.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u);
  const cache_holds h = r.cache().held_resources();
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST(CachePrefetchStress, LateAndDroppedReadsEndInTimeAndLeaveNothingHeldOnceAborted) {
  scan_case c;
  c.per_thread = scaled(48, 6);
  const std::uint64_t io_timeout_ns = 20 * ms * BAM_STRESS_SLOWDOWN;
  storage_config s = fast_storage();
  s.queue_depth = 1024;  // a slot whose command came late is taken again only a ring later
  s.timeout_ns = io_timeout_ns;
  s.faults.late_rate = 0.02;
  s.faults.late_us = 1.5 * static_cast<double>(io_timeout_ns) / 1e3;
  s.faults.drop_rate = 0.005;
  s.faults.seed = 29;
  rig r(pattern_image(c.words()), s, cache_for(c, 2 * io_timeout_ns), 4);
  {
    array<const std::uint64_t> a(r.cache(), r.set(), {.name = "late"});
    scan_tally tally;
    run_scan(r, a.ref(), c, true, {}, true, tally);
    EXPECT_EQ(tally.wrong.load(), 0u);
    EXPECT_EQ(tally.unexpected_status.load(), 0u);
    try {
      a.check();
    } catch (const nvme_error&) {
    }
  }
  const device_stats d = r.ssd->stats().total();
  EXPECT_GT(d.late + d.dropped, 0u);
  // Late completions come back through the drain; dropped ones never come: the host aborts
  // them by resetting the queues, which gives back what they held.
  drain_until_released(r.cache(), r.set(), std::chrono::milliseconds(500 * BAM_STRESS_SLOWDOWN));
  r.ssd->stop();
  for (std::uint32_t q = 0; q < s.queues_per_device; ++q) r.ssd->reset_queue(0, q);
  r.ssd->start();
  const cache_holds h = r.cache().held_resources();
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST(CachePrefetchStress, PrefetchingIssuesTheSameLoadsAsPlainReads) {
  // Threads scan tiles of their own, once, through a cache a quarter of the data: every line is
  // loaded once either way (a prefetched line stays pinned until it is read), never twice.
  scan_case c;
  const std::uint64_t tiles = c.words() / tile_words;
  const std::uint64_t per_thread = tiles / c.threads;
  std::uint64_t loads[2] = {0, 0};
  for (int prefetch = 0; prefetch < 2; ++prefetch) {
    rig r(pattern_image(c.words()), fast_storage(), cache_for(c), 4);
    array<const std::uint64_t> a(r.cache(), r.set(), {.name = "count"});
    const array_ref<const std::uint64_t> ref = a.ref();
    scan_tally tally;
    run_threads(c.threads, [&](unsigned t) {
      std::vector<std::uint64_t> mine(per_thread);
      for (std::uint64_t k = 0; k < per_thread; ++k) mine[k] = t + k * c.threads;
      scan(ref, mine, prefetch != 0, {}, false, tally);
    });
    EXPECT_EQ(tally.wrong.load(), 0u);
    EXPECT_EQ(tally.failed.load(), 0u);
    const cache_stats st = a.stats();
    loads[prefetch] = st.loads;
    EXPECT_EQ(st.loads, per_thread * c.threads * tile_lines) << "prefetch " << prefetch;
    if (prefetch != 0) {
      EXPECT_GT(st.prefetched, st.loads / 2);
    }
  }
  EXPECT_EQ(loads[0], loads[1]);
}

}  // namespace
