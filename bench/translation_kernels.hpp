#pragma once
/// @file
/// Kernels of `bam bench translation` (the hit path of each translation scheme), portable so
/// the CPU pool and the GPU run the same source. Every scheme reads one data buffer in which
/// base page p is line p and piece f is frame f, so they differ only in translation:
///
///   bam               the existing cache: 4-byte page entry, pin and unpin atomics on a
///                     64-bit line state, a CLOCK reference word (BaM's hit path)
///   lean              one 8-byte entry per base page, read and checked; no atomics
///   two_level_pins    Mosaic: large entry + frame pin (once per warp group) + resident bit
///   two_level_epochs  Mosaic: large entry + resident bit inside an epoch section that each
///                     thread keeps open across its gathers (renewed every
///                     dense_cache_ref::section_renewal of them)
///   two_level_epochs_warp  Mosaic: large entry + resident bit under one epoch announcement
///                     per warp access (dense_cache_ref::access, the path arrays take)
///   large_only        the large entry alone (a frame is fetched whole, so no resident bit)
///   ideal             no translation: the flat buffer
///
/// A gather of G bytes reads G/8 words (one 4-byte word for G = 4) at a random G-aligned
/// offset; the first word is checked against the pattern (word at byte o holds o ^ key).

#include <cstdint>

#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>

namespace bam::bench::translation {

/// lean_l2 is lean with its table kept in the L2 by a persisting access-policy window (GPU
/// only): the "tables pinned on chip" ideal of translation.
enum class scheme : std::uint8_t {
  bam,
  lean,
  two_level_pins,
  two_level_epochs,
  large_only,
  ideal,
  lean_l2,
  two_level_epochs_warp
};
inline constexpr scheme all_schemes[] = {
    scheme::bam,        scheme::lean,  scheme::two_level_pins, scheme::two_level_epochs,
    scheme::large_only, scheme::ideal, scheme::lean_l2,        scheme::two_level_epochs_warp};

inline const char* to_string(scheme s) {
  switch (s) {
    case scheme::bam:
      return "bam";
    case scheme::lean:
      return "lean";
    case scheme::two_level_pins:
      return "two_level_pins";
    case scheme::two_level_epochs:
      return "two_level_epochs";
    case scheme::large_only:
      return "large_only";
    case scheme::ideal:
      return "ideal";
    case scheme::lean_l2:
      return "lean_l2";
    case scheme::two_level_epochs_warp:
      return "two_level_epochs_warp";
  }
  return "unknown";
}

inline constexpr std::uint64_t pattern_key = 0x6a09'e667'f3bc'c909ull;
inline constexpr std::uint64_t lean_valid = 1ull << 63;

BAM_HD BAM_INLINE std::uint64_t pattern_at(std::uint64_t byte) { return byte ^ pattern_key; }

/// A 64-bit counter hash (splitmix64's finalizer) and a multiply-shift onto [0, n).
BAM_HD BAM_INLINE std::uint64_t hash64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/// The high 64 bits of h * n, from 32-bit halves (no 128-bit type in portable code).
BAM_HD BAM_INLINE std::uint64_t pick(std::uint64_t h, std::uint64_t n) {
  const std::uint64_t hl = h & 0xffffffffu, hh = h >> 32, nl = n & 0xffffffffu, nh = n >> 32;
  const std::uint64_t mid = (hl * nl >> 32) + (hh * nl & 0xffffffffu) + (hl * nh & 0xffffffffu);
  return hh * nh + (hh * nl >> 32) + (hl * nh >> 32) + (mid >> 32);
}

/// The data and every scheme's metadata, set up by the fill kernels below.
struct fixture {
  std::uint8_t* data = nullptr;
  std::uint64_t data_bytes = 0;
  std::uint32_t line_shift = 0;
  page_cache_ref bam_cache;     ///< no frames: the base path
  page_cache_ref pins_cache;    ///< frames, pinning_kind::frame_pins
  page_cache_ref epochs_cache;  ///< frames, pinning_kind::epochs
  array_slot base_slot;         ///< page_table, tag_base 0
  array_slot dense_slot;        ///< large_table, tenant 1
  std::uint64_t* lean = nullptr;
  std::uint32_t frame_shift = 0;  ///< log2(frame bytes)
};

/// data[word i] = pattern_at(8 i).
struct fill_data {
  std::uint64_t* words;
  std::uint64_t count;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < count; i += t.count) words[i] = pattern_at(i * 8);
  }
};

