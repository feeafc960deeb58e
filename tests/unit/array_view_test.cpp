// array_ref::view_as: the same bytes read as wider elements (a gather's 16-byte words) through
// the same cache lines, pins and statistics, on a cache and on a view of memory; and the
// alignment can_view_as requires.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>

#include "pattern_rig.hpp"

namespace {

using namespace bam;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_line = line_bytes / 8;
constexpr auto word_at = bam::testing::pattern_word;

// Two 64-bit words moved as one 16-byte element.
struct alignas(16) word_pair {
  std::uint64_t lo;
  std::uint64_t hi;
};

storage_config one_device() {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = 2;
  s.queue_depth = 64;
  s.model = device_model::unlimited();
  s.timeout_ns = 10'000'000'000;
  return s;
}

cache_config cache_of(std::uint64_t lines) {
  cache_config c;
  c.line_bytes = line_bytes;
  c.capacity_bytes = lines * line_bytes;
  return c;
}

TEST(ArrayView, PairsOfWordsReadThroughTheSameLines) {
  constexpr std::uint64_t words = 16 * words_per_line;
  bam::testing::pattern_rig r(words, one_device(), cache_of(32));
  array<const std::uint64_t> a(*r.cache, r.set());
  const array_ref<const std::uint64_t> ref = a.ref_for_launch(1, 1);
  ASSERT_TRUE(ref.can_view_as<const word_pair>());
  const array_ref<const word_pair> pairs = ref.view_as<const word_pair>();
  ASSERT_EQ(pairs.size(), words / 2);

  std::uint64_t wrong = 0;
  launch(*r.stream, 1, 1, [&](thread_index) {
    array_ref<const word_pair>::cursor c(pairs);
    for (std::uint64_t i = 0; i < pairs.size(); ++i) {
      word_pair p{};
      if (!c.read_if_pinned(i, p) && !c.try_read(i, p).ok()) ++wrong;
      wrong += p.lo != word_at(2 * i) || p.hi != word_at(2 * i + 1);
    }
  });
  r.stream->synchronize();
  EXPECT_EQ(wrong, 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.loads, 16u) << "each line once";
  EXPECT_EQ(s.accesses, words / 2) << "the view counts its own elements";
  EXPECT_EQ(s.bytes_requested, words * 8) << "and the bytes they hold";

  // The array's own reads find the lines the view loaded.
  const std::vector<std::uint64_t> back = a.read(0, words);
  for (std::uint64_t i = 0; i < words; ++i) ASSERT_EQ(back[i], word_at(i)) << "word " << i;
  EXPECT_EQ(a.stats().loads, 16u);
}

TEST(ArrayView, AnArrayThatStartsBetweenWordsCannotBeViewed) {
  bam::testing::pattern_rig r(4 * words_per_line, one_device(), cache_of(8));
  array_options o;
  o.offset_bytes = 8;
  array<const std::uint64_t> a(*r.cache, r.set(), o);
  EXPECT_FALSE(a.ref_for_launch(1, 1).can_view_as<const word_pair>());
  array<const std::uint64_t> b(*r.cache, r.set());
  EXPECT_FALSE(b.ref_for_launch(1, 1).can_view_as<const std::uint32_t>()) << "narrower";
}

TEST(ArrayView, AViewOfMemoryReadsTheSameBytes) {
  std::vector<word_pair> memory(8);
  for (std::uint64_t i = 0; i < 8; ++i) memory[i] = {word_at(2 * i), word_at(2 * i + 1)};
  const array_ref<std::uint64_t> words(&memory[0].lo, 16);
  ASSERT_TRUE(words.can_view_as<const word_pair>());
  const array_ref<const word_pair> pairs = words.view_as<const word_pair>();
  ASSERT_EQ(pairs.size(), 8u);
  for (std::uint64_t i = 0; i < 8; ++i) {
    const word_pair p = pairs[i];
    EXPECT_EQ(p.lo, word_at(2 * i));
    EXPECT_EQ(p.hi, word_at(2 * i + 1));
  }
  const array_ref<std::uint64_t> shifted(&memory[0].lo + 1, 15);
  EXPECT_FALSE(shifted.can_view_as<const word_pair>()) << "8 bytes past a 16-byte boundary";
}

}  // namespace
