#pragma once
/// @file
/// bam::prefetch_ticket<T, Lines>: asynchronous reads in kernels. A thread starts the loads of
/// the lines its next tile needs, computes on the tile it has, then waits for the started
/// loads; the ticket keeps the lines pinned until it is released, so reading them costs no
/// I/O and never waits (docs/protocols.md, "Prefetch tickets"; the double-buffered loop there).
///
///     bam::prefetch_ticket<const float> next(a), cur(a);
///     for (i in tile 0) (void)cur.prefetch(i);
///     for (k = 0; k < tiles; ++k) {
///       cur.wait();                                  // tile k pinned (or failed)
///       for (i in tile k + 1) (void)next.prefetch(i);  // its reads in flight, return at once
///       for (i in tile k) sum += cur[i];             // hits on pinned lines: no I/O
///       cur.release();
///       swap(cur, next);                             // (or index two tickets by k % 2)
///     }
///
/// The rule that keeps device_io_submit's queue rule: while a ticket holds reads in flight
/// (after prefetch, before wait) its thread makes no access that could miss, on any array:
/// it reads only lines a ticket holds pinned (after that ticket's wait) or memory. A ticket
/// submits its reads in increasing queue index, from a block of Lines queues of its own.
///
/// What prefetch(i) does with the line of element i, and returns:
///   - already in the ticket: true;
///   - resident: pinned now (a hit); true;
///   - not resident, and this thread wins it: a victim found without waiting (a clean one,
///     or a dirty one written back first while the ticket holds no read yet), tagged BUSY, its
///     read submitted; true (the load is counted in cache_stats::prefetched);
///   - anything else (another thread loads it, no victim at once, no queue left in the
///     ticket's block): deferred, true: wait() acquires it as a miss does, after every read
///     of the ticket has ended (so a synchronous load then holds no other command);
///   - the ticket is full (Lines lines), the index is out of range, or the array cannot be
///     prefetched (cache mode none or naive, a dense array, reads through bounce buffers):
///     false. Such elements read normally; read them only while no ticket of the thread holds
///     reads in flight.
/// Views of memory: nothing to do; true.
///
/// After wait() every line of the ticket is pinned or failed: reading an element of it through
/// the ticket is a compare and a load (a failed line returns its status, operator[] poison);
/// plain array_ref reads of it hit too. A read through the ticket of an element it does not
/// hold reads normally. Reading through a ticket that has reads in flight waits first.
///
/// The cache must have room for what tickets pin: each thread holds up to 2 x Lines lines
/// (the tile it reads and the one it loads) beside what its other accesses pin; a deferred
/// line whose load finds no victim in time fails as a miss would (cache_exhausted).
///
/// Per thread, not shared: a ticket lives in the kernel's call (registers and local memory,
/// about 150 bytes per line) and refers to its array_ref, which outlives it. The destructor
/// waits for reads in flight and unpins.

#include <cstdint>
#include <type_traits>

#include <bam/cache/page_cache.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/agent.hpp>
#include <bam/platform/config.hpp>

namespace bam {

template <class T>
class array_ref;

template <class T, std::uint32_t Lines = 4>
class prefetch_ticket {
  static_assert(Lines >= 1 && Lines <= 32, "a ticket holds 1 to 32 lines");

 public:
  using value_type = std::remove_const_t<T>;
  static constexpr std::uint32_t capacity = Lines;

  BAM_HD explicit prefetch_ticket(const array_ref<T>& a) : a_(&a) {
    if (a.direct_ != nullptr) {  // a view of memory: every element is always held
      span_ = a.count_;
      base_ = reinterpret_cast<std::uintptr_t>(a.direct_);
    }
  }
  BAM_HD ~prefetch_ticket() { release(); }
  prefetch_ticket(const prefetch_ticket&) = delete;
  prefetch_ticket& operator=(const prefetch_ticket&) = delete;

  /// Starts the load of the line holding element `i` and returns at once (see the file
  /// comment for what it does and returns).
  [[nodiscard]] BAM_HD bool prefetch(std::uint64_t i) {
    const array_ref<T>& a = *a_;
    if (a.direct_ != nullptr) return i < a.count_;
    if (!a.prefetches() || i >= a.count_) return false;
    const std::uint64_t page = a.line_index(i) - a.slot_.first_line;
    for (std::uint32_t k = 0; k < count_; ++k) {
      if (entries_[k].page == page) return true;
    }
    if (count_ == Lines) return false;
    if (queue_end_ == 0) plan_queues();
    started_load& e = entries_[count_++];
    if (next_queue_ < queue_end_) {
      e = a.cache_.start_load(a.slot_, page, next_queue_, in_flight_ != 0);
      if (e.kind == started_kind::issued) {
        ++in_flight_;
        ++next_queue_;
      }
    } else {
      e = started_load{};  // no queue left above the ticket's reads: wait() acquires it
      e.page = page;
    }
    if (e.kind != started_kind::pinned && e.kind != started_kind::failed) waited_ = false;
    return true;
  }

  /// Waits for the ticket's reads and acquires its deferred lines: afterwards each of its lines
  /// is pinned or failed (the failure recorded as a miss's would be). Bounded as misses are.
  BAM_HD void wait() {
    if (waited_) return;
    const array_ref<T>& a = *a_;
    // Every read first, then the deferred acquires, which may load: not while reads are held.
    for (std::uint32_t k = 0; k < count_; ++k) a.cache_.end_load(a.slot_, entries_[k]);
    in_flight_ = 0;
    for (std::uint32_t k = 0; k < count_; ++k) {
      started_load& e = entries_[k];
      if (e.kind != started_kind::deferred) continue;
      const acquire_result r = a.cache_.acquire(a.slot_, e.page, 1, agent_index());
      a.count_probe(r);
      e.kind = r.status.ok() ? started_kind::pinned : started_kind::failed;
      e.line = r.line;
      e.status = r.status;
    }
    waited_ = true;
  }

