// CLOCK's referenced bit, kept in each line's state word: set by a load and by a hit that finds
// it clear, cleared by the victim search (a second chance) before it evicts a line.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "pattern_rig.hpp"

namespace {

using namespace bam;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_line = line_bytes / 8;
constexpr auto word_at = bam::testing::pattern_word;
using rig = bam::testing::pattern_rig;

storage_config storage() {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = 2;
  s.queue_depth = 16;
  s.model = device_model::unlimited();
  return s;
}

cache_config two_lines() {
  cache_config c;
  c.line_bytes = line_bytes;
  c.capacity_bytes = 2 * line_bytes;
  return c;
}

/// What each of the cache's two lines holds: the array's page (or -1) and its referenced bit.
struct line_view {
  std::int64_t page = -1;
  bool referenced = false;
};

line_view look(const page_cache_ref& c, std::uint32_t line, std::uint64_t tag_base) {
  const std::uint64_t s = c.line_state(line);
  line_view v;
  if (s & cache::line_bits::valid)
    v.page = static_cast<std::int64_t>(cache::line_tag(s) - tag_base - 1);
  v.referenced = (s & cache::line_bits::referenced) != 0;
  return v;
}

std::uint64_t read_page(const array<const std::uint64_t>& a, std::uint64_t page) {
  return a.read(page * words_per_line, 1)[0];
}

TEST(CacheClock, ALoadedLineIsReferenced) {
  rig r(4 * words_per_line, storage(), two_lines());
  array<const std::uint64_t> a(*r.cache, r.set());
  EXPECT_EQ(read_page(a, 1), word_at(words_per_line));
  const page_cache_ref c = r.cache->ref();
  const std::uint64_t base = a.ref().slot().tag_base;
  int holding = 0;
  for (std::uint32_t l = 0; l < 2; ++l) {
    const line_view v = look(c, l, base);
    if (v.page == 1) {
      ++holding;
      EXPECT_TRUE(v.referenced) << "line " << l;
    }
  }
  EXPECT_EQ(holding, 1);
}

TEST(CacheClock, AMissClearsEveryReferencedBitBeforeItEvictsAndAHitSetsItAgain) {
  rig r(4 * words_per_line, storage(), two_lines());
  array<const std::uint64_t> a(*r.cache, r.set());
  EXPECT_EQ(read_page(a, 0), word_at(0));
  EXPECT_EQ(read_page(a, 1), word_at(words_per_line));
  const page_cache_ref c = r.cache->ref();
  const std::uint64_t base = a.ref().slot().tag_base;
  ASSERT_TRUE(look(c, 0, base).referenced && look(c, 1, base).referenced);
  // Both lines referenced: the search takes both second chances, then evicts one.
  EXPECT_EQ(read_page(a, 2), word_at(2 * words_per_line));
  const line_view v0 = look(c, 0, base), v1 = look(c, 1, base);
  const line_view& fresh = v0.page == 2 ? v0 : v1;
  const line_view& kept = v0.page == 2 ? v1 : v0;
  ASSERT_EQ(fresh.page, 2);
  EXPECT_TRUE(fresh.referenced);
  ASSERT_TRUE(kept.page == 0 || kept.page == 1) << kept.page;
  EXPECT_FALSE(kept.referenced) << "the search left the surviving line's bit set";
  // A hit on the surviving line sets its bit again.
  EXPECT_EQ(read_page(a, static_cast<std::uint64_t>(kept.page)),
            word_at(static_cast<std::uint64_t>(kept.page) * words_per_line));
  const std::uint32_t kept_line = v0.page == 2 ? 1 : 0;
  EXPECT_TRUE(look(c, kept_line, base).referenced);
  EXPECT_EQ(a.stats().loads, 3u);
}

}  // namespace
