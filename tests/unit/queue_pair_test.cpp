// The queue pair driven by one thread against a controller the test plays by hand, so every
// step (fetch, complete out of order, drop, answer late) happens exactly when the test says.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <bam/nvme/command.hpp>
#include <bam/nvme/status.hpp>
#include <bam/queue/queue_pair.hpp>

#include "storage/emulated/command_engine.hpp"

namespace {

using bam::deadline;
using bam::io_status;
using bam::queue_layout;
using bam::queue_pair_ref;
using bam::queue_ticket;
using bam::status_source;

constexpr std::uint64_t long_wait_ns = 10'000'000'000ull;

// Queue memory laid out for `depth`, zeroed, with the test as its controller.
class hand_queue {
 public:
  explicit hand_queue(std::uint32_t depth)
      : layout_(queue_layout::for_depth(depth)),
        memory_(static_cast<unsigned char*>(std::aligned_alloc(4096, layout_.bytes)), &std::free) {
    std::memset(memory_.get(), 0, layout_.bytes);
    q_ = queue_pair_ref(memory_.get(), depth, 1, long_wait_ns);
  }

  [[nodiscard]] const queue_pair_ref& q() const { return q_; }

  // The per-slot words, for presetting a queue and checking its state.
  [[nodiscard]] std::uint32_t* turn() const { return words<std::uint32_t>(layout_.turn); }
  [[nodiscard]] std::uint32_t* mark() const { return words<std::uint32_t>(layout_.mark); }
  [[nodiscard]] std::uint32_t* cq_laps() const { return words<std::uint32_t>(layout_.cq_laps); }
  [[nodiscard]] std::uint64_t* mailbox() const { return words<std::uint64_t>(layout_.mailbox); }

  // Fetches every entry the doorbell makes available.
  std::vector<bam::nvme::submission_entry> fetch() {
    std::vector<bam::nvme::submission_entry> out;
    for (std::uint32_t n = service_.available(q_); n > 0; --n) out.push_back(service_.fetch(q_));
    return out;
  }

  void complete(std::uint16_t cid, std::uint16_t status = 0) {
    ASSERT_TRUE(service_.post(q_, cid, status));
  }

  // What emulated_storage::reset_queue does to the memory, and a fresh controller.
  void reset() {
    std::memset(memory_.get(), 0, layout_.bytes);
    service_ = {};
  }

 private:
  template <class T>
  T* words(std::uint64_t offset) const {
    return reinterpret_cast<T*>(memory_.get() + offset);
  }

  queue_layout layout_;
  std::unique_ptr<unsigned char, decltype(&std::free)> memory_;
  queue_pair_ref q_;
  bam::emulated::queue_service service_;
};

bam::nvme::submission_entry read_of(std::uint64_t lba) {
  return bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, lba, 1, 0x10000, 0);
}

io_status submit(const queue_pair_ref& q, std::uint64_t lba, queue_ticket& t,
                 std::uint64_t wait_ns = long_wait_ns) {
  return q.submit(read_of(lba), deadline::after_ns(wait_ns), t);
}

io_status wait(const queue_pair_ref& q, const queue_ticket& t,
               std::uint64_t wait_ns = long_wait_ns) {
  return q.wait(t, deadline::after_ns(wait_ns));
}

TEST(QueuePair, TicketsNameSlotAndTurnOfConsecutivePositions) {
  hand_queue h(3);
  for (std::uint64_t pos = 0; pos < 9; ++pos) {
    queue_ticket t;
    ASSERT_TRUE(submit(h.q(), pos, t).ok());
    EXPECT_EQ(t.position, pos);
    EXPECT_EQ(t.slot, pos % 3);
    EXPECT_EQ(t.turn, pos / 3);
    ASSERT_EQ(h.fetch().size(), 1u);
    h.complete(static_cast<std::uint16_t>(t.slot));
    ASSERT_TRUE(wait(h.q(), t).ok());
  }
}

TEST(QueuePair, SubmitWritesTheEntryWithItsSlotAsCommandId) {
  hand_queue h(4);
  queue_ticket a, b;
  ASSERT_TRUE(submit(h.q(), 100, a).ok());
  ASSERT_TRUE(submit(h.q(), 200, b).ok());
  const auto entries = h.fetch();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].command_id, a.slot);
  EXPECT_EQ(entries[0].slba(), 100u);
  EXPECT_EQ(entries[1].command_id, b.slot);
  EXPECT_EQ(entries[1].slba(), 200u);
}

