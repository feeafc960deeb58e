// Many CPU threads reading a file through a cache much smaller than it, in every cache mode,
// with 512 B and 4 KiB lines: every read returns the file's bytes.

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

enum class driver { raw_threads, launch };

struct read_case {
  std::uint32_t line_bytes;
  cache_mode mode;
  driver by;
};

std::string case_name(const ::testing::TestParamInfo<read_case>& info) {
  const read_case& c = info.param;
  return "Line" + std::to_string(c.line_bytes) + "_" + to_string(c.mode) + "_" +
         (c.by == driver::raw_threads ? "RawThreads" : "Launch");
}

class CacheReads : public ::testing::TestWithParam<read_case> {};

TEST_P(CacheReads, EveryReadReturnsTheFilesBytes) {
  const read_case c = GetParam();
  const std::uint64_t words = 128 * 1024;  // 1 MiB of data, 8 times the cache
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), false), fast_storage(),
        {.line_bytes = c.line_bytes, .capacity_bytes = 128 * 1024, .mode = c.mode}, 64);
  array<const std::uint64_t> a(r.cache(), r.set(), {.name = "pattern"});
  ASSERT_EQ(a.size(), words);

  const auto threads = static_cast<unsigned>(scaled(128, 64));
  read_tally tally;
  const random_reader reader{a.ref(), scaled(2000, 150), 0, &tally};
  if (c.by == driver::raw_threads) {
    run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  } else {
    launch(*r.stream, threads / 32, 32, reader);
    r.stream->synchronize();
  }

  EXPECT_EQ(tally.reads.load(), threads * reader.per_thread);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first wrong element " << tally.first_wrong_index.load();
  EXPECT_NO_THROW(a.check());
  const cache_stats s = a.stats();
  if (c.mode == cache_mode::none) {
    EXPECT_EQ(s.read_through, tally.reads.load());
  } else {
    EXPECT_GT(s.evictions, 0u) << "the data should not fit in the cache";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryModeAndLineSize, CacheReads,
    ::testing::Values(read_case{512, cache_mode::none, driver::raw_threads},
                      read_case{512, cache_mode::naive, driver::raw_threads},
                      read_case{512, cache_mode::optimized, driver::raw_threads},
                      read_case{4096, cache_mode::none, driver::raw_threads},
                      read_case{4096, cache_mode::naive, driver::raw_threads},
                      read_case{4096, cache_mode::optimized, driver::raw_threads},
                      read_case{512, cache_mode::naive, driver::launch},
                      read_case{512, cache_mode::optimized, driver::launch},
                      read_case{4096, cache_mode::none, driver::launch},
                      read_case{4096, cache_mode::naive, driver::launch},
                      read_case{4096, cache_mode::optimized, driver::launch}),
    case_name);

TEST(CacheReads, AHostReadOfTheWholeArrayEqualsTheFile) {
  const std::uint64_t words = 64 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), false), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = 64 * 1024});
  array<const std::uint64_t> a(r.cache(), r.set());
  const std::vector<std::uint64_t> got = a.read(0, words);
  EXPECT_EQ(got, file.words());
}

TEST(CacheReads, DataThatFitsInTheCacheIsNeverEvicted) {
  // Half the cache's lines hold the data: loading it must take free lines, never evict, and
  // every read after that is a hit.
  const std::uint64_t words = 128 * 1024;  // 1 MiB
  rig r(pattern_image(words), fast_storage(), {.line_bytes = 4096, .capacity_bytes = 2 << 20}, 16);
  array<const std::uint64_t> a(r.cache(), r.set());
  EXPECT_EQ(a.read(0, words)[words - 1], pattern_word(words - 1));
  const cache_stats warm = a.stats();
  EXPECT_EQ(warm.loads, words * 8 / 4096);
  EXPECT_EQ(warm.evictions, 0u);
  a.reset_stats();
  const auto threads = static_cast<unsigned>(scaled(64, 16));
  read_tally tally;
  const random_reader reader{a.ref(), scaled(2000, 200), 0, &tally};
  run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  EXPECT_EQ(tally.wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.hits, tally.reads.load());
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.evictions, 0u);
}

TEST(CacheReads, AnArrayAtAnOffsetReadsItsOwnElements) {
  // The extent starts mid-line (byte 16, as EMOGI's .bel data does) and ends mid-line.
  const std::uint64_t words = 32 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), false), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024});
  array<const std::uint64_t> a(r.cache(), r.set(), {.offset_bytes = 16, .count = words - 5});
  const auto threads = static_cast<unsigned>(scaled(64, 32));
  read_tally tally;
  const random_reader reader{a.ref(), scaled(1000, 100), 2, &tally};
  run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first wrong element " << tally.first_wrong_index.load();
}

}  // namespace
