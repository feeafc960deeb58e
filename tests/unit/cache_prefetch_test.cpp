// Prefetch tickets on one thread: what prefetch() does with each kind of line (resident,
// loaded by the ticket, deferred, beyond the ticket, not prefetchable), that wait() leaves
// every line pinned or failed, and that failed and late reads leave records and no held line.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.hpp>
#include <bam/prefetch_ticket.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "late_io.hpp"
#include "pattern_rig.hpp"

namespace {

using namespace bam;
using namespace std::chrono_literals;
using bam::testing::describe;
using bam::testing::drain_until_released;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_line = line_bytes / 8;
constexpr std::uint64_t ms = 1'000'000;

constexpr auto word_at = bam::testing::pattern_word;

storage_config storage(std::uint32_t queues = 4, std::uint64_t timeout_ns = 10'000 * ms) {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = queues;
  s.queue_depth = 64;
  s.model = device_model::unlimited();
  s.timeout_ns = timeout_ns;
  s.faults.seed = 5;
  return s;
}

cache_config lines(std::uint64_t n, cache_mode mode = cache_mode::optimized,
                   std::uint64_t victim_timeout_ns = 2'000 * ms) {
  cache_config c;
  c.line_bytes = line_bytes;
  c.capacity_bytes = n * line_bytes;
  c.mode = mode;
  c.victim_timeout_ns = victim_timeout_ns;
  return c;
}

using rig = bam::testing::pattern_rig;

using ticket = prefetch_ticket<const std::uint64_t>;

TEST(CachePrefetch, ADoubleBufferedScanReadsEveryValueAndLoadsEachLineOnce) {
  constexpr std::uint64_t pages = 96;
  constexpr std::uint64_t tile_lines = 4;
  rig r(pages * words_per_line, storage(), lines(16));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket t0(ref), t1(ref);
  ticket* cur = &t0;
  ticket* next = &t1;
  const std::uint64_t tile_words = tile_lines * words_per_line;
  const std::uint64_t tiles = pages / tile_lines;
  for (std::uint64_t i = 0; i < tile_words; i += words_per_line) EXPECT_TRUE(cur->prefetch(i));
  EXPECT_EQ(cur->in_flight(), tile_lines);
  std::uint64_t wrong = 0;
  for (std::uint64_t k = 0; k < tiles; ++k) {
    cur->wait();
    EXPECT_EQ(cur->in_flight(), 0u);
    if (k + 1 < tiles) {
      for (std::uint64_t i = (k + 1) * tile_words; i < (k + 2) * tile_words; i += words_per_line) {
        EXPECT_TRUE(next->prefetch(i));
      }
    }
    for (std::uint64_t i = k * tile_words; i < (k + 1) * tile_words; ++i) {
      wrong += (*cur)[i] != word_at(i);
    }
    cur->release();
    std::swap(cur, next);
  }
  EXPECT_EQ(wrong, 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.loads, pages) << "every line loaded once, none twice";
  EXPECT_EQ(s.prefetched, pages);
  EXPECT_EQ(s.accesses, pages * words_per_line);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused);
  EXPECT_EQ(r.cache->held_resources().total(), 0u) << describe(r.cache->held_resources());
}

TEST(CachePrefetch, AResidentLineIsPinnedWithoutALoad) {
  rig r(16 * words_per_line, storage(), lines(8));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  EXPECT_EQ(ref[3 * words_per_line], word_at(3 * words_per_line));
  a.reset_stats();
  {
    ticket t(ref);
    EXPECT_TRUE(t.prefetch(3 * words_per_line + 5));
    EXPECT_EQ(t.in_flight(), 0u) << "nothing to load";
    EXPECT_EQ(r.cache->held_resources().pinned_lines, 1u) << "pinned at once";
    t.wait();
    EXPECT_EQ(t[3 * words_per_line + 7], word_at(3 * words_per_line + 7));
  }
  EXPECT_EQ(r.cache->held_resources().pinned_lines, 0u) << "the destructor unpins";
  const cache_stats s = a.stats();
  EXPECT_EQ(s.loads, 0u);
  EXPECT_EQ(s.hits, 1u);
}

TEST(CachePrefetch, TheSameLineTwiceIsOneLineOfTheTicket) {
  rig r(16 * words_per_line, storage(), lines(8));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket t(ref);
  EXPECT_TRUE(ref.prefetch(0, t));
  EXPECT_TRUE(ref.prefetch(words_per_line - 1, t));
  EXPECT_EQ(t.lines(), 1u);
  t.wait();
  t.release();
  EXPECT_EQ(a.stats().loads, 1u);
}

TEST(CachePrefetch, AFullTicketRefusesAndItsElementReadsNormally) {
  rig r(16 * words_per_line, storage(), lines(8));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  prefetch_ticket<const std::uint64_t, 2> t(ref);
  EXPECT_TRUE(t.prefetch(0));
  EXPECT_TRUE(t.prefetch(words_per_line));
  EXPECT_FALSE(t.prefetch(2 * words_per_line)) << "the ticket holds two lines";
  EXPECT_EQ(t.lines(), 2u);
  t.wait();
  for (std::uint64_t i = 0; i < 3 * words_per_line; ++i) EXPECT_EQ(t[i], word_at(i)) << i;
  t.release();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.prefetched, 2u);
  EXPECT_EQ(s.loads, 3u);
}

