// Writing a dense frame back: the dirty pages of a frame go out several commands at a time,
// every written value reaches the devices, and a failed write leaves its page dirty and
// resident with the data the writer stored. Run under both pinning kinds.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::fast_storage;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::two_level;
using bam::testing::mosaic::word_at;
using bam::testing::mosaic::written_at;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_page = line_bytes / 8;
// Two 64-bit words of dirty bits per frame; 8 frames over half of 2048 lines.
constexpr std::uint32_t pages_per_piece = 128;
constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;
constexpr std::uint64_t pieces = 4;

cache_config frames_of_128_pages(pinning_kind p) { return two_level(p, line_bytes, 2048, 128); }

/// Two striped devices with 5 queues each (batches of 5 that wrap around the queues) of depth
/// 2: a ring holds one entry, so a batch that put three commands on one queue would wait on
/// itself until the (short) timeout.
storage_config narrow_queues(double write_error_rate = 0.0) {
  storage_config s = fast_storage();
  s.devices = 2;
  s.queues_per_device = 5;
  s.queue_depth = 2;
  s.stripe_bytes = 4096;
  s.timeout_ns = 5'000'000'000ull;
  s.faults.error_rate = write_error_rate;
  s.faults.seed = 7;
  return s;
}

/// Loads page `page` of `a` (again after an injected read error), stores written_at() into
/// every word and marks the page dirty.
void dirty_page(const rig& r, const array_slot& a, std::uint64_t page) {
  const dense_cache_ref dense = r.dense();
  for (int attempt = 0; attempt < 200; ++attempt) {
    frame_guard guard;
    const acquire_result got = dense.acquire(a, page, static_cast<std::uint32_t>(page), guard);
    if (!got.status.ok()) continue;
    auto* words = reinterpret_cast<std::uint64_t*>(r.cache->ref().line_data(got.line));
    for (std::uint64_t k = 0; k < words_per_page; ++k) {
      words[k] = written_at(page * words_per_page + k);
    }
    dense.mark_dirty(got.line);
    dense.release(guard);
    return;
  }
  ADD_FAILURE() << "page " << page << " never loaded";
}

bool page_written(const std::uint64_t* stored, std::uint64_t page) {
  for (std::uint64_t k = 0; k < words_per_page; ++k) {
    const std::uint64_t i = page * words_per_page + k;
    if (stored[i] != written_at(i)) return false;
  }
  return true;
}

bool page_untouched(const std::uint64_t* stored, std::uint64_t page) {
  for (std::uint64_t k = 0; k < words_per_page; ++k) {
    const std::uint64_t i = page * words_per_page + k;
    if (stored[i] != word_at(i)) return false;
  }
  return true;
}

bool dirty_bit(const frame_pool_view& pool, std::uint32_t frame, std::uint32_t slot) {
  return (atomic_ref<std::uint64_t>(pool.word(pool.dirty, frame, slot)).load(order::acquire) &
          frame_pool_view::bit(slot)) != 0;
}

class MosaicWriteBack : public ::testing::TestWithParam<pinning_kind> {};

std::string kind_name(const ::testing::TestParamInfo<pinning_kind>& info) {
  return to_string(info.param);
}

