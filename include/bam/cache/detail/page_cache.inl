#pragma once
// Definitions for page_cache.hpp. Each memory order says what it publishes or waits for.

#include <cstring>

#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/warp.hpp>
#include <bam/storage/io.hpp>

namespace bam {

namespace detail {

/// Applies `f` to a line state word with a CAS loop (pins may change under us: stray pin
/// attempts add and remove pins even on a BUSY line). Returns the new value.
template <class F>
BAM_HD BAM_INLINE std::uint64_t update_word(std::uint64_t& word, F f, order o) {
  atomic_ref<std::uint64_t> s(word);
  std::uint64_t cur = s.load(order::relaxed);  // relaxed: the CAS below orders
  std::uint64_t next = f(cur);
  while (!s.compare_exchange(cur, next, o)) next = f(cur);
  return next;
}

}  // namespace detail

BAM_HD inline page_cache_ref::page_cache_ref(const memory& m, const cache_config& c,
                                             std::uint32_t lines)
    : data_(m.data),
      state_(m.state),
      referenced_(m.referenced),
      hand_(m.hand),
      prp_lists_(m.prp_lists),
      bounce_(m.bounce),
      bounce_busy_(m.bounce_busy),
      slots_(m.slots),
      frames_(m.frames),
      victim_timeout_ns_(c.victim_timeout_ns),
      prp_per_line_(m.prp_per_line),
      bounce_count_(m.bounce_count),
      bounce_bytes_(m.bounce_bytes),
      slot_count_(m.slot_count),
      lines_(lines),
      line_bytes_(c.line_bytes),
      clock_chunk_(c.clock_chunk == 0 ? 1u : c.clock_chunk),
      write_behind_(c.write_behind) {
  std::uint32_t shift = 0;
  while ((1u << shift) < c.line_bytes) ++shift;
  line_shift_ = shift;
}

BAM_HD inline std::uint64_t page_cache_ref::line_state(std::uint32_t line) const {
  return atomic_ref<std::uint64_t>(state_[line]).load(order::relaxed);  // relaxed: a snapshot
}

BAM_HD inline void page_cache_ref::release(std::uint32_t line, std::uint32_t pins) const {
  // release: our reads and writes of the line happen before an evictor's acquiring CAS.
  atomic_ref<std::uint64_t>(state_[line]).fetch_sub(pins, order::release);
}

BAM_HD inline void page_cache_ref::mark_dirty(std::uint32_t line) const {
  atomic_ref<std::uint64_t> st(state_[line]);
  // relaxed: the bit (and the data written before it) are published by the releasing unpin
  // that follows; reading first keeps clean-to-dirty the only write.
  if (!(st.load(order::relaxed) & cache::line_bits::dirty)) {
    st.fetch_or(cache::line_bits::dirty, order::relaxed);
  }
}

BAM_HD inline const array_slot* page_cache_ref::slot_of_tag(std::uint64_t tag) const {
  for (std::uint32_t i = 0; i < slot_count_; ++i) {
    const array_slot& s = slots_[i];
    if (tag > s.tag_base && tag <= s.tag_base + s.pages) return &s;
  }
  return nullptr;
}

BAM_HD inline acquire_result page_cache_ref::acquire(const array_slot& a, std::uint64_t page,
                                                     std::uint32_t pins, std::uint32_t hint,
                                                     bool group_fills) const {
  using namespace cache;
  const std::uint64_t tag = a.tag_base + page + 1u;
  // relaxed: the entry only says where to look; the pin's acquire below orders the data, and
  // its tag check rejects a line the entry no longer names.
  const std::uint32_t e = atomic_ref<std::uint32_t>(a.page_table[page]).load(order::relaxed);
  if (page_mapped(e)) {
    const std::uint32_t line = page_line(e);
    atomic_ref<std::uint32_t> ref(referenced_[line]);
    // relaxed: a CLOCK hint, read before the pin so the two reads are in flight together.
    const std::uint32_t was_referenced = ref.load(order::relaxed);
    atomic_ref<std::uint64_t> st(state_[line]);
    // acquire: the line's data, published with VALID by the loader's release (every later
    // change of the word is a read-modify-write, so the pin reads from that release sequence).
    const std::uint64_t s = st.fetch_add(pins, order::acquire);
    if (pin_usable(s, tag)) {
      if (was_referenced == 0) ref.store(1u, order::relaxed);  // relaxed: a CLOCK hint
      return {line, {}, probe_kind::hit};
    }
    st.fetch_sub(pins, order::relaxed);  // relaxed: undoes a pin that never counted
    return acquire_slow(a, page, tag, pins, hint, true, group_fills);  // being evicted
  }
  return acquire_slow(a, page, tag, pins, hint, false, group_fills);
}

BAM_HD inline bool page_cache_ref::pin_mapped(std::uint32_t line, std::uint64_t tag,
                                               std::uint32_t pins) const {
  atomic_ref<std::uint64_t> st(state_[line]);
  // acquire: the line's data, published with VALID by the loader's release.
  const std::uint64_t s = st.fetch_add(pins, order::acquire);
  if (!cache::pin_usable(s, tag)) {
    st.fetch_sub(pins, order::relaxed);  // relaxed: undoes a pin that never counted
    return false;
  }
  atomic_ref<std::uint32_t> ref(referenced_[line]);
  if (ref.load(order::relaxed) == 0) ref.store(1u, order::relaxed);  // relaxed: a CLOCK hint
  return true;
}

BAM_HD BAM_NOINLINE inline acquire_result page_cache_ref::acquire_slow(
    const array_slot& a, std::uint64_t page, std::uint64_t tag, std::uint32_t pins,
    std::uint32_t hint, bool waited, bool group_fills) const {
  using namespace cache;
  atomic_ref<std::uint32_t> entry(a.page_table[page]);
  backoff pause;                 // set with the deadline, once we have to wait
  std::uint64_t give_up_ns = 0;  // read the clock only once we have to wait
  std::uint64_t drain_after_ns = 0;
  std::uint32_t held_line = ~0u;  // a mapped line whose pin failed at our last look
  for (;;) {
    // acquire: the loader published the line's state and data before the entry.
    const std::uint32_t e = entry.load(order::acquire);
    if (page_mapped(e)) {
      const std::uint32_t line = page_line(e);
      if (pin_mapped(line, tag, pins)) {
        return {line, {}, waited ? probe_kind::miss_wait : probe_kind::hit};
      }
      waited = true;  // the line is being evicted; the entry will change
      held_line = line;
    } else if (e == page_bits::unmapped) {
      std::uint32_t expected = page_bits::unmapped;
      // acquire: an evictor wrote the page back before it released the unmapped entry.
      if (entry.compare_exchange(expected, page_bits::loading, order::acquire)) {
        return load(a, page, tag, pins, hint, group_fills);
      }
      continue;
    } else if (e == page_bits::blocked) {
      return {0, {}, probe_kind::moved};
    } else if (page_failed(e)) {
      // The load failed earlier, and its record may have been reported and cleared since:
      // record the failure again (device and LBA; the command is gone) so that the host's
      // check after this launch or transfer still sees it.
      const io_status s = page_failure_status(e);
      const device_location at = a.set.locate((a.first_line + page) << line_shift_);
      a.errors->record(error_kind::read, s, at.device, 0, 0, at.byte / a.set.block_bytes, page);
      return {0, s, probe_kind::failed};
    } else {
      waited = true;  // loading: miss coalescing, wait for the loader
    }
    const std::uint64_t now = now_ns();
    if (give_up_ns == 0) {
      // The loader's own waits are bounded by the victim search and the queue's deadlines
      // (a write-back and a read, each entering the queue and completing).
      give_up_ns = now + 2 * victim_timeout_ns_ + 4 * a.set.timeout_ns();
      // An eviction holds its line BUSY for a write-back at most; longer, the line may be held
      // by an abandoned write-back, which only the drain of its late completion gives back.
      drain_after_ns = now + a.set.timeout_ns();
      // Waiting for another thread's load is waiting on the queues: their longest sleep.
      pause = backoff(64, a.set.wait_sleep_ns());
    } else if (held_line != ~0u && now > drain_after_ns) {
      drain_for_line(a, held_line);
      held_line = ~0u;
    }
    if (now > give_up_ns) {
      // Another thread's load or eviction did not end in time (or a command that may still
      // run holds the line): the access fails, and says so in the record.
      const io_status s = io_status::host(status_source::timeout);
      const device_location at = a.set.locate((a.first_line + page) << line_shift_);
      a.errors->record(error_kind::read, s, at.device, 0, 0, at.byte / a.set.block_bytes, page);
      return {0, s, probe_kind::failed};
    }
    pause.pause();
  }
}

BAM_HD inline bool page_cache_ref::claim_victim(std::uint32_t& line, std::uint64_t& old_state,
                                                std::uint64_t deadline_ns,
                                                const device_set_ref& drain) const {
  using namespace cache;
  atomic_ref<std::uint64_t> hand(*hand_);
  backoff pause;
  std::uint64_t drain_after_ns = 0;
  for (;;) {
    // relaxed: the hand only spreads the searches; the CAS below decides who owns a line.
    const std::uint64_t base = hand.fetch_add(clock_chunk_, order::relaxed);
    // Two passes over the chunk: a line that holds nothing first (the hand moves a whole
    // chunk per search, so taking the first unreferenced line would evict data while free
    // lines wait further on), then CLOCK's first unreferenced line.
    for (std::uint32_t pass = 0; pass < 2; ++pass) {
      for (std::uint32_t i = 0; i < clock_chunk_; ++i) {
        // A two_level cache's frames hold the first frame_lines lines; the base pool is the rest.
        const std::uint64_t first = frames_.geometry.frame_lines;
        const auto l = static_cast<std::uint32_t>(first + (base + i) % (lines_ - first));
        atomic_ref<std::uint64_t> st(state_[l]);
        std::uint64_t s = st.load(order::relaxed);  // relaxed: a candidate check; the CAS orders
        if ((s & line_bits::busy) || line_pins(s) != 0) continue;
        if (pass == 0) {
          if (s & line_bits::valid) continue;
        } else {
          atomic_ref<std::uint32_t> ref(referenced_[l]);
          if (ref.load(order::relaxed) != 0) {  // relaxed: a CLOCK hint
            ref.store(0u, order::relaxed);      // second chance
            continue;
          }
        }
        // acquire: the last pin holders' accesses (released by their unpins) happen before we
        // write the line back or overwrite it.
        if (st.compare_exchange(s, s | line_bits::busy, order::acquire)) {
          line = l;
          old_state = s;
          return true;
        }
      }
    }
    const std::uint64_t now = now_ns();
    if (now > deadline_ns) return false;
    // Lines held by abandoned commands come back only when their late completions are
    // drained, which no one else may be doing. A busy cache often has a chunk with no
    // candidate, and draining every queue of the set costs a look at each: only a search
    // that has found nothing for a quarter of its time drains.
    if (drain_after_ns == 0) {
      drain_after_ns = now + (deadline_ns - now) / 4;
    } else if (now > drain_after_ns) {
      device_drain(drain);
    }
    pause.pause();
  }
}

BAM_HD inline io_status page_cache_ref::line_io(nvme::io_opcode op, const array_slot& a,
                                                std::uint64_t page, std::uint32_t line,
                                                std::uint32_t hint, io_where& where,
                                                const command_hold& hold) const {
  line_io_issued issued;
  io_status s = line_io_submit(op, a, page, line, hint, issued, 1, hold);
  if (s.ok()) s = line_io_finish(a, issued);
  if (!s.ok()) where = issued.io.where;
  return s;
}

BAM_HD inline io_status page_cache_ref::line_io_submit(nvme::io_opcode op, const array_slot& a,
                                                       std::uint64_t page, std::uint32_t line,
                                                       std::uint32_t hint, line_io_issued& out,
                                                       std::uint32_t lines,
                                                       const command_hold& hold) const {
  const std::uint64_t set_byte = (a.first_line + page) << line_shift_;
  const std::uint64_t bytes = page_bytes(a, set_byte, lines);
  if (op == nvme::io_opcode::write && a.stored_pages != nullptr) mark_stored(a, page, lines);
  io_request r;
  r.op = op;
  r.set_byte = set_byte;
  r.bytes = static_cast<std::uint32_t>(bytes);
  r.buffer = line_data(line);
  r.prp_list = prp_lists_ ? prp_lists_ + std::uint64_t{line} * prp_per_line_ : nullptr;
  r.prp_list_dma = reinterpret_cast<std::uint64_t>(r.prp_list);
  r.prp_capacity = prp_per_line_;
  r.queue_hint = hint;
  r.hold = hold;
  out.op = op;
  out.bytes = bytes;
  return device_io_submit(a.set, r, out.io);
}

BAM_HD inline std::uint64_t page_cache_ref::page_bytes(const array_slot& a,
                                                       std::uint64_t set_byte,
                                                       std::uint32_t lines) const {
  const std::uint64_t bytes = std::uint64_t{lines} << line_shift_;
  if (set_byte + bytes <= a.set.capacity_bytes) return bytes;
  // The set ends inside the last line: move whole blocks up to its end.
  const std::uint64_t block = a.set.block_bytes;
  return (a.set.capacity_bytes - set_byte + block - 1) / block * block;
}

BAM_HD BAM_NOINLINE inline void page_cache_ref::fill_among(const array_slot& a,
                                                           std::uint64_t page, std::uint32_t line,
                                                           std::uint32_t group, bool lead) const {
  const std::uint64_t set_byte = (a.first_line + page) << line_shift_;
  const std::uint64_t bytes = page_bytes(a, set_byte, 1);
  const std::uint32_t lanes = warp::popcount(group);
  const std::uint32_t rank = warp::popcount(group & ((1u << warp::lane()) - 1u));
  detail::copy_among(line_data(line), a.set.memory + set_byte, bytes, rank, lanes);
  // Every lane's stores complete before the barrier, which orders them before the leader's
  // publishing release (seq_cst: a fence that orders stores before later writes).
  device_fence<scope::device>();
  warp::sync(group);
  if (!lead) return;
  count_transfer(a, true, bytes);
  publish_load(a, page, a.tag_base + page + 1u, line, lanes);
}

BAM_HD inline io_status page_cache_ref::line_io_finish(const array_slot& a,
                                                       line_io_issued& issued) const {
  const io_status s = device_io_wait(issued.io);
  if (s.ok()) count_transfer(a, issued.op == nvme::io_opcode::read, issued.bytes);
  return s;
}

BAM_HD inline void page_cache_ref::count_transfer(const array_slot& a, bool read,
                                                  std::uint64_t bytes) {
  a.stats.add(read ? &cache_stats::loads : &cache_stats::write_backs, 1);
  a.stats.add(&cache_stats::bytes_moved, bytes);
  if (read) a.stats.add(&cache_stats::bytes_fetched, bytes);
}

BAM_HD inline io_status page_cache_ref::evict(std::uint32_t line, std::uint64_t old_state,
                                              const array_slot& for_array) const {
  using namespace cache;
  const std::uint64_t tag = line_tag(old_state);
  if (!(old_state & line_bits::valid) || tag == 0) return {};  // a free line
  const array_slot* owner = slot_of_tag(tag);
  if (owner == nullptr) return {};
  const std::uint64_t page = tag - 1u - owner->tag_base;
  if (old_state & line_bits::dirty) {
    io_where where;
    // A write-back given up on may still read the line: its BUSY bit stays until the late
    // completion is drained, and the line is not reloaded with another page meanwhile.
    const command_hold hold{&state_[line], line_bits::busy};
    const io_status s = line_io(nvme::io_opcode::write, *owner, page, line, line, where, hold);
    if (!s.ok()) {
      keep_unwritten(*owner, page, line, s, where);
      return s;
    }
  }
  unmap_evicted(*owner, page, for_array);
  return {};
}

BAM_HD inline void page_cache_ref::keep_unwritten(const array_slot& owner, std::uint64_t page,
                                                  std::uint32_t line, io_status s,
                                                  const io_where& where) const {
  using namespace cache;
  owner.errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id,
                       where.lba, page);
  // The data must not be lost: the line stays valid, dirty and mapped (and BUSY while an
  // abandoned write-back may still run; its drainer clears the bit).
  if (!where.abandoned) {
    // release: nothing new; ends our exclusive hold like any other BUSY release.
    detail::update_word(
        state_[line], [](std::uint64_t cur) { return cur & ~line_bits::busy; }, order::release);
  }
}