TEST(QueuePair, SubmitRingsTheTailDoorbellWithTheNewTail) {
  hand_queue h(4);
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  EXPECT_EQ(*h.q().sq_doorbell(), 1u);
  ASSERT_TRUE(submit(h.q(), 1, t).ok());
  EXPECT_EQ(*h.q().sq_doorbell(), 2u);
  EXPECT_EQ(h.q().control()->counters.sq_doorbells, 2u);
  EXPECT_EQ(h.q().control()->counters.submitted, 2u);
}

TEST(QueuePair, WaitReturnsTheStatusTheControllerPosted) {
  hand_queue h(4);
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();
  const std::uint16_t media =
      bam::nvme::make_status_field(bam::nvme::media_status::unrecovered_read_error);
  h.complete(static_cast<std::uint16_t>(t.slot), media);
  const io_status s = wait(h.q(), t);
  EXPECT_EQ(s.source(), status_source::device);
  EXPECT_EQ(s.status_field(), media);
}

TEST(QueuePair, AQueueThatPollsWithoutSleepingStillSubmitsAndWaits) {
  hand_queue h(4);
  queue_pair_ref q = h.q();
  EXPECT_EQ(q.wait_sleep_ns(), bam::default_wait_sleep_ns);
  q.set_wait_sleep_ns(0);
  EXPECT_EQ(q.wait_sleep_ns(), 0u);
  queue_ticket t;
  ASSERT_TRUE(submit(q, 0, t).ok());
  EXPECT_EQ(h.fetch().size(), 1u);
  h.complete(static_cast<std::uint16_t>(t.slot));
  EXPECT_TRUE(wait(q, t).ok());
}

TEST(QueuePair, AQueueWithGpuScopeEdgesStillRingsDoorbellsAndDrainsCompletions) {
  hand_queue h(4);
  queue_pair_ref q = h.q();
  EXPECT_FALSE(q.gpu_scope_edges());
  q.set_gpu_scope_edges(true);
  EXPECT_TRUE(q.gpu_scope_edges());
  queue_ticket t;
  ASSERT_TRUE(submit(q, 0, t).ok());
  EXPECT_EQ(*q.sq_doorbell(), 1u);
  EXPECT_EQ(h.fetch().size(), 1u);
  h.complete(static_cast<std::uint16_t>(t.slot));
  EXPECT_TRUE(wait(q, t).ok());
  EXPECT_EQ(*q.cq_doorbell(), 1u);
}

TEST(QueuePair, CompletionsInAnyOrderReachTheirOwnSubmitters) {
  hand_queue h(4);
  queue_ticket t[3];
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(submit(h.q(), i, t[i]).ok());
  ASSERT_EQ(h.fetch().size(), 3u);
  // Complete in the order 2, 0, 1, each with a status naming its command.
  for (int i : {2, 0, 1}) {
    h.complete(static_cast<std::uint16_t>(t[i].slot),
               bam::nvme::make_status_field(bam::nvme::status_type::vendor,
                                            static_cast<std::uint8_t>(0x10 + i)));
  }
  for (int i : {1, 2, 0}) {
    const io_status s = wait(h.q(), t[i]);
    EXPECT_EQ(s.sc(), 0x10 + i) << "command " << i;
  }
  EXPECT_EQ(h.q().control()->counters.drained, 3u);
}

TEST(QueuePair, ASlotIsReusedOnlyAfterItsCompletionIsTaken) {
  hand_queue h(2);
  queue_ticket first, second;
  ASSERT_TRUE(submit(h.q(), 0, first).ok());
  ASSERT_EQ(h.fetch().size(), 1u);
  h.complete(0);
  h.q().drain();  // drained into the mailbox, but not yet taken by its submitter
  ASSERT_TRUE(submit(h.q(), 1, second).ok());  // slot 1
  queue_ticket third;
  // Slot 0's command is complete and fetched, yet its submitter has not taken the completion:
  // the next submitter to slot 0 must wait for it.
  EXPECT_EQ(submit(h.q(), 2, third, 1'000'000).source(), status_source::submit_timeout);
  EXPECT_FALSE(third.abandoned) << "it never entered the ring";
  EXPECT_TRUE(h.q().halted());
}

