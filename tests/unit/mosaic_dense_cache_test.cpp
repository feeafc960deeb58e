// Dense arrays on a two_level cache: pieces are coalesced into whole frames on first touch,
// pages fill fixed slots on demand, pages and frames can be evicted, dirty pages reach the
// devices; sparse arrays on the same cache keep base pages. Run under both pinning kinds.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::two_level;
using bam::testing::mosaic::word_at;
using bam::testing::mosaic::written_at;

constexpr std::uint64_t words_per_page = 512 / 8;
constexpr std::uint64_t pages_per_piece = 8;
constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;

std::vector<std::uint64_t> pattern(std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint64_t> v(count);
  for (std::uint64_t k = 0; k < count; ++k) v[k] = word_at(first + k);
  return v;
}

class DenseCache : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(DenseCache, TheFrameGeometryFollowsTheConfiguration) {
  rig r(pattern_image(1024), two_level(GetParam()));
  const frame_geometry g = r.pool().geometry;
  EXPECT_EQ(g.lines_per_frame, pages_per_piece);
  EXPECT_EQ(g.frames, 16u);  // half of 256 lines in frames of 8
  EXPECT_EQ(g.frame_lines, 128u);
}

TEST_P(DenseCache, ReadsReturnTheDataAndEachPieceIsCoalescedIntoItsOwnFrame) {
  const std::uint64_t pieces = 8, words = pieces * words_per_piece;
  rig r(pattern_image(words), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "dense", .dense = true});
  ASSERT_NE(a.ref().slot().large_table, nullptr);
  EXPECT_EQ(a.read(0, words), pattern(0, words));
  std::set<std::uint32_t> frames;
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    ASSERT_TRUE(entry_coalesced(e)) << "piece " << p;
    frames.insert(entry_frame(e));
  }
  EXPECT_EQ(frames.size(), pieces) << "one frame per piece";
  EXPECT_EQ(a.stats().loads, pieces * pages_per_piece) << "one command per base page";
}