BAM_HD inline void page_cache_ref::unmap_evicted(const array_slot& owner, std::uint64_t page,
                                                 const array_slot& for_array) const {
  // release: the write-back finished before anyone can load the page again.
  atomic_ref<std::uint32_t>(owner.page_table[page]).store(cache::page_bits::unmapped,
                                                          order::release);
  if (owner.large_table != nullptr) count_base_page(owner, page, false);
  for_array.stats.add(&cache_stats::evictions, 1);
}

BAM_HD inline void page_cache_ref::count_base_page(const array_slot& a, std::uint64_t page,
                                                   bool loaded) const {
  namespace mosaic = cache::mosaic;
  atomic_ref<std::uint64_t> entry(a.large_table[page >> frames_.geometry.frame_shift]);
  // relaxed: a count that only steers promotion; no data is published with it.
  std::uint64_t cur = entry.load(order::relaxed);
  for (;;) {
    // A piece that is being promoted (or holds a frame) counts nothing: a promotion takes
    // every base page of the piece, and an evicted frame's piece starts again from none.
    if (!mosaic::entry_base(cur)) return;
    const std::uint32_t n = mosaic::entry_base_count(cur);
    if (loaded ? n == mosaic::entry_bits::frame_mask : n == 0) return;
    if (entry.compare_exchange(cur, mosaic::make_base(loaded ? n + 1u : n - 1u), order::relaxed)) {
      return;  // relaxed: as above
    }
  }
}