/// *word = value (one thread).
struct set_word {
  std::uint64_t* word;
  std::uint64_t value;
  BAM_HD void operator()(thread_index t) const {
    if (t.id == 0) *word = value;
  }
};

/// Base page p in line p, valid, referenced; the lean entry says the same in 8 bytes.
struct fill_base {
  std::uint32_t* page_table;
  std::uint64_t* state;
  std::uint32_t* referenced;
  std::uint64_t* lean;
  std::uint64_t pages;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t p = t.id; p < pages; p += t.count) {
      page_table[p] = cache::page_entry_for_line(static_cast<std::uint32_t>(p));
      state[p] = cache::with_tag(cache::line_bits::valid, p + 1);
      referenced[p] = 1;
      lean[p] = lean_valid | p;
    }
  }
};

/// Piece f coalesced into frame f (tenant 1, generation 1), every slot resident.
struct fill_frames {
  std::uint64_t* large;
  cache::mosaic::frame_pool_view pool;
  BAM_HD void operator()(thread_index t) const {
    using namespace cache::mosaic;
    const frame_geometry& g = pool.geometry;
    for (std::uint64_t f = t.id; f < g.frames; f += t.count) {
      const std::uint64_t e = make_entry(static_cast<std::uint32_t>(f), 1, 1);
      large[f] = e;
      pool.state[f] = frame_opened(0, e);
      pool.owner[f] = (std::uint64_t{1} << owner_tenant_shift) | f;
      pool.referenced[f] = 1;
      pool.resident_count[f] = g.lines_per_frame;
      for (std::uint32_t w = 0; w < g.words_per_frame; ++w) {
        const std::uint32_t left = g.lines_per_frame - w * 64;
        const std::uint64_t word = f * g.words_per_frame + w;
        pool.resident[word] = left >= 64 ? ~0ull : (1ull << left) - 1;
        pool.busy[word] = 0;
        pool.dirty[word] = 0;
      }
    }
  }
};

/// Reads one gather of `bytes` at `p`; returns a checksum and counts a wrong first word.
BAM_HD BAM_INLINE std::uint64_t read_gather(const std::uint8_t* p, std::uint64_t flat,
                                            std::uint32_t bytes, std::uint64_t& bad) {
  if (bytes == 4) {
    const std::uint32_t v = *reinterpret_cast<const std::uint32_t*>(p);
    const std::uint64_t want = pattern_at(flat & ~7ull);
    bad += v != static_cast<std::uint32_t>((flat & 4) ? want >> 32 : want);
    return v;
  }
  const auto* w = reinterpret_cast<const std::uint64_t*>(p);
  std::uint64_t sum = w[0];
  bad += w[0] != pattern_at(flat);
  for (std::uint32_t k = 1; k < bytes / 8; ++k) sum += w[k];
  return sum;
}