TEST_P(DenseCache, ASecondReadHitsWithoutAnyCommand) {
  const std::uint64_t words = 4 * words_per_piece;
  rig r(pattern_image(words), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  (void)a.read(0, words);
  a.reset_stats();
  const array_ref<const std::uint64_t> ref = a.ref();
  for (std::uint64_t i = 0; i < words; i += 7) EXPECT_EQ(ref[i], word_at(i));
  const cache_stats s = a.stats();
  EXPECT_EQ(s.loads, 0u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.hits + s.coalesced, s.accesses);
}

TEST_P(DenseCache, PagesAreLoadedOnlyWhenTouched) {
  rig r(pattern_image(4 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const std::uint64_t i = 2 * words_per_piece + 3 * words_per_page + 5;  // piece 2, page 3
  EXPECT_EQ(a.ref()[i], word_at(i));
  EXPECT_EQ(a.stats().loads, 1u) << "the frame is reserved whole, but only one page is read";
  EXPECT_TRUE(entry_coalesced(entry_of(a, 2)));
  EXPECT_FALSE(entry_coalesced(entry_of(a, 1)));
}

TEST_P(DenseCache, DroppingAPageClearsItsResidentBitAndTheNextReadLoadsItAgain) {
  rig r(pattern_image(2 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const std::uint64_t i = words_per_piece + 2 * words_per_page;  // piece 1, page 2 (array page 10)
  EXPECT_EQ(a.ref()[i], word_at(i));
  const std::uint64_t e = entry_of(a, 1);
  const frame_pool_view pool = r.pool();
  ASSERT_TRUE(pool.word(pool.resident, entry_frame(e), 2) & frame_pool_view::bit(2));
  EXPECT_TRUE(r.dense().drop_page(a.ref().slot(), 10));
  EXPECT_FALSE(pool.word(pool.resident, entry_frame(e), 2) & frame_pool_view::bit(2));
  EXPECT_EQ(entry_of(a, 1), e) << "the piece stays coalesced";
  EXPECT_FALSE(r.dense().drop_page(a.ref().slot(), 10)) << "nothing left to drop";
  a.reset_stats();
  EXPECT_EQ(a.ref()[i], word_at(i));
  EXPECT_EQ(a.stats().loads, 1u);
}

TEST_P(DenseCache, DroppingAFrameEmptiesItsEntryAndTheNextTouchReservesAgain) {
  rig r(pattern_image(2 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(a.ref()[5], word_at(5));
  const std::uint64_t e = entry_of(a, 0);
  EXPECT_TRUE(r.dense().drop_frame(entry_frame(e)));
  EXPECT_EQ(entry_of(a, 0), entry_bits::empty);
  EXPECT_FALSE(r.dense().drop_frame(entry_frame(e))) << "a free frame has nothing to drop";
  EXPECT_EQ(a.ref()[5], word_at(5));
  const std::uint64_t again = entry_of(a, 0);
  ASSERT_TRUE(entry_coalesced(again));
  EXPECT_NE(again, e) << "a new reservation has a new generation (or frame)";
}

// A loader serves its own access from the slot it loaded: an evictor that closes the piece
// while the page is in flight (its eviction then waits for the load) does not send the loader
// round again to reserve and load the page a second time.
TEST_P(DenseCache, ALoaderReadsWhatItLoadedWhenItsFrameIsEvictedDuringTheLoad) {
  bam::storage_config slow = bam::testing::mosaic::fast_storage();
  slow.model = device_model::latency_only(200'000.0);  // 200 ms: the eviction starts meanwhile
  rig r(pattern_image(2 * words_per_piece), two_level(GetParam()), 4, slow);
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  std::atomic<std::uint64_t> got{0};
  std::atomic<bool> done{false};
  std::thread reader([&] {
    got = ref[5];
    done = true;
  });
  // Wait until the piece is reserved and its page 0 (element 5) is being loaded: busy bit set.
  const frame_pool_view pool = r.pool();
  std::uint64_t e = entry_bits::empty;
  const auto loading = [&] {
    e = entry_of(a, 0);
    return entry_coalesced(e) && (atomic_ref<std::uint64_t>(pool.word(pool.busy, entry_frame(e), 0))
                                      .load(order::acquire) &
                                  frame_pool_view::bit(0)) != 0;
  };
  while (!done && !loading()) std::this_thread::yield();
  bool dropped = false;
  while (!done && !dropped) dropped = r.dense().drop_frame(entry_frame(e));
  reader.join();
  EXPECT_EQ(got.load(), word_at(5));
  if (!dropped) GTEST_SKIP() << "the load finished before the eviction began";
  EXPECT_EQ(a.stats().loads, 1u) << "the loader read the page it loaded, once";
  EXPECT_EQ(a.stats().coalesces, 1u) << "and reserved no second frame for it";
}

TEST_P(DenseCache, MorePiecesThanFramesEvictFramesAndStillReadTheData) {
  const std::uint64_t pieces = 64, words = pieces * words_per_piece;  // 4 x the frame pool
  rig r(pattern_image(words), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(a.read(0, words), pattern(0, words));
  EXPECT_GE(a.stats().evictions, pieces - r.pool().geometry.frames);
  const array_ref<const std::uint64_t> ref = a.ref();
  for (std::uint64_t i = words; i-- > 0;) {
    if (i % 97 == 0) {
      ASSERT_EQ(ref[i], word_at(i)) << i;
    }
  }
}

TEST_P(DenseCache, WritesReachTheDevicesOnFlushAndOnFrameEviction) {
  const std::uint64_t words = 4 * words_per_piece;
  auto image = pattern_image(words);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, two_level(GetParam()));
  {
    array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    ref.store(3, written_at(3));                                      // piece 0: flushed
    ref.store(words_per_piece + 9, written_at(words_per_piece + 9));  // piece 1: evicted
    EXPECT_EQ(ref[3], written_at(3));
    EXPECT_EQ(stored[3], word_at(3)) << "not written back yet";
    EXPECT_TRUE(r.dense().drop_frame(entry_frame(entry_of(a, 1))));
    EXPECT_EQ(stored[words_per_piece + 9], written_at(words_per_piece + 9));
    a.flush();
    EXPECT_EQ(stored[3], written_at(3));
    EXPECT_EQ(ref[words_per_piece + 9], written_at(words_per_piece + 9)) << "read back";
  }
}

TEST_P(DenseCache, HostWritesOfADenseArrayGoThroughItsFrames) {
  const std::uint64_t words = 3 * words_per_piece;
  auto image = pattern_image(words);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, two_level(GetParam()));
  array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  std::vector<std::uint64_t> values(words - 100);
  for (std::uint64_t k = 0; k < values.size(); ++k) values[k] = written_at(50 + k);
  a.write(50, values);
  EXPECT_EQ(a.read(50, values.size()), values);
  a.flush();
  for (std::uint64_t k = 0; k < values.size(); ++k) ASSERT_EQ(stored[50 + k], values[k]) << k;
  EXPECT_EQ(stored[49], word_at(49));
}

TEST_P(DenseCache, SparseArraysOnTheSameCacheKeepBasePages) {
  const std::uint64_t words = 16 * words_per_piece;
  rig r(pattern_image(2 * words), two_level(GetParam()));
  array<const std::uint64_t> dense(*r.cache, r.ssd->ref(), {.count = words, .dense = true});
  array<const std::uint64_t> sparse(*r.cache, r.ssd->ref(),
                                    {.offset_bytes = words * 8, .count = words});
  EXPECT_EQ(sparse.ref().slot().large_table, nullptr);
  EXPECT_EQ(sparse.read(0, words), pattern(words, words));
  EXPECT_EQ(dense.read(0, words), pattern(0, words));
  EXPECT_EQ(sparse.read(0, words), pattern(words, words));
  // The base pool is the lines after the frames: no sparse page lives in a frame line.
  const page_cache_ref c = r.cache->ref();
  for (std::uint32_t l = 0; l < r.pool().geometry.frame_lines; ++l) {
    EXPECT_EQ(c.line_state(l), 0u) << "frame line " << l << " holds a base page";
  }
}

TEST_P(DenseCache, NoProtectionIsLeftBehind) {
  const std::uint64_t words = 32 * words_per_piece;
  rig r(pattern_image(words), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  (void)a.read(0, words);
  EXPECT_EQ(bam::testing::mosaic::frame_pins_left(r.pool()), 0u);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.pool()), 0u);
}

/// Reads element `i` of `a` through the section path.
template <class T>
std::uint64_t read_in_section(const rig& r, const array<T>& a, std::uint64_t i,
                              reader_section& section, io_status& status) {
  const std::uint64_t byte = i * 8;
  std::uint64_t v = 0;
  status = r.dense().access(a.ref().slot(), byte / 512, byte % 512, 8, false, section,
                            [&](const std::uint8_t* p) { std::memcpy(&v, p, 8); });
  return v;
}

TEST_P(DenseCache, ASectionServesHitsAndClosesOnAMiss) {
  const std::uint64_t words = 2 * words_per_piece;
  rig r(pattern_image(words), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  (void)a.read(0, words);
  a.reset_stats();
  const bool epochs = GetParam() == pinning_kind::epochs;
  reader_section section;
  io_status s;
  for (std::uint64_t i = 0; i < words; i += 5) {
    ASSERT_EQ(read_in_section(r, a, i, section, s), word_at(i)) << "element " << i;
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(section.slot != reader_section::closed, epochs) << "open after a hit under epochs";
  }
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.pool()), epochs ? 1u : 0u);
  EXPECT_EQ(a.stats().hits, a.stats().accesses);
  EXPECT_EQ(a.stats().loads, 0u);
  // Closed before the drop: the drop's grace period would wait for this very thread.
  r.dense().close(section);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.pool()), 0u);
  ASSERT_TRUE(r.dense().drop_page(a.ref().slot(), 3)) << "page 3 was resident";
  (void)read_in_section(r, a, 0, section, s);  // a hit opens the section again
  // A miss leaves the section before it loads, and the page comes back right.
  const std::uint64_t i = 3 * words_per_page + 1;
  EXPECT_EQ(read_in_section(r, a, i, section, s), word_at(i));
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(section.slot, reader_section::closed);
  EXPECT_EQ(a.stats().loads, 1u);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.pool()), 0u);
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, DenseCache,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

TEST(DenseCacheSection, AnOpenSectionHoldsUpAFrameEvictionUntilItCloses) {
  const std::uint64_t words = 2 * words_per_piece;
  rig r(pattern_image(words), two_level(pinning_kind::epochs));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  (void)a.read(0, words);
  reader_section section;
  io_status s;
  ASSERT_EQ(read_in_section(r, a, 9, section, s), word_at(9));
  ASSERT_NE(section.slot, reader_section::closed);
  const std::uint32_t frame = entry_frame(entry_of(a, 0));
  std::atomic<bool> dropped{false};
  std::thread evictor([&] { dropped = r.dense().drop_frame(frame); });
  // The evictor has closed the entry or is about to; its grace period cannot end while our
  // section is open, however long we wait here.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(dropped.load()) << "the frame was freed under an open section";
  EXPECT_EQ(
      word_at(9),
      *reinterpret_cast<const std::uint64_t*>(
          r.cache_ref.line_data(static_cast<std::uint32_t>(r.pool().geometry.line_of(frame, 0))) +
          72))
      << "the frame still holds our page";
  r.dense().close(section);
  evictor.join();
  EXPECT_TRUE(dropped.load());
  EXPECT_EQ(entry_of(a, 0), entry_bits::empty);
}

TEST(DenseCacheSection, ASectionAnnouncesTheCurrentEpochAgainAfterItsRenewal) {
  const std::uint64_t words = words_per_piece;
  rig r(pattern_image(words), two_level(pinning_kind::epochs));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  (void)a.read(0, words);
  const frame_pool_view pool = r.pool();
  reader_section section;
  io_status s;
  (void)read_in_section(r, a, 0, section, s);
  ASSERT_NE(section.slot, reader_section::closed);
  const std::uint64_t announced = pool.epoch_slots[section.slot];
  atomic_ref<std::uint64_t>(*pool.epoch).fetch_add(1, order::seq_cst);  // as an evictor would
  for (std::uint32_t k = 1; k < dense_cache_ref::section_renewal; ++k) {
    ASSERT_EQ(read_in_section(r, a, k, section, s), word_at(k));
  }
  EXPECT_EQ(pool.epoch_slots[section.slot], announced) << "one announcement per renewal";
  ASSERT_EQ(read_in_section(r, a, 1, section, s), word_at(1));
  EXPECT_EQ(pool.epoch_slots[section.slot], announced + 1) << "renewed with the new epoch";
  EXPECT_EQ(section.uses, 1u);
  r.dense().close(section);
}

TEST(DenseCacheConfig, OnABaseCacheDenseChangesNothing) {
  rig r(pattern_image(1024), {.line_bytes = 512, .capacity_bytes = 64 * 1024});
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(a.ref().slot().large_table, nullptr);
  EXPECT_EQ(a.read(0, 1024), pattern(0, 1024));
}

TEST(DenseCacheConfig, ThePlanCountsFramesAndTheLargeTable) {
  cache_config c = two_level(pinning_kind::frame_pins, 4096, 1u << 16);
  c.frame_bytes = 2u << 20;
  const cache_plan p = plan_cache(c, 1ull << 30, 4);
  EXPECT_EQ(p.frame_bytes, 2u << 20);
  EXPECT_EQ(p.frames, 64u);  // 256 MiB of lines, half in 2 MiB frames
  EXPECT_EQ(p.large_table_bytes, (1u << 30) / (2u << 20) * 8);
  EXPECT_GT(p.frame_table_bytes, 0u);
}

TEST(DenseCacheConfig, AFrameSizeThatIsNotAPowerOfTwoIsRefused) {
  cache_config c = two_level(pinning_kind::frame_pins);
  c.frame_bytes = 3000;
  host_stream stream(1);
  EXPECT_THROW(page_cache(c, stream), input_error);
}

}  // namespace