BAM_HD BAM_NOINLINE inline acquire_result page_cache_ref::no_victim(const array_slot& a,
                                                                    std::uint64_t page) const {
  const io_status s = io_status::host(status_source::cache_exhausted);
  a.errors->record(error_kind::cache, s, 0, 0, 0, 0, page);
  // release: nothing was loaded; a later accessor may try again.
  atomic_ref<std::uint32_t>(a.page_table[page]).store(cache::page_bits::unmapped, order::release);
  return {0, s, probe_kind::failed};
}

BAM_HD inline void page_cache_ref::drain_for_line(const array_slot& a, std::uint32_t line) const {
  // evict() and flush_line() write a line back through queue `line` of its page's device (of
  // every device, for a replicated set), and a write-behind through that or the next one.
  for (std::uint32_t d = 0; d < a.set.devices; ++d) {
    a.set.queue(d, line % a.set.queues_per_device).drain();
    a.set.queue(d, (line + 1u) % a.set.queues_per_device).drain();
  }
}

BAM_HD BAM_NOINLINE inline acquire_result page_cache_ref::load(const array_slot& a,
                                                               std::uint64_t page,
                                                               std::uint64_t tag,
                                                               std::uint32_t pins,
                                                               std::uint32_t hint,
                                                               bool group_fills) const {
  using namespace cache;
  const std::uint64_t deadline_ns = now_ns() + victim_timeout_ns_;
  const std::uint32_t read_queue = hint % a.set.queues_per_device;
  std::uint32_t line = 0;
  // The first dirty victim is written back beside our read instead of before it (the write
  // and the read are in flight together); the page is loaded into another victim.
  write_behind behind;
  bool behind_allowed = write_behind_;
  for (;;) {
    std::uint64_t old = 0;
    // Holding a dirty line, only look for a second one (one chunk, no wait): threads that
    // each held a line while they waited for another could starve a small cache for good.
    if (!claim_victim(line, old, behind.owner != nullptr ? 0 : deadline_ns, a.set)) {
      if (behind.owner == nullptr) return no_victim(a, page);
      // No second line now: write the dirty one back first and use it, as before.
      line = behind.line;
      old = behind.old_state;
      behind.owner = nullptr;
      behind_allowed = false;
    } else if (behind.owner == nullptr && behind_allowed &&
               take_write_behind(read_queue, line, old, behind)) {
      continue;
    }
    if (evict(line, old, a).ok()) break;
    // A failed write-back keeps that line; try another, but not past the deadline: when every
    // write-back fails (a read-only or failed namespace), a victim is always claimed and
    // always kept, and claim_victim alone would never see its deadline pass.
    if (now_ns() > deadline_ns) {
      if (behind.owner != nullptr) {
        line_io_issued w;
        if (submit_write_behind(behind, w)) finish_write_behind(behind, a, w);
      }
      return no_victim(a, page);
    }
  }
  // The line is ours (BUSY) and unmapped: give it this page's tag.
  tag_for_load(line, tag);
  // A read given up on may still write into the line: the line stays BUSY (and tagged) until
  // the late completion is drained, which then empties it (everything but the pins).
  const command_hold hold{&state_[line], ~line_bits::pin_mask};
  if (a.stored_pages != nullptr && !stored(a, page)) {
    // A fresh array's page it never wrote: nothing on the devices is wanted.
    line_io_issued write;
    const bool writing = behind.owner != nullptr && submit_write_behind(behind, write);
    zero_line(line);
    if (writing) finish_write_behind(behind, a, write);
    a.stats.add(&cache_stats::zero_filled, 1);
    publish_load(a, page, tag, line, pins);
    return {line, {}, probe_kind::miss};
  }
  if (group_fills && a.set.memory != nullptr) {
    // The caller's group copies the page (fill_among). A memory set's write-back is a copy
    // done when submitted, so the dirty victim's goes first, and nothing is left in flight.
    line_io_issued write;
    if (behind.owner != nullptr && submit_write_behind(behind, write)) {
      finish_write_behind(behind, a, write);
    }
    return {line, {}, probe_kind::fill};
  }
  // Both commands in flight at once, submitted in increasing queue index (device_io_submit's
  // rule for a thread that holds several; the write-behind's queue is never the read's).
  line_io_issued read, write;
  bool writing = false;
  if (behind.owner != nullptr && behind.queue < read_queue) {
    writing = submit_write_behind(behind, write);
  }
  io_status s = line_io_submit(nvme::io_opcode::read, a, page, line, hint, read, 1, hold);
  if (behind.owner != nullptr && behind.queue > read_queue) {
    writing = submit_write_behind(behind, write);
  }
  if (s.ok()) s = line_io_finish(a, read);
  if (writing) finish_write_behind(behind, a, write);
  if (!s.ok()) {
    fail_load(a, page, line, s, read.io.where);
    return {0, s, probe_kind::failed};
  }
  publish_load(a, page, tag, line, pins);
  return {line, {}, probe_kind::miss};
}

