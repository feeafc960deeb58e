// Writers through a cache much smaller than the data: dirty lines are written back on
// eviction and by flush(), and the backing file ends up holding exactly what was written.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

struct write_case {
  std::uint32_t line_bytes;
  cache_mode mode;
};

std::string case_name(const ::testing::TestParamInfo<write_case>& info) {
  return "Line" + std::to_string(info.param.line_bytes) + "_" + to_string(info.param.mode);
}

/// Indices where `file` differs from `expected` (up to a few, for the message).
std::string differences(const std::vector<std::uint64_t>& file,
                        const std::vector<std::uint64_t>& expected) {
  if (file.size() != expected.size()) {
    return "file has " + std::to_string(file.size()) + " words, expected " +
           std::to_string(expected.size());
  }
  std::string out;
  std::uint64_t count = 0;
  for (std::uint64_t i = 0; i < file.size(); ++i) {
    if (file[i] == expected[i]) continue;
    if (++count <= 5) out += " " + std::to_string(i);
  }
  return count ? std::to_string(count) + " words differ, first at" + out : "";
}

class CacheWrites : public ::testing::TestWithParam<write_case> {};

TEST_P(CacheWrites, DisjointWritersThenFlushLeaveTheExpectedFile) {
  const write_case c = GetParam();
  const std::uint64_t words = scaled(128 * 1024, 24 * 1024);  // 16 or 3 times the cache
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = c.line_bytes, .capacity_bytes = 64 * 1024, .mode = c.mode}, 16);
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) expected[i] = pattern_word(i);
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "written"});
    const array_ref<std::uint64_t> ref = a.ref();
    // Thread t owns the elements i with i % threads == t, and writes a random subset of them
    // (every third one it visits, in a shuffled order), so each line has several writers.
    const auto threads = static_cast<unsigned>(scaled(128, 48));
    const std::uint64_t stride = threads;
    run_threads(threads, [&](unsigned t) {
      const std::uint64_t mine = (words - t + stride - 1) / stride;
      rng g(t + 7);
      const std::uint64_t step = mine % 7919 == 0 ? 1 : 7919;  // visits each element once
      std::uint64_t k = g.below(mine);
      for (std::uint64_t n = 0; n < mine; ++n, k = (k + step) % mine) {
        const std::uint64_t i = t + k * stride;
        if (i % 3 != 0) continue;
        EXPECT_TRUE(ref.try_store(i, written_word(i)).ok());
      }
    });
    for (std::uint64_t i = 0; i < words; i += 3) expected[i] = written_word(i);
    EXPECT_GT(a.stats().write_backs, 0u) << "evictions should have written lines back";
    a.flush();
    EXPECT_NO_THROW(a.check());
  }
  EXPECT_EQ(differences(file.words(), expected), "");
}

INSTANTIATE_TEST_SUITE_P(WritableModesAndLineSizes, CacheWrites,
                         ::testing::Values(write_case{512, cache_mode::naive},
                                           write_case{512, cache_mode::optimized},
                                           write_case{4096, cache_mode::naive},
                                           write_case{4096, cache_mode::optimized}),
                         case_name);

/// Lines of more than two memory pages carry a PRP list each. Enough lines that the lists of
/// some would cross a memory page if they were packed end to end (at 3 entries a 16 KiB line,
/// line 170's did, and every read and write-back on it was rejected before submission).
class CacheLongLines : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(CacheLongLines, EveryLineReadsAndWritesBack) {
  const std::uint32_t line_bytes = GetParam();
  const std::uint64_t lines = 192;  // > 4096 / 24: the first list that packed lists cross
  const std::uint64_t words = 2 * lines * line_bytes / 8;  // twice the cache
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(2),
        {.line_bytes = line_bytes, .capacity_bytes = lines * line_bytes}, 4);
  std::vector<std::uint64_t> expected(words);
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "long lines"});
    const array_ref<std::uint64_t> ref = a.ref();
    for (std::uint64_t i = 0; i < words; ++i) {
      std::uint64_t v = 0;
      ASSERT_TRUE(ref.try_read(i, v).ok()) << "element " << i;
      ASSERT_EQ(v, pattern_word(i)) << "element " << i;
    }
    for (std::uint64_t i = 0; i < words; ++i) {
      expected[i] = i % 5 == 0 ? written_word(i) : pattern_word(i);
      if (i % 5 == 0) {
        ASSERT_TRUE(ref.try_store(i, written_word(i)).ok()) << "element " << i;
      }
    }
    EXPECT_GT(a.stats().write_backs, 0u) << "evictions should have written lines back";
    a.flush();
    EXPECT_NO_THROW(a.check());
  }
  EXPECT_EQ(differences(file.words(), expected), "");
}

