// The two ways readers protect a coalesced piece, behind one interface: frame pins (a count
// on the frame word) and epochs (a reader slot; an evictor waits for a grace period).

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include <bam/cache/mosaic/epochs.hpp>
#include <bam/cache/mosaic/pinning.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/reader_slot.hpp>

namespace {

using namespace bam;
using namespace bam::cache::mosaic;

/// A frame pool of one frame with its words in this object.
struct one_frame {
  explicit one_frame(pinning_kind kind) {
    p.geometry = plan_frames(512, 64, 8 * 512, 50);
    p.pinning = kind;
    p.state = &state;
    p.epoch = &epoch;
    p.epoch_slots = slots.data();
    p.epoch_scan = scan_words;
    p.epoch_slot_count = static_cast<std::uint32_t>(slots.size());
  }
  frame_pool_view p;
  std::uint64_t state = 0;
  std::uint64_t epoch = first_epoch;
  std::uint64_t scan_words[epoch_scan_words] = {};
  std::vector<std::uint64_t> slots = std::vector<std::uint64_t>(256, 0);
  std::uint64_t entry = 0;
};

std::uint64_t soon() { return now_ns() + 50'000'000; }

TEST(ReaderSlot, LiveThreadsHoldDistinctSlots) {
  std::vector<std::uint32_t> seen(8);
  std::atomic<unsigned> arrived{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      seen[t] = reader_slot();
      arrived.fetch_add(1);
      while (arrived.load() < seen.size()) std::this_thread::yield();  // all alive at once
    });
  }
  for (auto& t : threads) t.join();
  for (unsigned a = 0; a < seen.size(); ++a) {
    for (unsigned b = a + 1; b < seen.size(); ++b) EXPECT_NE(seen[a], seen[b]);
  }
}

TEST(FramePins, APinOnAnOpenFrameCountsAndLeavingDropsIt) {
  one_frame f(pinning_kind::frame_pins);
  f.entry = make_entry(0, 1, 1);
  f.state = frame_opened(0, f.entry);
  const frame_pinning pins(f.p);
  frame_guard g;
  ASSERT_EQ(pins.enter(f.entry, 3, g), enter_result::protected_frame);
  EXPECT_EQ(frame_pins(f.state), 3u);
  pins.leave(g);
  EXPECT_EQ(frame_pins(f.state), 0u);
}

TEST(FramePins, APinOnAHeldFrameIsUndoneAndAsksForARetry) {
  one_frame f(pinning_kind::frame_pins);
  f.entry = make_entry(0, 1, 1);
  f.state = frame_opened(0, f.entry) ^ frame_bits::open ^ frame_bits::held;
  frame_guard g;
  EXPECT_EQ(frame_pinning(f.p).enter(f.entry, 1, g), enter_result::retry);
  EXPECT_EQ(frame_pins(f.state), 0u);
}

TEST(FramePins, AnEmptyEntryTakesNothing) {
  one_frame f(pinning_kind::frame_pins);
  frame_guard g;
  EXPECT_EQ(frame_pinning(f.p).enter(f.entry, 1, g), enter_result::not_coalesced);
  EXPECT_EQ(f.state, 0u);
}

TEST(Epochs, AGracePeriodWithNoReadersEndsAtOnceAndAdvancesTheEpoch) {
  one_frame f(pinning_kind::epochs);
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  EXPECT_EQ(f.epoch, first_epoch + 1);
}

TEST(Epochs, AReaderInsideItsSectionHoldsUpTheGracePeriod) {
  one_frame f(pinning_kind::epochs);
  f.entry = make_entry(0, 1, 1);
  const frame_pinning pins(f.p);
  frame_guard g;
  ASSERT_EQ(pins.enter(f.entry, 1, g), enter_result::protected_frame);
  EXPECT_FALSE(pins.quiesce(soon())) << "the reader announced an epoch before the close";
  pins.leave(g);
  EXPECT_TRUE(pins.quiesce(soon()));
}

