// Commands of dense arrays that time out or complete late: a late write never lands on another
// page, and a frame slot a command held (a load, a fill, a write-back) comes back once the late
// completion is drained, instead of staying busy for good. Run under both pinning kinds.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "late_io.hpp"
#include "mosaic_rig.hpp"
#include "storage/emulated/command_engine.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using namespace std::chrono_literals;
using bam::testing::describe;
using bam::testing::drain_until_released;
using bam::testing::finishes_within;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::fast_storage;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::two_level;
using bam::testing::mosaic::word_at;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint64_t words_per_page = line_bytes / 8;
constexpr std::uint32_t pages_per_piece = 8;
constexpr std::uint64_t ms = 1'000'000;

/// 8 frames of 8 lines (half of 128 lines), no splintering.
cache_config small_frames(pinning_kind p, std::uint64_t victim_timeout_ns) {
  cache_config c = two_level(p, line_bytes, 128, pages_per_piece);
  c.splinter_percent = 0;
  c.victim_timeout_ns = victim_timeout_ns;
  return c;
}

storage_config timing_out(std::uint64_t timeout_ns) {
  storage_config s = fast_storage();
  s.timeout_ns = timeout_ns;
  s.faults.seed = 3;
  return s;
}

constexpr std::uint64_t written_at(std::uint64_t i, std::uint64_t round) {
  return ((i << 16) | round) ^ 0x3c3c000000000000ull;
}