/// `gathers` random gathers of `gather_bytes` through scheme S. On the GPU, Blocks = 2 caps the
/// kernel at 32 registers (launch.cuh) for `--occupancy full`; 0 leaves the choice to ptxas.
template <scheme S, unsigned Blocks = 0>
struct gather_kernel {
  static constexpr unsigned min_blocks_per_sm = Blocks;
  fixture f;
  std::uint64_t gathers;
  std::uint32_t gather_bytes;
  std::uint32_t seed;
  std::uint64_t* sink;   // one word per thread
  std::uint64_t* wrong;  // one word

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t units = f.data_bytes / gather_bytes;
    const std::uint64_t line_mask = (std::uint64_t{1} << f.line_shift) - 1u;
    std::uint64_t sum = 0, bad = 0;
    cache::mosaic::reader_section section;  // two_level_epochs only
    for (std::uint64_t g = t.id; g < gathers; g += t.count) {
      const std::uint64_t flat =
          pick(hash64(g ^ (std::uint64_t{seed} << 40)), units) * gather_bytes;
      const std::uint64_t page = flat >> f.line_shift;
      const std::uint64_t within = flat & line_mask;
      if constexpr (S == scheme::ideal) {
        sum += read_gather(f.data + flat, flat, gather_bytes, bad);
      } else if constexpr (S == scheme::lean || S == scheme::lean_l2) {
        // relaxed: a hit-path study; a real lean table would pair it with epochs.
        const std::uint64_t e = atomic_ref<std::uint64_t>(f.lean[page]).load(order::relaxed);
        if (!(e & lean_valid)) {
          ++bad;
          continue;
        }
        const std::uint64_t line = e & ~lean_valid;
        sum += read_gather(f.data + (line << f.line_shift) + within, flat, gather_bytes, bad);
      } else if constexpr (S == scheme::large_only) {
        const std::uint64_t piece = flat >> f.frame_shift;
        // acquire: as a reader of a published entry would.
        const std::uint64_t e =
            atomic_ref<std::uint64_t>(f.dense_slot.large_table[piece]).load(order::acquire);
        const std::uint64_t at = (std::uint64_t{cache::mosaic::entry_frame(e)} << f.frame_shift) +
                                 (flat & ((std::uint64_t{1} << f.frame_shift) - 1u));
        sum += read_gather(f.data + at, flat, gather_bytes, bad);
      } else if constexpr (S == scheme::bam) {
        // BaM's optimized hit path: lanes on one page share the leader's probe and pin.
        const page_cache_ref& c = f.bam_cache;
        const std::uint32_t peers = warp::match_any(warp::active_mask(), page);
        const unsigned leader = warp::lowest_lane(peers);
        std::uint64_t packed = 0;
        if (warp::lane() == leader) {
          packed = c.acquire(f.base_slot, page, warp::popcount(peers), 0).pack();
        }
        const acquire_result r = acquire_result::unpack(warp::shfl(peers, packed, leader));
        if (!r.status.ok()) {
          ++bad;
          continue;
        }
        sum += read_gather(c.line_data(r.line) + within, flat, gather_bytes, bad);
        c.release(r.line);
      } else if constexpr (S == scheme::two_level_epochs) {
        const cache::mosaic::dense_cache_ref dense(f.epochs_cache);
        const io_status s = dense.access(
            f.dense_slot, page, within, gather_bytes, false, section,
            [&](const std::uint8_t* p) { sum += read_gather(p, flat, gather_bytes, bad); });
        if (!s.ok()) ++bad;
      } else if constexpr (S == scheme::two_level_epochs_warp) {
        const cache::mosaic::dense_cache_ref dense(f.epochs_cache);
        const io_status s = dense.access(
            f.dense_slot, page, within, gather_bytes, true, false,
            [&](const std::uint8_t* p) { sum += read_gather(p, flat, gather_bytes, bad); });
        if (!s.ok()) ++bad;
      } else {
        const cache::mosaic::dense_cache_ref dense(f.pins_cache);
        const io_status s = dense.access(
            f.dense_slot, page, within, gather_bytes, true, false,
            [&](const std::uint8_t* p) { sum += read_gather(p, flat, gather_bytes, bad); });
        if (!s.ok()) ++bad;
      }
    }
    if constexpr (S == scheme::two_level_epochs) {
      cache::mosaic::dense_cache_ref(f.epochs_cache).close(section);
    }
    sink[t.id] = sum;
    // relaxed: the host reads the count after the launch has finished.
    if (bad != 0) atomic_ref<std::uint64_t>(*wrong).fetch_add(bad, order::relaxed);
  }
};

}  // namespace bam::bench::translation