TEST_P(MosaicWriteBack, EveryDirtyPageOfAnEvictedFrameReachesTheDevices) {
  auto image = pattern_image(pieces * words_per_piece);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, frames_of_128_pages(GetParam()), 4, narrow_queues());
  ASSERT_EQ(r.pool().geometry.lines_per_frame, pages_per_piece);
  array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<std::uint64_t> ref = a.ref();
  const array_slot& slot = ref.slot();
  // Three frames, so batches start at different queues; piece 3 stays clean.
  for (std::uint64_t piece = 0; piece < 3; ++piece) {
    for (std::uint64_t j = 0; j < pages_per_piece; ++j) {
      if (piece == 1 && j % 3 == 0) continue;  // gaps between dirty pages
      dirty_page(r, slot, piece * pages_per_piece + j);
    }
  }
  a.reset_stats();
  std::uint64_t dirtied = 0;
  for (std::uint64_t piece = 0; piece < 3; ++piece) {
    const std::uint64_t e = entry_of(a, piece);
    ASSERT_TRUE(entry_coalesced(e));
    EXPECT_TRUE(r.dense().drop_frame(entry_frame(e))) << "piece " << piece;
    EXPECT_EQ(entry_of(a, piece), entry_bits::empty);
    for (std::uint64_t j = 0; j < pages_per_piece; ++j) {
      const std::uint64_t page = piece * pages_per_piece + j;
      const bool was_dirty = !(piece == 1 && j % 3 == 0);
      dirtied += was_dirty;
      EXPECT_TRUE(was_dirty ? page_written(stored, page) : page_untouched(stored, page))
          << "page " << page;
    }
  }
  EXPECT_EQ(a.stats().write_backs, dirtied) << "one command per dirty page";
  EXPECT_EQ(a.stats().bytes_moved, dirtied * line_bytes);
  EXPECT_EQ(a.stats().bytes_fetched, 0u);
  for (std::uint64_t page = 0; page < pieces * pages_per_piece; page += 37) {
    const std::uint64_t piece = page / pages_per_piece, j = page % pages_per_piece;
    const bool was_dirty = piece != 3 && !(piece == 1 && j % 3 == 0);
    const std::uint64_t i = page * words_per_page;
    EXPECT_EQ(a.read(i, 1)[0], was_dirty ? written_at(i) : word_at(i)) << "page " << page;
  }
  EXPECT_NO_THROW(a.check());
}

TEST_P(MosaicWriteBack, AFailedWriteLeavesItsPageDirtyAndResidentWithTheWrittenData) {
  auto image = pattern_image(pieces * words_per_piece);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, frames_of_128_pages(GetParam()), 4, narrow_queues(0.2));
  array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<std::uint64_t> ref = a.ref();
  const array_slot& slot = ref.slot();
  for (std::uint64_t j = 0; j < pages_per_piece; ++j) dirty_page(r, slot, j);
  try {
    a.check();  // forget the injected read errors
  } catch (const nvme_error&) {
  }
  a.reset_stats();
  const std::uint64_t e = entry_of(a, 0);
  ASSERT_TRUE(entry_coalesced(e));
  const std::uint32_t frame = entry_frame(e);
  const frame_pool_view pool = r.pool();

  // With one write in five failing, 128 writes all succeeding is about one chance in 2^41.
  ASSERT_FALSE(r.dense().drop_frame(frame));
  EXPECT_EQ(entry_of(a, 0), e) << "the frame keeps its piece";
  ASSERT_EQ(atomic_ref<std::uint32_t>(slot.errors->state).load(order::acquire), 2u);
  EXPECT_EQ(slot.errors->kind, static_cast<std::uint32_t>(error_kind::write_back));
  std::uint32_t still_dirty = 0;
  for (std::uint32_t j = 0; j < pages_per_piece; ++j) {
    const bool dirty = dirty_bit(pool, frame, j);
    still_dirty += dirty;
    // A page is clean exactly when its bytes are on the device.
    EXPECT_TRUE(dirty ? page_untouched(stored, j) : page_written(stored, j)) << "page " << j;
    EXPECT_TRUE(pool.word(pool.resident, frame, j) & frame_pool_view::bit(j)) << "page " << j;
  }
  EXPECT_GT(still_dirty, 0u);
  EXPECT_EQ(a.stats().write_backs, pages_per_piece - still_dirty);
  EXPECT_EQ(a.stats().loads, 0u);
  std::vector<std::uint64_t> expected(words_per_piece);
  for (std::uint64_t i = 0; i < words_per_piece; ++i) expected[i] = written_at(i);
  EXPECT_EQ(a.read(0, words_per_piece), expected) << "served from the frame, as written";
  EXPECT_EQ(a.stats().loads, 0u);
  EXPECT_THROW(a.check(), nvme_error);

  // Each retry writes only what is still dirty.
  bool dropped = false;
  for (int attempt = 0; attempt < 100 && !dropped; ++attempt) dropped = r.dense().drop_frame(frame);
  ASSERT_TRUE(dropped);
  EXPECT_EQ(entry_of(a, 0), entry_bits::empty);
  for (std::uint32_t j = 0; j < pages_per_piece; ++j) {
    EXPECT_TRUE(page_written(stored, j)) << "page " << j;
  }
  EXPECT_EQ(a.stats().write_backs, pages_per_piece) << "every page written once";
  try {
    a.check();
  } catch (const nvme_error&) {
  }
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, MosaicWriteBack,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
