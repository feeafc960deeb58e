#pragma once
// dense_cache_ref::fill_piece: once a coalesced piece holds fill_percent of its slots, the
// loader that got it there loads the rest of the piece in commands of several pages
// (dense_cache.hpp, "Fill"). Included by dense_cache.hpp.

#include <cstdint>

#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/platform/atomic.hpp>

namespace bam::cache::mosaic {

BAM_HD inline bool dense_cache_ref::fill_due(std::uint32_t resident_before) const {
  return pool_.fill_slots != 0 && resident_before + 1u == pool_.fill_slots;
}

BAM_HD inline std::uint32_t dense_cache_ref::fill_run(const array_slot& a, std::uint64_t page,
                                                      std::uint32_t slot, std::uint32_t lines,
                                                      std::uint32_t frame) const {
  const std::uint32_t shift = cache_.line_shift();
  const std::uint64_t line_bytes = std::uint64_t{1} << shift;
  // Two memory pages at most, so PRP1 and PRP2 describe the buffer without a list.
  const auto at = reinterpret_cast<std::uintptr_t>(
      cache_.line_data(static_cast<std::uint32_t>(pool_.geometry.line_of(frame, slot))));
  const std::uint64_t page_bytes = a.set.page_bytes;
  std::uint64_t room = (at & ~(page_bytes - 1u)) + 2 * page_bytes - at;
  if (room > a.set.max_transfer_bytes) room = a.set.max_transfer_bytes;
  // Inside one stripe of a striped set (a stripe is a multiple of the line).
  if (a.set.devices > 1 && !a.set.replicated && a.set.stripe_bytes != 0) {
    const std::uint64_t set_byte = (a.first_line + page) << shift;
    const std::uint64_t to_stripe_end = a.set.stripe_bytes - set_byte % a.set.stripe_bytes;
    if (to_stripe_end < room) room = to_stripe_end;
  }
  const std::uint64_t fit = room / line_bytes;
  if (fit == 0) return 1;  // a line alone always fits (array open checked the transfer size)
  return lines < fit ? lines : static_cast<std::uint32_t>(fit);
}

BAM_HD inline bool dense_cache_ref::fill_take(const array_slot& a, std::uint64_t piece,
                                              std::uint64_t e, std::uint32_t first,
                                              std::uint32_t words, std::uint64_t* mine) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint32_t frame = entry_frame(e);
  for (std::uint32_t k = 0; k < words; ++k) mine[k] = 0;
  frame_guard guard;
  if (pinning_.enter(a.large_table[piece], 1, guard) != enter_result::protected_frame) return false;
  // The same entry, generation and all: the frame still serves this piece as when we loaded.
  const bool same = guard.entry == e;
  for (std::uint32_t k = 0; same && k < words; ++k) {
    const std::uint32_t w = first + k;
    // Slots of this word that hold pages of the array (the last piece may be short).
    const std::uint64_t first_page = (piece << g.frame_shift) + std::uint64_t{w} * 64u;
    const std::uint64_t slots_here =
        g.lines_per_frame - w * 64u < 64u ? g.lines_per_frame - w * 64u : 64u;
    const std::uint64_t pages_here =
        first_page >= a.pages
            ? 0
            : (a.pages - first_page < slots_here ? a.pages - first_page : slots_here);
    if (pages_here == 0) break;
    const std::uint64_t valid =
        pages_here == 64u ? ~std::uint64_t{0} : (std::uint64_t{1} << pages_here) - 1u;
    const std::uint64_t at = std::uint64_t{frame} * g.words_per_frame + w;
    atomic_ref<std::uint64_t> resident(pool_.resident[at]);
    atomic_ref<std::uint64_t> busy(pool_.busy[at]);
    const std::uint64_t want = valid & ~resident.load(pinning_.slot_order());
    if (want == 0) continue;
    // seq_cst: as a single loader's busy bit (acquire_then): an evictor that closed the
    // entry drains busy bits after our protection ends, so it sees these and waits.
    std::uint64_t got = want & ~busy.fetch_or(want, order::seq_cst);
    // slot_order: loaded between our two looks; give those back.
    const std::uint64_t landed = got & resident.load(pinning_.slot_order());
    if (landed != 0) busy.fetch_and(~landed, order::release);  // release: ends our hold
    mine[k] = got & ~landed;
  }
  release(guard);
  return same;
}

