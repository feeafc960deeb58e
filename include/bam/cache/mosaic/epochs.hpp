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

#include <cstddef>
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
/// ... and what the scans cost, for whoever measures them: scans finished and nanoseconds spent
/// in them (written by the one scanner at a time), and passes over chunks of slots (added by
/// every thread that scans a chunk).
inline constexpr unsigned epoch_scans_word = 4;
inline constexpr unsigned epoch_scan_ns_word = 5;
inline constexpr unsigned epoch_scan_passes_word = 6;
/// The words of a running scan that helpers use, on a second hot line (every waiter polls the
/// first): the claim word, (scan number << epoch_chunk_bits) + next chunk, scan numbers 1 to
/// 2^32 - 1 and round again (0: no scan yet); the epoch the scan covers; its deadline; its report
/// word, (scan number << 32) + epoch_chunk_failed if a chunk gave up + chunks finished; and chunks
/// scanned by threads other than the scanner (a statistic).
inline constexpr unsigned epoch_claim_word = hot_line_bytes / sizeof(std::uint64_t);
inline constexpr unsigned epoch_target_word = epoch_claim_word + 1;
inline constexpr unsigned epoch_deadline_word = epoch_claim_word + 2;
inline constexpr unsigned epoch_report_word = epoch_claim_word + 3;
inline constexpr unsigned epoch_helped_word = epoch_claim_word + 4;
/// Words of frame_pool_view::epoch_scan in use, and its size: two hot lines.
inline constexpr unsigned epoch_scan_words = epoch_claim_word + 5;
inline constexpr std::size_t epoch_scan_bytes = 2 * hot_line_bytes;
static_assert(epoch_scan_words * sizeof(std::uint64_t) <= epoch_scan_bytes);
inline constexpr unsigned epoch_chunk_bits = 24;
inline constexpr std::uint64_t epoch_chunk_failed = std::uint64_t{1} << 31;
/// Reader slots in one chunk of a scan, the unit a helper claims. Device: 264 chunks on an
/// H200, each about 30 batches of loads for one thread. Host: small, so that the CPU tests'
/// few hundred slots make several chunks and helpers meet.
inline constexpr std::uint32_t epoch_chunk_slots = BAM_DEVICE_PASS ? 1024 : 64;
inline constexpr std::uint64_t epoch_stall_note_ns = 100'000'000;
/// The announcement's store: relaxed on the device, where a seq_cst fence follows it; seq_cst
/// on the host (the file comment says why).
inline constexpr order epoch_announce_order = BAM_DEVICE_PASS ? order::relaxed : order::seq_cst;
/// A protected reader's loads of entries, resident and busy bits after its announcement:
/// acquire on the device (the announcement's fence orders them; acquire sees the data the
/// loader released with the bit), seq_cst on the host.
inline constexpr order epoch_read_order = BAM_DEVICE_PASS ? order::acquire : order::seq_cst;