TEST(Epochs, AReaderThatAnnouncedTheNewEpochDoesNotHoldItUp) {
  one_frame f(pinning_kind::epochs);
  // A grace period from epoch E waits for slots holding 1..E: a slot holding E + 1 belongs to
  // a reader that loaded the epoch after the increment, and so saw the close.
  f.slots[7] = f.epoch + 1;
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  f.slots[7] = f.epoch;  // now the current epoch: announced before the next increment
  EXPECT_FALSE(epoch_grace_period(f.p, soon()));
}

TEST(Epochs, AnotherThreadsSectionHoldsUpTheGracePeriodUntilItLeaves) {
  one_frame f(pinning_kind::epochs);
  std::atomic<bool> entered{false}, leave{false};
  std::thread reader([&] {
    const std::uint32_t slot = epoch_enter(f.p);
    entered = true;
    while (!leave) std::this_thread::yield();
    epoch_exit(f.p, slot);
  });
  while (!entered) std::this_thread::yield();
  EXPECT_FALSE(epoch_grace_period(f.p, soon()));
  leave = true;
  reader.join();
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
}

TEST(Epochs, AThreadBeyondTheSlotsIsToldSoInsteadOfSharingOne) {
  one_frame f(pinning_kind::epochs);
  f.p.epoch_slot_count = 0;
  frame_guard g;
  // An empty entry is looked at before any announcement: nothing to protect, no slot needed.
  EXPECT_EQ(frame_pinning(f.p).enter(f.entry, 1, g), enter_result::not_coalesced);
  f.entry = make_entry(0, 1, 1);
  EXPECT_EQ(frame_pinning(f.p).enter(f.entry, 1, g), enter_result::no_reader_slot);
}

TEST(Epochs, AGracePeriodTrustsAQuietEpochAnotherScanPublished) {
  one_frame f(pinning_kind::epochs);
  f.slots[3] = f.epoch;  // a reader from before the call: only a scan could wait for it
  f.scan_words[epoch_quiet_word] = f.epoch + 10;  // a later scan proved every such reader gone
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
}

TEST(Epochs, AWaiterWhileAnotherThreadScansWaitsForItsWord) {
  one_frame f(pinning_kind::epochs);
  f.scan_words[epoch_scanning_word] = 1;  // someone else is scanning and never publishes
  EXPECT_FALSE(epoch_grace_period(f.p, soon()));
  f.scan_words[epoch_scanning_word] = 0;  // the scan is over: the next waiter scans itself
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  EXPECT_GE(f.scan_words[epoch_quiet_word], first_epoch + 1);
  EXPECT_EQ(f.scan_words[epoch_scanning_word], 0u);
}

TEST(Epochs, AScanCountsItselfAndItsPassesOnlyWhenItRuns) {
  one_frame f(pinning_kind::epochs);
  f.scan_words[epoch_quiet_word] = f.epoch + 10;  // covered already: no scan
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  EXPECT_EQ(f.scan_words[epoch_scans_word], 0u);
  f.scan_words[epoch_quiet_word] = 0;
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));  // no reader: one pass over each chunk
  EXPECT_EQ(f.scan_words[epoch_scans_word], 1u);
  EXPECT_EQ(f.scan_words[epoch_scan_passes_word], epoch_chunks(f.p));
  f.slots[5] = f.epoch;  // a reader that never leaves: passes until the deadline
  EXPECT_FALSE(epoch_grace_period(f.p, soon()));
  EXPECT_EQ(f.scan_words[epoch_scans_word], 2u);
  EXPECT_GT(f.scan_words[epoch_scan_passes_word], epoch_chunks(f.p) + 1);
}

/// Sets `f` up as if a scanner had started scan `scan` covering epochs up to `e` and had
/// published it, without scanning anything itself.
void start_scan(one_frame& f, std::uint64_t scan, std::uint64_t e, std::uint64_t deadline_ns) {
  f.scan_words[epoch_target_word] = e;
  f.scan_words[epoch_deadline_word] = deadline_ns;
  f.scan_words[epoch_report_word] = scan << 32;
  f.scan_words[epoch_claim_word] = scan << epoch_chunk_bits;
}

