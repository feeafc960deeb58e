#pragma once
/// @file
/// An NVMe queue pair that many thousands of threads share (BaM section 4.2).
///
/// Submission: a 64-bit ticket gives each submitter a position in a virtual queue
/// (slot = ticket mod depth, turn = ticket div depth); a per-slot turn counter orders the
/// submitters that share a slot; the submitter writes its entry into its slot and sets the
/// slot's mark; whoever wins the tail try-lock advances the tail over every consecutive marked
/// slot and rings the doorbell once for the whole batch.
///
/// Completion: whoever wins the CQ try-lock drains new entries in order into per-command-id
/// mailboxes and rings the head doorbell once per batch; a waiter polls only its own mailbox.
///
/// Lock winners work with the lanes of their warp that are there with them: on the GPU the
/// converged lanes that call drain() (or reach the tail) on the same queue take one completion
/// (or one mark) each per round. A lone lock holder in a warp whose other lanes sleep in
/// backoff would otherwise advance at the pace of their sleeps.
///
/// Command id = slot. A slot, and so its command id, is reused only after its completion has
/// been drained and taken by its submitter (the turn counter advances then), never merely
/// because the SQ head passed it: the head moving means fetched, not completed.
///
/// Every wait is bounded, and entering the queue and completing are bounded apart: submit()
/// waits for its slot and for the tail until its deadline (status_source::submit_timeout), and
/// wait() for the completion until its own (status_source::timeout). A command whose completion
/// does not come in time, or whose entry is in the ring when its submitter gives up, leaves an
/// "abandoned" mark in its mailbox: if the completion comes later, the drainer frees the slot.
/// The device may still run such a command and move data into or out of its buffer, so the
/// caller names what the buffer's owner holds (command_hold): the queue records it with the
/// abandoned mark, and whoever drains the late completion gives it back. A submitter that
/// cannot get its slot before its deadline halts the queue (its ring position can never be
/// filled, so nothing after it could be submitted): every later call returns
/// status_source::queue_halted at once, and the host resets the queue when it is quiet
/// (emulated_storage::reset_queue, which gives back the holds of the commands it forgets).
///
/// The doorbell stores (fence, release) are system scope: a real SSD's DMA or a CPU controller
/// is on the other side. set_gpu_scope_edges(true) makes them a GPU-scope release store alone,
/// for a controller that is a kernel on the same GPU as every queue user (the emulated
/// gpu_kernel placement); it is wrong for anything else. Completion entries are always loaded at
/// system scope (an acquire load waits for no earlier store; a system-scope load synchronizes with
/// a GPU-scope release of a thread on the same GPU).
///
/// Thread safety: every member of queue_pair_ref may be called by any number of threads at
/// once, on the GPU or on CPU threads. Do not mix submit() and submit_naive() on one queue.

#include <cstdint>
#include <type_traits>

#include <bam/nvme/command.hpp>
#include <bam/nvme/completion.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/config.hpp>

namespace bam {

/// Most entries an NVMe I/O queue can have; one slot always stays empty and CID 0xFFFF is
/// reserved by the specification, so depth is 2..65535.
inline constexpr std::uint32_t max_queue_depth = 65535;
/// The longest sleep between polls of a waiting GPU thread, by default (queue_pair_ref).
inline constexpr std::uint32_t default_wait_sleep_ns = 4096;
/// __nanosleep's documented maximum: a longer request would be cut to it.
inline constexpr std::uint32_t max_sleep_ns = 1'000'000;

/// Counters kept by the queue (written by lock winners only, so no contention).
struct queue_counters {
  std::uint64_t sq_doorbells;      ///< tail doorbell stores (batches)
  std::uint64_t submitted;         ///< entries the tail passed
  std::uint64_t cq_doorbells;      ///< head doorbell stores (drain batches)
  std::uint64_t drained;           ///< completion entries drained
  std::uint64_t late_completions;  ///< completions that came after their submitter gave up
  std::uint64_t bad_completions;   ///< completions naming a command id out of range
};

/// What the buffer of a command holds while the command may still run: bits of words of the
/// buffer owner's memory (a cache line's state, a frame slot's busy bit, a bounce buffer's
/// flag). If the command is abandoned (its waiter gave up), the queue keeps this record, and
/// whoever drains the late completion gives the hold back: it sets `set_bits` in `*set_word`
/// (if any), then clears `clear_bits` in `*clear_word`, each with release, so that the next
/// holder that acquires the word sees the command's data movement finished. Nothing held:
/// clear_word null.
struct command_hold {
  std::uint64_t* clear_word = nullptr;
  std::uint64_t clear_bits = 0;
  std::uint64_t* set_word = nullptr;
  std::uint64_t set_bits = 0;

