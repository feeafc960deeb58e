// Dense arrays on a two_level cache under concurrency: readers, writers, frame reservations
// (the data is larger than the frame pool), page drops and frame drops, splinters of sparse
// pieces into shared frames and their promotions run together and never return wrong bytes or
// another tenant's data, quotas hold, and the file ends up holding exactly what was written.
// Both pinning kinds; plain threads (warp width 1) and software warps (lanes of a warp share
// one protection per piece).

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <bam/cache/mosaic/compactor.hpp>

#include "cache_stress_support.hpp"
#include "mosaic_rig.hpp"
#include "mosaic_stress_cases.hpp"
#include "software_warp.hpp"

namespace {

using namespace bam;
using namespace bam::stress;
using bam::cache::mosaic::dense_cache_ref;
using bam::testing::run_software_warps;

/// The cache's victim timeout: 120 s, or BAM_STRESS_VICTIM_MS milliseconds from the
/// environment (a short one makes a wait that can only end by its deadline show as a failure).
std::uint64_t victim_timeout() {
  if (const char* ms = std::getenv("BAM_STRESS_VICTIM_MS")) {
    return std::strtoull(ms, nullptr, 10) * 1'000'000ull;
  }
  return 120'000'000'000ull;
}

/// 256 lines of 512 B, half of them in 16 frames of 8 lines (4 KiB pieces).
cache_config small_two_level(const stress_case& c) {
  cache_config cfg = bam::testing::mosaic::two_level(c.pinning);
  cfg.mode = c.mode;
  cfg.victim_timeout_ns = victim_timeout();
  cfg.check_frame_owners = true;  // every hit checks that its frame serves the reader's piece
  return cfg;
}

/// What a temp_file of `words` holds before anyone writes: the pattern.
std::vector<std::uint64_t> file_pattern(std::uint64_t words) {
  std::vector<std::uint64_t> v(words);
  for (std::uint64_t i = 0; i < words; ++i) v[i] = pattern_word(i);
  return v;
}

/// A file of `words` holding the pattern, a rig with cache `cfg` over it, and what the file
/// is expected to hold (the pattern until a test writes).
struct file_rig {
  file_rig(std::uint64_t words, const cache_config& cfg)
      : file(words),
        r(backing_store::from_file(file.path(), true), fast_storage(), cfg, 8),
        expected(file_pattern(words)) {}
  temp_file file;
  rig r;
  std::vector<std::uint64_t> expected;
};

/// Drops random pages and frames of `a` until `stop`; counts what it dropped.
void evict_until(const page_cache& cache, const array_slot& a, std::uint64_t pages,
                 const std::atomic<bool>& stop, unsigned seed,
                 std::atomic<std::uint64_t>& pages_dropped,
                 std::atomic<std::uint64_t>& frames_dropped) {
  const page_cache_ref ref = cache.ref();
  const dense_cache_ref dense(ref);
  rng g(seed);
  while (!stop.load(std::memory_order_relaxed)) {
    if (g.below(4) == 0) {
      if (dense.drop_frame(static_cast<std::uint32_t>(g.below(dense.pool().geometry.frames)))) {
        frames_dropped.fetch_add(1, std::memory_order_relaxed);
      }
    } else if (dense.drop_page(a, g.below(pages))) {
      pages_dropped.fetch_add(1, std::memory_order_relaxed);
    }
    std::this_thread::yield();
  }
}

/// Nothing protects a frame any more: no frame pins, no announced epoch readers.
void expect_no_protection_left(const rig& r) {
  EXPECT_EQ(bam::testing::mosaic::frame_pins_left(r.cache().ref().frames()), 0u);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.cache().ref().frames()), 0u);
}

/// The array reads back `expected` with nothing left protecting a frame, then writes back.
template <class Array>
void expect_at_rest(Array& a, const rig& r, const std::vector<std::uint64_t>& expected) {
  EXPECT_EQ(a.read(0, expected.size()), expected);
  expect_no_protection_left(r);
  a.flush();
  EXPECT_NO_THROW(a.check());
}

/// Once the arrays have written back, the file holds `expected` word for word.
void expect_file_holds(const temp_file& file, const std::vector<std::uint64_t>& expected,
                       std::uint64_t pages_dropped, std::uint64_t frames_dropped) {
  const std::vector<std::uint64_t> got = file.words();
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < expected.size(); ++i) differ += got[i] != expected[i];
  EXPECT_EQ(differ, 0u) << pages_dropped << " pages and " << frames_dropped << " frames dropped";
}

