#pragma once
/// @file
/// Epoch-based protection of coalesced pieces (pinning_kind::epochs): a reader announces the
/// global epoch in its own reader slot with a plain store, reads, and stores 0 when it leaves.
/// An evictor that has closed a piece's entry advances the epoch and waits until every slot is
/// 0 or holds the new epoch (a grace period): from then on no reader can still hold the
/// closed entry. No atomic read-modify-write and no shared hot word on the reader's side.
///
/// Why it is exact (store-buffering with a seq_cst fence on each side, C++20 [atomics.fences]):
///   reader:  slot = epoch (store)  ->  fence  ->  entry, resident bit (loads)
///   evictor: entry = CLOSED, or resident bit cleared  ->  E = epoch++  ->  fence  ->  load slots
/// The two fences are ordered in S. If the reader's comes first, the evictor's slot load sees
/// the announcement (an epoch <= E), and the evictor waits for it. If the evictor's comes first,
/// the reader's entry and resident-bit loads see the close. On the host (ThreadSanitizer does
/// not model standalone fences) the store and the loads are seq_cst instead, which gives the
/// same argument with the operations themselves in S.
///
/// One announcement serves every access until the reader leaves: a reader may keep its section
/// open across many accesses (reader_section, pinning.hpp) and pay the fence once for all.
/// Slots store 0 with release when a reader leaves, so its reads happen before the evictor's
/// reuse of the frame (the scan's loads are seq_cst, or on the device relaxed between two
/// seq_cst fences, which gives the same order: epoch_grace_period).
///
/// Rule: a reader never waits for anything while it has announced (it would hold up every
/// grace period, and with it every frame eviction).

#include <cstdint>

#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/reader_slot.hpp>

