// Fresh arrays (array_options::fresh): a page the array never wrote back is zero-filled on a
// miss instead of read; a page written back once is read again. Writers through a cache much
// smaller than the data, so pages are evicted, written back and missed again.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

constexpr std::uint32_t line_bytes = 4096;
constexpr std::uint64_t line_words = line_bytes / 8;

cache_config small_cache() {
  return {.line_bytes = line_bytes, .capacity_bytes = 64 * 1024, .mode = cache_mode::optimized};
}

TEST(CacheFresh, WholeLinesWrittenReadNothingAndLandExactly) {
  const std::uint64_t lines = scaled(256, 48);  // 16 or 3 times the cache
  const std::uint64_t words = lines * line_words;
  temp_file file(words);  // holds pattern words: a fresh array must not read them
  rig r(backing_store::from_file(file.path(), true), fast_storage(), small_cache(), 16);
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) expected[i] = written_word(i);
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "fresh", .fresh = true});
    const array_ref<std::uint64_t> ref = a.ref();
    // Thread t writes every word of lines t, t + threads, ..., one line after another.
    const auto threads = static_cast<unsigned>(scaled(16, 8));
    run_threads(threads, [&](unsigned t) {
      for (std::uint64_t l = t; l < lines; l += threads) {
        for (std::uint64_t i = l * line_words; i < (l + 1) * line_words; ++i) {
          EXPECT_TRUE(ref.try_store(i, written_word(i)).ok());
        }
      }
    });
    a.flush();
    EXPECT_NO_THROW(a.check());
    const cache_stats s = a.stats();
    // Each line is missed first with nothing of it on the devices: zero-filled once. It is
    // dirty from then on, so an eviction writes it back and any later miss reads it.
    EXPECT_EQ(s.zero_filled, lines);
    EXPECT_EQ(s.bytes_fetched, s.loads * line_bytes);
    EXPECT_GT(s.write_backs, 0u);
  }
  const std::vector<std::uint64_t> got = file.words();
  ASSERT_EQ(got.size(), expected.size());
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < words; ++i) wrong += got[i] != expected[i];
  EXPECT_EQ(wrong, 0u);
}

TEST(CacheFresh, UnstoredWordsOfATouchedLineAreZeroAndWrittenBackPagesAreRead) {
  const std::uint64_t lines = scaled(128, 32);
  const std::uint64_t words = lines * line_words;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(), small_cache(), 8);
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "fresh", .fresh = true});
    const array_ref<std::uint64_t> ref = a.ref();
    // The first word of every even line only: odd lines are never touched.
    run_threads(4, [&](unsigned t) {
      for (std::uint64_t l = 2 * t; l < lines; l += 8) {
        EXPECT_TRUE(ref.try_store(l * line_words, written_word(l * line_words)).ok());
      }
    });
    // Every line of the cache was replaced many times over: the even lines were written back.
    // Read them all again: a written-back page must come from the devices, not be zeroed.
    std::uint64_t wrong = 0;
    run_threads(4, [&](unsigned t) {
      std::uint64_t mine = 0;
      for (std::uint64_t l = 2 * t; l < lines; l += 8) {
        std::uint64_t first = 0, second = 1;
        EXPECT_TRUE(ref.try_read(l * line_words, first).ok());
        EXPECT_TRUE(ref.try_read(l * line_words + 1, second).ok());
        mine += first != written_word(l * line_words);
        mine += second != 0;  // never stored: zero, not the file's old pattern word
      }
      atomic_ref<std::uint64_t>(wrong).fetch_add(mine, order::relaxed);
    });
    EXPECT_EQ(wrong, 0u);
    a.flush();
    EXPECT_NO_THROW(a.check());
  }
  const std::vector<std::uint64_t> got = file.words();
  for (std::uint64_t l = 0; l < lines; ++l) {
    const std::uint64_t i = l * line_words;
    if (l % 2 == 0) {
      EXPECT_EQ(got[i], written_word(i)) << "line " << l;
      EXPECT_EQ(got[i + 1], 0u) << "line " << l;
    } else {
      EXPECT_EQ(got[i], pattern_word(i)) << "an untouched line changed: line " << l;
    }
  }
}

TEST(CacheFresh, OnlyWritableArraysOnBasePagesMayBeFresh) {
  temp_file file(64 * line_words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(), small_cache(), 2);
  EXPECT_THROW(array<const std::uint64_t>(r.cache(), r.set(), {.name = "in", .fresh = true}),
               input_error);
  cache_config dense_cache = small_cache();
  dense_cache.translation = translation_kind::two_level;
  dense_cache.capacity_bytes = 8u << 20;
  rig d(backing_store::from_file(file.path(), true), fast_storage(), dense_cache, 2);
  EXPECT_THROW(
      array<std::uint64_t>(d.cache(), d.set(), {.name = "out", .dense = true, .fresh = true}),
      input_error);
}

}  // namespace