class MosaicStress : public ::testing::TestWithParam<stress_case> {};

/// Writers, readers and evictors on one dense array under `cfg`: no wrong bytes, and the file
/// holds every write at the end. Returns the array's statistics.
cache_stats expect_readers_writers_and_evictions_agree(const cache_config& cfg) {
  const std::uint64_t words = 32 * 512;  // 32 pieces of 4 KiB: twice the frame pool
  file_rig f(words, cfg);
  cache_stats seen;
  rig& r = f.r;
  std::vector<std::uint64_t>& expected = f.expected;
  const auto writers = static_cast<unsigned>(scaled(32, 12));
  const auto readers = static_cast<unsigned>(scaled(32, 12));
  const unsigned evictors = 2;
  const std::uint64_t reads = scaled(4000, 400);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, pages_dropped{0}, frames_dropped{0};
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "dense", .dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    EXPECT_NE(ref.slot().large_table, nullptr);
    if (ref.slot().large_table == nullptr) return seen;
    std::atomic<bool> stop{false};
    std::vector<std::thread> evicting;
    for (unsigned e = 0; e < evictors; ++e) {
      evicting.emplace_back(evict_until, std::cref(r.cache()), std::cref(ref.slot()),
                            ref.slot().pages, std::cref(stop), 100 + e, std::ref(pages_dropped),
                            std::ref(frames_dropped));
    }
    // Writer t owns the even elements i with (i / 2) % writers == t and reads each back at
    // once; readers read odd elements, which nobody writes. Both share every page.
    run_threads(writers + readers, [&](unsigned t) {
      if (t < writers) {
        for (std::uint64_t i = 2 * t; i < words; i += 2 * writers) {
          if (!ref.try_store(i, written_word(i)).ok()) failed.fetch_add(1);
          std::uint64_t back = 0;
          if (!ref.try_read(i, back).ok()) {
            failed.fetch_add(1);
          } else if (back != written_word(i)) {
            wrong.fetch_add(1);
          }
        }
        return;
      }
      rng g(t);
      for (std::uint64_t k = 0; k < reads; ++k) {
        const std::uint64_t i = g.below(words / 2) * 2 + 1;
        std::uint64_t v = 0;
        if (!ref.try_read(i, v).ok()) {
          failed.fetch_add(1);
        } else if (v != pattern_word(i)) {
          wrong.fetch_add(1);
        }
      }
    });
    stop = true;
    for (auto& t : evicting) t.join();
    for (std::uint64_t i = 0; i < words; i += 2) expected[i] = written_word(i);
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    seen = a.stats();
    EXPECT_GT(seen.evictions, 0u) << "reservations should have evicted frames";
    expect_at_rest(a, r, expected);
  }
  expect_file_holds(f.file, expected, pages_dropped.load(), frames_dropped.load());
  return seen;
}

TEST_P(MosaicStress, ReadersWritersAndEvictionsNeverSeeWrongBytes) {
  EXPECT_EQ(expect_readers_writers_and_evictions_agree(small_two_level(GetParam())).fills, 0u);
}

// The same with fills: a piece's second demand load (25% of 8 slots) loads the other six pages
// in runs, while writers store into them, readers wait for them and evictors drop them.
TEST_P(MosaicStress, ReadersWritersAndEvictionsAmongFillsNeverSeeWrongBytes) {
  cache_config cfg = small_two_level(GetParam());
  cfg.fill_percent = 25;
  EXPECT_GT(expect_readers_writers_and_evictions_agree(cfg).fills, 0u);
}

// Base first: pieces start on base pages of the base pool and are promoted past half a frame
// (4 of 8 pages) while writers store into their base lines, readers pin them, the base CLOCK
// evicts them and evictors drop the frames of promoted pieces (which puts them back on base
// pages).
TEST_P(MosaicStress, BaseFirstPromotionsAmongReadersWritersAndEvictionsNeverSeeWrongBytes) {
  cache_config cfg = small_two_level(GetParam());
  cfg.base_first = true;
  const cache_stats s = expect_readers_writers_and_evictions_agree(cfg);
  EXPECT_GT(s.promotions, 0u);
  EXPECT_EQ(s.splinters, 0u);
}