/// Announces the caller in reader slot `slot`, which no other running thread uses (tests
/// spread their readers over the slots with it; the cache uses epoch_enter). Returns `slot`,
/// or ~0u when it is past the pool's slots (then nothing is announced).
BAM_HD BAM_INLINE std::uint32_t epoch_enter_at(const frame_pool_view& p, std::uint32_t slot) {
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

/// Announces this thread in its reader slot. Returns the slot, or ~0u when the thread's slot
/// is past the pool's slots (then nothing is announced and the caller reports an error).
BAM_HD BAM_INLINE std::uint32_t epoch_enter(const frame_pool_view& p) {
  return epoch_enter_at(p, reader_slot());
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

/// Waits until no slot in [`begin`, `end`) holds an epoch in 1..`e`: every reader there that
/// announced one of them has left. Call after a seq_cst fence (or, on the host, a seq_cst
/// operation) that follows the closes to cover. False past the deadline.
BAM_HD inline bool epoch_wait_range(const frame_pool_view& p, std::uint64_t e, std::uint32_t begin,
                                    std::uint32_t end, std::uint64_t deadline_ns,
                                    std::uint64_t* passes_out) {
  const auto busy = [e](std::uint64_t v) { return v != 0 && v <= e; };
  // Passes: each loads the slots in [first, end) in batches and narrows the range to the
  // first and last slot still busy; the next pass comes after one pause. A reader leaves
  // within one access, so a pass rarely finds many left. Waiting slot by slot instead sleeps
  // once per busy slot, and with tens of thousands of GPU readers in their hit loops (each
  // announced most of the time) that added up to seconds per grace period.
  backoff pause;
  const std::uint64_t began_ns = now_ns();
  bool noted = false;
  std::uint32_t first = begin;
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

/// Chunks of reader slots in one scan.
BAM_HD BAM_INLINE std::uint32_t epoch_chunks(const frame_pool_view& p) {
  return (p.epoch_slot_count + epoch_chunk_slots - 1) / epoch_chunk_slots;
}

/// Scans chunks of the running scan until none is left to claim: what a grace period's
/// scanner does, and what any thread that waits unprotected may do instead of sleeping
/// (epoch_help). Returns whether it claimed a chunk. `scanner`: the caller runs the scan
/// (statistics tell its chunks from helpers').
///
/// Why a helper's loads cover the scan's closes: its claim reads (acquire) from the claim
/// word the scanner released after its own fence, so that fence, and with it every close the
/// scan covers, happens before the helper's fence; the store-buffering argument of the file
/// comment then goes through with the helper's fence in place of the closer's. Its report
/// (release) hands the exits it saw to the scanner, which publishes them with the quiet epoch.
///
/// Out of line: a cold path whose batch of loads would otherwise set the registers of every
/// kernel that reads a dense array (and, inlined there, nvcc 13.0's cicc crashed on
/// translation_bench_gpu.cu).
BAM_HD BAM_NOINLINE inline bool epoch_scan_chunks(const frame_pool_view& p, bool scanner) {
  atomic_ref<std::uint64_t> claim(p.epoch_scan[epoch_claim_word]);
  constexpr std::uint64_t chunk_mask = (std::uint64_t{1} << epoch_chunk_bits) - 1;
  const std::uint32_t chunks = epoch_chunks(p);
  std::uint64_t fenced_for = 0;  // the scan our last fence followed the claim of
  bool claimed = false;
  for (;;) {
    // relaxed: a look before the claim; a stale one costs a claim past the end or a turn.
    const std::uint64_t look = claim.load(order::relaxed);
    if ((look >> epoch_chunk_bits) == 0 || (look & chunk_mask) >= chunks) return claimed;
    // acquire: the scanner released the scan's epoch, deadline and report word with the
    // claim word (and its fence before that: the function comment).
    const std::uint64_t got = claim.fetch_add(1, order::acquire);
    const std::uint64_t scan = got >> epoch_chunk_bits;
    const auto chunk = static_cast<std::uint32_t>(got & chunk_mask);
    if (scan == 0 || chunk >= chunks) return claimed;
    claimed = true;
    // relaxed: ordered by the claim's acquire.
    const std::uint64_t e =
        atomic_ref<std::uint64_t>(p.epoch_scan[epoch_target_word]).load(order::relaxed);
    const std::uint64_t deadline_ns =
        atomic_ref<std::uint64_t>(p.epoch_scan[epoch_deadline_word]).load(order::relaxed);
    if (fenced_for != scan) {
      device_fence<scope::device>();  // our slot loads after the closes (the function comment)
      fenced_for = scan;
    }
    const std::uint32_t begin = chunk * epoch_chunk_slots;
    const std::uint32_t end = p.epoch_slot_count - begin < epoch_chunk_slots
                                  ? p.epoch_slot_count
                                  : begin + epoch_chunk_slots;
    std::uint64_t passes = 0;
    const bool quiet = epoch_wait_range(p, e, begin, end, deadline_ns, &passes);
    // relaxed: statistics.
    atomic_ref<std::uint64_t>(p.epoch_scan[epoch_scan_passes_word])
        .fetch_add(passes, order::relaxed);
    if (!scanner) {
      atomic_ref<std::uint64_t>(p.epoch_scan[epoch_helped_word]).fetch_add(1u, order::relaxed);
    }
    atomic_ref<std::uint64_t> report(p.epoch_scan[epoch_report_word]);
    // relaxed: the CAS below decides.
    std::uint64_t was = report.load(order::relaxed);
    // A report for an older scan (its scanner gave up past the deadline) is dropped.
    // release: the exits our scan acquired, for the scanner that counts the report.
    while ((was >> 32) == scan &&
           !report.compare_exchange(was, (was + 1) | (quiet ? 0 : epoch_chunk_failed),
                                    order::release)) {
    }
  }
}

/// A thread that waits unprotected (no pin, no announcement, no open section) helps a
/// running scan with what it would spend sleeping; true if it scanned a chunk, so that its
/// caller need not pause too.
BAM_HD BAM_INLINE bool epoch_help(const frame_pool_view& p) {
  return p.epoch_scan != nullptr && epoch_scan_chunks(p, false);
}

/// How long a scanner waits for helpers' reports past the scan's deadline: a helper that
/// claimed a chunk gives up at the deadline too, and reports within this.
inline constexpr std::uint64_t epoch_report_slack_ns = 1'000'000'000;

/// Waits for a grace period: every reader that announced before this call has left. Call it
/// after closing what readers must stop seeing, outside any section. False past the deadline.
///
/// Shared: one thread at a time runs a scan, for every waiter that advanced the epoch before
/// the scan began, and publishes the epoch it proved quiet; the others wait for that word.
/// Why a scan covers another thread's close: that thread's increment is in the release
/// sequence the scanner's epoch load reads from, so its close happens before the scanner's
/// fence, and the store-buffering argument of the file comment goes through with the
/// scanner's fence in place of the closer's.
///
/// Cooperative: a scan of every GPU reader slot by one thread takes milliseconds (9.4-11.6 ms
/// on an idle H200, about 57 ms under load), so the scanner splits the slots into chunks, and
/// waiters, this function's and any thread waiting unprotected (epoch_help), claim chunks and
/// scan them beside it.
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
      atomic_ref<std::uint64_t> claim(p.epoch_scan[epoch_claim_word]);
      // relaxed: only scanners write the scan number, one at a time (ordered by the flag).
      // Numbers wrap within the report word's 32 bits and skip 0 (no scan yet).
      std::uint64_t scan = ((claim.load(order::relaxed) >> epoch_chunk_bits) + 1) & 0xffff'ffffu;
      if (scan == 0) scan = 1;
      // relaxed, all three: published by the claim word's release below.
      atomic_ref<std::uint64_t>(p.epoch_scan[epoch_target_word]).store(e, order::relaxed);
      atomic_ref<std::uint64_t>(p.epoch_scan[epoch_deadline_word])
          .store(deadline_ns, order::relaxed);
      atomic_ref<std::uint64_t> report(p.epoch_scan[epoch_report_word]);
      report.store(scan << 32, order::relaxed);
      // release: the scan's words above, and our fence, for the helpers that claim chunks.
      claim.store(scan << epoch_chunk_bits, order::release);
      epoch_scan_chunks(p, true);
      // Every chunk is claimed now; wait for the helpers that still scan theirs.
      const std::uint64_t all = (scan << 32) | epoch_chunks(p);
      bool quiesced = false;
      backoff wait_reports;
      for (;;) {
        // acquire: the helpers' reports, and the exits their scans saw.
        const std::uint64_t r = report.load(order::acquire);
        if ((r & ~epoch_chunk_failed) == all) {
          quiesced = (r & epoch_chunk_failed) == 0;
          break;
        }
        if (now_ns() > deadline_ns + epoch_report_slack_ns) break;
        wait_reports.pause();
      }
      // relaxed: statistics, written only by the scanner that holds the flag.
      const auto add = [&p](unsigned word, std::uint64_t by) {
        atomic_ref<std::uint64_t> w(p.epoch_scan[word]);
        w.store(w.load(order::relaxed) + by, order::relaxed);
      };
      add(epoch_scans_word, 1);
      add(epoch_scan_ns_word, now_ns() - began_ns);
      // release: our scan's acquired exits, for the waiters that read the word. Scans run one
      // at a time and each reads a newer epoch, so the word only grows.
      if (quiesced) quiet.store(e, order::release);
      scanning.store(0u, order::release);  // release: hands the scan on with the word
      return quiesced;
    }
    if (now_ns() > deadline_ns) return false;
    if (!epoch_scan_chunks(p, false)) pause.pause();
  }
}

}  // namespace bam::cache::mosaic