class MosaicLateIo : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(MosaicLateIo, ASlotWhoseLoadTimedOutComesBackWhenTheLateCompletionIsDrained) {
  storage_config s = timing_out(20 * ms);
  s.faults.late_rate = 1.0;
  s.faults.late_us = 100'000;
  rig r(pattern_image(32 * words_per_page * pages_per_piece), small_frames(GetParam(), 200 * ms),
        4, s);
  {
    array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<const std::uint64_t> ref = a.ref();
    std::uint64_t v = 0;
    EXPECT_EQ(ref.try_read(0, v).source(), status_source::timeout);
    EXPECT_THROW(a.check(), nvme_error);
    EXPECT_EQ(r.cache->held_resources().busy_slots, 1u) << "the late read may still fill it";
  }
  const cache_holds h = drain_until_released(*r.cache, r.ssd->ref(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

/// A fault seed under which a device's first command is on time and its second late.
std::uint64_t seed_with_second_command_late(fault_plan plan) {
  const auto read = nvme::make_rw(nvme::io_opcode::read, 1, 0, 1, 0x1000, 0);
  for (plan.seed = 1;; ++plan.seed) {
    if (emulated::decide_fault(plan, read, 0, 0).extra_ns == 0 &&
        emulated::decide_fault(plan, read, 0, 1).extra_ns != 0) {
      return plan.seed;
    }
  }
}

TEST_P(MosaicLateIo, SlotsOfAFillThatTimedOutComeBackWhenTheLateCompletionIsDrained) {
  // The first load of a piece fills the rest of it (fill_percent 1 of 8 slots: one page is
  // enough) in one command, which completes late.
  storage_config s = timing_out(20 * ms);
  s.faults.late_rate = 0.5;
  s.faults.late_us = 100'000;
  s.faults.seed = seed_with_second_command_late(s.faults);
  cache_config c = small_frames(GetParam(), 200 * ms);
  c.fill_percent = 1;
  rig r(pattern_image(32 * words_per_page * pages_per_piece), c, 4, s);
  {
    array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<const std::uint64_t> ref = a.ref();
    std::uint64_t v = 0;
    ASSERT_TRUE(ref.try_read(0, v).ok());
    EXPECT_EQ(v, word_at(0));
    EXPECT_EQ(r.cache->held_resources().busy_slots, pages_per_piece - 1u)
        << "the late fill may still fill the other slots";
  }
  const cache_holds h = drain_until_released(*r.cache, r.ssd->ref(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST_P(MosaicLateIo, ADroppedPageWhoseWriteBackTimedOutStaysOutOfUseUntilTheWriteHasRun) {
  storage_config s = timing_out(20 * ms);
  s.faults.write_late_rate = 1.0;
  s.faults.late_us = 300'000;
  rig r(pattern_image(32 * words_per_page * pages_per_piece), small_frames(GetParam(), 50 * ms),
        4, s);
  {
    array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    ASSERT_TRUE(ref.try_store(0, written_at(0, 1)).ok());
    EXPECT_FALSE(r.dense().drop_page(ref.slot(), 0)) << "its write-back timed out";
    EXPECT_THROW(a.check(), nvme_error);
    EXPECT_EQ(r.cache->held_resources().busy_slots, 1u) << "the late write may still read it";
    std::uint64_t v = 0;
    EXPECT_FALSE(ref.try_read(0, v).ok()) << "nobody uses the page while its write may run";
    EXPECT_THROW(a.check(), nvme_error) << "and the access that gave up is reported";
    const cache_holds h = drain_until_released(*r.cache, r.ssd->ref(), 2s);
    EXPECT_EQ(h.total(), 0u) << describe(h);
    ASSERT_TRUE(ref.try_read(0, v).ok()) << "the page is back, dirty and resident";
    EXPECT_EQ(v, written_at(0, 1));
  }
  const cache_holds h = drain_until_released(*r.cache, r.ssd->ref(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

TEST_P(MosaicLateIo, ALateFrameWriteBackNeverLandsOnAnotherPiece) {
  // 32 pieces over 8 frames: every access evicts a frame, whose dirty page is written back;
  // half the writes complete 60 ms late, past their 20 ms timeout. Every piece's page of a
  // round sits in the same slot of its frame, so a frame handed to another piece while its
  // late write may still run would have that write copy the other piece's bytes.
  constexpr std::uint64_t pieces = 32;
  constexpr std::uint64_t words = pieces * pages_per_piece * words_per_page;
  storage_config s = timing_out(20 * ms);
  s.faults.write_late_rate = 0.5;
  s.faults.late_us = 60'000;
  auto image = pattern_image(words);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, small_frames(GetParam(), 300 * ms), 4, s);
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) expected[i] = word_at(i);
  std::uint64_t wrong = 0;
  {
    array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    finishes_within(
        60s,
        [&] {
          for (std::uint64_t round = 0; round < 4; ++round) {
            for (std::uint64_t piece = 0; piece < pieces; ++piece) {
              const std::uint64_t page = piece * pages_per_piece + round % 2;
              const std::uint64_t i = page * words_per_page + piece % words_per_page;
              std::uint64_t v = 0;
              if (ref.try_read(i, v).ok() && v != expected[i]) ++wrong;
              if (ref.try_store(i, written_at(i, round)).ok()) expected[i] = written_at(i, round);
            }
          }
        },
        "the writer");
    EXPECT_EQ(wrong, 0u) << "a read returned bytes another piece's late write-back left";
    bool flushed = false;
    for (int t = 0; t < 50 && !flushed; ++t) {
      try {
        a.flush();
        flushed = true;
      } catch (const nvme_error&) {
        std::this_thread::sleep_for(20ms);
      }
    }
    EXPECT_TRUE(flushed);
    try {
      a.check();
    } catch (const nvme_error&) {
    }
  }
  const cache_holds h = drain_until_released(*r.cache, r.ssd->ref(), 2s);
  EXPECT_EQ(h.total(), 0u) << describe(h);
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < words; ++i) differ += stored[i] != expected[i];
  EXPECT_EQ(differ, 0u) << "words of the image that are not what was written there";
  EXPECT_GT(r.ssd->stats().total().late, 0u);
}

/// A fault seed under which a device's first command is dropped and its next `after` are not.
std::uint64_t seed_with_first_command_dropped(fault_plan plan, std::uint64_t after) {
  const auto read = nvme::make_rw(nvme::io_opcode::read, 1, 0, 1, 0x1000, 0);
  for (plan.seed = 1;; ++plan.seed) {
    bool fits = emulated::decide_fault(plan, read, 0, 0).drop;
    for (std::uint64_t c = 1; fits && c <= after; ++c) {
      fits = !emulated::decide_fault(plan, read, 0, c).drop;
    }
    if (fits) return plan.seed;
  }
}

TEST_P(MosaicLateIo, EvictionPassesOverAFrameHeldByADroppedLoad) {
  // Eight frames. The load of piece 0 is dropped: its slot stays busy for a completion that
  // never comes, so emptying its frame would wait out the whole victim deadline (30 s here)
  // before the search moved on. Pieces 1-7 take the free frames; every later piece must
  // evict one of those at once instead.
  storage_config s = timing_out(20 * ms);
  s.faults.drop_rate = 0.01;
  s.faults.seed = seed_with_first_command_dropped(s.faults, 200);
  rig r(pattern_image(32 * words_per_page * pages_per_piece), small_frames(GetParam(), 30'000 * ms),
        4, s);
  ASSERT_EQ(r.cache_ref.frames().geometry.frames, 8u);
  {
    array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    const array_ref<const std::uint64_t> ref = a.ref();
    std::uint64_t v = 0;
    EXPECT_EQ(ref.try_read(0, v).source(), status_source::timeout);
    EXPECT_THROW(a.check(), nvme_error);
    std::uint64_t failed = 0;
    finishes_within(
        10s,
        [&] {
          for (std::uint64_t piece = 1; piece < 20; ++piece) {
            const std::uint64_t i = piece * pages_per_piece * words_per_page + piece;
            if (ref.try_read(i, v).ok()) {
              EXPECT_EQ(v, word_at(i));
            } else {
              ++failed;
            }
          }
        },
        "reads of 19 pieces beside a frame a dropped load holds");
    EXPECT_EQ(failed, 0u);
    EXPECT_EQ(r.cache->held_resources().busy_slots, 1u) << "the dropped load's slot";
  }
  // The queue reset aborts the command that never completes and gives its slot back.
  r.ssd->stop();
  for (std::uint32_t q = 0; q < s.queues_per_device; ++q) r.ssd->reset_queue(0, q);
  r.ssd->start();
  const cache_holds h = r.cache->held_resources();
  EXPECT_EQ(h.total(), 0u) << describe(h);
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, MosaicLateIo,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