// The same with fills: a promoted piece loads its missing pages at once.
TEST_P(MosaicStress, BaseFirstPromotionsAmongFillsNeverSeeWrongBytes) {
  cache_config cfg = small_two_level(GetParam());
  cfg.base_first = true;
  cfg.fill_percent = 25;
  const cache_stats s = expect_readers_writers_and_evictions_agree(cfg);
  EXPECT_GT(s.promotions, 0u);
  EXPECT_GT(s.fills, 0u);
}

// Threads that keep one epoch section open across all their accesses (renewed every
// section_renewal of them, closed on every miss): frame evictions still finish among them, and
// stores made inside a section reach the file. Under frame pins the section path is the
// per-access one.
TEST_P(MosaicStress, SectionReadersAndWritersAmongEvictionsNeverSeeWrongBytes) {
  file_rig f(32 * 512, small_two_level(GetParam()));  // 32 pieces of 4 KiB: twice the pool
  const std::uint64_t words = f.expected.size();
  const auto writers = static_cast<unsigned>(scaled(16, 6));
  const auto readers = static_cast<unsigned>(scaled(32, 12));
  const std::uint64_t reads = scaled(4000, 400);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, pages_dropped{0}, frames_dropped{0};
  {
    array<std::uint64_t> a(f.r.cache(), f.r.set(), {.name = "dense", .dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    const array_slot& slot = ref.slot();
    const page_cache_ref cache = f.r.cache().ref();
    const dense_cache_ref dense(cache);
    const std::uint32_t shift = cache.line_shift();
    // One 8-byte element through the section path; `store` writes `value` first.
    const auto element = [&](std::uint64_t i, cache::mosaic::reader_section& section, bool store,
                             std::uint64_t value, std::uint64_t& out) {
      const std::uint64_t byte = i * 8;
      return dense.access(slot, byte >> shift, byte & ((std::uint64_t{1} << shift) - 1), 8, store,
                          section, [&](std::uint8_t* p) {
                            atomic_ref<std::uint64_t> w(*reinterpret_cast<std::uint64_t*>(p));
                            // relaxed: the section protects the frame; the element is ours.
                            if (store) w.store(value, order::relaxed);
                            out = w.load(order::relaxed);
                          });
    };
    std::atomic<bool> stop{false};
    std::thread evicting(evict_until, std::cref(f.r.cache()), std::cref(slot), slot.pages,
                         std::cref(stop), 300, std::ref(pages_dropped), std::ref(frames_dropped));
    run_threads(writers + readers, [&](unsigned t) {
      cache::mosaic::reader_section section;
      std::uint64_t v = 0;
      if (t < writers) {
        for (std::uint64_t i = 2 * t; i < words; i += 2 * writers) {
          if (!element(i, section, true, written_word(i), v).ok()) failed.fetch_add(1);
          if (!element(i, section, false, 0, v).ok()) {
            failed.fetch_add(1);
          } else if (v != written_word(i)) {
            wrong.fetch_add(1);
          }
        }
      } else {
        rng g(t);
        for (std::uint64_t k = 0; k < reads; ++k) {
          const std::uint64_t i = g.below(words / 2) * 2 + 1;
          if (!element(i, section, false, 0, v).ok()) {
            failed.fetch_add(1);
          } else if (v != pattern_word(i)) {
            wrong.fetch_add(1);
          }
        }
      }
      dense.close(section);
    });
    stop = true;
    evicting.join();
    for (std::uint64_t i = 0; i < words; i += 2) f.expected[i] = written_word(i);
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_GT(a.stats().evictions, 0u) << "reservations should have evicted frames";
    expect_at_rest(a, f.r, f.expected);
  }
  expect_file_holds(f.file, f.expected, pages_dropped.load(), frames_dropped.load());
}

/// Software warps reading runs of a dense array among page and frame drops (base_first: its
/// pieces start on base pages and are promoted): right bytes, lanes coalesce, nothing left held.
void expect_software_warps_share(const stress_case& c, bool base_first) {
  const std::uint64_t words = 32 * 512;
  cache_config cfg = small_two_level(c);
  cfg.base_first = base_first;
  rig r(pattern_image(words), fast_storage(), cfg, 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  constexpr unsigned warps = 3, width = 8;
  const std::uint64_t rounds = scaled(600, 80);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, pages_dropped{0}, frames_dropped{0};
  std::atomic<bool> stop{false};
  std::thread evictor(evict_until, std::cref(r.cache()), std::cref(ref.slot()), ref.slot().pages,
                      std::cref(stop), 7u, std::ref(pages_dropped), std::ref(frames_dropped));
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g(warp + 1);  // the same sequence in every lane of a warp
    for (std::uint64_t n = 0; n < rounds; ++n) {
      // A run of 8 elements per lane from a random start: lanes share a piece (and often a
      // page); on odd rounds half the lanes read elsewhere.
      const std::uint64_t start = g.below(words - 8 * width);
      const std::uint64_t other = g.below(words - 8 * width);
      const std::uint64_t i = (n % 2 == 1 && lane % 2 == 1 ? other : start) + 8 * lane;
      std::uint64_t v = 0;
      if (!ref.try_read(i, v).ok()) {
        failed.fetch_add(1);
      } else if (v != pattern_word(i)) {
        wrong.fetch_add(1);
      }
    }
  });
  stop = true;
  evictor.join();
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, rounds * warps * width);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced);
  if (c.mode == cache_mode::optimized) {
    EXPECT_GT(s.coalesced, 0u) << "lanes on one piece should ride on their leader's protection";
  }
  if (base_first) {
    EXPECT_GT(s.promotions, 0u);
  }
  EXPECT_EQ(bam::testing::mosaic::frame_pins_left(r.cache().ref().frames()), 0u);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.cache().ref().frames()), 0u);
}

