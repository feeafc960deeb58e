#pragma once
/// @file
/// Epoch-based protection of coalesced pieces (pinning_kind::epochs): a reader announces the
/// global epoch in its own reader slot with a plain store, reads, and stores 0 when it leaves.
/// An evictor that has closed a piece's entry advances the epoch and waits until every slot is
/// 0 or holds the new epoch (a grace period): from then on no reader can still hold the
/// closed entry. No atomic read-modify-write and no shared hot word on the reader's side.
///
/// Why it is exact (all four steps seq_cst, so they sit in one total order S):
///   reader:  slot = epoch (store)  ->  entry, resident bit (loads)
///   evictor: entry = CLOSED, or resident bit cleared  ->  E = epoch++  ->  load every slot
/// A reader whose entry load saw the old value precedes the evictor's close in S, so its slot
/// store precedes the slot scan, and it announced an epoch <= E: the evictor waits for it.
/// A reader that announced after the scan passed its slot follows the close in S and sees it.
/// Slots store 0 with release when a reader leaves, so its reads happen before the evictor's
/// reuse of the frame (the scan loads with seq_cst, which includes acquire).
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

/// Announces this thread in its reader slot. Returns the slot, or ~0u when the thread's slot
/// is past the pool's slots (then nothing is announced and the caller reports an error).
BAM_HD BAM_INLINE std::uint32_t epoch_enter(const frame_pool_view& p) {
  const std::uint32_t slot = reader_slot();
  if (slot >= p.epoch_slot_count) return ~0u;
  // acquire: an evictor's close, sequenced before its epoch increment, happens before any
  // read this section does when we announce the incremented epoch.
  const std::uint64_t e = atomic_ref<std::uint64_t>(*p.epoch).load(order::acquire);
  // seq_cst: the announcement precedes our loads of entries and resident bits in S (above).
  atomic_ref<std::uint64_t>(p.epoch_slots[slot]).store(e, order::seq_cst);
  return slot;
}

/// Leaves the section entered with `slot`.
BAM_HD BAM_INLINE void epoch_exit(const frame_pool_view& p, std::uint32_t slot) {
  // release: the section's reads (and writes) of frame data before an evictor's scan sees 0.
  atomic_ref<std::uint64_t>(p.epoch_slots[slot]).store(0u, order::release);
}

/// Waits for a grace period: every reader that announced before this call has left. Call it
/// after closing what readers must stop seeing, outside any section. False past the deadline.
BAM_HD inline bool epoch_grace_period(const frame_pool_view& p, std::uint64_t deadline_ns) {
  // seq_cst: the increment follows our close in S, and readers that load the new value
  // (acquire) see the close.
  const std::uint64_t e = atomic_ref<std::uint64_t>(*p.epoch).fetch_add(1, order::seq_cst);
  backoff pause;
  for (std::uint32_t s = 0; s < p.epoch_slot_count; ++s) {
    atomic_ref<std::uint64_t> slot(p.epoch_slots[s]);
    for (;;) {
      // seq_cst: the scan follows the close in S; acquire: the reader's section before it.
      const std::uint64_t v = slot.load(order::seq_cst);
      if (v == 0 || v > e) break;
      if (now_ns() > deadline_ns) return false;
      pause.pause();
    }
  }
  return true;
}

}  // namespace bam::cache::mosaic