BAM_HD inline void page_cache_ref::tag_for_load(std::uint32_t line, std::uint64_t tag) const {
  using namespace cache;
  // relaxed: only BUSY holders change the tag, and nobody pins a BUSY line.
  detail::update_word(
      state_[line],
      [tag](std::uint64_t cur) {
        return (cur & line_bits::pin_mask) | line_bits::busy | (tag << line_bits::tag_shift);
      },
      order::relaxed);
}

BAM_HD inline bool page_cache_ref::stored(const array_slot& a, std::uint64_t page) {
  // relaxed: the bit was set before the write-back that unmapped the page, and our CAS of the
  // page's entry (acquire) read that release store.
  return (atomic_ref<std::uint32_t>(a.stored_pages[page >> 5]).load(order::relaxed) >>
          (page & 31u)) &
         1u;
}

BAM_HD inline void page_cache_ref::mark_stored(const array_slot& a, std::uint64_t page,
                                               std::uint32_t lines) {
  for (std::uint64_t p = page; p < page + lines && p < a.pages; ++p) {
    atomic_ref<std::uint32_t> word(a.stored_pages[p >> 5]);
    const std::uint32_t bit = 1u << (p & 31u);
    // relaxed: published by the release store that unmaps the page after its write-back
    // (or, for a flushed line that stays mapped, never needed before its eviction).
    if ((word.load(order::relaxed) & bit) == 0) word.fetch_or(bit, order::relaxed);
  }
}