TEST_P(MosaicStress, SoftwareWarpsShareOneProtectionPerPieceWhileFramesMove) {
  expect_software_warps_share(GetParam(), false);
}

TEST_P(MosaicStress, SoftwareWarpsOnBaseFirstPiecesAmongPromotionsAndDrops) {
  expect_software_warps_share(GetParam(), true);
}

// Cursors on a dense array keep a pin of their line's frame (frame pins, optimized mode) while
// their lane stays on the line, and drop every pin of the warp before a lane takes a miss:
// among reservations (the data is twice the frame pool), page drops and frame drops they read
// the right bytes, most accesses reuse a pin, and no pin is left. Elsewhere cursors access one
// element at a time.
TEST_P(MosaicStress, SoftwareWarpCursorsWalkLinesAmongEvictions) {
  const stress_case c = GetParam();
  const std::uint64_t words = 32 * 512;
  rig r(pattern_image(words), fast_storage(), small_two_level(c), 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  constexpr unsigned warps = 3, width = 8;
  const std::uint64_t walks = scaled(200, 25);
  const std::uint64_t walk = 24;  // elements per walk: spans two or three 64-element lines
  std::atomic<std::uint64_t> pages_dropped{0}, frames_dropped{0};
  std::atomic<bool> stop{false};
  std::thread evictor(evict_until, std::cref(r.cache()), std::cref(ref.slot()), ref.slot().pages,
                      std::cref(stop), 11u, std::ref(pages_dropped), std::ref(frames_dropped));
  read_tally tally;
  walk_with_cursors(ref, words, warps, width, walks, walk, tally);
  stop = true;
  evictor.join();
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first at " << tally.first_wrong_index.load();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, walks * walk * warps * width);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused);
  if (c.pinning == pinning_kind::frame_pins && c.mode == cache_mode::optimized) {
    // A miss anywhere in the warp drops every lane's pin, and here misses are frequent.
    EXPECT_GT(s.reused, 0u) << "accesses should reuse the cursor's frame pin";
  } else {
    EXPECT_EQ(s.reused, 0u);
  }
  EXPECT_GT(s.evictions, 0u) << "reservations should have evicted frames";
  expect_no_protection_left(r);
}

// The same walks over data the frame pool holds (16 pieces, 16 frames): once the pages are
// in, each lane's walk costs a pin per line, and most accesses reuse one.
TEST_P(MosaicStress, SoftwareWarpCursorsReuseTheirFramePinWhenTheDataFits) {
  const stress_case c = GetParam();
  const std::uint64_t words = 16 * 512;
  rig r(pattern_image(words), fast_storage(), small_two_level(c), 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  constexpr unsigned warps = 3, width = 8;
  const std::uint64_t walks = scaled(200, 25);
  const std::uint64_t walk = 24;
  read_tally tally;
  walk_with_cursors(ref, words, warps, width, walks, walk, tally);
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first at " << tally.first_wrong_index.load();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, walks * walk * warps * width);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced + s.reused);
  EXPECT_EQ(s.evictions, 0u);
  if (c.pinning == pinning_kind::frame_pins && c.mode == cache_mode::optimized) {
    EXPECT_GT(s.reused, s.accesses / 2) << "most accesses should reuse the cursor's frame pin";
  } else {
    EXPECT_EQ(s.reused, 0u);
  }
  expect_no_protection_left(r);
}

// Lanes that store through cursors, each walking its own chunk in step with its warp, while
// frames are reserved, evicted and dropped: every store reaches the file.
TEST_P(MosaicStress, SoftwareWarpCursorStoresAmongEvictionsReachTheFile) {
  const stress_case c = GetParam();
  constexpr unsigned warps = 2, width = 8;
  const std::uint64_t words = 32 * 512;
  const std::uint64_t chunk = words / (warps * width);  // elements per lane
  file_rig f(words, small_two_level(c));
  std::atomic<std::uint64_t> pages_dropped{0}, frames_dropped{0};
  {
    array<std::uint64_t> a(f.r.cache(), f.r.set(), {.name = "dense", .dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    std::atomic<bool> stop{false};
    std::thread evictor(evict_until, std::cref(f.r.cache()), std::cref(ref.slot()),
                        ref.slot().pages, std::cref(stop), 13u, std::ref(pages_dropped),
                        std::ref(frames_dropped));
    run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
      auto cursor = ref.reader();
      const std::uint64_t first = (std::uint64_t{warp} * width + lane) * chunk;
      for (std::uint64_t i = first; i < first + chunk; ++i) cursor.store(i, written_word(i));
    });
    stop = true;
    evictor.join();
    for (std::uint64_t i = 0; i < words; ++i) f.expected[i] = written_word(i);
    expect_at_rest(a, f.r, f.expected);
  }
  expect_file_holds(f.file, f.expected, pages_dropped.load(), frames_dropped.load());
}

// A cold scan, each warp over its own lines and its lanes on one line per access: of the lanes
// that miss a page, one loads it and the others read it after, so a line costs one miss (not
// one per lane, as when every lane took the miss path alone).
TEST_P(MosaicStress, SoftwareWarpsMissingOnePageLetOneLaneLoadIt) {
  const stress_case c = GetParam();
  const std::uint64_t words = 16 * 512;  // 16 pieces of 4 KiB: every one has a frame
  const std::uint64_t lines = words * 8 / 512;
  rig r(pattern_image(words), fast_storage(), small_two_level(c), 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  constexpr unsigned warps = 4, width = 8;
  read_tally tally;
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    const std::uint64_t chunk = words / warps;  // whole lines
    for (std::uint64_t i = warp * chunk + lane; i < (warp + 1) * chunk; i += width) {
      tally.read_and_check(ref, i, pattern_word(i));
    }
  });
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first at " << tally.first_wrong_index.load();
  const cache_stats s = a.stats();
  EXPECT_EQ(s.accesses, words);
  EXPECT_EQ(tally.reads.load(), words);
  EXPECT_EQ(s.accesses, s.probes() + s.coalesced);
  EXPECT_EQ(s.loads, lines);
  EXPECT_EQ(s.evictions, 0u);
  if (c.mode == cache_mode::optimized) {
    EXPECT_EQ(s.misses, lines) << "one lane per line should miss; the rest read after it";
  }
  EXPECT_EQ(bam::testing::mosaic::frame_pins_left(r.cache().ref().frames()), 0u);
  EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(r.cache().ref().frames()), 0u);
}

