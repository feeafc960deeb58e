#pragma once
/// @file
/// One workload for the compaction agent's tests, written once for CPU and GPU threads: a
/// dense array whose sparsely touched pieces are splintered into several shared frames of its
/// tenant (build_shared_frames), then readers and writers that hit those pieces, with a share of
/// misses elsewhere that make loads, reservations, promotions and more splinters
/// (read_and_write), while an agent compacts beside them; afterwards every element is checked
/// (verify_all). Every element's value is a function of its index (expected_word), so any
/// access and the image after flush can be checked without a record of who wrote what.

#include <cstdint>

#include <bam/array_ref.hpp>
#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>

namespace bam::testing::compaction {

/// The word at element `i` of the image before anyone writes.
BAM_HD inline std::uint64_t image_word(std::uint64_t i) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 27) ^ (i << 9);
}

/// The value every store to element `i` writes (never the image's).
BAM_HD inline std::uint64_t written_word(std::uint64_t i) { return ~image_word(i) ^ 0x5a5au; }

/// A good 64-bit mixer for picking pieces and elements.
BAM_HD inline std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

/// The array's layout in pages and pieces, and how the set-up touches it.
struct shape {
  std::uint64_t words_per_page = 64;    ///< line bytes / 8
  std::uint64_t pages_per_piece = 64;   ///< lines per frame
  std::uint32_t shared_rounds = 3;      ///< set-up rounds: one new shared frame each
  std::uint32_t pieces_per_round = 12;  ///< pieces touched per round
  std::uint64_t pieces = 72;            ///< pieces of the array (more than the set-up touches)

  /// Pieces the set-up touches: [0, touched()).
  [[nodiscard]] BAM_HD std::uint64_t touched() const {
    return std::uint64_t{shared_rounds} * pieces_per_round;
  }
  [[nodiscard]] BAM_HD std::uint64_t words() const {
    return pieces * pages_per_piece * words_per_page;
  }
  /// The one page of piece `p` the set-up touches: hosted slots differ from piece to piece
  /// (1 .. pages_per_piece - 1; slot 0 of a shared frame holds its tags), so pieces fit
  /// together in a shared frame as long as fewer than pages_per_piece are touched.
  [[nodiscard]] BAM_HD std::uint64_t home_page(std::uint64_t p) const {
    return p * pages_per_piece + 1 + p % (pages_per_piece - 1);
  }
  /// What element `i` holds once the set-up has run: the even elements of every touched
  /// piece's home page are written, everything else keeps the image's value.
  [[nodiscard]] BAM_HD std::uint64_t expected_word(std::uint64_t i) const {
    const std::uint64_t page = i / words_per_page;
    const std::uint64_t piece = page / pages_per_piece;
    const bool written = i % 2 == 0 && piece < touched() && page == home_page(piece);
    return written ? written_word(i) : image_word(i);
  }
};

/// A bad access, kept for the report.
struct bad_access {
  std::uint64_t index;
  std::uint64_t expected;
  std::uint64_t got;
  std::uint32_t status;  ///< io_status bits; 0 when the access succeeded with wrong bytes
};

inline constexpr std::uint32_t logged_max = 8;

/// What the launches did: counters every thread adds to, and the first bad accesses.
struct report {
  std::uint64_t reads;
  std::uint64_t writes;
  std::uint64_t wrong;
  std::uint64_t failed;
  std::uint64_t threads_done;
  std::uint64_t shared_built;  ///< shared frames of the tenant after the set-up
  std::uint64_t logged;
  bad_access first[logged_max];

  BAM_HD void note(std::uint64_t index, std::uint64_t expected, std::uint64_t got, io_status s) {
    // relaxed: counts and the claim of a log entry; the entry is read after the launch.
    atomic_ref<std::uint64_t>(s.ok() ? wrong : failed).fetch_add(1u, order::relaxed);
    const std::uint64_t n = atomic_ref<std::uint64_t>(logged).fetch_add(1u, order::relaxed);
    if (n < logged_max) first[n] = bad_access{index, expected, got, s.bits()};
  }
  BAM_HD void add(std::uint64_t& counter, std::uint64_t by) {
    // relaxed: a total, read after the launch.
    if (by != 0) atomic_ref<std::uint64_t>(counter).fetch_add(by, order::relaxed);
  }
};

