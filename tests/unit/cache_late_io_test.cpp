// Commands of the base-page cache that fail, time out or complete late: a late write never
// lands on another page, every wait ends, every failure is recorded, and what a command held
// (a line, a bounce buffer) comes back once its late completion is drained.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/agent.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "late_io.hpp"
#include "pattern_rig.hpp"

namespace {

using namespace bam;
using namespace std::chrono_literals;
using bam::testing::describe;
using bam::testing::drain_until_released;
using bam::testing::finishes_within;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_page = line_bytes / 8;
constexpr std::uint64_t ms = 1'000'000;

constexpr auto word_at = bam::testing::pattern_word;
/// What the tests store at index `i` in round `round`: names both.
constexpr std::uint64_t written_at(std::uint64_t i, std::uint64_t round) {
  return ((i << 16) | round) ^ 0x5a5a000000000000ull;
}

storage_config storage(std::uint64_t timeout_ns) {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = 4;
  s.queue_depth = 64;
  s.model = device_model::unlimited();
  s.timeout_ns = timeout_ns;
  s.faults.seed = 5;
  return s;
}

cache_config lines(std::uint64_t n, std::uint64_t victim_timeout_ns) {
  cache_config c;
  c.line_bytes = line_bytes;
  c.capacity_bytes = n * line_bytes;
  c.victim_timeout_ns = victim_timeout_ns;
  return c;
}

using rig = bam::testing::pattern_rig;

/// Flushes `a` until a flush succeeds (late and failed write-backs make some fail), draining
/// between tries; false after `tries`.
bool flush_until_written(array<std::uint64_t>& a, int tries) {
  for (int t = 0; t < tries; ++t) {
    try {
      a.flush();
      return true;
    } catch (const nvme_error&) {
      std::this_thread::sleep_for(20ms);
    }
  }
  return false;
}

TEST(CacheLateWrites, ALateWriteBackNeverLandsOnAnotherPage) {
  // Half the write-backs complete 60 ms late, past their 20 ms timeout. A line whose
  // write-back was given up on must not take another page while that write may still run:
  // the write would copy the other page's bytes over the first page's blocks.
  constexpr std::uint64_t pages = 48;
  storage_config s = storage(20 * ms);
  s.faults.write_late_rate = 0.5;
  s.faults.late_us = 60'000;
  rig r(pages * words_per_page, s, lines(8, 300 * ms));
  std::vector<std::uint64_t> expected(pages * words_per_page);
  for (std::uint64_t i = 0; i < expected.size(); ++i) expected[i] = word_at(i);
  std::uint64_t wrong = 0, failed = 0;
  {
    array<std::uint64_t> a(*r.cache, r.set(), {.name = "late"});
    const array_ref<std::uint64_t> ref = a.ref();
    finishes_within(
        60s,
        [&] {
          for (std::uint64_t round = 0; round < 3; ++round) {
            for (std::uint64_t p = 0; p < pages; ++p) {
              // One word per page; the next round checks it after the page was evicted.
              const std::uint64_t i = p * words_per_page + p % words_per_page;
              std::uint64_t v = 0;
              if (!ref.try_read(i, v).ok()) {
                ++failed;
              } else if (v != expected[i]) {
                ++wrong;
              }
              if (ref.try_store(i, written_at(i, round)).ok()) {
                expected[i] = written_at(i, round);
              } else {
                ++failed;
              }
            }
          }
        },
        "the writer");
    EXPECT_EQ(wrong, 0u) << "a read returned bytes another page's late write-back left";
    EXPECT_TRUE(flush_until_written(a, 50));
    try {
      a.check();
    } catch (const nvme_error&) {
    }
  }
  const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < expected.size(); ++i) differ += r.image_word(i) != expected[i];
  EXPECT_EQ(differ, 0u) << "words of the image that are not what was written there";
  EXPECT_GT(r.ssd->stats().total().late, 0u);
}