  [[nodiscard]] BAM_HD bool holds() const { return clear_word != nullptr; }
};
static_assert(sizeof(command_hold) == 32);
static_assert(std::is_trivially_copyable_v<command_hold>);

/// The shared words of one queue pair. Each group that different agents write sits on its own
/// 128-byte line.
struct queue_control {
  alignas(hot_line_bytes) std::uint64_t ticket;     ///< next virtual position
  alignas(hot_line_bytes) std::uint32_t tail_lock;  ///< 1 while a winner advances the tail
  std::uint32_t naive_lock;                         ///< the naive variant's queue lock
  std::uint64_t vtail;                              ///< virtual tail: positions < vtail submitted
  alignas(hot_line_bytes) std::uint32_t sq_head;    ///< SQ head the controller last reported
  alignas(hot_line_bytes) std::uint32_t cq_lock;    ///< 1 while a drainer runs
  std::uint32_t cq_state;                           ///< CQ head (15:0) and expected phase (16)
  alignas(hot_line_bytes) std::uint32_t halted;     ///< 0, or 1 + the slot that halted the queue
  alignas(hot_line_bytes) queue_counters counters;
  alignas(hot_line_bytes) std::uint32_t sq_doorbell;  ///< emulated SQ tail doorbell
  alignas(hot_line_bytes) std::uint32_t cq_doorbell;  ///< emulated CQ head doorbell
};
static_assert(sizeof(queue_control) % hot_line_bytes == 0);
static_assert(std::is_trivially_copyable_v<queue_control>);

/// Where each array of a queue pair lives inside one allocation (offsets in bytes).
struct queue_layout {
  std::uint32_t depth = 0;
  std::uint64_t control = 0;
  std::uint64_t sq = 0;       ///< depth x 64 B, 4 KiB aligned (a controller's DMA base)
  std::uint64_t cq = 0;       ///< depth x 16 B, 4 KiB aligned
  std::uint64_t turn = 0;     ///< depth x 4 B
  std::uint64_t mark = 0;     ///< depth x 4 B
  std::uint64_t mailbox = 0;  ///< depth x 8 B
  std::uint64_t cq_laps = 0;  ///< depth x 4 B, drainer only
  std::uint64_t holds = 0;    ///< depth x 32 B: what an abandoned command holds (command_hold)
  std::uint64_t bytes = 0;

  /// The layout of a queue pair of `depth` entries (2..65535).
  BAM_HD static constexpr queue_layout for_depth(std::uint32_t depth) {
    auto align = [](std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; };
    queue_layout l;
    l.depth = depth;
    l.control = 0;
    l.sq = align(sizeof(queue_control), 4096);
    l.cq = align(l.sq + std::uint64_t{depth} * nvme::submission_entry_bytes, 4096);
    l.turn = align(l.cq + std::uint64_t{depth} * nvme::completion_entry_bytes, hot_line_bytes);
    l.mark = align(l.turn + std::uint64_t{depth} * 4, hot_line_bytes);
    l.mailbox = align(l.mark + std::uint64_t{depth} * 4, hot_line_bytes);
    l.cq_laps = align(l.mailbox + std::uint64_t{depth} * 8, hot_line_bytes);
    l.holds = align(l.cq_laps + std::uint64_t{depth} * 4, hot_line_bytes);
    l.bytes = align(l.holds + std::uint64_t{depth} * sizeof(command_hold), 4096);
    return l;
  }
};

/// A submitted command: its virtual position, slot (= command id) and turn.
struct queue_ticket {
  std::uint64_t position = 0;
  std::uint32_t slot = 0;
  std::uint32_t turn = 0;
  /// Set by a submit() or wait() that gave up on a command the device may still run: the
  /// queue then keeps the command's hold until its completion is drained.
  bool abandoned = false;
};

/// A view of a queue pair, passed to kernels by value. Made by the queue's owner.
class queue_pair_ref {
 public:
  queue_pair_ref() = default;

  /// Binds to queue memory laid out by queue_layout::for_depth(depth) at `base`. Doorbells
  /// default to the emulated words inside the control block; a real SSD passes its MMIO
  /// doorbell addresses.
  BAM_HD queue_pair_ref(void* base, std::uint32_t depth, std::uint16_t queue_id,
                        std::uint64_t timeout_ns, std::uint32_t* sq_doorbell = nullptr,
                        std::uint32_t* cq_doorbell = nullptr, bool mmio_doorbells = false);

  /// Takes a slot, writes `command` into it with command id = slot, and returns once the tail
  /// has passed it (a doorbell covering it has been rung). `until` bounds the wait to enter
  /// the queue (status_source::submit_timeout past it). If it gives up once the entry is in
  /// the ring, a later tail winner may still submit it: out.abandoned is set and the queue
  /// keeps `hold` until the completion is drained.
  [[nodiscard]] BAM_HD io_status submit(const nvme::submission_entry& command, deadline until,
                                        queue_ticket& out, const command_hold& hold = {}) const;

  /// The naive baseline: one lock per queue held around slot claim, entry write and doorbell.
  [[nodiscard]] BAM_HD io_status submit_naive(const nvme::submission_entry& command, deadline until,
                                              queue_ticket& out) const;

  /// Waits for the completion of `t` and frees its slot; returns its status. Past `until` it
  /// abandons the command (status_source::timeout, and only then): the queue keeps `hold`
  /// until the late completion is drained.
  [[nodiscard]] BAM_HD io_status wait(const queue_ticket& t, deadline until,
                                      const command_hold& hold = {}) const;

