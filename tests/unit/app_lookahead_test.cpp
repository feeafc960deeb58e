// Reading ahead in for_each_neighbour: lanes of a warp start the loads of the next lines of a
// long adjacency list together. Which entry each lane reads, that a software warp still visits
// every neighbour exactly once, and when array::ref_for_launch allows it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "apps/kernel_support.hpp"
#include "software_warp.hpp"

namespace bam::apps {
namespace {

/// Lines of four entries, the first line starting at entry 0.
struct four_per_line {
  [[nodiscard]] std::uint32_t lookahead_lines() const { return 4; }
  [[nodiscard]] std::uint64_t line_index(std::uint64_t i) const { return i / 4; }
  [[nodiscard]] std::uint64_t line_first(std::uint64_t line) const { return line * 4; }
};

TEST(Lookahead, LaneKReadsTheKthLineFromTheWarpsPositionClippedToTheList) {
  const four_per_line v;
  // A list [5, 30): the warp is at entry 5, in line 1.
  EXPECT_EQ(lookahead_target(v, 5, 5, 30, 0, 4), 5u);  // line 1 starts before the list
  EXPECT_EQ(lookahead_target(v, 5, 5, 30, 1, 4), 8u);
  EXPECT_EQ(lookahead_target(v, 5, 5, 30, 3, 4), 16u);
  EXPECT_EQ(lookahead_target(v, 5, 5, 30, 4, 4), 30u);  // past the look-ahead: none
  // Near the end of the list a lane's line can start past it.
  EXPECT_GE(lookahead_target(v, 24, 5, 30, 2, 4), 30u);
}

constexpr std::uint64_t entries = 64 * 1024;  // 512 KiB of 8-byte ids

/// Entry i holds i * 7 + 3 (any value a test can recompute).
std::uint64_t id_at(std::uint64_t i) { return i * 7 + 3; }

struct id_set {
  explicit id_set(const cache_config& config)
      : ssd(storage_config{}, backing_store::in_memory(entries * 8)),
        stream(2),
        cache(config, stream) {
    std::vector<std::uint64_t> ids(entries);
    for (std::uint64_t i = 0; i < entries; ++i) ids[i] = id_at(i);
    std::memcpy(ssd.image().data(), ids.data(), entries * 8);
    ssd.start();
  }
  emulated_storage ssd;
  host_stream stream;
  page_cache cache;
};

/// A cache of 256 lines of 4 KiB: base pages, or (two_level) all of them in 16 frames of 16.
cache_config lookahead_cache(translation_kind t, pinning_kind p) {
  cache_config c{.line_bytes = 4096, .capacity_bytes = 1u << 20};
  c.translation = t;
  c.pinning = p;
  c.frame_bytes = 16 * 4096;
  c.frame_percent = 100;
  return c;
}

struct lookahead_case {
  translation_kind translation;
  pinning_kind pinning;
};

std::string lookahead_case_name(const ::testing::TestParamInfo<lookahead_case>& p) {
  return std::string(to_string(p.param.translation)) + "_" + to_string(p.param.pinning);
}

class LookaheadWalk : public ::testing::TestWithParam<lookahead_case> {};

TEST_P(LookaheadWalk, ASoftwareWarpVisitsEveryNeighbourOnceWhileReadingAhead) {
  // 4 KiB lines: the list below covers 40 lines, read ahead 8 at a time; on a two_level cache
  // the array is dense (its cursors keep frame pins under frame pins).
  const lookahead_case c = GetParam();
  id_set s(lookahead_cache(c.translation, c.pinning));
  const bool dense = c.translation == translation_kind::two_level;
  const array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.name = "ids", .dense = dense});
  array_ref<const std::uint64_t> ref = a.ref();
  EXPECT_EQ(ref.slot().large_table != nullptr, dense);
  EXPECT_GT(a.ref_for_launch(1, 1).lookahead_lines(), 0u);
  ref.set_lookahead_lines(8);
  const std::uint64_t begin = 1000, end = begin + 40 * 512;
  constexpr unsigned width = 8;
  std::mutex m;
  std::vector<std::uint64_t> seen;
  std::uint64_t bad = 0;
  testing::run_software_warps(1, width, [&](unsigned lane, unsigned) {
    const warp_position w{0, 1, lane, width};
    for_each_neighbour(ref, w, edge_slice::whole(entries, ~0ull), begin, end, ~0ull, &bad,
                       [&](std::uint64_t v) {
                         std::lock_guard lock(m);
                         seen.push_back(v);
                       });
  });
  std::sort(seen.begin(), seen.end());
  std::vector<std::uint64_t> want;
  for (std::uint64_t i = begin; i < end; ++i) want.push_back(id_at(i));
  EXPECT_EQ(seen, want);
  EXPECT_EQ(bad, 0u);
  const cache_stats st = a.stats();
  EXPECT_EQ(st.errors, 0u);
  // The reads ahead are extra accesses: more accesses than entries shows they happened.
  EXPECT_GT(st.accesses, end - begin);
  EXPECT_EQ(st.accesses, st.probes() + st.coalesced + st.reused);
  EXPECT_NO_THROW(a.check());
}

INSTANTIATE_TEST_SUITE_P(
    BaseAndDense, LookaheadWalk,
    ::testing::Values(lookahead_case{translation_kind::base, pinning_kind::frame_pins},
                      lookahead_case{translation_kind::two_level, pinning_kind::frame_pins},
                      lookahead_case{translation_kind::two_level, pinning_kind::epochs}),
    lookahead_case_name);

TEST(Lookahead, RefForLaunchAllowsItOnlyWithLinesToSpare) {
  // A launch of one warp: a quarter of the cache's lines per warp, at most 32.
  id_set big({.line_bytes = 4096, .capacity_bytes = 1u << 20});  // 256 lines
  const array<const std::uint64_t> a(big.cache, big.ssd.ref(), {.name = "ids"});
  EXPECT_EQ(a.ref_for_launch(1, 1).lookahead_lines(), 32u);

  id_set small({.line_bytes = 4096, .capacity_bytes = 8 * 4096});
  const array<const std::uint64_t> b(small.cache, small.ssd.ref(), {.name = "ids"});
  EXPECT_EQ(b.ref_for_launch(1, 1).lookahead_lines(), 2u);

  id_set naive({.line_bytes = 4096, .capacity_bytes = 1u << 20, .mode = cache_mode::naive});
  const array<const std::uint64_t> c(naive.cache, naive.ssd.ref(), {.name = "ids"});
  EXPECT_EQ(c.ref_for_launch(1, 1).lookahead_lines(), 0u);
  EXPECT_EQ(a.ref().lookahead_lines(), 0u);  // only a launch's view reads ahead
}

TEST(Lookahead, ArrayRefLineIndexAndLineFirstAgreeWithAnOffset) {
  id_set s({.line_bytes = 4096, .capacity_bytes = 1u << 20});
  // Element 0 sits 24 bytes into line 0.
  const array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.offset_bytes = 24, .name = "ids"});
  const array_ref<const std::uint64_t> r = a.ref();
  EXPECT_EQ(r.line_index(0), 0u);
  EXPECT_EQ(r.line_first(0), 0u);
  EXPECT_EQ(r.line_index(508), 0u);  // byte 24 + 508 * 8 = 4088
  EXPECT_EQ(r.line_index(509), 1u);
  EXPECT_EQ(r.line_first(1), 509u);
  EXPECT_EQ(r.line_first(2), 509u + 512u);
}

}  // namespace
}  // namespace bam::apps