TEST(QueuePair, ACompletionTakenAfterItsDeadlineCountsAsLateAndFreesTheSlot) {
  hand_queue h(2);
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();
  EXPECT_EQ(wait(h.q(), t, 0).source(), status_source::timeout);
  h.complete(static_cast<std::uint16_t>(t.slot));
  h.q().drain();
  EXPECT_EQ(h.q().control()->counters.late_completions, 1u);
  EXPECT_EQ(h.turn()[t.slot], 1u) << "the drainer freed the slot for turn 1";
}

TEST(QueuePair, TheNextTurnOfALateCommandsSlotProceedsOnceTheLateCompletionArrives) {
  hand_queue h(2);
  queue_ticket late, other, next;
  ASSERT_TRUE(submit(h.q(), 0, late).ok());
  h.fetch();
  ASSERT_EQ(wait(h.q(), late, 0).source(), status_source::timeout);
  h.complete(static_cast<std::uint16_t>(late.slot));
  ASSERT_TRUE(submit(h.q(), 1, other).ok());
  h.fetch();
  h.complete(static_cast<std::uint16_t>(other.slot));
  ASSERT_TRUE(wait(h.q(), other).ok());
  ASSERT_TRUE(submit(h.q(), 2, next).ok());
  EXPECT_EQ(next.slot, late.slot);
  EXPECT_EQ(next.turn, 1u);
  h.fetch();
  h.complete(static_cast<std::uint16_t>(next.slot));
  EXPECT_TRUE(wait(h.q(), next).ok());
  EXPECT_FALSE(h.q().halted());
}

TEST(QueuePair, ASlotWhoseCommandIsNeverAnsweredHaltsTheQueueAsCommandLost) {
  hand_queue h(3);
  queue_ticket lost, blocked;
  ASSERT_TRUE(submit(h.q(), 0, lost).ok());
  h.fetch();  // the controller drops it: no completion ever
  ASSERT_EQ(wait(h.q(), lost, 0).source(), status_source::timeout);
  for (std::uint64_t lba : {1, 2}) {
    queue_ticket other;
    ASSERT_TRUE(submit(h.q(), lba, other).ok());
    h.fetch();
    h.complete(static_cast<std::uint16_t>(other.slot));
    ASSERT_TRUE(wait(h.q(), other).ok());
  }
  EXPECT_EQ(submit(h.q(), 3, blocked, 1'000'000).source(), status_source::command_lost);
  EXPECT_EQ(blocked.slot, lost.slot);
  EXPECT_TRUE(h.q().halted());
  EXPECT_EQ(h.q().control()->halted, lost.slot + 1u) << "the halt names the slot";
}

TEST(QueuePair, AHaltedQueueAnswersEveryLaterSubmitAtOnce) {
  hand_queue h(2);
  bam::atomic_ref<std::uint32_t>(h.q().control()->halted).store(1, bam::order::relaxed);
  queue_ticket t;
  EXPECT_EQ(submit(h.q(), 0, t).source(), status_source::queue_halted);
  EXPECT_EQ(h.q().submit_naive(read_of(0), deadline::after_ns(long_wait_ns), t).source(),
            status_source::queue_halted);
  EXPECT_EQ(h.q().control()->ticket, 0u) << "no position was taken";
}

TEST(QueuePair, AResetQueueWorksAgain) {
  hand_queue h(2);
  bam::atomic_ref<std::uint32_t>(h.q().control()->halted).store(1, bam::order::relaxed);
  h.reset();
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  EXPECT_EQ(t.position, 0u);
  h.fetch();
  h.complete(0);
  EXPECT_TRUE(wait(h.q(), t).ok());
}

TEST(QueuePair, AFullSubmissionQueueKeepsOneSlotEmpty) {
  hand_queue h(3);
  queue_ticket a, b, c;
  ASSERT_TRUE(submit(h.q(), 0, a).ok());
  ASSERT_TRUE(submit(h.q(), 1, b).ok());
  // Two entries are unfetched in a ring of three: a third would make tail == head.
  EXPECT_EQ(submit(h.q(), 2, c, 1'000'000).source(), status_source::submit_timeout);
  EXPECT_TRUE(c.abandoned) << "its entry is in the ring and may still be submitted";
  EXPECT_EQ(*h.q().sq_doorbell(), 2u);
  EXPECT_FALSE(h.q().halted()) << "a full queue is not a lost command";
}

