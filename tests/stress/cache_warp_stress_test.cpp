// Warp coalescing and reference reuse (cache_mode::optimized) under the test-only software
// warp, so ThreadSanitizer sees the leader/follower hand-off of match_any and shfl.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"
#include "software_warp.hpp"

namespace {

using namespace bam;
using namespace bam::stress;
using bam::testing::run_software_warps;

constexpr unsigned warps = 4;
constexpr unsigned width = 8;

/// Every line's pin count (all zero once every access and cursor has finished).
std::uint64_t pins_left(const page_cache& cache) {
  const page_cache_ref c = cache.ref();
  std::uint64_t pins = 0;
  for (std::uint32_t l = 0; l < c.lines(); ++l) pins += cache::line_pins(c.line_state(l));
  return pins;
}

TEST(CacheWarp, LanesTouchingOneLineShareOneProbe) {
  const std::uint64_t words = 64 * 1024;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 32 * 1024, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  const std::uint64_t rounds = scaled(1000, 100);
  std::atomic<std::uint64_t> wrong{0}, failed{0};
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g(warp + 1);  // the same sequence in every lane of a warp
    for (std::uint64_t n = 0; n < rounds; ++n) {
      // Lanes read a run of elements from a random start: one or two lines per round, and
      // on odd rounds half the lanes read a second run elsewhere.
      const std::uint64_t start = g.below(words - 2 * width);
      const std::uint64_t other = g.below(words - 2 * width);
      const std::uint64_t i = (n % 2 == 1 && lane % 2 == 1 ? other : start) + lane;
      std::uint64_t v = 0;
      if (!ref.try_read(i, v).ok()) {
        failed.fetch_add(1);
      } else if (v != pattern_word(i)) {
        wrong.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, rounds * warps * width);
  EXPECT_GT(s.coalesced, s.accesses / 2) << "most lanes should ride on another lane's probe";
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced);
  EXPECT_EQ(pins_left(r.cache()), 0u);
}

TEST(CacheWarp, LanesReadingDifferentArraysInOneCollectiveGetTheirOwnBytes) {
  // Two arrays of one cache whose page numbers coincide: lanes of one warp that read the same
  // page number of different arrays must not be grouped behind one probe.
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(2 * words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 32 * 1024, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> low(r.cache(), r.set(), {.count = words});
  array<const std::uint64_t> high(r.cache(), r.set(), {.offset_bytes = words * 8, .count = words});
  const array_ref<const std::uint64_t> refs[2] = {low.ref(), high.ref()};
  const std::uint64_t rounds = scaled(500, 60);
  std::atomic<std::uint64_t> wrong{0}, failed{0};
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g(warp + 1);
    for (std::uint64_t n = 0; n < rounds; ++n) {
      const std::uint64_t i = g.below(words - width) + lane / 2;
      const unsigned k = lane % 2;
      std::uint64_t v = 0;
      if (!refs[k].try_read(i, v).ok()) {
        failed.fetch_add(1);
      } else if (v != pattern_word(k * words + i)) {
        wrong.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(pins_left(r.cache()), 0u);
}

TEST(CacheWarp, CursorsKeepTheirPinWhileWalkingALineAndDropItAtTheEnd) {
  const std::uint64_t words = 64 * 1024;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 64 * 512, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  const std::uint64_t walks = scaled(200, 25);
  const std::uint64_t walk = 24;  // elements per walk: spans two or three 64-element lines
  read_tally tally;
  walk_with_cursors(ref, words, warps, width, walks, walk, tally);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first at " << tally.first_wrong_index.load();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, walks * walk * warps * width);
  EXPECT_GT(s.reused, s.accesses / 2) << "most accesses should reuse the cursor's pin";
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused);
  EXPECT_EQ(pins_left(r.cache()), 0u);
}

TEST(CacheWarp, ReadIfPinnedServesTheRestOfTheLineACursorHolds) {
  const std::uint64_t words = 64 * 1024;
  constexpr std::uint64_t per_line = 512 / 8;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 64 * 512, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  const std::uint64_t walks = scaled(300, 40);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, reads{0}, strays{0};
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g(warp + 1);  // the lanes of a warp walk the same lines, so they share probes and pins
    auto cursor = ref.reader();
    for (std::uint64_t n = 0; n < walks; ++n) {
      const std::uint64_t first = g.below(words / per_line) * per_line;
      std::uint64_t v = 0;
      reads.fetch_add(1);
      if (!cursor.try_read(first + lane, v).ok()) {
        failed.fetch_add(1);
        continue;
      }
      if (v != pattern_word(first + lane)) wrong.fetch_add(1);
      for (std::uint64_t e = first + lane + width; e < first + per_line; e += width) {
        reads.fetch_add(1);
        if (!cursor.read_if_pinned(e, v)) {
          failed.fetch_add(1);
        } else if (v != pattern_word(e)) {
          wrong.fetch_add(1);
        }
      }
      // An element of another line is not read through the pin.
      if (cursor.read_if_pinned((first + per_line + lane) % words, v)) strays.fetch_add(1);
    }
  });
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(strays.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, reads.load());
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused);
  EXPECT_GT(s.coalesced, 0u) << "lanes moving to one line should share a probe";
  EXPECT_EQ(pins_left(r.cache()), 0u);
}

TEST(CacheWarp, CursorWritesReachTheFile) {
  const std::uint64_t chunk = scaled(1024, 256);  // elements per lane
  const std::uint64_t words = chunk * warps * width;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 64 * 512, .mode = cache_mode::optimized}, 8);
  {
    array<std::uint64_t> a(r.cache(), r.set());
    const array_ref<std::uint64_t> ref = a.ref();
    // Lane (warp, lane) owns a contiguous chunk and walks it with a cursor, writing every
    // element; the warp's lanes walk their chunks in step, so lines change under every lane.
    run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
      auto cursor = ref.reader();
      const std::uint64_t first = (std::uint64_t{warp} * width + lane) * chunk;
      for (std::uint64_t i = first; i < first + chunk; ++i) cursor.store(i, written_word(i));
    });
    EXPECT_EQ(pins_left(r.cache()), 0u);
    a.flush();
    EXPECT_NO_THROW(a.check());
  }
  const std::vector<std::uint64_t> got = file.words();
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < words; ++i) differ += got[i] != written_word(i);
  EXPECT_EQ(differ, 0u);
}

}  // namespace