TEST(CacheFailedWrites, ALoadEndsWithARecordedErrorWhenEveryWriteBackFails) {
  // Every line is dirty and every write-back fails (a read-only or failed namespace): a victim
  // is always claimed and always kept, and the load must still give up at its deadline.
  storage_config s = storage(1000 * ms);
  s.faults.write_error_rate = 1.0;
  rig r(64 * words_per_page, s, lines(8, 100 * ms));
  {
    array<std::uint64_t> a(*r.cache, r.set(), {.name = "failing"});
    const array_ref<std::uint64_t> ref = a.ref();
    for (std::uint64_t p = 0; p < 8; ++p) ASSERT_TRUE(ref.try_store(p * words_per_page, 1).ok());
    io_status got;
    finishes_within(
        10s,
        [&] {
          std::uint64_t v = 0;
          got = ref.try_read(8 * words_per_page, v);
        },
        "a load whose every victim fails its write-back");
    EXPECT_EQ(got.source(), status_source::cache_exhausted) << got.name();
    EXPECT_THROW(a.check(), nvme_error);
  }
  const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST(CacheLateWrites, AReaderThatGivesUpOnALineHeldByALateWriteBackLeavesARecord) {
  // One line. Page 0 is written, then evicted: its write-back outlives its timeout, so the
  // line stays held (with page 0 in it) until that write has run.
  storage_config s = storage(20 * ms);
  s.faults.write_late_rate = 1.0;
  s.faults.late_us = 500'000;
  rig r(8 * words_per_page, s, lines(1, 20 * ms));
  {
    array<std::uint64_t> a(*r.cache, r.set(), {.name = "held"});
    const array_ref<std::uint64_t> ref = a.ref();
    ASSERT_TRUE(ref.try_store(0, written_at(0, 1)).ok());
    std::uint64_t v = 0;
    EXPECT_FALSE(ref.try_read(words_per_page, v).ok()) << "its only line is held";
    EXPECT_THROW(a.check(), nvme_error);
    EXPECT_EQ(r.cache->held_resources().busy_lines, 1u);
    const io_status waited = ref.try_read(0, v);
    EXPECT_EQ(waited.source(), status_source::timeout) << waited.name();
    EXPECT_THROW(a.check(), nvme_error) << "an access that gave up waiting is reported";
    // The late write runs; its drain gives the line back, page 0 still in it.
    const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
    EXPECT_EQ(h.total(), 0u) << describe(h);
    ASSERT_TRUE(ref.try_read(0, v).ok());
    EXPECT_EQ(v, written_at(0, 1));
  }
}

TEST(CacheLateReads, AReadThroughThatFindsNoBounceBufferLeavesARecord) {
  storage_config s = storage(20 * ms);
  s.faults.late_rate = 1.0;
  s.faults.late_us = 300'000;
  cache_config c = lines(8, 20 * ms);
  c.mode = cache_mode::none;
  c.bounce_buffers = 1;
  rig r(8 * words_per_page, s, c);
  {
    array<const std::uint64_t> a(*r.cache, r.set(), {.name = "uncached"});
    const array_ref<const std::uint64_t> ref = a.ref();
    std::uint64_t v = 0;
    EXPECT_EQ(ref.try_read(0, v).source(), status_source::timeout);
    EXPECT_THROW(a.check(), nvme_error);
    EXPECT_EQ(r.cache->held_resources().bounce_buffers, 1u) << "the late read may still fill it";
    EXPECT_EQ(ref.try_read(1, v).source(), status_source::cache_exhausted);
    EXPECT_THROW(a.check(), nvme_error) << "no bounce buffer in time is reported";
  }
  const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

/// Stores to 64 pages twice over through four lines (nearly every load evicts a dirty line),
/// flushes, and checks the image; returns the array's statistics.
cache_stats store_through_four_lines(bool write_behind) {
  cache_config c = lines(4, 2'000 * ms);
  c.write_behind = write_behind;
  rig r(64 * words_per_page, storage(2'000 * ms), c);
  std::vector<std::uint64_t> expected(64 * words_per_page);
  for (std::uint64_t i = 0; i < expected.size(); ++i) expected[i] = word_at(i);
  cache_stats st;
  {
    array<std::uint64_t> a(*r.cache, r.set(), {.name = "behind"});
    const array_ref<std::uint64_t> ref = a.ref();
    for (std::uint64_t round = 0; round < 2; ++round) {
      for (std::uint64_t p = 0; p < 64; ++p) {
        const std::uint64_t i = p * words_per_page + round;
        EXPECT_TRUE(ref.try_store(i, written_at(i, round)).ok());
        expected[i] = written_at(i, round);
      }
    }
    a.flush();
    st = a.stats();
  }
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < expected.size(); ++i) differ += r.image_word(i) != expected[i];
  EXPECT_EQ(differ, 0u) << "words of the image that are not what was stored there";
  const cache_holds h = r.cache->held_resources();
  EXPECT_EQ(h.total(), 0u) << describe(h);
  return st;
}

TEST(CacheWriteBehind, DirtyVictimsAreWrittenBackBesideTheLoadsThatEvictThem) {
  // The first dirty victim of a load; a second is written back before the load, as always.
  const cache_stats st = store_through_four_lines(true);
  EXPECT_GT(st.write_backs_beside_loads, 0u);
  EXPECT_LE(st.write_backs_beside_loads, st.write_backs);
}

TEST(CacheWriteBehind, OffEveryDirtyVictimIsWrittenBackFirst) {
  const cache_stats st = store_through_four_lines(false);
  EXPECT_EQ(st.write_backs_beside_loads, 0u);
  EXPECT_GT(st.write_backs, 0u);
}

TEST(CacheLateReads, AFlushGivesBackWhatLateReadsHeldOnEveryQueue) {
  // Between launches nobody else drains the queues: flush() does, all of them (the FLUSH
  // command itself waits on queue 0 only).
  storage_config s = storage(20 * ms);
  s.faults.late_rate = 1.0;
  s.faults.late_us = 100'000;
  rig r(8 * words_per_page, s, lines(4, 200 * ms));
  array<std::uint64_t> a(*r.cache, r.set(), {.name = "late"});
  const array_ref<std::uint64_t> ref = a.ref();
  // A host thread's commands go to queue agent_index() % 4: read from queue 1, as a pool
  // worker of index 1 would (the pool sets the index of its workers this way).
  std::thread([&] {
    detail::host_agent = 1;
    ASSERT_EQ(agent_index() % s.queues_per_device, 1u);
    for (std::uint64_t p = 0; p < 4; ++p) {
      std::uint64_t v = 0;
      EXPECT_EQ(ref.try_read(p * words_per_page, v).source(), status_source::timeout);
    }
  }).join();
  EXPECT_THROW(a.check(), nvme_error);
  cache_holds h = r.cache->held_resources();
  EXPECT_EQ(h.busy_lines, 4u) << "each late read may still fill its line";
  for (int t = 0; t < 100 && h.total() != 0; ++t) {
    std::this_thread::sleep_for(20ms);  // until the late completions have been posted
    try {
      a.flush();  // its own FLUSH is late too: it times out, after draining
    } catch (const nvme_error&) {
    }
    h = r.cache->held_resources();
  }
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST(CacheLateReads, LinesWhoseReadsTimedOutComeBackWhenTheLateCompletionsAreDrained) {
  storage_config s = storage(20 * ms);
  s.faults.late_rate = 1.0;
  s.faults.late_us = 100'000;
  rig r(8 * words_per_page, s, lines(4, 200 * ms));
  {
    array<const std::uint64_t> a(*r.cache, r.set(), {.name = "late"});
    const array_ref<const std::uint64_t> ref = a.ref();
    for (std::uint64_t p = 0; p < 4; ++p) {
      std::uint64_t v = 0;
      EXPECT_EQ(ref.try_read(p * words_per_page, v).source(), status_source::timeout);
    }
    EXPECT_EQ(r.cache->held_resources().busy_lines, 4u) << "each late read may still fill its line";
    EXPECT_THROW(a.check(), nvme_error);
  }
  const cache_holds h = drain_until_released(*r.cache, r.set(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

}  // namespace