/// A writable dense array per tenant over its own piece range of one file: writers store the
/// even elements and read them back, readers check the odd ones against the file's pattern
/// (which names every word's global index, so another tenant's data is always wrong).
TEST_P(MosaicStress, TenantsWithQuotasNeverSeeEachOthersDataAndKeepTheirQuotas) {
  const stress_case c = GetParam();
  constexpr unsigned tenants = 3;
  constexpr std::uint64_t pieces = 16, words_per_piece = 512;
  constexpr std::uint64_t words = pieces * words_per_piece;  // per tenant
  constexpr std::uint32_t quota[tenants] = {4, 6, 0};
  temp_file file(tenants * words);
  rig r(backing_store::from_file(file.path(), true), fast_storage(), small_two_level(c), 8);
  std::vector<std::uint64_t> expected = file_pattern(tenants * words);
  const auto writers = static_cast<unsigned>(scaled(8, 3));
  const auto readers = static_cast<unsigned>(scaled(8, 3));
  const std::uint64_t reads = scaled(3000, 300);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, over_quota{0}, pages_dropped{0},
      frames_dropped{0};
  {
    std::vector<array<std::uint64_t>> a;
    for (unsigned t = 0; t < tenants; ++t) {
      a.emplace_back(r.cache(), r.set(),
                     array_options{.offset_bytes = t * words * 8,
                                   .count = words,
                                   .name = "tenant" + std::to_string(t),
                                   .dense = true,
                                   .frame_quota = quota[t]});
    }
    std::vector<array_ref<std::uint64_t>> refs;
    for (auto& x : a) refs.push_back(x.ref());
    std::atomic<bool> stop{false};
    std::vector<std::thread> background;
    for (unsigned t = 0; t < tenants; ++t) {
      background.emplace_back(evict_until, std::cref(r.cache()), std::cref(refs[t].slot()),
                              refs[t].slot().pages, std::cref(stop), 300 + t,
                              std::ref(pages_dropped), std::ref(frames_dropped));
    }
    background.emplace_back([&] {  // the quota counters never pass their quotas
      while (!stop.load(std::memory_order_relaxed)) {
        for (unsigned t = 0; t < tenants; ++t) {
          if (quota[t] == 0) continue;
          // relaxed: a sample of a count.
          const std::uint32_t held =
              atomic_ref<std::uint32_t>(*refs[t].slot().frames_held).load(order::relaxed);
          if (held > quota[t]) over_quota.fetch_add(1);
        }
        std::this_thread::yield();
      }
    });
    run_threads(tenants * (writers + readers), [&](unsigned k) {
      const unsigned t = k % tenants, w = k / tenants;
      const array_ref<std::uint64_t>& ref = refs[t];
      const std::uint64_t base = t * words;
      if (w < writers) {
        for (std::uint64_t i = 2 * w; i < words; i += 2 * writers) {
          if (!ref.try_store(i, written_word(base + i)).ok()) failed.fetch_add(1);
          std::uint64_t back = 0;
          if (!ref.try_read(i, back).ok()) {
            failed.fetch_add(1);
          } else if (back != written_word(base + i)) {
            wrong.fetch_add(1);
          }
        }
        return;
      }
      rng g(k + 1);
      for (std::uint64_t n = 0; n < reads; ++n) {
        const std::uint64_t i = g.below(words / 2) * 2 + 1;
        std::uint64_t v = 0;
        if (!ref.try_read(i, v).ok()) {
          failed.fetch_add(1);
        } else if (v != pattern_word(base + i)) {
          wrong.fetch_add(1);
        }
      }
    });
    stop = true;
    for (auto& t : background) t.join();
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(over_quota.load(), 0u);
    for (unsigned t = 0; t < tenants; ++t) {
      for (std::uint64_t i = 0; i < words; i += 2)
        expected[t * words + i] = written_word(t * words + i);
      const tenant_stats s = a[t].frame_stats();
      if (quota[t] != 0) {
        EXPECT_LE(s.frames_held(), quota[t]) << "tenant " << t;
      }
      EXPECT_EQ(s.frames_held(), *refs[t].slot().frames_held) << "tenant " << t;
      EXPECT_GT(s.counters.coalesces, 0u);
      const std::vector<std::uint64_t> back = a[t].read(0, words);
      const std::vector<std::uint64_t> want(
          expected.begin() + static_cast<std::ptrdiff_t>(t * words),
          expected.begin() + static_cast<std::ptrdiff_t>((t + 1) * words));
      EXPECT_EQ(back, want) << "tenant " << t;
      a[t].flush();
      EXPECT_NO_THROW(a[t].check());
    }
    expect_no_protection_left(r);
  }
  expect_file_holds(file, expected, pages_dropped.load(), frames_dropped.load());
}