namespace bam::cache::mosaic {

/// Epoch values start at 1; a slot holding 0 is a reader outside any section.
inline constexpr std::uint64_t first_epoch = 1;
/// frame_pool_view::epoch_scan: the newest epoch a finished scan proved quiet (no reader that
/// announced it or an older one is left), and 1 while a thread scans.
inline constexpr unsigned epoch_quiet_word = 0;
inline constexpr unsigned epoch_scanning_word = 1;
/// ... and 1 + the reader slot the latest scan to wait longer than epoch_stall_note_ns waited
/// on (0: none yet): what a stuck grace period waits for, for whoever diagnoses it.
inline constexpr unsigned epoch_stalled_word = 2;
/// ... and 1 + the reader slot of the thread that ran that scan: when it shares a warp with the
/// slot it waits on (same SM and warp slot), the waiter waits on a warp-mate.
inline constexpr unsigned epoch_stalled_by_word = 3;
/// ... and what the scans cost, for whoever measures them: scans finished, nanoseconds spent in
/// them and passes over the slots they made (written by the one scanner at a time).
inline constexpr unsigned epoch_scans_word = 4;
inline constexpr unsigned epoch_scan_ns_word = 5;
inline constexpr unsigned epoch_scan_passes_word = 6;
/// Words of frame_pool_view::epoch_scan in use (it is one hot line).
inline constexpr unsigned epoch_scan_words = 7;
static_assert(epoch_scan_words * sizeof(std::uint64_t) <= hot_line_bytes);
inline constexpr std::uint64_t epoch_stall_note_ns = 100'000'000;
/// The announcement's store: relaxed on the device, where a seq_cst fence follows it; seq_cst
/// on the host (the file comment says why).
inline constexpr order epoch_announce_order = BAM_DEVICE_PASS ? order::relaxed : order::seq_cst;
/// A protected reader's loads of entries, resident and busy bits after its announcement:
/// acquire on the device (the announcement's fence orders them; acquire sees the data the
/// loader released with the bit), seq_cst on the host.
inline constexpr order epoch_read_order = BAM_DEVICE_PASS ? order::acquire : order::seq_cst;

/// Announces this thread in its reader slot. Returns the slot, or ~0u when the thread's slot
/// is past the pool's slots (then nothing is announced and the caller reports an error).
BAM_HD BAM_INLINE std::uint32_t epoch_enter(const frame_pool_view& p) {
  const std::uint32_t slot = reader_slot();
  if (slot >= p.epoch_slot_count) return ~0u;
  // acquire: an evictor's close, sequenced before its epoch increment, happens before any
  // read this section does when we announce the incremented epoch.
  const std::uint64_t e = atomic_ref<std::uint64_t>(*p.epoch).load(order::acquire);
  // epoch_announce_order, then the fence: the announcement precedes our loads of entries and
  // resident bits (the file comment).
  atomic_ref<std::uint64_t>(p.epoch_slots[slot]).store(e, epoch_announce_order);
  device_fence<scope::device>();
  return slot;
}

/// Leaves the section entered with `slot`.
BAM_HD BAM_INLINE void epoch_exit(const frame_pool_view& p, std::uint32_t slot) {
  // release: the section's reads (and writes) of frame data before an evictor's scan sees 0.
  atomic_ref<std::uint64_t>(p.epoch_slots[slot]).store(0u, order::release);
}

/// Slots the grace-period scan loads before it looks at any of them: independent loads in
/// flight at once, so a scan of half a million GPU slots costs a few thousand memory latencies
/// instead of one each.
inline constexpr std::uint32_t epoch_scan_batch = 32;

/// How the scan loads a slot. Device: relaxed, between two seq_cst fences (below). Host:
/// seq_cst loads, because ThreadSanitizer does not model standalone fences (platform/atomic.hpp).
inline constexpr order epoch_scan_order = BAM_DEVICE_PASS ? order::relaxed : order::seq_cst;

/// Waits until no slot holds an epoch in 1..`e`: every reader that announced one of them has
/// left. Call after a seq_cst fence (or, on the host, a seq_cst operation) that follows the
/// closes to cover. False past the deadline.
BAM_HD inline bool epoch_wait_readers(const frame_pool_view& p, std::uint64_t e,
                                      std::uint64_t deadline_ns, std::uint64_t* passes_out) {
  const auto busy = [e](std::uint64_t v) { return v != 0 && v <= e; };
  // Passes: each loads the slots in [first, end) in batches and narrows the range to the
  // first and last slot still busy; the next pass comes after one pause. A reader leaves
  // within one access, so a pass rarely finds many left. Waiting slot by slot instead sleeps
  // once per busy slot, and with tens of thousands of GPU readers in their hit loops (each
  // announced most of the time) that added up to seconds per grace period.
  backoff pause;
  const std::uint64_t began_ns = now_ns();
  bool noted = false;
  std::uint32_t first = 0, end = p.epoch_slot_count;
  for (std::uint64_t pass = 1;; ++pass) {
    *passes_out = pass;
    std::uint32_t busy_first = end, busy_end = first;
    for (std::uint32_t base = first; base < end; base += epoch_scan_batch) {
      const std::uint32_t n = end - base < epoch_scan_batch ? end - base : epoch_scan_batch;
      std::uint64_t seen[epoch_scan_batch];
      for (std::uint32_t i = 0; i < n; ++i) {
        // epoch_scan_order: see above; the closing fence makes the relaxed loads acquire.
        seen[i] = atomic_ref<std::uint64_t>(p.epoch_slots[base + i]).load(epoch_scan_order);
      }
      for (std::uint32_t i = 0; i < n; ++i) {
        if (!busy(seen[i])) continue;
        if (busy_first == end) busy_first = base + i;
        busy_end = base + i + 1;
      }
    }
    if (busy_first >= busy_end) break;
    const std::uint64_t now = now_ns();
    if (!noted && now - began_ns > epoch_stall_note_ns && p.epoch_scan != nullptr) {
      // relaxed: a diagnostic; nothing is ordered by it.
      atomic_ref<std::uint64_t>(p.epoch_scan[epoch_stalled_word])
          .store(std::uint64_t{busy_first} + 1, order::relaxed);
      atomic_ref<std::uint64_t>(p.epoch_scan[epoch_stalled_by_word])
          .store(std::uint64_t{reader_slot()} + 1, order::relaxed);  // relaxed: as above
      noted = true;
    }
    if (now > deadline_ns) return false;
    first = busy_first;
    end = busy_end;
    pause.pause();
  }
  // Device: acquire for the relaxed loads that saw readers leave (their exits store with release).
  device_fence<scope::device>();
  return true;
}

/// Waits for a grace period: every reader that announced before this call has left. Call it
/// after closing what readers must stop seeing, outside any section. False past the deadline.
///
/// Shared: one thread at a time scans (a scan of every GPU reader slot takes milliseconds),
/// for every waiter that advanced the epoch before its scan began, and publishes the epoch it
/// proved quiet; the others wait for that word. Why a scan covers another thread's close: that
/// thread's increment is in the release sequence the scanner's epoch load reads from, so its
/// close happens before the scanner's fence, and the store-buffering argument of the file
/// comment goes through with the scanner's fence in place of the closer's.
BAM_HD inline bool epoch_grace_period(const frame_pool_view& p, std::uint64_t deadline_ns) {
  atomic_ref<std::uint64_t> epoch(*p.epoch);
  // seq_cst: the increment follows our close in S, and readers that load the new value
  // (acquire) see the close.
  const std::uint64_t mine = epoch.fetch_add(1, order::seq_cst);
  atomic_ref<std::uint64_t> quiet(p.epoch_scan[epoch_quiet_word]);
  atomic_ref<std::uint64_t> scanning(p.epoch_scan[epoch_scanning_word]);
  backoff pause;
  for (;;) {
    // acquire: pairs with the scanner's release; the readers' exits its scan saw happen
    // before what we do next with the frame.
    if (quiet.load(order::acquire) >= mine) return true;
    std::uint64_t idle = 0;
    // acquire: the previous scanner's publication happens before our scan and ours.
    if (scanning.compare_exchange(idle, 1u, order::acquire)) {
      // seq_cst: the newest increment, ours or later; every waiter up to it is covered (above).
      const std::uint64_t e = epoch.load(order::seq_cst) - 1;
      // Device: a seq_cst fence after the closes stands in for seq_cst on every slot load. A
      // reader store that follows the fence in S follows the closes too, so its entry load sees
      // them; one that precedes the fence is seen by our relaxed loads (C++20 fence rules).
      device_fence<scope::device>();
      const std::uint64_t began_ns = now_ns();
      std::uint64_t passes = 0;
      const bool quiesced = epoch_wait_readers(p, e, deadline_ns, &passes);
      // relaxed: statistics, written only by the scanner that holds the flag.
      const auto add = [&p](unsigned word, std::uint64_t by) {
        atomic_ref<std::uint64_t> w(p.epoch_scan[word]);
        w.store(w.load(order::relaxed) + by, order::relaxed);
      };
      add(epoch_scans_word, 1);
      add(epoch_scan_ns_word, now_ns() - began_ns);
      add(epoch_scan_passes_word, passes);
      // release: our scan's acquired exits, for the waiters that read the word. Scans run one
      // at a time and each reads a newer epoch, so the word only grows.
      if (quiesced) quiet.store(e, order::release);
      scanning.store(0u, order::release);  // release: hands the scan on with the word
      return quiesced;
    }
    if (now_ns() > deadline_ns) return false;
    pause.pause();
  }
}

}  // namespace bam::cache::mosaic