  /// submit + wait, each with the queue's timeout of its own.
  [[nodiscard]] BAM_HD io_status execute(const nvme::submission_entry& command,
                                         queue_ticket& out) const;

  /// If the completion of `t` is here: frees its slot, sets `status` and returns true.
  /// Otherwise returns false and changes nothing (a polling alternative to wait()).
  [[nodiscard]] BAM_HD bool poll(const queue_ticket& t, io_status& status) const;

  /// Drains completions if new ones are there and no one else is draining. Waiters call it;
  /// anyone may. The converged lanes of a warp that call it on the same queue drain together.
  BAM_HD void drain() const;

  /// drain() by the lanes of `lanes` together: every lane of `lanes` calls it, on this queue.
  BAM_HD void drain_lanes(std::uint32_t lanes) const;

  /// Gives back the holds of every command abandoned and not yet completed, for a reset: call
  /// it only when none of them can still run (the controller stopped and forgot them) and no
  /// thread uses the queue. Returns how many it gave back.
  BAM_HD std::uint32_t release_abandoned_holds() const;

  /// Moves the tail over the marked entries (and rings the doorbell) if no one else is doing
  /// so, with the lanes of `lanes` together: every lane of `lanes` calls it, on this queue.
  /// submit() does this itself; anyone may.
  BAM_HD void advance_tail_lanes(std::uint32_t lanes) const;

  [[nodiscard]] BAM_HD std::uint32_t depth() const { return depth_; }
  [[nodiscard]] BAM_HD std::uint16_t id() const { return queue_id_; }
  [[nodiscard]] BAM_HD std::uint64_t timeout_ns() const { return timeout_ns_; }
  /// Longest sleep of a GPU thread between polls while it waits on this queue (submit, wait;
  /// the page cache's wait for another thread's load too); 0: poll without sleeping. Set by
  /// the owner before the view is handed out.
  [[nodiscard]] BAM_HD std::uint32_t wait_sleep_ns() const { return wait_sleep_ns_; }
  void set_wait_sleep_ns(std::uint32_t ns) { wait_sleep_ns_ = ns; }
  /// Whether the doorbell stores are GPU scope rather than system scope (see the file
  /// comment). Set by the owner before the view is handed out.
  [[nodiscard]] BAM_HD bool gpu_scope_edges() const { return gpu_scope_edges_; }
  void set_gpu_scope_edges(bool on) { gpu_scope_edges_ = on; }
  [[nodiscard]] BAM_HD bool halted() const;

  // Views for a controller, the owner and tests.
  [[nodiscard]] BAM_HD nvme::submission_entry* sq() const { return sq_; }
  [[nodiscard]] BAM_HD nvme::completion_entry* cq() const { return cq_; }
  [[nodiscard]] BAM_HD std::uint32_t* sq_doorbell() const { return sq_doorbell_; }
  [[nodiscard]] BAM_HD std::uint32_t* cq_doorbell() const { return cq_doorbell_; }
  [[nodiscard]] BAM_HD queue_control* control() const { return control_; }

 private:
  BAM_HD void try_advance_tail() const;
  /// Rings a doorbell at the scope of the controller edges (ring_doorbell for system scope).
  BAM_HD void ring(std::uint32_t* doorbell, std::uint32_t value) const;
  /// True when the completion entry at the CQ head is posted (a relaxed peek).
  BAM_HD bool completion_posted() const;
  BAM_HD std::uint32_t lanes_on_this_queue() const;
  BAM_HD io_status halt(std::uint32_t slot) const;
  BAM_HD io_status wait_for_turn(const queue_ticket& t, deadline until,
                                 bool drain_while_waiting) const;
  BAM_HD void write_entry(const queue_ticket& t, const nvme::submission_entry& command) const;
  /// Records `hold` for the abandonment of `slot` that follows (published by its release CAS).
  BAM_HD void record_hold(std::uint32_t slot, const command_hold& hold) const;
  /// Gives back the hold recorded for `slot` (the drainer of its late completion, or a reset).
  BAM_HD void release_hold(std::uint32_t slot) const;
  [[nodiscard]] BAM_HD backoff wait_backoff() const { return backoff(64, wait_sleep_ns_); }

  queue_control* control_ = nullptr;
  nvme::submission_entry* sq_ = nullptr;
  nvme::completion_entry* cq_ = nullptr;
  std::uint32_t* turn_ = nullptr;
  std::uint32_t* mark_ = nullptr;
  std::uint64_t* mailbox_ = nullptr;
  std::uint32_t* cq_laps_ = nullptr;
  command_hold* holds_ = nullptr;
  std::uint32_t* sq_doorbell_ = nullptr;
  std::uint32_t* cq_doorbell_ = nullptr;
  std::uint64_t timeout_ns_ = 0;
  std::uint32_t wait_sleep_ns_ = default_wait_sleep_ns;
  std::uint32_t depth_ = 0;
  std::uint16_t queue_id_ = 0;
  bool mmio_doorbells_ = false;
  bool gpu_scope_edges_ = false;
};
static_assert(std::is_trivially_copyable_v<queue_pair_ref>);

}  // namespace bam

#include <bam/queue/detail/queue_pair.inl>