BAM_HD inline void page_cache_ref::zero_line(std::uint32_t line) const {
  auto* p = reinterpret_cast<std::uint64_t*>(line_data(line));
  const std::uint64_t words = (std::uint64_t{1} << line_shift_) / 8;
  for (std::uint64_t i = 0; i < words; ++i) p[i] = 0;
}

BAM_HD inline void page_cache_ref::fail_load(const array_slot& a, std::uint64_t page,
                                             std::uint32_t line, io_status s,
                                             const io_where& where) const {
  using namespace cache;
  if (!where.abandoned) {
    // release: ends our hold of the line, empty; the failed command is done with it.
    detail::update_word(
        state_[line], [](std::uint64_t cur) { return cur & line_bits::pin_mask; }, order::release);
  }
  a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id, where.lba,
                   page);
  // release: waiters see the failure instead of waiting on.
  atomic_ref<std::uint32_t>(a.page_table[page]).store(page_failure(s), order::release);
}

BAM_HD inline void page_cache_ref::publish_load(const array_slot& a, std::uint64_t page,
                                                std::uint64_t tag, std::uint32_t line,
                                                std::uint32_t pins) const {
  using namespace cache;
  // release: the line's data, read by the command, before VALID and our pins.
  detail::update_word(
      state_[line],
      [tag, pins](std::uint64_t cur) {
        return ((cur & line_bits::pin_mask) + pins) | line_bits::valid |
               (tag << line_bits::tag_shift);
      },
      order::release);
  atomic_ref<std::uint32_t>(referenced_[line]).store(1u, order::relaxed);  // relaxed: a CLOCK hint
  // release: the line's state and data before the page can be found mapped.
  atomic_ref<std::uint32_t>(a.page_table[page]).store(page_entry_for_line(line), order::release);
  if (a.large_table != nullptr) count_base_page(a, page, true);
}