TEST(QueuePair, AnEntryLeftBehindByAFullQueueIsSubmittedLaterAndItsCompletionFreesTheSlot) {
  hand_queue h(3);
  queue_ticket a, b, c, d;
  ASSERT_TRUE(submit(h.q(), 0, a).ok());
  ASSERT_TRUE(submit(h.q(), 1, b).ok());
  ASSERT_EQ(submit(h.q(), 2, c, 1'000'000).source(), status_source::submit_timeout);
  ASSERT_EQ(h.fetch().size(), 2u);
  h.complete(static_cast<std::uint16_t>(a.slot));
  h.complete(static_cast<std::uint16_t>(b.slot));
  ASSERT_TRUE(wait(h.q(), a).ok());
  ASSERT_TRUE(wait(h.q(), b).ok());
  ASSERT_TRUE(submit(h.q(), 3, d).ok());  // its tail advance carries c along
  const auto entries = h.fetch();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].slba(), 2u);
  EXPECT_EQ(entries[1].slba(), 3u);
  h.complete(static_cast<std::uint16_t>(c.slot));
  h.complete(static_cast<std::uint16_t>(d.slot));
  ASSERT_TRUE(wait(h.q(), d).ok());
  h.q().drain();
  EXPECT_EQ(h.q().control()->counters.late_completions, 1u);
  EXPECT_EQ(h.turn()[c.slot], 1u);
}

TEST(QueuePair, ASubmitterGivingUpAfterItsCompletionArrivedTakesItInsteadOfAbandoningIt) {
  // A submitter past its deadline last saw the virtual tail short of its position, but meanwhile
  // another thread's tail advance submitted its entry and its completion was drained into the
  // mailbox (preempted between the two loads on a CPU; relaxed loads of two words on a GPU).
  // The completion is its own: giving up now would overwrite it with the "abandoned" mark, and
  // no one would ever free the slot.
  hand_queue h(4);
  h.q().control()->tail_lock = 1;  // the tail stays put while this thread is in submit
  const std::uint16_t status = bam::nvme::make_status_field(bam::nvme::status_type::vendor, 0x42);
  h.mailbox()[0] = bam::detail::mailbox_completion(0, status);  // slot 0, turn 0
  queue_ticket t;
  const io_status s = submit(h.q(), 0, t, 0);
  ASSERT_EQ(t.slot, 0u);
  h.q().control()->tail_lock = 0;
  ASSERT_TRUE(s.ok()) << s.name();
  EXPECT_EQ(wait(h.q(), t).status_field(), status);
  EXPECT_EQ(h.turn()[0], 1u) << "the slot is free for its next turn";
}

// What an abandoned command holds: two words of a buffer owner's memory (bits to set, then
// bits to clear when the command is done with the buffer).
struct held_words {
  std::uint64_t busy = 0b1110;
  std::uint64_t resident = 0b0001;
  [[nodiscard]] bam::command_hold hold() { return {&busy, 0b0100, &resident, 0b0100}; }
};

TEST(QueuePair, AWaitThatGivesUpLeavesItsHoldForTheDrainerOfTheLateCompletion) {
  hand_queue h(2);
  held_words w;
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();
  ASSERT_EQ(h.q().wait(t, deadline::after_ns(0), w.hold()).source(), status_source::timeout);
  EXPECT_EQ(w.busy, 0b1110u) << "the command may still run: the buffer stays held";
  h.complete(static_cast<std::uint16_t>(t.slot));
  h.q().drain();
  EXPECT_EQ(w.busy, 0b1010u) << "the drainer of the late completion clears the held bits";
  EXPECT_EQ(w.resident, 0b0101u) << "and sets the bits to set";
}

TEST(QueuePair, ACompletionInTimeLeavesTheHoldToItsWaiter) {
  hand_queue h(2);
  held_words w;
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();
  h.complete(static_cast<std::uint16_t>(t.slot));
  ASSERT_TRUE(h.q().wait(t, deadline::after_ns(long_wait_ns), w.hold()).ok());
  h.q().drain();
  EXPECT_EQ(w.busy, 0b1110u);
  EXPECT_EQ(w.resident, 0b0001u);
}

