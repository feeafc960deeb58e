#pragma once
// Definitions for queue_pair.hpp. Each memory order is explained where it stands; the edges
// are DESIGN section 4's ordering table.

#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/mmio.hpp>
#include <bam/platform/warp.hpp>
#include <bam/platform/warp_sync.hpp>

namespace bam {

namespace detail {

// Mailbox word: bits 31:0 the turn of the completion it holds, bit 32 "holds a completion",
// bits 47:33 the NVMe status field, bit 63 "abandoned": the submitter of that turn gave up.
inline constexpr std::uint64_t mailbox_valid = 1ull << 32;
inline constexpr std::uint64_t mailbox_abandoned = 1ull << 63;
inline constexpr unsigned mailbox_status_shift = 33;

BAM_HD constexpr std::uint64_t mailbox_completion(std::uint32_t turn, std::uint16_t status) {
  return mailbox_valid | (std::uint64_t{status} << mailbox_status_shift) | turn;
}
BAM_HD constexpr std::uint64_t mailbox_abandon(std::uint32_t turn) {
  return mailbox_abandoned | turn;
}
BAM_HD constexpr std::uint32_t mailbox_turn(std::uint64_t word) {
  return static_cast<std::uint32_t>(word);
}
BAM_HD constexpr std::uint16_t mailbox_status(std::uint64_t word) {
  return static_cast<std::uint16_t>((word >> mailbox_status_shift) & 0x7fffu);
}

inline constexpr std::uint32_t cq_phase_bit = 1u << 16;

/// Bumps a counter that only a lock holder writes: no read-modify-write needed.
BAM_HD BAM_INLINE void bump(std::uint64_t& counter, std::uint64_t by) {
  atomic_ref<std::uint64_t> c(counter);
  c.store(c.load(order::relaxed) + by, order::relaxed);  // relaxed: statistics only
}

/// Bumps a counter that several lanes of one lock holder's warp may bump at once.
BAM_HD BAM_INLINE void bump_shared(std::uint64_t& counter, std::uint64_t by) {
  atomic_ref<std::uint64_t>(counter).fetch_add(by, order::relaxed);  // relaxed: statistics only
}

}  // namespace detail

BAM_HD inline queue_pair_ref::queue_pair_ref(void* base, std::uint32_t depth,
                                             std::uint16_t queue_id, std::uint64_t timeout_ns,
                                             std::uint32_t* sq_doorbell, std::uint32_t* cq_doorbell,
                                             bool mmio_doorbells)
    : timeout_ns_(timeout_ns), depth_(depth), queue_id_(queue_id), mmio_doorbells_(mmio_doorbells) {
  const queue_layout l = queue_layout::for_depth(depth);
  auto* bytes = static_cast<unsigned char*>(base);
  control_ = reinterpret_cast<queue_control*>(bytes + l.control);
  sq_ = reinterpret_cast<nvme::submission_entry*>(bytes + l.sq);
  cq_ = reinterpret_cast<nvme::completion_entry*>(bytes + l.cq);
  turn_ = reinterpret_cast<std::uint32_t*>(bytes + l.turn);
  mark_ = reinterpret_cast<std::uint32_t*>(bytes + l.mark);
  mailbox_ = reinterpret_cast<std::uint64_t*>(bytes + l.mailbox);
  cq_laps_ = reinterpret_cast<std::uint32_t*>(bytes + l.cq_laps);
  holds_ = reinterpret_cast<command_hold*>(bytes + l.holds);
  sq_doorbell_ = sq_doorbell ? sq_doorbell : &control_->sq_doorbell;
  cq_doorbell_ = cq_doorbell ? cq_doorbell : &control_->cq_doorbell;
}

BAM_HD inline void queue_pair_ref::ring(std::uint32_t* doorbell, std::uint32_t value) const {
  if (!gpu_scope_edges_ || mmio_doorbells_) {
    ring_doorbell(doorbell, value, mmio_doorbells_);
    return;
  }
  // The controller is a kernel on this GPU: the entries need only reach GPU scope, and a
  // release store is all that takes (no fence.sc: on the H200 one costs about 130 us at times
  // while the controller kernel runs, docs/results.md).
  // release (cumulative): the queue entries this thread wrote, and those it acquired through
  // the slot marks, reach the controller's acquire load of the doorbell.
  atomic_ref<std::uint32_t, scope::device>(*doorbell).store(value, order::release);
}

BAM_HD inline bool queue_pair_ref::halted() const {
  // relaxed: a hint that makes waits end early; the waits themselves carry the data edges.
  return atomic_ref<std::uint32_t>(control_->halted).load(order::relaxed) != 0;
}

BAM_HD inline io_status queue_pair_ref::halt(std::uint32_t slot) const {
  std::uint32_t expected = 0;
  // relaxed: nothing is published with the flag; every reader only stops.
  atomic_ref<std::uint32_t>(control_->halted).compare_exchange(expected, slot + 1u, order::relaxed);
  return io_status::host(status_source::queue_halted);
}

BAM_HD inline io_status queue_pair_ref::wait_for_turn(const queue_ticket& t, deadline until,
                                                      bool drain_while_waiting) const {
  backoff pause = wait_backoff();
  // acquire: the previous holder of this slot took its completion and finished with the slot.
  while (atomic_ref<std::uint32_t>(turn_[t.slot]).load(order::acquire) != t.turn) {
    if (halted()) return io_status::host(status_source::queue_halted);
    if (until.expired()) {
      // Our ring position can never be filled now, so nothing behind it can be submitted.
      // relaxed: only tells whether the holder gave up, for the status we return.
      const std::uint64_t mb = atomic_ref<std::uint64_t>(mailbox_[t.slot]).load(order::relaxed);
      halt(t.slot);
      return io_status::host((mb & detail::mailbox_abandoned) ? status_source::command_lost
                                                              : status_source::submit_timeout);
    }
    if (drain_while_waiting) drain();
    pause.pause();
  }
  return {};
}

BAM_HD inline void queue_pair_ref::write_entry(const queue_ticket& t,
                                               const nvme::submission_entry& command) const {
  nvme::submission_entry& slot = sq_[t.slot];
  slot = command;
  slot.command_id = static_cast<std::uint16_t>(t.slot);
}

BAM_HD inline void queue_pair_ref::record_hold(std::uint32_t slot,
                                               const command_hold& hold) const {
  // Plain stores: the abandoner's release CAS of the mailbox publishes them to the drainer
  // that finds the abandoned mark; the slot's next holder writes only after that drainer
  // handed the slot on (turn, release).
  holds_[slot] = hold;
}

BAM_HD inline void queue_pair_ref::release_hold(std::uint32_t slot) const {
  const command_hold h = holds_[slot];  // published with the abandoned mark (see record_hold)
  if (!h.holds()) return;
  if (h.set_word != nullptr) {
    // release: the command's data movement (acquired with its completion, or ended by a reset)
    // before the bits are seen set.
    atomic_ref<std::uint64_t>(*h.set_word).fetch_or(h.set_bits, order::release);
  }
  // release: as above; the buffer's next holder acquires this word before it reuses the buffer.
  atomic_ref<std::uint64_t>(*h.clear_word).fetch_and(~h.clear_bits, order::release);
}

BAM_HD inline std::uint32_t queue_pair_ref::release_abandoned_holds() const {
  std::uint32_t released = 0;
  for (std::uint32_t slot = 0; slot < depth_; ++slot) {
    // acquire: the abandoner's hold record, published by its release CAS.
    const std::uint64_t mb = atomic_ref<std::uint64_t>(mailbox_[slot]).load(order::acquire);
    if (!(mb & detail::mailbox_abandoned) || !holds_[slot].holds()) continue;
    release_hold(slot);
    holds_[slot] = command_hold{};  // given back once
    ++released;
  }
  return released;
}

BAM_HD inline io_status queue_pair_ref::submit(const nvme::submission_entry& command,
                                               deadline until, queue_ticket& out,
                                               const command_hold& hold) const {
  out.abandoned = false;
  if (halted()) return io_status::host(status_source::queue_halted);
  // relaxed: the ticket only hands out positions; the turn counter carries the data edges.
  const std::uint64_t position =
      atomic_ref<std::uint64_t>(control_->ticket).fetch_add(1, order::relaxed);
  out.position = position;
  out.slot = static_cast<std::uint32_t>(position % depth_);
  out.turn = static_cast<std::uint32_t>(position / depth_);

  if (io_status s = wait_for_turn(out, until, true); !s.ok()) return s;
  write_entry(out, command);
  // release: the entry's stores are visible to the tail winner that acquires the mark.
  atomic_ref<std::uint32_t>(mark_[out.slot]).store(out.turn + 1u, order::release);

  backoff pause = wait_backoff();
  for (;;) {
    // relaxed: only asks whether a doorbell covered our position; nothing is read through it.
    if (atomic_ref<std::uint64_t>(control_->vtail).load(order::relaxed) > position) return {};
    try_advance_tail();
    if (atomic_ref<std::uint64_t>(control_->vtail).load(order::relaxed) > position) return {};
    if (halted() || until.expired()) {
      // The entry is in the ring and may still be submitted by a later winner: leave the
      // abandoned mark so its completion, if it comes, frees the slot and gives back `hold`.
      atomic_ref<std::uint64_t> mailbox(mailbox_[out.slot]);
      record_hold(out.slot, hold);
      // relaxed: a look; the CAS below publishes.
      std::uint64_t expected = mailbox.load(order::relaxed);
      for (;;) {
        // A winner submitted us after our last look at vtail and our completion is already
        // here: overwriting it would leave the slot held forever. We are submitted; wait()
        // takes it (its acquire load carries the data).
        if ((expected & detail::mailbox_valid) && detail::mailbox_turn(expected) == out.turn) {
          return {};
        }
        // release: the hold record, for the drainer that finds the mark (its exchange
        // acquires); the drainer's exchange decides who frees the slot.
        if (mailbox.compare_exchange(expected, detail::mailbox_abandon(out.turn), order::release)) {
          break;
        }
      }
      out.abandoned = true;
      return io_status::host(halted() ? status_source::queue_halted
                                      : status_source::submit_timeout);
    }
    drain();  // a full SQ frees up only as completions report the head
    pause.pause();
  }
}

BAM_HD inline std::uint32_t queue_pair_ref::lanes_on_this_queue() const {
  return warp::match_any(warp::coalesced_mask(), reinterpret_cast<std::uintptr_t>(control_));
}

BAM_HD inline void queue_pair_ref::try_advance_tail() const {
  advance_tail_lanes(lanes_on_this_queue());
}

BAM_HD inline void queue_pair_ref::advance_tail_lanes(std::uint32_t lanes) const {
  const unsigned me = warp::lane();
  const unsigned leader = warp::lowest_lane(lanes);
  const unsigned count = warp::popcount(lanes);
  const unsigned rank = warp::popcount(lanes & ((1u << me) - 1u));
  atomic_ref<std::uint32_t> lock(control_->tail_lock);
  atomic_ref<std::uint64_t> vtail_ref(control_->vtail);

  // The leader takes the lock; 0 says it did not, else 1 + the virtual tail it found.
  std::uint64_t held = 0;
  std::uint32_t head = 0;
  if (me == leader) {
    std::uint32_t unlocked = 0;
    // relaxed: a test before the test-and-set, to keep losers off the line.
    // acquire: the previous winner's vtail and doorbell state.
    if (lock.load(order::relaxed) == 0 && lock.compare_exchange(unlocked, 1u, order::acquire)) {
      held = 1u + vtail_ref.load(order::relaxed);  // relaxed: only lock holders write it
      // relaxed: the head only gates the full check; no entry data flows through it.
      head = atomic_ref<std::uint32_t>(control_->sq_head).load(order::relaxed);
    }
  }
  held = warp::shfl(lanes, held, leader);
  if (held == 0) return;
  head = static_cast<std::uint32_t>(warp::shfl(lanes, head, leader));
  const std::uint64_t start = held - 1u;

  // Each round, the lane of rank r looks at position v + r; the run of ready positions from
  // v on is submitted. A position is ready when it is inside one ring of the start, leaves
  // one slot empty before the head, and its submitter has marked it.
  std::uint64_t v = start;
  for (;;) {
    const std::uint64_t mine = v + rank;
    const std::uint32_t pos = static_cast<std::uint32_t>(mine % depth_);
    const std::uint32_t lap = static_cast<std::uint32_t>(mine / depth_);
    bool ready = mine - start < depth_ && (pos + 1u) % depth_ != head;
    // acquire: the submitter's entry stores, published by its release of the mark.
    if (ready) ready = atomic_ref<std::uint32_t>(mark_[pos]).load(order::acquire) == lap + 1u;
    const std::uint32_t missing = lanes & ~warp::ballot(lanes, ready);
    const unsigned taken =
        missing ? warp::popcount(lanes & ((missing & (0u - missing)) - 1u)) : count;
    v += taken;
    if (taken < count) break;
  }
  // Every lane's acquire of a mark comes before the leader's doorbell hands the entries on.
  warp::sync(lanes);
  if (me == leader) {
    if (v != start) {
      // relaxed: submitters only compare positions against it.
      vtail_ref.store(v, order::relaxed);
      ring(sq_doorbell_, static_cast<std::uint32_t>(v % depth_));
      detail::bump(control_->counters.sq_doorbells, 1);
      detail::bump(control_->counters.submitted, v - start);
    }
    lock.store(0u, order::release);  // release: vtail and counters for the next winner
  }
}

BAM_HD inline io_status queue_pair_ref::submit_naive(const nvme::submission_entry& command,
                                                     deadline until, queue_ticket& out) const {
  atomic_ref<std::uint32_t> lock(control_->naive_lock);
  backoff pause = wait_backoff();
  for (;;) {
    if (halted()) return io_status::host(status_source::queue_halted);
    std::uint32_t unlocked = 0;
    // acquire: the previous holder's ticket, entry and tail stores.
    if (lock.load(order::relaxed) == 0 && lock.compare_exchange(unlocked, 1u, order::acquire))
      break;
    if (until.expired()) return io_status::host(status_source::timeout);
    drain();
    pause.pause();
  }
  // relaxed: positions are handed out under the lock; the lock orders them.
  const std::uint64_t position =
      atomic_ref<std::uint64_t>(control_->ticket).fetch_add(1, order::relaxed);
  out.position = position;
  out.slot = static_cast<std::uint32_t>(position % depth_);
  out.turn = static_cast<std::uint32_t>(position / depth_);
  io_status s = wait_for_turn(out, until, true);
  if (s.ok()) {
    write_entry(out, command);
    const std::uint32_t next = (out.slot + 1u) % depth_;
    // relaxed: the head only gates the full check.
    while (atomic_ref<std::uint32_t>(control_->sq_head).load(order::relaxed) == next) {
      if (until.expired()) {
        s = halt(out.slot);
        break;
      }
      drain();
      pause.pause();
    }
    if (s.ok()) {
      atomic_ref<std::uint64_t>(control_->vtail).store(position + 1u, order::relaxed);
      ring(sq_doorbell_, next);
      detail::bump(control_->counters.sq_doorbells, 1);
      detail::bump(control_->counters.submitted, 1);
    }
  }
  lock.store(0u, order::release);  // release: the entry, tail and counters for the next holder
  return s;
}

BAM_HD inline bool queue_pair_ref::completion_posted() const {
  // relaxed: a peek; the drainer reads the entry again with acquire under the lock.
  const std::uint32_t state = atomic_ref<std::uint32_t>(control_->cq_state).load(order::relaxed);
  const bool phase = (state & detail::cq_phase_bit) == 0;  // expected phase starts at 1
  const std::uint32_t dw3 =
      atomic_ref<std::uint32_t, scope::system>(cq_[state & 0xffffu].dw3).load(order::relaxed);
  return nvme::completion_entry::phase(dw3) == phase;
}

BAM_HD inline void queue_pair_ref::drain() const {
  // Each lane peeks first: a waiter whose queue has nothing new (the common case while
  // commands are in flight) leaves without the warp-wide vote that groups the drainers.
  if (!completion_posted()) return;
  drain_lanes(lanes_on_this_queue());
}

BAM_HD inline void queue_pair_ref::drain_lanes(std::uint32_t lanes) const {
  const unsigned me = warp::lane();
  const unsigned leader = warp::lowest_lane(lanes);
  const unsigned count = warp::popcount(lanes);
  const unsigned rank = warp::popcount(lanes & ((1u << me) - 1u));
  atomic_ref<std::uint32_t> state_ref(control_->cq_state);
  atomic_ref<std::uint32_t> lock(control_->cq_lock);

  // The leader peeks and takes the lock; 0 says it did not, else bit 32 and the CQ state.
  std::uint64_t held = 0;
  if (me == leader) {
    std::uint32_t unlocked = 0;
    // relaxed: a test before the test-and-set. acquire: the previous drainer's head, phase
    // and lap counters.
    if (completion_posted() && lock.load(order::relaxed) == 0 &&
        lock.compare_exchange(unlocked, 1u, order::acquire)) {
      held = (1ull << 32) | state_ref.load(order::relaxed);  // relaxed: only drainers write it
    }
  }
  held = warp::shfl(lanes, held, leader);
  if (held == 0) return;
  std::uint32_t head = static_cast<std::uint32_t>(held) & 0xffffu;
  bool flipped = (held & detail::cq_phase_bit) != 0;

  // Each round, the lane of rank r takes entry head + r; the run of posted entries from the
  // head is drained. Within a round the command ids differ: an id comes back only after its
  // completion was drained and taken.
  std::uint32_t drained = 0;
  while (drained < depth_) {
    const bool looks = rank < depth_ - drained;  // stays inside one ring
    std::uint32_t at = head + rank;
    bool lap_flipped = flipped;
    if (looks && at >= depth_) {
      at -= depth_;
      lap_flipped = !flipped;
    }
    std::uint32_t dw3 = 0;
    bool posted = false;
    if (looks) {
      // acquire (system scope): dwords 0-2 and the command's data, written by the controller
      // (a GPU kernel, a CPU thread or an SSD's DMA) before it released dword 3.
      dw3 = atomic_ref<std::uint32_t, scope::system>(cq_[at].dw3).load(order::acquire);
      posted = nvme::completion_entry::phase(dw3) != lap_flipped;
    }
    const std::uint32_t missing = lanes & ~warp::ballot(lanes, posted);
    const std::uint32_t run = missing ? lanes & ((missing & (0u - missing)) - 1u) : lanes;
    if (run == 0) break;
    const unsigned taken = warp::popcount(run);
    std::uint32_t dw2 = 0;
    if (rank < taken) {
      dw2 = atomic_ref<std::uint32_t, scope::system>(cq_[at].dw2).load(order::relaxed);
      const std::uint16_t cid = nvme::completion_entry::command_id(dw3);
      if (cid < depth_) {
        const std::uint32_t lap = cq_laps_[cid];
        cq_laps_[cid] = lap + 1u;
        // acq_rel: release hands the status and the data to the waiter's acquire; acquire
        // takes the hold record an abandoner released with its mark.
        const std::uint64_t old = atomic_ref<std::uint64_t>(mailbox_[cid])
                                      .exchange(detail::mailbox_completion(
                                                    lap, nvme::completion_entry::status_field(dw3)),
                                                order::acq_rel);
        if (old == detail::mailbox_abandon(lap)) {
          // Its submitter gave up: take the completion for it, give back what its buffer held
          // (the command is done with it now) and free the slot.
          release_hold(cid);
          // release: the slot's next holder acquires the turn.
          atomic_ref<std::uint32_t>(turn_[cid]).store(lap + 1u, order::release);
          detail::bump_shared(control_->counters.late_completions, 1);
        }
      } else {
        detail::bump_shared(control_->counters.bad_completions, 1);
      }
    }
    // The last entry of the run carries the newest SQ head.
    dw2 = static_cast<std::uint32_t>(warp::shfl(lanes, dw2, warp::highest_lane(run)));
    if (me == leader) {
      // relaxed: gates the submitters' full check only.
      atomic_ref<std::uint32_t>(control_->sq_head)
          .store(nvme::completion_entry::sq_head(dw2) % depth_, order::relaxed);
    }
    head += taken;
    if (head >= depth_) {
      head -= depth_;
      flipped = !flipped;
    }
    drained += taken;
    if (taken < count) break;
  }
  // Every lane's loads of its entries and its lap and mailbox writes come before the leader's
  // doorbell (the controller may then overwrite the entries) and its unlock.
  warp::sync(lanes);
  if (me == leader) {
    if (drained != 0) {
      state_ref.store(head | (flipped ? detail::cq_phase_bit : 0u), order::relaxed);
      // The doorbell's release covers the drained entries' loads, ordered by the sync above.
      ring(cq_doorbell_, head);
      detail::bump(control_->counters.cq_doorbells, 1);
      detail::bump(control_->counters.drained, drained);
    }
    lock.store(0u, order::release);  // release: head, phase and lap counters for the next drainer
  }
}

BAM_HD inline bool queue_pair_ref::poll(const queue_ticket& t, io_status& status) const {
  // acquire: the status and the command's data, handed on by the drainer's release.
  const std::uint64_t mb = atomic_ref<std::uint64_t>(mailbox_[t.slot]).load(order::acquire);
  if (!(mb & detail::mailbox_valid) || detail::mailbox_turn(mb) != t.turn) return false;
  // release: we are done with the slot (and read what we needed); its next holder may
  // overwrite the entry and reuse the command id.
  atomic_ref<std::uint32_t>(turn_[t.slot]).store(t.turn + 1u, order::release);
  status = io_status::from_device(detail::mailbox_status(mb));
  return true;
}

BAM_HD inline io_status queue_pair_ref::wait(const queue_ticket& t, deadline until,
                                             const command_hold& hold) const {
  atomic_ref<std::uint64_t> mailbox(mailbox_[t.slot]);
  backoff pause = wait_backoff();
  for (;;) {
    io_status s;
    if (poll(t, s)) return s;
    drain();
    if (until.expired()) {
      // relaxed: a look; if the completion lands first the CAS fails and the next poll takes it.
      std::uint64_t mb = mailbox.load(order::relaxed);
      if ((mb & detail::mailbox_valid) && detail::mailbox_turn(mb) == t.turn) continue;
      record_hold(t.slot, hold);
      // release: the hold record, for the drainer that finds the mark (its exchange acquires);
      // the drainer's exchange decides who frees the slot.
      if (mailbox.compare_exchange(mb, detail::mailbox_abandon(t.turn), order::release)) {
        return io_status::host(status_source::timeout);
      }
      continue;
    }
    pause.pause();
  }
}

BAM_HD inline io_status queue_pair_ref::execute(const nvme::submission_entry& command,
                                                queue_ticket& out) const {
  // Entering the queue and completing are bounded apart: a command that waited long for its
  // slot still gets the whole timeout to complete.
  if (io_status s = submit(command, deadline::after_ns(timeout_ns_), out); !s.ok()) return s;
  return wait(out, deadline::after_ns(timeout_ns_));
}

}  // namespace bam
