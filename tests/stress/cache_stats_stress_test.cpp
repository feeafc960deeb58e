// The sharded statistics add up after heavy concurrent use, and agree with what the devices
// saw: every access is counted once as a probe, a coalesced access, a reused pin or a
// read-through read; every I/O command is a load, a write-back or a read-through read.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"
#include "software_warp.hpp"

namespace {

using namespace bam;
using namespace bam::stress;
using bam::testing::run_software_warps;

/// The identities every cache_stats must satisfy. `block_bytes` is what one read-through read
/// of one element moves; lines are whole (the data is a multiple of the line).
void expect_consistent(const cache_stats& s, std::uint32_t line_bytes, std::uint32_t block_bytes,
                       std::uint64_t element_bytes) {
  EXPECT_EQ(s.probes(), s.hits + s.misses);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused + s.read_through);
  EXPECT_EQ(s.io_commands(), s.loads + s.write_backs + s.read_through);
  EXPECT_LE(s.loads, s.misses);
  EXPECT_LE(s.miss_waits, s.misses);
  EXPECT_LE(s.evictions, s.loads);
  EXPECT_EQ(s.bytes_requested, s.accesses * element_bytes);
  EXPECT_EQ(s.bytes_moved,
            (s.loads + s.write_backs) * line_bytes + s.read_through * std::uint64_t{block_bytes});
  EXPECT_EQ(s.errors, 0u);
}

/// The devices' commands equal the cache's (one device, no replication).
void expect_devices_agree(const cache_stats& s, const emulated_storage& ssd) {
  const device_stats d = ssd.stats().total();
  EXPECT_EQ(d.reads, s.loads + s.read_through);
  EXPECT_EQ(d.writes, s.write_backs);
}

class CacheStats : public ::testing::TestWithParam<cache_mode> {};

std::string mode_name(const ::testing::TestParamInfo<cache_mode>& info) {
  return to_string(info.param);
}

TEST_P(CacheStats, CountersAddUpAfterConcurrentRandomReads) {
  const std::uint64_t words = 128 * 1024;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = 64 * 1024, .mode = GetParam()}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const auto threads = static_cast<unsigned>(scaled(128, 48));
  read_tally tally;
  const random_reader reader{a.ref(), scaled(1500, 150), 0, &tally, 8};
  run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  ASSERT_EQ(tally.failed.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, tally.reads.load());
  expect_consistent(s, 4096, 512, 8);
  expect_devices_agree(s, *r.ssd);
  if (GetParam() != cache_mode::none) {
    EXPECT_GT(s.hits, 0u);
    EXPECT_GT(s.misses, 0u);
    EXPECT_EQ(s.coalesced + s.reused, 0u) << "plain threads are warps of one lane";
  }
}

TEST_P(CacheStats, CountersAddUpAfterConcurrentWrites) {
  if (GetParam() == cache_mode::none) GTEST_SKIP() << "mode none serves read-only arrays";
  const std::uint64_t words = scaled(64 * 1024, 16 * 1024);
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024, .mode = GetParam()}, 8);
  array<std::uint64_t> a(r.cache(), r.set());
  const array_ref<std::uint64_t> ref = a.ref();
  const auto threads = static_cast<unsigned>(scaled(64, 24));
  run_threads(threads, [&](unsigned t) {
    for (std::uint64_t i = t; i < words; i += threads) ref.store(i, written_word(i));
  });
  a.flush();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, words);
  EXPECT_GT(s.write_backs, 0u);
  expect_consistent(s, 512, 512, 8);
  expect_devices_agree(s, *r.ssd);
}

INSTANTIATE_TEST_SUITE_P(EveryMode, CacheStats,
                         ::testing::Values(cache_mode::none, cache_mode::naive,
                                           cache_mode::optimized),
                         mode_name);

TEST(CacheStatsWarp, CountersAddUpWithWarpCoalescingAndReferenceReuse) {
  const std::uint64_t words = 64 * 1024;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 64 * 512, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  const std::uint64_t rounds = scaled(300, 30);
  constexpr unsigned warps = 4, width = 8;
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g(warp + 1);
    auto cursor = ref.reader();
    for (std::uint64_t n = 0; n < rounds; ++n) {
      const std::uint64_t start = g.below(words - 4 * width);
      std::uint64_t v = 0;
      (void)ref.try_read(start + lane, v);             // coalesced over the warp
      (void)cursor.try_read(start + 3 * lane, v);      // lanes share lines, some keep theirs
      (void)cursor.try_read(start + 3 * lane + 1, v);  // mostly the same line again
    }
  });
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, 3 * rounds * warps * width);
  EXPECT_GT(s.coalesced, 0u);
  EXPECT_GT(s.reused, 0u);
  expect_consistent(s, 512, 512, 8);
  expect_devices_agree(s, *r.ssd);
}

TEST(CacheStatsLaunch, CountersAddUpForTheReadThroughFallback) {
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), fast_storage(), {.line_bytes = 4096, .capacity_bytes = 4 * 4096}, 64);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(4, 64);
  ASSERT_TRUE(ref.reads_through());
  read_tally tally;
  launch(*r.stream, 4, 64, random_reader{ref, scaled(200, 20), 0, &tally});
  r.stream->synchronize();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.read_through, tally.reads.load());
  expect_consistent(s, 4096, 512, 8);
  expect_devices_agree(s, *r.ssd);
}

TEST(CacheStatsHost, HostReadsAndWritesKeepTheCountersConsistent) {
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), fast_storage(), {.line_bytes = 512, .capacity_bytes = 8 * 1024}, 8);
  array<std::uint64_t> a(r.cache(), r.set());
  (void)a.read(0, words);
  a.write(100, std::vector<std::uint64_t>(1000, 7));
  a.flush();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.bytes_requested, (words + 1000) * 8);
  EXPECT_LE(s.loads, s.misses);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused + s.read_through);
  expect_devices_agree(s, *r.ssd);
}

}  // namespace