TEST(QueuePair, AnEntryLeftInTheRingByAGivenUpSubmitKeepsItsHoldUntilItsCompletion) {
  hand_queue h(3);
  held_words w;
  queue_ticket a, b, c, d;
  ASSERT_TRUE(submit(h.q(), 0, a).ok());
  ASSERT_TRUE(submit(h.q(), 1, b).ok());
  ASSERT_EQ(h.q().submit(read_of(2), deadline::after_ns(1'000'000), c, w.hold()).source(),
            status_source::submit_timeout);
  ASSERT_TRUE(c.abandoned);
  h.fetch();
  h.complete(static_cast<std::uint16_t>(a.slot));
  h.complete(static_cast<std::uint16_t>(b.slot));
  ASSERT_TRUE(wait(h.q(), a).ok());
  ASSERT_TRUE(wait(h.q(), b).ok());
  ASSERT_TRUE(submit(h.q(), 3, d).ok());  // carries c into the SQ: the device runs it
  ASSERT_EQ(h.fetch().size(), 2u);
  EXPECT_EQ(w.busy, 0b1110u) << "held while c may run";
  h.complete(static_cast<std::uint16_t>(c.slot));
  h.complete(static_cast<std::uint16_t>(d.slot));
  ASSERT_TRUE(wait(h.q(), d).ok());
  EXPECT_EQ(w.busy, 0b1010u);
  EXPECT_EQ(w.resident, 0b0101u);
}

TEST(QueuePair, ReleasingAbandonedHoldsGivesBackWhatNeverCompletedOnce) {
  hand_queue h(2);
  held_words w;
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();  // never answered
  ASSERT_EQ(h.q().wait(t, deadline::after_ns(0), w.hold()).source(), status_source::timeout);
  EXPECT_EQ(h.q().release_abandoned_holds(), 1u);
  EXPECT_EQ(w.busy, 0b1010u);
  EXPECT_EQ(w.resident, 0b0101u);
  w.busy = 0b0100;
  EXPECT_EQ(h.q().release_abandoned_holds(), 0u) << "a hold is given back once";
  EXPECT_EQ(w.busy, 0b0100u);
}

TEST(QueuePair, ExecuteGivesTheCompletionItsOwnDeadlineAfterALongWaitToEnter) {
  // In a ring of two, a second entry enters only once the first one's completion reports the
  // SQ head: execute() waits most of its timeout to enter, then its command takes most of a
  // timeout again. Each wait is within the timeout; the two together are not.
  using namespace std::chrono_literals;
  hand_queue h(2);
  const queue_pair_ref q(h.q().control(), 2, 1, 200'000'000);  // this queue, 200 ms timeout
  queue_ticket first;
  ASSERT_TRUE(submit(q, 0, first).ok());
  std::thread controller([&h] {
    std::this_thread::sleep_for(130ms);
    std::vector<bam::nvme::submission_entry> entries = h.fetch();  // the first command
    h.complete(entries.at(0).command_id);
    const auto give_up = std::chrono::steady_clock::now() + 2s;
    while (entries.size() < 2 && std::chrono::steady_clock::now() < give_up) {
      for (const auto& e : h.fetch()) entries.push_back(e);  // execute's command
    }
    if (entries.size() < 2) return;
    std::this_thread::sleep_for(130ms);
    h.complete(entries[1].command_id);
  });
  queue_ticket t;
  const io_status s = q.execute(read_of(7), t);
  controller.join();
  EXPECT_TRUE(s.ok()) << s.name();
  EXPECT_TRUE(wait(q, first).ok());
}

TEST(QueuePair, NaiveSubmitWritesTheEntryAndRingsTheDoorbell) {
  hand_queue h(4);
  queue_ticket t;
  ASSERT_TRUE(h.q().submit_naive(read_of(42), deadline::after_ns(long_wait_ns), t).ok());
  EXPECT_EQ(*h.q().sq_doorbell(), 1u);
  const auto entries = h.fetch();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].slba(), 42u);
  EXPECT_EQ(entries[0].command_id, t.slot);
  h.complete(static_cast<std::uint16_t>(t.slot));
  EXPECT_TRUE(wait(h.q(), t).ok());
  EXPECT_EQ(h.q().control()->naive_lock, 0u) << "the lock is released";
}

TEST(QueuePair, NaiveSubmitToAFullQueueHaltsPastItsDeadline) {
  hand_queue h(2);
  queue_ticket a, b;
  ASSERT_TRUE(h.q().submit_naive(read_of(0), deadline::after_ns(long_wait_ns), a).ok());
  EXPECT_EQ(h.q().submit_naive(read_of(1), deadline::after_ns(1'000'000), b).source(),
            status_source::queue_halted);
  EXPECT_EQ(h.q().control()->naive_lock, 0u) << "the lock is released";
}