BAM_HD BAM_NOINLINE inline started_load page_cache_ref::start_load(const array_slot& a,
                                                                   std::uint64_t page,
                                                                   std::uint32_t queue,
                                                                   bool holds_commands) const {
  using namespace cache;
  started_load out;
  out.page = page;
  const std::uint64_t tag = a.tag_base + page + 1u;
  atomic_ref<std::uint32_t> entry(a.page_table[page]);
  // acquire: the loader published the line's state and data before the entry (an evictor, its
  // write-back before the unmapped entry).
  std::uint32_t e = entry.load(order::acquire);
  if (page_mapped(e)) {
    const std::uint32_t line = page_line(e);
    if (!pin_mapped(line, tag, 1u)) return out;  // being evicted: wait() acquires it
    a.stats.add(&cache_stats::hits, 1);
    out.line = line;
    out.kind = started_kind::pinned;
    return out;
  }
  // Loading, failed or blocked: end_load's acquire waits for the loader or reports. A fresh
  // array's load reads nothing worth starting early: end_load's acquire does it.
  if (e != page_bits::unmapped || a.stored_pages != nullptr) return out;
  // acquire: an evictor wrote the page back before it released the unmapped entry.
  if (!entry.compare_exchange(e, page_bits::loading, order::acquire)) return out;
  // The page is ours to load. A victim now or never: a thread that waited for one while it
  // held lines BUSY for its earlier prefetches could starve a small cache for good.
  std::uint32_t line = 0;
  std::uint64_t old = 0;
  bool usable = claim_victim(line, old, 0, a.set);
  if (usable && holds_commands && (old & line_bits::valid) && (old & line_bits::dirty)) {
    // Its write-back could need a queue below the commands we hold: it goes back as it was.
    end_take(line, false);
    usable = false;
  }
  // A failed write-back was recorded and kept its line.
  if (!usable || !evict(line, old, a).ok()) {
    // release: nothing was loaded; the next accessor (our end_load, perhaps) tries again.
    entry.store(page_bits::unmapped, order::release);
    return out;
  }
  tag_for_load(line, tag);
  // As in load(): a read given up on keeps the line BUSY until its late completion is drained.
  const command_hold hold{&state_[line], ~line_bits::pin_mask};
  a.stats.add(&cache_stats::misses, 1);
  const io_status s =
      line_io_submit(nvme::io_opcode::read, a, page, line, queue, out.read, 1, hold);
  if (!s.ok()) {
    fail_load(a, page, line, s, out.read.io.where);
    out.status = s;
    out.kind = started_kind::failed;
    return out;
  }
  a.stats.add(&cache_stats::prefetched, 1);
  out.line = line;
  out.kind = started_kind::issued;
  return out;
}

BAM_HD BAM_NOINLINE inline void page_cache_ref::end_load(const array_slot& a,
                                                         started_load& s) const {
  if (s.kind != started_kind::issued) return;
  const io_status st = line_io_finish(a, s.read);
  if (!st.ok()) {
    fail_load(a, s.page, s.line, st, s.read.io.where);
    s.status = st;
    s.kind = started_kind::failed;
    return;
  }
  publish_load(a, s.page, a.tag_base + s.page + 1u, s.line, 1);
  s.kind = started_kind::pinned;
}