/// Sparse writers and readers (a few pages of a piece while it is cached: its frame is taken
/// while nearly empty, so it splinters) beside dense scanners (a whole piece: splintered pieces
/// are promoted) and frame and page drops, on frames of 64 lines.
TEST_P(MosaicStress, SplintersAndPromotionsAmongReadersWritersAndDropsNeverSeeWrongBytes) {
  const stress_case c = GetParam();
  constexpr std::uint64_t words_per_page = 64, pages_per_piece = 64, pieces = 32;
  constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;
  constexpr std::uint64_t words = pieces * words_per_piece;
  temp_file file(words);
  cache_config cfg = bam::testing::mosaic::two_level(c.pinning, 512, 1024, pages_per_piece);
  cfg.mode = c.mode;
  cfg.victim_timeout_ns = victim_timeout();
  cfg.check_frame_owners = true;
  rig r(backing_store::from_file(file.path(), true), fast_storage(), cfg, 8);
  std::vector<std::uint64_t> expected = file_pattern(words);
  const auto writers = static_cast<unsigned>(scaled(6, 2));
  const auto readers = static_cast<unsigned>(scaled(6, 2));
  const auto scanners = static_cast<unsigned>(scaled(2, 1));
  const std::uint64_t ops = scaled(3000, 300);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, pages_dropped{0}, frames_dropped{0};
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "adaptive", .dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    std::atomic<bool> stop{false};
    std::thread evictor(evict_until, std::cref(r.cache()), std::cref(ref.slot()), ref.slot().pages,
                        std::cref(stop), 11u, std::ref(pages_dropped), std::ref(frames_dropped));
    auto check = [&](std::uint64_t i, std::uint64_t want) {
      std::uint64_t v = 0;
      if (!ref.try_read(i, v).ok()) {
        failed.fetch_add(1);
      } else if (v != want) {
        wrong.fetch_add(1);
      }
    };
    // Writer t owns the even elements i with (i / 2) % writers == t; odd elements keep the
    // file's pattern. Every thread picks a random piece and touches a few of its pages.
    run_threads(writers + readers + scanners, [&](unsigned t) {
      rng g(t + 50);
      if (t >= writers + readers) {
        for (std::uint64_t n = 0; n < ops / pages_per_piece + 1; ++n) {
          const std::uint64_t first = g.below(pieces) * words_per_piece;
          for (std::uint64_t page = 0; page < pages_per_piece; ++page) {
            const std::uint64_t i = first + page * words_per_page + 2 * g.below(32) + 1;
            check(i, pattern_word(i));
          }
        }
        return;
      }
      for (std::uint64_t n = 0; n < ops; ++n) {
        const std::uint64_t piece = g.below(pieces);
        const std::uint64_t page = g.below(4) == 0 ? g.below(pages_per_piece) : g.below(3);
        const std::uint64_t at = piece * words_per_piece + page * words_per_page;
        if (t < writers) {
          std::uint64_t i = at + 2 * g.below(words_per_page / 2);
          i += 2 * ((t + writers - (i / 2) % writers) % writers);
          if (i >= words) continue;
          if (!ref.try_store(i, written_word(i)).ok()) failed.fetch_add(1);
          expected[i] = written_word(i);  // element i has one writer
          check(i, written_word(i));
        } else {
          const std::uint64_t i = at + 2 * g.below(words_per_page / 2) + 1;
          check(i, pattern_word(i));
        }
      }
    });
    stop = true;
    evictor.join();
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    const cache_stats s = a.stats();
    EXPECT_GT(s.splinters, 0u) << "sparse pieces should have been splintered";
    EXPECT_GT(s.coalesces, 0u);
    expect_at_rest(a, r, expected);
  }
  expect_file_holds(file, expected, pages_dropped.load(), frames_dropped.load());
}