TEST(QueuePair, TheCompletionQueuePhaseFlipsOnEveryLap) {
  hand_queue h(2);
  for (std::uint64_t i = 0; i < 7; ++i) {
    queue_ticket t;
    ASSERT_TRUE(submit(h.q(), i, t).ok());
    h.fetch();
    h.complete(static_cast<std::uint16_t>(t.slot));
    ASSERT_TRUE(wait(h.q(), t).ok()) << "command " << i;
    EXPECT_EQ(h.q().control()->cq_state & 0xffffu, (i + 1) % 2);
    EXPECT_EQ((h.q().control()->cq_state >> 16) & 1u, ((i + 1) / 2) % 2);
    EXPECT_EQ(*h.q().cq_doorbell(), (i + 1) % 2) << "head doorbell after each drain";
  }
}

TEST(QueuePair, ACompletionForAnUnknownCommandIdIsCountedAndSkipped) {
  hand_queue h(4);
  queue_ticket t;
  ASSERT_TRUE(submit(h.q(), 0, t).ok());
  h.fetch();
  h.complete(1000);
  h.complete(static_cast<std::uint16_t>(t.slot));
  EXPECT_TRUE(wait(h.q(), t).ok());
  EXPECT_EQ(h.q().control()->counters.bad_completions, 1u);
}

// A queue whose virtual position is `laps_before_wrap` laps short of the lap where the uint32
// turn counters wrap to zero, as if it had already served ~2^32 * depth commands.
void preset_near_turn_wrap(hand_queue& h, std::uint32_t depth, std::uint32_t laps_before_wrap) {
  const std::uint32_t lap = 0u - laps_before_wrap;
  const std::uint64_t position = std::uint64_t{lap} * depth;
  h.q().control()->ticket = position;
  h.q().control()->vtail = position;
  for (std::uint32_t s = 0; s < depth; ++s) {
    h.turn()[s] = lap;     // every slot's previous lap was completed and taken
    h.mark()[s] = lap;     // ... and marked with that lap + 1
    h.cq_laps()[s] = lap;  // ... and drained
  }
}

class QueuePairNearTurnWrap : public testing::TestWithParam<std::uint32_t> {};

TEST_P(QueuePairNearTurnWrap, ServesOneCommandAtATimeAcrossTheWrap) {
  const std::uint32_t depth = GetParam();
  hand_queue h(depth);
  preset_near_turn_wrap(h, depth, 2);
  std::vector<std::uint32_t> turns;
  for (std::uint64_t i = 0; i < 5u * depth; ++i) {
    queue_ticket t;
    ASSERT_TRUE(submit(h.q(), i, t).ok()) << "command " << i;
    const auto entries = h.fetch();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].slba(), i);
    EXPECT_EQ(entries[0].command_id, t.slot);
    h.complete(static_cast<std::uint16_t>(t.slot));
    ASSERT_TRUE(wait(h.q(), t).ok()) << "command " << i;
    if (t.slot == 0) turns.push_back(t.turn);
  }
  EXPECT_EQ(turns, (std::vector<std::uint32_t>{0xfffffffeu, 0xffffffffu, 0u, 1u, 2u}));
}

TEST_P(QueuePairNearTurnWrap, KeepsTheQueueFullAcrossTheWrap) {
  const std::uint32_t depth = GetParam();
  hand_queue h(depth);
  preset_near_turn_wrap(h, depth, 1);
  // depth - 1 commands in flight at a time, completed in reverse order, for six laps.
  std::uint64_t lba = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<queue_ticket> batch(depth - 1);
    for (auto& t : batch) ASSERT_TRUE(submit(h.q(), lba++, t).ok());
    ASSERT_EQ(h.fetch().size(), depth - 1u);
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
      h.complete(static_cast<std::uint16_t>(it->slot),
                 static_cast<std::uint16_t>(it->position % 256));
    }
    for (const auto& t : batch) {
      const io_status s = wait(h.q(), t);
      EXPECT_EQ(s.status_field(), t.position % 256) << "position " << t.position;
    }
  }
  EXPECT_FALSE(h.q().halted());
  EXPECT_EQ(h.q().control()->counters.drained, 6u * (depth - 1));
}

INSTANTIATE_TEST_SUITE_P(Depths, QueuePairNearTurnWrap, testing::Values(2u, 3u));

}  // namespace