TEST(Epochs, AHelperScansEveryUnclaimedChunkOfARunningScanAndReportsIt) {
  one_frame f(pinning_kind::epochs);
  ASSERT_GT(epoch_chunks(f.p), 1u) << "the test needs several chunks";
  start_scan(f, 1, f.epoch, soon());
  EXPECT_TRUE(epoch_help(f.p));
  EXPECT_EQ(f.scan_words[epoch_report_word], (std::uint64_t{1} << 32) | epoch_chunks(f.p));
  EXPECT_EQ(f.scan_words[epoch_helped_word], epoch_chunks(f.p));
  EXPECT_FALSE(epoch_help(f.p)) << "every chunk is claimed: nothing left to help with";
}

TEST(Epochs, AHelperWhoseChunkHoldsAnOldReaderReportsAFailurePastTheDeadline) {
  one_frame f(pinning_kind::epochs);
  f.slots[epoch_chunk_slots + 1] = f.epoch;  // in the second chunk, announced before the scan
  start_scan(f, 1, f.epoch, soon());
  EXPECT_TRUE(epoch_help(f.p));
  EXPECT_EQ(f.scan_words[epoch_report_word],
            (std::uint64_t{1} << 32) | epoch_chunk_failed | epoch_chunks(f.p));
}

TEST(Epochs, AHelperDoesNothingWithoutARunningScan) {
  one_frame f(pinning_kind::epochs);
  EXPECT_FALSE(epoch_help(f.p)) << "scan 0: no scan has started";
  start_scan(f, 3, f.epoch, soon());
  f.scan_words[epoch_claim_word] += epoch_chunks(f.p);  // its chunks are all claimed
  EXPECT_FALSE(epoch_help(f.p));
  EXPECT_EQ(f.scan_words[epoch_report_word], std::uint64_t{3} << 32);
}

TEST(Epochs, AReportForAnOlderScanIsDropped) {
  one_frame f(pinning_kind::epochs);
  start_scan(f, 1, f.epoch, soon());
  f.scan_words[epoch_report_word] = std::uint64_t{2} << 32;  // scan 1's scanner gave up; 2 runs
  EXPECT_TRUE(epoch_help(f.p));
  EXPECT_EQ(f.scan_words[epoch_report_word], std::uint64_t{2} << 32);
}

TEST(Epochs, AScannerCountsItsHelpersReportsBeforeItPublishesTheQuietEpoch) {
  one_frame f(pinning_kind::epochs);
  // A previous scan left its claim word past its last chunk; the next scan numbers itself 8.
  f.scan_words[epoch_claim_word] = (std::uint64_t{7} << epoch_chunk_bits) + epoch_chunks(f.p);
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  EXPECT_EQ(f.scan_words[epoch_report_word], (std::uint64_t{8} << 32) | epoch_chunks(f.p));
  EXPECT_EQ(f.scan_words[epoch_quiet_word], first_epoch);
  EXPECT_EQ(f.scan_words[epoch_helped_word], 0u) << "the scanner's own chunks are not help";
}

