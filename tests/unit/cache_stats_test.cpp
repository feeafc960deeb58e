// Cache statistics: the derived figures, adding shards, and where a kernel's counts land.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/cache/stats.hpp>
#include <bam/platform/agent.hpp>

namespace {

using namespace bam;

TEST(CacheStatsFigures, ProbesAreHitsPlusMisses) {
  cache_stats s;
  s.hits = 7;
  s.misses = 5;
  EXPECT_EQ(s.probes(), 12u);
  EXPECT_DOUBLE_EQ(s.hit_rate(), 7.0 / 12.0);
}

TEST(CacheStatsFigures, IoCommandsAreLoadsWriteBacksAndReadThroughReads) {
  cache_stats s;
  s.loads = 3;
  s.write_backs = 4;
  s.read_through = 5;
  EXPECT_EQ(s.io_commands(), 12u);
}

TEST(CacheStatsFigures, AmplificationIsBytesMovedOverBytesRequested) {
  cache_stats s;
  s.bytes_requested = 8;
  s.bytes_moved = 4096;
  EXPECT_DOUBLE_EQ(s.amplification(), 512.0);
}

TEST(CacheStatsFigures, RatiosOfNothingAreZero) {
  const cache_stats s;
  EXPECT_EQ(s.hit_rate(), 0.0);
  EXPECT_EQ(s.amplification(), 0.0);
}

TEST(CacheStatsFigures, AddingSumsEveryCounter) {
  cache_stats a, b;
  std::uint64_t cache_stats::*const all[] = {&cache_stats::accesses,
                                             &cache_stats::hits,
                                             &cache_stats::misses,
                                             &cache_stats::miss_waits,
                                             &cache_stats::coalesced,
                                             &cache_stats::reused,
                                             &cache_stats::loads,
                                             &cache_stats::write_backs,
                                             &cache_stats::read_through,
                                             &cache_stats::evictions,
                                             &cache_stats::bytes_requested,
                                             &cache_stats::bytes_moved,
                                             &cache_stats::errors,
                                             &cache_stats::bytes_fetched,
                                             &cache_stats::write_backs_beside_loads,
                                             &cache_stats::prefetched,
                                             &cache_stats::zero_filled,
                                             &cache_stats::coalesces,
                                             &cache_stats::promotions,
                                             &cache_stats::splinters,
                                             &cache_stats::bytes_compacted,
                                             &cache_stats::fills};
  static_assert(sizeof(all) / sizeof(all[0]) * 8 == sizeof(cache_stats), "a counter is missing");
  std::uint64_t k = 1;
  for (auto m : all) {
    a.*m = k;
    b.*m = 100 * k;
    ++k;
  }
  a += b;
  k = 1;
  for (auto m : all) {
    EXPECT_EQ(a.*m, 101 * k);
    ++k;
  }
}

TEST(CacheStatsShards, EachShardSitsOnItsOwnHotLine) {
  EXPECT_EQ(alignof(stat_shard), hot_line_bytes);
  EXPECT_EQ(sizeof(stat_shard) % hot_line_bytes, 0u);
}

TEST(CacheStatsShards, AnAgentAddsToItsOwnShard) {
  std::vector<stat_shard> shards(8);
  const stats_ref ref{shards.data(), 8};
  ref.add(&cache_stats::hits, 3);
  ref.add(&cache_stats::hits, 0);  // adding nothing touches nothing
  const std::uint32_t mine = agent_index() % 8;
  for (std::uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(shards[i].counters.hits, i == mine ? 3u : 0u) << "shard " << i;
  }
}

}  // namespace