INSTANTIATE_TEST_SUITE_P(LinesOfMoreThanTwoPages, CacheLongLines,
                         ::testing::Values(16384u, 32768u, 65536u),
                         [](const ::testing::TestParamInfo<std::uint32_t>& line) {
                           return "Line" + std::to_string(line.param);
                         });

TEST(CacheWrites, ReadersAndWritersSharingLinesSeeTheirOwnElements) {
  // Odd elements are read and must stay the file's; even ones are written by their owner,
  // who reads its own writes back. Both kinds share every line while lines are evicted,
  // written back and reloaded underneath them.
  const std::uint64_t words = scaled(64 * 1024, 16 * 1024);
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 32 * 1024, .mode = cache_mode::naive}, 16);
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) {
    expected[i] = i % 2 == 0 ? written_word(i) : pattern_word(i);
  }
  {
    array<std::uint64_t> a(r.cache(), r.set());
    const array_ref<std::uint64_t> ref = a.ref();
    const auto writers = static_cast<unsigned>(scaled(64, 24));
    const auto readers = static_cast<unsigned>(scaled(64, 24));
    const std::uint64_t reads = scaled(3000, 300);
    std::atomic<std::uint64_t> wrong{0}, failed{0};
    run_threads(writers + readers, [&](unsigned t) {
      if (t < writers) {
        for (std::uint64_t i = 2 * t; i < words; i += 2 * writers) {
          if (!ref.try_store(i, written_word(i)).ok()) failed.fetch_add(1);
          std::uint64_t back = 0;
          if (!ref.try_read(i, back).ok()) {
            failed.fetch_add(1);
          } else if (back != written_word(i)) {
            wrong.fetch_add(1);
          }
        }
        return;
      }
      rng g(t);
      for (std::uint64_t k = 0; k < reads; ++k) {
        const std::uint64_t i = g.below(words / 2) * 2 + 1;
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
    EXPECT_EQ(a.read(0, words), expected);
    a.flush();
  }
  EXPECT_EQ(differences(file.words(), expected), "");
}

TEST(CacheWrites, HostWritesThenFlushReachTheFile) {
  const std::uint64_t words = 32 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = 4096, .capacity_bytes = 32 * 1024});
  std::vector<std::uint64_t> expected = file.words();
  {
    array<std::uint64_t> a(r.cache(), r.set());
    // A range that starts and ends inside lines, longer than the cache.
    const std::uint64_t first = 100, count = words - 300;
    std::vector<std::uint64_t> values(count);
    for (std::uint64_t k = 0; k < count; ++k) values[k] = written_word(first + k);
    a.write(first, values);
    for (std::uint64_t k = 0; k < count; ++k) expected[first + k] = values[k];
    a.flush();
  }
  EXPECT_EQ(differences(file.words(), expected), "");
}

TEST(CacheWrites, DestroyingAWritableArrayFlushesIt) {
  const std::uint64_t words = 8 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 64 * 1024});
  {
    array<std::uint64_t> a(r.cache(), r.set());
    a.ref().store(5, 42);
  }
  EXPECT_EQ(file.words()[5], 42u);
}

}  // namespace