TEST(Epochs, ScanNumbersWrapWithinTheReportWordAndSkipZero) {
  one_frame f(pinning_kind::epochs);
  f.scan_words[epoch_claim_word] =
      (std::uint64_t{0xffff'ffff} << epoch_chunk_bits) + epoch_chunks(f.p);
  EXPECT_TRUE(epoch_grace_period(f.p, soon()));
  EXPECT_EQ(f.scan_words[epoch_claim_word] >> epoch_chunk_bits, 1u);
  EXPECT_EQ(f.scan_words[epoch_report_word], (std::uint64_t{1} << 32) | epoch_chunks(f.p));
}

// Retirers close a cell, wait for a grace period and overwrite it; readers announce, and read
// the cell only while it is open. With a grace period that returned early, a reader would see
// the overwrite (and ThreadSanitizer a race on the plain payload).
TEST(Epochs, ConcurrentGracePeriodsNeverLetAReaderSeeARetiredCell) {
  one_frame f(pinning_kind::epochs);
  constexpr unsigned cells = 4, retirers = 3, readers = 4, rounds = 300;
  struct cell {
    std::uint64_t open = 1;   // atomic_ref: the entry readers check after announcing
    std::uint64_t value = 7;  // plain: protected by the grace period alone
  };
  std::vector<cell> c(cells);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> wrong{0}, timeouts{0};
  std::vector<std::thread> threads;
  // Threads that wait for nothing but help every scan (as cache threads waiting unprotected
  // do): their chunks count like the scanner's.
  constexpr unsigned helpers = 2;
  for (unsigned h = 0; h < helpers; ++h) {
    threads.emplace_back([&] {
      while (!done.load(std::memory_order_relaxed)) {
        if (!epoch_help(f.p)) std::this_thread::yield();
      }
    });
  }
  for (unsigned r = 0; r < readers; ++r) {
    threads.emplace_back([&, r] {
      // Half the readers take their own slot, half one in the last chunks, so that a scan
      // that skipped a chunk other than the first would let a reader see a retired cell.
      const std::uint32_t spread = f.p.epoch_slot_count - 1 - r * epoch_chunk_slots / 2;
      for (std::uint64_t k = r; !done.load(std::memory_order_relaxed); ++k) {
        cell& x = c[k % cells];
        const std::uint32_t slot = r % 2 == 0 ? epoch_enter(f.p) : epoch_enter_at(f.p, spread);
        if (atomic_ref<std::uint64_t>(x.open).load(epoch_read_order) == 1) {
          if (x.value != 7) wrong.fetch_add(1);
          if (k % 8 == 0) {  // now and then a long section, so that a retirer can meet it
            std::this_thread::yield();
            if (x.value != 7) wrong.fetch_add(1);
          }
        }
        epoch_exit(f.p, slot);
      }
    });
  }
  for (unsigned w = 0; w < retirers; ++w) {
    threads.emplace_back([&, w] {
      for (unsigned k = 0; k < rounds; ++k) {
        cell& x = c[(w + k * retirers) % cells];
        std::uint64_t expected = 1;
        // seq_cst: the close precedes the grace period's increment (epochs.hpp).
        if (!atomic_ref<std::uint64_t>(x.open).compare_exchange(expected, 2, order::seq_cst)) {
          continue;  // another retirer has it
        }
        if (!epoch_grace_period(f.p, now_ns() + 5'000'000'000ull)) {
          timeouts.fetch_add(1);
          continue;  // leave it closed: nobody may write it
        }
        x.value = 99;  // the retired cell is ours: no reader can still hold it
        std::this_thread::yield();
        x.value = 7;  // reused
        // release: the rewrite before the reopening
        atomic_ref<std::uint64_t>(x.open).store(1, order::release);
      }
    });
  }
  for (unsigned w = 0; w < retirers; ++w) threads[helpers + readers + w].join();
  done = true;
  for (unsigned r = 0; r < helpers + readers; ++r) threads[r].join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(timeouts.load(), 0u);
  EXPECT_EQ(f.scan_words[epoch_scanning_word], 0u);
  std::printf("grace periods: %llu scans, %llu chunks scanned by helpers\n",
              static_cast<unsigned long long>(f.scan_words[epoch_scans_word]),
              static_cast<unsigned long long>(f.scan_words[epoch_helped_word]));
}

TEST(Epochs, AScanThatWaitsLongNamesTheSlotItWaitsOn) {
  one_frame f(pinning_kind::epochs);
  f.slots[42] = f.epoch;  // announced before the grace period, and never leaves
  EXPECT_FALSE(epoch_grace_period(f.p, now_ns() + 2 * epoch_stall_note_ns));
  EXPECT_EQ(f.scan_words[epoch_stalled_word], 43u);  // 1 + the slot
  EXPECT_EQ(f.scan_words[epoch_stalled_by_word], std::uint64_t{reader_slot()} + 1)
      << "the scan names its own slot too";
  EXPECT_EQ(f.scan_words[epoch_scanning_word], 0u) << "a scan past its deadline lets go";
}

}  // namespace