TEST(CachePrefetch, LinesBeyondTheTicketsQueuesAreDeferredToTheWait) {
  // Two queues per device: a ticket submits at most two reads (in increasing queue index);
  // its other lines are loaded by wait(), after those reads have ended.
  rig r(16 * words_per_line, storage(2), lines(8));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket t(ref);
  for (std::uint64_t p = 0; p < 4; ++p) EXPECT_TRUE(t.prefetch(p * words_per_line));
  EXPECT_EQ(t.in_flight(), 2u);
  t.wait();
  EXPECT_EQ(r.cache->held_resources().pinned_lines, 4u) << "every line pinned after the wait";
  for (std::uint64_t i = 0; i < 4 * words_per_line; ++i) EXPECT_EQ(t[i], word_at(i)) << i;
  t.release();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.prefetched, 2u);
  EXPECT_EQ(s.loads, 4u);
  EXPECT_EQ(r.cache->held_resources().total(), 0u);
}

TEST(CachePrefetch, WithoutAFreeVictimTheLineIsDeferredNotFailed) {
  // Two lines, both pinned by the first ticket: the second finds no victim at once and defers;
  // its wait then loads once the first ticket has let go.
  rig r(16 * words_per_line, storage(), lines(2));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket first(ref), second(ref);
  EXPECT_TRUE(first.prefetch(0));
  EXPECT_TRUE(first.prefetch(words_per_line));
  first.wait();
  EXPECT_TRUE(second.prefetch(5 * words_per_line));
  EXPECT_EQ(second.in_flight(), 0u) << "no victim: deferred";
  first.release();
  second.wait();
  EXPECT_EQ(second[5 * words_per_line + 1], word_at(5 * words_per_line + 1));
  second.release();
  EXPECT_NO_THROW(a.check());
}

TEST(CachePrefetch, ArraysThatCannotPrefetchReadNormally) {
  rig r(16 * words_per_line, storage(), lines(8, cache_mode::naive));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket t(ref);
  EXPECT_FALSE(t.prefetch(0)) << "naive mode";
  t.wait();
  EXPECT_EQ(t[9], word_at(9));
  t.release();

  std::vector<std::uint64_t> memory(64);
  for (std::uint64_t i = 0; i < memory.size(); ++i) memory[i] = word_at(i);
  const array_ref<const std::uint64_t> view(memory.data(), memory.size());
  ticket m(view);
  EXPECT_TRUE(m.prefetch(10)) << "a view of memory holds every element";
  m.wait();
  EXPECT_EQ(m[10], word_at(10));
  EXPECT_FALSE(m.prefetch(64)) << "out of range";
}

TEST(CachePrefetch, AFailedReadReachesTheTicketsReadsAndTheRecord) {
  // Block 8 is bad: line 8 (512 B lines) cannot be read.
  storage_config s = storage();
  s.faults.bad_lba_begin = 8;
  s.faults.bad_lba_end = 9;
  rig r(16 * words_per_line, s, lines(8));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  ticket t(ref);
  EXPECT_TRUE(t.prefetch(7 * words_per_line));
  EXPECT_TRUE(t.prefetch(8 * words_per_line));
  t.wait();
  std::uint64_t v = 0;
  EXPECT_TRUE(t.try_read(7 * words_per_line, v).ok());
  const io_status bad = t.try_read(8 * words_per_line + 1, v);
  EXPECT_EQ(bad.source(), status_source::device) << bad.name();
  EXPECT_EQ(t[8 * words_per_line], array_ref<const std::uint64_t>::poison());
  t.release();
  EXPECT_THROW(a.check(), nvme_error);
  EXPECT_FALSE(ref.try_read(8 * words_per_line, v).ok()) << "the page stays failed";
  EXPECT_EQ(r.cache->held_resources().total(), 0u) << describe(r.cache->held_resources());
  EXPECT_GE(a.stats().errors, 2u);
}

TEST(CachePrefetch, ReadsThatTimeOutKeepTheirLinesUntilTheLateCompletionsAreDrained) {
  storage_config s = storage(4, 20 * ms);
  s.faults.late_rate = 1.0;
  s.faults.late_us = 100'000;
  rig r(16 * words_per_line, s, lines(8, cache_mode::optimized, 200 * ms));
  {
    array<const std::uint64_t> a(*r.cache, r.set());
    const array_ref<const std::uint64_t> ref = a.ref();
    ticket t(ref);
    for (std::uint64_t p = 0; p < 4; ++p) EXPECT_TRUE(t.prefetch(p * words_per_line));
    EXPECT_EQ(t.in_flight(), 4u);
    t.wait();
    std::uint64_t v = 0;
    for (std::uint64_t p = 0; p < 4; ++p) {
      EXPECT_EQ(t.try_read(p * words_per_line, v).source(), status_source::timeout);
    }
    t.release();
    EXPECT_EQ(r.cache->held_resources().busy_lines, 4u) << "each late read may still fill its line";
    EXPECT_THROW(a.check(), nvme_error);
  }
  const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

}  // namespace