BAM_HD BAM_NOINLINE inline void dense_cache_ref::fill_piece(const array_slot& a,
                                                            std::uint64_t piece,
                                                            std::uint64_t e) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint32_t frame = entry_frame(e);
  const std::uint32_t queues = a.set.queues_per_device;
  // At most one command per queue index in flight, in increasing index order (storage/io.hpp).
  const std::uint32_t batch = queues < fill_batch ? queues : fill_batch;
  const std::uint32_t start = frame % queues;
  auto busy_word = [&](std::uint32_t w) {
    return atomic_ref<std::uint64_t>(pool_.busy[std::uint64_t{frame} * g.words_per_frame + w]);
  };
  bool filled = false;
  for (std::uint32_t first = 0; first < g.words_per_frame; first += fill_words) {
    const std::uint32_t words =
        g.words_per_frame - first < fill_words ? g.words_per_frame - first : fill_words;
    // Our busy bits: the slots we load; nobody else loads or empties them until we let go.
    std::uint64_t mine[fill_words];
    if (!fill_take(a, piece, e, first, words, mine)) break;
    std::uint32_t k = 0;  // the word runs are taken from; mine[k] holds what is left of it
    bool failed = false;
    for (;;) {
      // A batch of runs of consecutive slots, one command each.
      std::uint64_t runs[fill_batch];
      std::uint32_t slots[fill_batch], lens[fill_batch], word_of[fill_batch];
      std::uint32_t n = 0;
      while (n < batch) {
        while (mine[k] == 0 && k + 1 < words) ++k;
        if (mine[k] == 0) break;
        std::uint32_t b = 0;
        while (!((mine[k] >> b) & 1u)) ++b;
        std::uint32_t len = 1;
        while (b + len < 64u && ((mine[k] >> (b + len)) & 1u)) ++len;
        slots[n] = (first + k) * 64u + b;
        lens[n] = fill_run(a, (piece << g.frame_shift) + slots[n], slots[n], len, frame);
        runs[n] = (lens[n] == 64u ? ~std::uint64_t{0} : (std::uint64_t{1} << lens[n]) - 1u) << b;
        word_of[n] = first + k;
        mine[k] &= ~runs[n];
        ++n;
      }
      if (n == 0) break;
      // Command t goes to queue index t < wrap ? t : start + t - wrap (write_back_dirty).
      const std::uint32_t wrap = start + n > queues ? start + n - queues : 0u;
      line_io_issued issued[fill_batch];
      std::uint32_t in_flight = 0;
      for (; in_flight < n; ++in_flight) {
        const std::uint32_t t = in_flight;
        const std::uint32_t queue = t < wrap ? t : start + t - wrap;
        // A read given up on may still write its slots: their busy bits stay until the late
        // completion is drained, which clears them.
        const command_hold hold{&pool_.busy[std::uint64_t{frame} * g.words_per_frame + word_of[t]],
                                runs[t]};
        const io_status s = cache_.line_io_submit(
            nvme::io_opcode::read, a, (piece << g.frame_shift) + slots[t],
            static_cast<std::uint32_t>(g.line_of(frame, slots[t])), queue, issued[t], lens[t],
            hold);
        if (!s.ok()) {
          // Those slots stay empty (errors are left to demand loads, below); an abandoned
          // command's slots are the queue's until the drain gives them back.
          if (issued[t].io.where.abandoned) note_abandoned(*hold.clear_word, runs[t]);
          for (std::uint32_t u = issued[t].io.where.abandoned ? t + 1 : t; u < n; ++u) {
            busy_word(word_of[u]).fetch_and(~runs[u], order::release);  // release: ends our hold
          }
          failed = true;
          break;
        }
      }
      // Every command issued writes into its slots: wait for all of them, even after a failure.
      for (std::uint32_t t = 0; t < in_flight; ++t) {
        const io_status s = cache_.line_io_finish(a, issued[t]);  // counts the load
        const std::uint64_t at = std::uint64_t{frame} * g.words_per_frame + word_of[t];
        if (s.ok()) {
          // release: the slots' data, read by the command, before their resident bits.
          atomic_ref<std::uint64_t>(pool_.resident[at]).fetch_or(runs[t], order::release);
          // relaxed: statistics and a CLOCK hint, counted while we still hold the slots (an
          // evictor resets the count only after it has drained busy bits).
          atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_add(lens[t], order::relaxed);
          atomic_ref<std::uint32_t>(pool_.referenced[frame]).store(1u, order::relaxed);
          busy_word(word_of[t]).fetch_and(~runs[t], order::release);  // release: ends our hold
          filled = true;
        } else {
          // Not recorded: nobody asked for these pages yet; a reader that needs one loads it
          // on the demand path and meets the error there. An abandoned command's slots stay
          // busy until its late completion is drained (as acquire_then).
          // release: ends our hold.
          if (issued[t].io.where.abandoned) {
            note_abandoned(pool_.busy[at], runs[t]);
          } else {
            busy_word(word_of[t]).fetch_and(~runs[t], order::release);
          }
          failed = true;
        }
      }
      if (failed) break;
    }
    if (failed) {
      // release: ends our hold of the slots never loaded.
      for (std::uint32_t j = k; j < words; ++j) {
        if (mine[j] != 0) busy_word(first + j).fetch_and(~mine[j], order::release);
      }
      break;
    }
  }
  if (filled) count(a, &cache_stats::fills);
}

}  // namespace bam::cache::mosaic