BAM_HD inline bool page_cache_ref::take_write_behind(std::uint32_t read_queue, std::uint32_t line,
                                                     std::uint64_t old_state,
                                                     write_behind& w) const {
  using namespace cache;
  if (!(old_state & line_bits::valid) || !(old_state & line_bits::dirty)) return false;
  const std::uint64_t tag = line_tag(old_state);
  const array_slot* owner = tag == 0 ? nullptr : slot_of_tag(tag);
  // A replicated set writes its copies one after another inside the submission: nothing of
  // it would be left in flight beside the read.
  if (owner == nullptr || owner->set.replicated) return false;
  // Queue `line` as evict() uses, or the next one where that is the read's (drain_for_line
  // drains both).
  const std::uint32_t queues = owner->set.queues_per_device;
  std::uint32_t queue = line % queues;
  if (queue == read_queue) queue = (queue + 1u) % queues;
  if (queue == read_queue) return false;  // one queue: the two could need the same slot
  w = {line, old_state, owner, tag - 1u - owner->tag_base, queue};
  return true;
}

BAM_HD inline bool page_cache_ref::submit_write_behind(const write_behind& w,
                                                       line_io_issued& issued) const {
  using namespace cache;
  // As evict(): a write-back given up on keeps the line BUSY until its late completion.
  const command_hold hold{&state_[w.line], line_bits::busy};
  const io_status s =
      line_io_submit(nvme::io_opcode::write, *w.owner, w.page, w.line, w.queue, issued, 1, hold);
  if (s.ok()) return true;
  keep_unwritten(*w.owner, w.page, w.line, s, issued.io.where);
  return false;
}

BAM_HD inline void page_cache_ref::finish_write_behind(const write_behind& w,
                                                       const array_slot& for_array,
                                                       line_io_issued& issued) const {
  using namespace cache;
  const io_status s = line_io_finish(*w.owner, issued);
  if (!s.ok()) {
    keep_unwritten(*w.owner, w.page, w.line, s, issued.io.where);
    return;
  }
  unmap_evicted(*w.owner, w.page, for_array);
  w.owner->stats.add(&cache_stats::write_backs_beside_loads, 1);
  // release: the page left the line before the line is free for anyone's next load.
  detail::update_word(
      state_[w.line], [](std::uint64_t cur) { return cur & line_bits::pin_mask; },
      order::release);
}

BAM_HD inline bool page_cache_ref::try_take_line(std::uint32_t line, std::uint64_t tag) const {
  using namespace cache;
  atomic_ref<std::uint64_t> st(state_[line]);
  std::uint64_t s = st.load(order::relaxed);  // relaxed: a check; the CAS below orders
  for (;;) {
    if (!pin_usable(s, tag)) return false;
    // relaxed: taking BUSY publishes nothing; drain_line acquires the pin holders' work.
    if (st.compare_exchange(s, s | line_bits::busy, order::relaxed)) return true;
  }
}

BAM_HD inline bool page_cache_ref::drain_line(std::uint32_t line, std::uint64_t deadline_ns) const {
  atomic_ref<std::uint64_t> st(state_[line]);
  backoff pause;
  // acquire: the last pin holders' accesses (released by their unpins) before we read the line.
  while (cache::line_pins(st.load(order::acquire)) != 0) {
    if (now_ns() > deadline_ns) return false;
    pause.pause();
  }
  return true;
}

BAM_HD inline void page_cache_ref::end_take(std::uint32_t line, bool empty) const {
  using namespace cache;
  if (empty) atomic_ref<std::uint32_t>(referenced_[line]).store(0u, order::relaxed);  // a hint
  // release: what we did with the line (read it out) before its next holder's acquire.
  detail::update_word(
      state_[line],
      [empty](std::uint64_t cur) {
        return empty ? (cur & line_bits::pin_mask) : (cur & ~line_bits::busy);
      },
      order::release);
}