/// Reads element `i` and checks it against the shape.
BAM_HD inline void check_read(const array_ref<std::uint64_t>& a, const shape& s, report* out,
                              std::uint64_t i) {
  std::uint64_t v = 0;
  const io_status st = a.try_read(i, v);
  if (!st.ok() || v != s.expected_word(i)) out->note(i, s.expected_word(i), v, st);
}

/// Shared frames of `tenant`: OPEN (or, with `held`, HELD) frames whose owner word says so.
BAM_HD inline std::uint32_t count_shared(const cache::mosaic::frame_pool_view& p,
                                         std::uint32_t tenant, bool held) {
  const std::uint64_t want =
      (std::uint64_t{tenant} << cache::mosaic::owner_tenant_shift) | cache::mosaic::shared_piece;
  const std::uint64_t flag =
      held ? cache::mosaic::frame_bits::held : cache::mosaic::frame_bits::open;
  std::uint32_t n = 0;
  for (std::uint32_t f = 0; f < p.geometry.frames; ++f) {
    // acquire (state, owner): the set-up's own stores, or frames it made.
    const std::uint64_t st = atomic_ref<std::uint64_t>(p.state[f]).load(order::acquire);
    if ((st & flag) && atomic_ref<std::uint64_t>(p.owner[f]).load(order::acquire) == want) ++n;
  }
  return n;
}

/// The set-up, on one thread (launch 1 x 1): touches pieces_per_round new pieces per round;
/// frames run out, so sparse pieces splinter into the tenant's shared frame. After each round
/// every shared frame of the tenant is held (as a promoter would hold it), so the next round's
/// first splinter finds none to join and makes a new one; at the end they are all reopened.
/// Nothing else may run on the cache meanwhile.
struct build_shared_frames {
  array_ref<std::uint64_t> a;
  page_cache_ref cache;
  shape s;
  report* out;

  BAM_HD void operator()(thread_index t) const {
    if (t.id != 0) return;
    const cache::mosaic::frame_pool_view& p = cache.frames();
    const std::uint32_t tenant = a.slot().tenant;
    for (std::uint32_t r = 0; r < s.shared_rounds; ++r) {
      for (std::uint64_t k = 0; k < s.pieces_per_round; ++k) {
        touch(std::uint64_t{r} * s.pieces_per_round + k);
      }
      if (r + 1 < s.shared_rounds) set_shared(p, tenant, true);
    }
    set_shared(p, tenant, false);
    out->shared_built = count_shared(p, tenant, false);
  }

  /// Writes the even elements of piece `piece`'s home page, then reads one odd element.
  BAM_HD void touch(std::uint64_t piece) const {
    const std::uint64_t first = s.home_page(piece) * s.words_per_page;
    std::uint64_t stores = 0;
    for (std::uint64_t i = first; i < first + s.words_per_page; i += 2) {
      const io_status st = a.try_store(i, written_word(i));
      ++stores;
      if (!st.ok()) out->note(i, written_word(i), 0, st);
    }
    out->add(out->writes, stores);
    check_read(a, s, out, first + 1);
    out->add(out->reads, 1);
  }

