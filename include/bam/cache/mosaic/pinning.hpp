#pragma once
/// @file
/// One interface over the two ways readers protect a coalesced piece (frame pins, epochs), so
/// the dense cache and its callers never branch on which (the branch is here, uniform across a
/// warp because the kind is per cache).
///
/// Reader:  enter(entry, pins, guard) reads the piece's large entry and, when it is coalesced,
///          protects its frame for `pins` readers; leave(guard) ends that.
/// Evictor: with the frame HELD (taken with no pins) and the entry CLOSED, quiesce() returns
///          once no reader can still use the frame: at once for frame pins (a pin attempt on a
///          frame that is not OPEN fails), after a grace period for epochs.
/// slot_order(): the order of a protected reader's loads of resident and busy bits
///          (epoch_read_order under epochs: they take part in the grace-period argument).
/// Sections: under epochs a reader may keep one announcement open across many accesses
///          (open / close a reader_section; entry_in() reads an entry inside it).

#include <cstdint>

#include <bam/cache/mosaic/epochs.hpp>
#include <bam/cache/mosaic/frame_pins.hpp>
#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/warp.hpp>
#include <bam/platform/warp_sync.hpp>

namespace bam::cache::mosaic {

/// What a protected reader holds.
struct frame_guard {
  std::uint64_t entry = 0;  ///< the coalesced entry it read
  std::uint32_t slot = 0;   ///< epochs: the reader slot it announced in
  std::uint32_t pins = 0;   ///< frame pins: how many it took
  /// base_first: the base line + 1 that a BASE piece's page was pinned in (0: a frame's guard).
  std::uint32_t base_line = 0;
};

/// An epoch section a reader keeps open across accesses (pinning_kind::epochs): one
/// announcement and one fence for all of them. While it is open the reader must not wait for
/// anything (a barrier, another thread, a load): every grace period, and with it every frame
/// eviction, waits for the section to close.
struct reader_section {
  static constexpr std::uint32_t closed = ~0u;
  std::uint32_t slot = closed;  ///< the reader slot announced in, or closed
  std::uint32_t uses = 0;       ///< accesses served since it opened
};

enum class enter_result : std::uint8_t {
  protected_frame,  ///< guard.entry is coalesced and its frame cannot be reused until leave()
  not_coalesced,    ///< guard.entry is empty or CLOSED; nothing is held
  retry,            ///< the frame changed under us; nothing is held; read the entry again
  no_reader_slot,   ///< epochs: this thread's reader slot is past the pool's; nothing is held
};

class frame_pinning {
 public:
  /// A view: `p` must outlive it (a reference keeps kernels from copying the pool view into
  /// every thread's local memory; see dense_cache_ref).
  BAM_HD explicit frame_pinning(const frame_pool_view& p) : p_(p) {}
  frame_pinning(const frame_pool_view&&) = delete;

  [[nodiscard]] BAM_HD enter_result enter(std::uint64_t& entry_word, std::uint32_t pins,
                                          frame_guard& g) const {
    atomic_ref<std::uint64_t> entry(entry_word);
    if (p_.pinning == pinning_kind::epochs) {
      // relaxed: a look before announcing. A thread that finds the entry empty or CLOSED (a
      // reservation or eviction in progress, which it then waits out) is not announced while
      // it looks and pays no fence; a stale look costs one more turn of the caller's loop
      // (its CAS on the entry, or its next enter, decides).
      g.entry = entry.load(order::relaxed);
      if (!entry_coalesced(g.entry)) return enter_result::not_coalesced;
      g.slot = epoch_enter(p_);
      if (g.slot == ~0u) return enter_result::no_reader_slot;
      // epoch_read_order: after our announcement (epochs.hpp).
      g.entry = entry.load(epoch_read_order);
      if (entry_coalesced(g.entry)) return enter_result::protected_frame;
      epoch_exit(p_, g.slot);
      return enter_result::not_coalesced;
    }
    // acquire: the reserver opened the frame and reset its bitmaps before publishing.
    g.entry = entry.load(order::acquire);
    if (!entry_coalesced(g.entry)) return enter_result::not_coalesced;
    if (!frame_pin(p_, g.entry, pins)) return enter_result::retry;
    g.pins = pins;
    return enter_result::protected_frame;
  }

  BAM_HD void leave(const frame_guard& g) const {
    if (p_.pinning == pinning_kind::epochs) {
      epoch_exit(p_, g.slot);
    } else {
      frame_unpin(p_, entry_frame(g.entry), g.pins);
    }
  }

  [[nodiscard]] BAM_HD bool quiesce(std::uint64_t deadline_ns) const {
    return p_.pinning == pinning_kind::epochs ? epoch_grace_period(p_, deadline_ns) : true;
  }

  /// One turn of a wait with no protection held: under epochs it helps a running grace-period
  /// scan (epoch_help) and pauses only when there is nothing to help with.
  BAM_HD void wait_turn(backoff& b) const {
    if (p_.pinning == pinning_kind::epochs && epoch_help(p_)) return;
    b.pause();
  }

  [[nodiscard]] BAM_HD order slot_order() const {
    return p_.pinning == pinning_kind::epochs ? epoch_read_order : order::acquire;
  }

  /// Epochs only: one announcement for the lanes of `lanes` (each of them calls it), made by
  /// the lowest. Epochs protect by time, not by frame, so every entry those lanes read with
  /// entry_in() after it, whatever its piece, is protected until leave_lanes(). Returns the
  /// announcing lane's reader slot (in every lane), or reader_section::closed when it has none.
  [[nodiscard]] BAM_HD std::uint32_t enter_lanes(std::uint32_t lanes) const {
    const unsigned leader = warp::lowest_lane(lanes);
    std::uint32_t slot = reader_section::closed;
    if (warp::lane() == leader) slot = epoch_enter(p_);
    slot = static_cast<std::uint32_t>(warp::shfl(lanes, slot, leader));
    // The warp barrier orders the leader's announcement and fence before every lane's loads
    // of entries and resident bits (on the host: its seq_cst store before their seq_cst loads).
    warp::sync(lanes);
    return slot;
  }
  /// Ends enter_lanes(), called by every lane of `lanes` once each is done with what it read.
  BAM_HD void leave_lanes(std::uint32_t lanes, std::uint32_t slot) const {
    warp::sync(lanes);  // every lane's reads (and writes) of frames before the exit's release
    if (slot != reader_section::closed && warp::lane() == warp::lowest_lane(lanes)) {
      epoch_exit(p_, slot);
    }
  }

  /// Opens `s` if it is closed (epochs only). False if this thread has no reader slot.
  [[nodiscard]] BAM_HD bool open(reader_section& s) const {
    if (s.slot == reader_section::closed) s.slot = epoch_enter(p_);
    return s.slot != reader_section::closed;
  }
  BAM_HD void close(reader_section& s) const {
    if (s.slot == reader_section::closed) return;
    epoch_exit(p_, s.slot);
    s = reader_section{};
  }
  /// The entry in `entry_word`, read inside an open section: when it is coalesced, its frame
  /// cannot be reused until the section closes.
  [[nodiscard]] BAM_HD std::uint64_t entry_in(const reader_section&,
                                              std::uint64_t& entry_word) const {
    // epoch_read_order: after the section's announcement (epochs.hpp).
    return atomic_ref<std::uint64_t>(entry_word).load(epoch_read_order);
  }

 private:
  const frame_pool_view& p_;
};

}  // namespace bam::cache::mosaic
