// The cache never deadlocks on its own size (DESIGN section 5): a 16-line cache serves 256
// threads, through the cache itself and through ref_for_launch's read-through fallback.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

constexpr unsigned tiny_threads = 256;
constexpr std::uint32_t tiny_lines = 16;

class TinyCache : public ::testing::TestWithParam<cache_mode> {};

std::string mode_name(const ::testing::TestParamInfo<cache_mode>& info) {
  return to_string(info.param);
}

TEST_P(TinyCache, SixteenLinesServeTwoHundredFiftySixRawThreads) {
  const std::uint64_t words = 64 * 1024;  // 128 lines of data for 16 lines of cache
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = tiny_lines * 4096, .mode = GetParam()}, 8);
  ASSERT_EQ(r.cache().lines(), tiny_lines);
  array<const std::uint64_t> a(r.cache(), r.set());
  read_tally tally;
  const random_reader reader{a.ref(), scaled(400, 40), 0, &tally};
  run_threads(tiny_threads, [&](unsigned t) { reader(thread_index{t, tiny_threads}); });
  EXPECT_EQ(tally.reads.load(), tiny_threads * reader.per_thread);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first wrong element " << tally.first_wrong_index.load();
  EXPECT_NO_THROW(a.check());
}

TEST_P(TinyCache, SixteenLinesServeTwoHundredFiftySixWritersAndReaders) {
  if (GetParam() == cache_mode::none) GTEST_SKIP() << "mode none serves read-only arrays";
  const std::uint64_t words = scaled(16 * 1024, 4 * 1024);
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = tiny_lines * 512, .mode = GetParam()}, 8);
  {
    array<std::uint64_t> a(r.cache(), r.set());
    const array_ref<std::uint64_t> ref = a.ref();
    std::atomic<std::uint64_t> failed{0}, wrong{0};
    run_threads(tiny_threads, [&](unsigned t) {
      for (std::uint64_t i = t; i < words; i += tiny_threads) {
        if (i % 2 == 0) {
          if (!ref.try_store(i, written_word(i)).ok()) failed.fetch_add(1);
        } else {
          std::uint64_t v = 0;
          if (!ref.try_read(i, v).ok()) {
            failed.fetch_add(1);
          } else if (v != pattern_word(i)) {
            wrong.fetch_add(1);
          }
        }
      }
    });
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    a.flush();
  }
  const std::vector<std::uint64_t> got = file.words();
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < words; ++i) {
    differ += got[i] != (i % 2 == 0 ? written_word(i) : pattern_word(i));
  }
  EXPECT_EQ(differ, 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryMode, TinyCache,
                         ::testing::Values(cache_mode::none, cache_mode::naive,
                                           cache_mode::optimized),
                         mode_name);

TEST(TinyCacheLaunch, ALaunchTooLargeForTheCacheReadsThroughAndReturnsTheRightBytes) {
  const std::uint64_t words = 64 * 1024;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = tiny_lines * 4096}, tiny_threads);
  array<const std::uint64_t> a(r.cache(), r.set());
  // 1024 threads are 32 warps of 32: at least 64 lines would be needed.
  const std::uint32_t grid = 8, block = 128;
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(grid, block);
  ASSERT_TRUE(ref.reads_through());
  read_tally tally;
  const random_reader reader{ref, scaled(100, 10), 0, &tally};
  launch(*r.stream, grid, block, reader);
  r.stream->synchronize();
  EXPECT_EQ(tally.reads.load(), std::uint64_t{grid} * block * reader.per_thread);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first wrong element " << tally.first_wrong_index.load();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.read_through, tally.reads.load());
  EXPECT_EQ(s.probes(), 0u);
}

TEST(TinyCacheLaunch, ALaunchThatFitsTheCacheUsesIt) {
  rig r(pattern_image(8 * 1024), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = tiny_lines * 4096}, tiny_threads);
  array<const std::uint64_t> a(r.cache(), r.set());
  // A CPU thread is a warp of one lane: 8 threads are 8 warps, and 16 lines are enough.
  EXPECT_FALSE(a.ref_for_launch(1, 8).reads_through());
}

TEST(TinyCacheLaunch, AWritableArrayRefusesALaunchTooLargeForTheCache) {
  rig r(pattern_image(8 * 1024), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = tiny_lines * 4096}, tiny_threads);
  array<std::uint64_t> a(r.cache(), r.set());
  EXPECT_THROW((void)a.ref_for_launch(8, 128), input_error);
}

}  // namespace