  /// Moves every shared frame of `tenant` from OPEN to HELD (`hold`) or back.
  BAM_HD static void set_shared(const cache::mosaic::frame_pool_view& p, std::uint32_t tenant,
                                bool hold) {
    namespace m = cache::mosaic;
    const std::uint64_t want = (std::uint64_t{tenant} << m::owner_tenant_shift) | m::shared_piece;
    const std::uint64_t from = hold ? m::frame_bits::open : m::frame_bits::held;
    const std::uint64_t to = hold ? m::frame_bits::held : m::frame_bits::open;
    for (std::uint32_t f = 0; f < p.geometry.frames; ++f) {
      atomic_ref<std::uint64_t> state(p.state[f]);
      // acquire: the owner word the splinter stored before it opened the frame.
      std::uint64_t st = state.load(order::acquire);
      if (!(st & from) || atomic_ref<std::uint64_t>(p.owner[f]).load(order::acquire) != want) {
        continue;
      }
      // acq_rel: the set-up is alone on the cache; a failed CAS (none expected) is tried again
      // a bounded number of times.
      for (int tries = 0; tries < 1000; ++tries) {
        const std::uint64_t next = (st & ~(m::frame_bits::open | m::frame_bits::held)) | to;
        if (state.compare_exchange(st, next, order::acq_rel)) break;
      }
    }
  }
};

/// Readers and writers beside the agent, `rounds` accesses each. Roles go by warp (`lanes`
/// threads; 1 on the CPU): every writer_every-th warp writes, the others read. No element is
/// read while another thread may store to it, and none has two writers (the workload itself is
/// free of data races, so ThreadSanitizer reports only the cache's):
/// - writers own the even elements of the home pages, element n (in home-page order) to
///   writer n mod writers; each store rewrites the set-up's value and is read back;
/// - readers read odd elements: of home pages (hits in shared frames, or in the frames of
///   pieces promoted since) and, miss_percent of the time, of the whole array (misses: loads,
///   first touches, promotions, evictions and more splinters).
struct read_and_write {
  array_ref<std::uint64_t> a;
  shape s;
  report* out;
  std::uint32_t lanes;
  std::uint32_t rounds;
  std::uint32_t writer_every;
  std::uint32_t miss_percent;
  std::uint64_t seed;

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t warp = t.id / lanes;
    const bool writer = writer_every != 0 && warp % writer_every == 0;
    const std::uint64_t per_page = s.words_per_page / 2;
    const std::uint64_t owned_total = s.touched() * per_page;  // even home-page elements
    const std::uint64_t warps = (t.count + lanes - 1) / lanes;
    const std::uint64_t writers =
        writer_every == 0 ? 1 : (warps + writer_every - 1) / writer_every * lanes;
    const std::uint64_t me = writer_every == 0 ? 0 : warp / writer_every * lanes + t.id % lanes;
    const std::uint64_t mine = me < owned_total ? (owned_total - me + writers - 1) / writers : 0;
    std::uint64_t reads = 0, writes = 0;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      const std::uint64_t h = mix(seed ^ (t.id << 24) ^ r);
      if (writer) {
        if (mine == 0) continue;  // more writers than elements
        const std::uint64_t n = me + writers * ((h >> 20) % mine);
        const std::uint64_t i = s.home_page(n / per_page) * s.words_per_page + 2 * (n % per_page);
        const io_status st = a.try_store(i, written_word(i));
        ++writes;
        if (!st.ok()) out->note(i, written_word(i), 0, st);
        check_read(a, s, out, i);
      } else if ((h >> 40) % 100 < miss_percent) {
        check_read(a, s, out, ((h >> 8) % s.words()) | 1u);
      } else {
        const std::uint64_t page = s.home_page(h % s.touched());
        check_read(a, s, out, page * s.words_per_page + (((h >> 20) % s.words_per_page) | 1u));
      }
      ++reads;
    }
    out->add(out->reads, reads);
    out->add(out->writes, writes);
    out->add(out->threads_done, 1);
  }
};

/// Every element, grid-stride, once the agent has stopped.
struct verify_all {
  array_ref<std::uint64_t> a;
  shape s;
  report* out;

  BAM_HD void operator()(thread_index t) const {
    std::uint64_t reads = 0;
    for (std::uint64_t i = t.id; i < s.words(); i += t.count) {
      check_read(a, s, out, i);
      ++reads;
    }
    out->add(out->reads, reads);
    out->add(out->threads_done, 1);
  }
};

}  // namespace bam::testing::compaction