BAM_HD inline io_status page_cache_ref::flush_line(const array_slot& a, std::uint32_t line) const {
  using namespace cache;
  atomic_ref<std::uint64_t> st(state_[line]);
  backoff pause;
  std::uint64_t give_up_ns = 0;
  std::uint64_t s = 0;
  for (;;) {
    s = st.load(order::relaxed);  // relaxed: a check; the CAS below orders
    if (!(s & line_bits::valid) || !(s & line_bits::dirty)) return {};
    const std::uint64_t tag = line_tag(s);
    if (tag <= a.tag_base || tag > a.tag_base + a.pages) return {};  // another array's line
    // acquire: the writers' data, released by their unpins.
    if (!(s & line_bits::busy) && line_pins(s) == 0 &&
        st.compare_exchange(s, s | line_bits::busy, order::acquire)) {
      break;
    }
    const std::uint64_t now = now_ns();
    if (give_up_ns == 0) {
      give_up_ns = now + victim_timeout_ns_;
    } else if (now > give_up_ns) {
      // Still pinned or BUSY (perhaps held by an abandoned write-back): not written back.
      const io_status t = io_status::host(status_source::timeout);
      a.errors->record(error_kind::write_back, t, 0, 0, 0, 0, tag - 1u - a.tag_base);
      return t;
    }
    if (s & line_bits::busy) drain_for_line(a, line);  // a held line's drain gives it back
    pause.pause();
  }
  const std::uint64_t page = line_tag(s) - 1u - a.tag_base;
  io_where where;
  // As in evict(): an abandoned write-back keeps the line BUSY until its late completion.
  const command_hold hold{&state_[line], line_bits::busy};
  const io_status w = line_io(nvme::io_opcode::write, a, page, line, line, where, hold);
  if (!w.ok()) {
    a.errors->record(error_kind::write_back, w, where.device, where.queue, where.command_id,
                     where.lba, page);
    if (where.abandoned) return w;  // the line is the queue's until the drain gives it back
  }
  const std::uint64_t clear = w.ok() ? (line_bits::busy | line_bits::dirty) : line_bits::busy;
  // release: ends our exclusive hold; the next holder sees the line as we leave it.
  detail::update_word(
      state_[line], [clear](std::uint64_t cur) { return cur & ~clear; }, order::release);
  return w;
}

BAM_HD BAM_NOINLINE inline io_status page_cache_ref::read_through(const array_slot& a,
                                                                  std::uint64_t set_byte,
                                                                  std::uint32_t bytes, void* out,
                                                                  std::uint32_t hint) const {
  const std::uint64_t block = a.set.block_bytes;
  const std::uint64_t first = set_byte / block * block;
  const std::uint64_t last = (set_byte + bytes + block - 1) / block * block;
  if (last - first > bounce_bytes_ || bounce_count_ == 0) {
    return io_status::host(status_source::invalid_request);
  }
  // Take a bounce buffer: probe from a spread start; bounded.
  // The word after the flags counts releases: the deadline only runs while no buffer is given
  // back, so many threads sharing few buffers wait their turn instead of failing.
  atomic_ref<std::uint64_t> releases(bounce_busy_[bounce_count_]);
  backoff pause;
  std::uint64_t give_up_ns = 0, drain_after_ns = 0;
  std::uint64_t seen = 0;
  std::uint32_t b = static_cast<std::uint32_t>((std::uint64_t{hint} * 2654435761u) % bounce_count_);
  for (std::uint32_t tries = 0;; ++tries) {
    std::uint64_t expected = 0;
    // acquire: the previous user of the buffer (or the drainer of an abandoned command's late
    // completion, which gives the buffer back) finished with it.
    if (atomic_ref<std::uint64_t>(bounce_busy_[b]).compare_exchange(expected, 1u, order::acquire))
      break;
    b = b + 1 == bounce_count_ ? 0 : b + 1;
    if (tries % bounce_count_ == bounce_count_ - 1) {
      const std::uint64_t now = now_ns();
      const std::uint64_t released = releases.load(order::relaxed);  // relaxed: a progress hint
      if (give_up_ns == 0 || released != seen) {
        give_up_ns = now + victim_timeout_ns_;
        seen = released;
      } else if (now > give_up_ns) {
        const io_status s = io_status::host(status_source::cache_exhausted);
        const device_location at = a.set.locate(first);
        a.errors->record(error_kind::bounce, s, at.device, 0, 0, at.byte / block, bounce_count_);
        return s;
      }
      // Buffers held by abandoned commands come back with the drain of their late
      // completions: a thread that has found none for a quarter of its time drains.
      if (drain_after_ns == 0) {
        drain_after_ns = now + victim_timeout_ns_ / 4;
      } else if (now > drain_after_ns) {
        device_drain(a.set);
      }
      pause.pause();
    }
  }
  std::uint8_t* buffer = bounce_ + std::uint64_t{b} * bounce_bytes_;
  io_request r;
  r.op = nvme::io_opcode::read;
  r.set_byte = first;
  r.bytes = static_cast<std::uint32_t>(last - first);
  r.buffer = buffer;
  r.queue_hint = hint;
  // A read given up on may still write the buffer: it stays taken until the late completion
  // is drained, which gives it back.
  r.hold = command_hold{&bounce_busy_[b], 1u};
  io_where where;
  const io_status s = device_io(a.set, r, where);
  if (s.ok()) {
    std::memcpy(out, buffer + (set_byte - first), bytes);
    a.stats.add(&cache_stats::read_through, 1);
    a.stats.add(&cache_stats::bytes_moved, last - first);
  } else {
    a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id, where.lba,
                     0);
    if (where.abandoned) return s;  // the buffer is the queue's until the drain gives it back
  }
  // release: our read of the buffer happens before its next user's command fills it.
  atomic_ref<std::uint64_t>(bounce_busy_[b]).store(0u, order::release);
  releases.fetch_add(1u, order::relaxed);  // relaxed: only tells waiters that someone progressed
  return s;
}

}  // namespace bam