/// Two tenants, each with sparse writers and readers (pieces splinter), a dense scanner (pieces
/// are promoted) and page and frame drops, while the background agent compacts their shared
/// frames whenever they have two: nobody sees wrong bytes or the other tenant's data, and the
/// file ends up holding what was written.
TEST_P(MosaicStress, CompactionAmongSplintersPromotionsWritersAndDropsNeverSeesWrongBytes) {
  const stress_case c = GetParam();
  constexpr unsigned tenants = 2;
  constexpr std::uint64_t words_per_page = 64, pages_per_piece = 64, pieces = 16;
  constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;
  constexpr std::uint64_t words = pieces * words_per_piece;  // per tenant
  temp_file file(tenants * words);
  cache_config cfg = bam::testing::mosaic::two_level(c.pinning, 512, 1024, pages_per_piece);
  cfg.mode = c.mode;
  cfg.victim_timeout_ns = victim_timeout();
  cfg.check_frame_owners = true;
  rig r(backing_store::from_file(file.path(), true), fast_storage(), cfg, 8);
  std::vector<std::uint64_t> expected = file_pattern(tenants * words);
  const auto writers = static_cast<unsigned>(scaled(4, 2));
  const auto readers = static_cast<unsigned>(scaled(4, 1));
  const std::uint64_t ops = scaled(3000, 300);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, pages_dropped{0}, frames_dropped{0};
  std::uint64_t moved = 0;
  {
    std::vector<array<std::uint64_t>> a;
    for (unsigned t = 0; t < tenants; ++t) {
      a.emplace_back(r.cache(), r.set(),
                     array_options{.offset_bytes = t * words * 8,
                                   .count = words,
                                   .name = "tenant" + std::to_string(t),
                                   .dense = true});
    }
    std::vector<array_ref<std::uint64_t>> refs;
    for (auto& x : a) refs.push_back(x.ref());
    const std::uint32_t frames = r.cache().ref().frames().geometry.frames;
    cache::mosaic::compactor agent(r.cache().ref(), {.low_free_frames = frames});
    std::atomic<bool> stop{false};
    std::vector<std::thread> evicting;
    for (unsigned t = 0; t < tenants; ++t) {
      evicting.emplace_back(evict_until, std::cref(r.cache()), std::cref(refs[t].slot()),
                            refs[t].slot().pages, std::cref(stop), 500 + t, std::ref(pages_dropped),
                            std::ref(frames_dropped));
    }
    const unsigned per_tenant = writers + readers + 1;
    run_threads(tenants * per_tenant, [&](unsigned k) {
      const unsigned t = k % tenants, w = k / tenants;
      const array_ref<std::uint64_t>& ref = refs[t];
      const std::uint64_t base = t * words;
      auto check = [&](std::uint64_t i, std::uint64_t want) {
        std::uint64_t v = 0;
        if (!ref.try_read(i, v).ok()) {
          failed.fetch_add(1);
        } else if (v != want) {
          wrong.fetch_add(1);
        }
      };
      rng g(k + 70);
      if (w == per_tenant - 1) {  // the scanner: whole pieces, so splintered ones are promoted
        for (std::uint64_t n = 0; n < ops / pages_per_piece + 1; ++n) {
          const std::uint64_t first = g.below(pieces) * words_per_piece;
          for (std::uint64_t page = 0; page < pages_per_piece; ++page) {
            const std::uint64_t i = first + page * words_per_page + 2 * g.below(32) + 1;
            check(i, pattern_word(base + i));
          }
        }
        return;
      }
      // Writer w owns the even elements i with (i / 2) % writers == w; a few pages per piece.
      for (std::uint64_t n = 0; n < ops; ++n) {
        const std::uint64_t at = g.below(pieces) * words_per_piece + g.below(6) * words_per_page;
        if (w < writers) {
          std::uint64_t i = at + 2 * g.below(words_per_page / 2);
          i += 2 * ((w + writers - (i / 2) % writers) % writers);
          if (i >= words) continue;
          if (!ref.try_store(i, written_word(base + i)).ok()) failed.fetch_add(1);
          expected[base + i] = written_word(base + i);  // element i has one writer
          check(i, written_word(base + i));
        } else {
          const std::uint64_t i = at + 2 * g.below(words_per_page / 2) + 1;
          check(i, pattern_word(base + i));
        }
      }
    });
    stop = true;
    for (auto& t : evicting) t.join();
    agent.stop();
    moved = agent.pieces_moved();
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    for (unsigned t = 0; t < tenants; ++t) {
      EXPECT_GT(a[t].stats().splinters, 0u) << "tenant " << t;
      EXPECT_EQ(a[t].frame_stats().frames_held(), *refs[t].slot().frames_held) << "tenant " << t;
      const std::vector<std::uint64_t> want(
          expected.begin() + static_cast<std::ptrdiff_t>(t * words),
          expected.begin() + static_cast<std::ptrdiff_t>((t + 1) * words));
      EXPECT_EQ(a[t].read(0, words), want) << "tenant " << t;
      a[t].flush();
      EXPECT_NO_THROW(a[t].check());
    }
    expect_no_protection_left(r);
  }
  // How much compaction this run saw (it depends on the interleaving; not asserted).
  ::testing::Test::RecordProperty("pieces_moved", std::to_string(moved));
  expect_file_holds(file, expected, pages_dropped.load(), frames_dropped.load());
}

INSTANTIATE_TEST_SUITE_P(PinningsAndModes, MosaicStress, pinnings_and_modes(), case_name);

}  // namespace