  /// Reads element `i` into `out`: from a line the ticket holds (waiting for the ticket first
  /// if it has reads in flight), else as array_ref::try_read does.
  [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, value_type& out) {
    if (i - lo_ < span_) {
      ++reused_;
      out = *reinterpret_cast<const value_type*>(base_ + i * sizeof(T));
      return {};
    }
    return read_slow(i, out);
  }

  /// Reads element `i` (poison if its line failed).
  [[nodiscard]] BAM_HD value_type operator[](std::uint64_t i) {
    value_type v{};  // GCC cannot see that try_read fills it whenever it succeeds
    if (!try_read(i, v).ok()) v = array_ref<T>::poison();
    return v;
  }

  /// Unpins every line (waiting first for reads in flight) and empties the ticket for the next
  /// tile; adds its reads to the array's statistics.
  BAM_HD void release() {
    const array_ref<T>& a = *a_;
    if (a.direct_ != nullptr) return;
    if (in_flight_ != 0) wait();
    for (std::uint32_t k = 0; k < count_; ++k) {
      if (entries_[k].kind == started_kind::pinned) a.cache_.release(entries_[k].line);
    }
    if (reused_ != 0) a.count_reused(reused_);
    if (accesses_ != 0) a.count_access(accesses_);
    count_ = 0;
    touched_ = 0;
    reused_ = 0;
    accesses_ = 0;
    span_ = 0;
    lo_ = 0;
    waited_ = true;
    next_queue_ = queue_begin_;
  }

  /// Lines the ticket holds (pinned, loading, deferred or failed).
  [[nodiscard]] BAM_HD std::uint32_t lines() const { return count_; }
  /// Reads the ticket has in flight (0 once waited for).
  [[nodiscard]] BAM_HD std::uint32_t in_flight() const { return in_flight_; }
  [[nodiscard]] BAM_HD const array_ref<T>& array() const { return *a_; }

 private:
  /// The ticket's block of queues: Lines consecutive queue indices (fewer if the device has
  /// fewer), the block picked by the agent so that agents spread over the queues.
  BAM_HD void plan_queues() {
    const std::uint32_t queues = a_->slot_.set.queues_per_device;
    const std::uint32_t span = queues < Lines ? queues : Lines;
    queue_begin_ = (agent_index() % (queues / span)) * span;
    next_queue_ = queue_begin_;
    queue_end_ = queue_begin_ + span;
  }

  /// A read of an element outside the current line: another line of the ticket, or a normal
  /// read. The first read of each line of the ticket counts as the access of its probe.
  BAM_HD BAM_NOINLINE io_status read_slow(std::uint64_t i, value_type& out) {
    const array_ref<T>& a = *a_;
    if (a.direct_ != nullptr || !a.prefetches() || i >= a.count_) return a.try_read(i, out);
    const std::uint64_t page = a.line_index(i) - a.slot_.first_line;
    for (std::uint32_t k = 0; k < count_; ++k) {
      const started_load& e = entries_[k];
      if (e.page != page) continue;
      if (!waited_) wait();
      const bool first = !(touched_ & (1u << k));
      touched_ |= 1u << k;
      if (e.kind == started_kind::failed) {
        ++accesses_;
        a.slot_.stats.add(&cache_stats::errors, 1);
        return e.status;
      }
      if (first) {
        ++accesses_;
      } else {
        ++reused_;
      }
      hold(page, e.line);
      out = *reinterpret_cast<const value_type*>(base_ + i * sizeof(T));
      return {};
    }
    return a.try_read(i, out);
  }

  /// Points the read window at `line`, which holds `page` pinned.
  BAM_HD void hold(std::uint64_t page, std::uint32_t line) {
    const array_ref<T>& a = *a_;
    const std::uint32_t shift = a.cache_.line_shift();
    const std::uint64_t start = (a.slot_.first_line + page) << shift;  // set bytes
    const std::uint64_t past = start + (std::uint64_t{1} << shift);
    // Only page 0 can start before element 0; only the last page can pass the last element.
    lo_ = start > a.offset_ ? (start - a.offset_) / sizeof(T) : 0;
    const std::uint64_t end = (past - a.offset_) / sizeof(T);
    span_ = (end < a.count_ ? end : a.count_) - lo_;
    // Unsigned wrap-around keeps this exact when the line starts before element 0.
    base_ = reinterpret_cast<std::uintptr_t>(a.cache_.line_data(line)) + a.offset_ - start;
  }

  const array_ref<T>* a_;  // the array outlives its tickets (both live in one kernel call)
  // The line read last: elements [lo_, lo_ + span_) at base_ + i * sizeof(T) (span_ 0: none).
  std::uint64_t lo_ = 0;
  std::uint64_t span_ = 0;
  std::uintptr_t base_ = 0;
  // Reads served, counted here and added at release(): a statistics atomic per read would
  // cost more than the read.
  std::uint64_t reused_ = 0;
  std::uint32_t accesses_ = 0;  // reads of the ticket's lines that reused no pin: first or failed
  std::uint32_t touched_ = 0;   // a bit per entry read at least once
  std::uint32_t count_ = 0;
  std::uint32_t in_flight_ = 0;
  std::uint32_t queue_begin_ = 0;
  std::uint32_t next_queue_ = 0;
  std::uint32_t queue_end_ = 0;  // 0: not planned yet
  bool waited_ = true;           // no entry left to end
  started_load entries_[Lines];
};

}  // namespace bam
