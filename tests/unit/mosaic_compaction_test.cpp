// Contiguity-aware compaction (CAC) on dense arrays: pieces splintered into two shared frames of
// one tenant move into one of them, the other returns to the pool, and nothing is lost: every
// page reads its bytes, dirty pages keep their data and reach storage. Both pinning kinds.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/cache.hpp>
#include <bam/cache/mosaic/compactor.hpp>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::adaptive;
using bam::testing::mosaic::adaptive_geometry;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::word_at;
using bam::testing::mosaic::written_at;

constexpr std::uint64_t words_per_page = adaptive_geometry::words_per_page;
constexpr std::uint64_t pages_per_piece = adaptive_geometry::pages_per_piece;
constexpr std::uint64_t words_per_piece = adaptive_geometry::words_per_piece;
constexpr std::uint64_t pieces = 24;
constexpr std::uint64_t words = pieces * words_per_piece;

/// The one page each piece touches: distinct hosted slots, so that any two pieces fit in one
/// shared frame.
std::uint64_t page_of(std::uint64_t piece) { return piece * pages_per_piece + 1 + piece; }
std::uint64_t word_of(std::uint64_t piece) { return page_of(piece) * words_per_page + 3; }

/// Shared frames of tenant `tenant`, by a scan of the owner words.
std::vector<std::uint32_t> shared_frames(const frame_pool_view& p, std::uint32_t tenant) {
  std::vector<std::uint32_t> out;
  const std::uint64_t want = (std::uint64_t{tenant} << owner_tenant_shift) | shared_piece;
  for (std::uint32_t f = 0; f < p.geometry.frames; ++f) {
    const std::uint64_t s = atomic_ref<std::uint64_t>(p.state[f]).load(order::acquire);
    if ((s & frame_bits::open) &&
        atomic_ref<std::uint64_t>(p.owner[f]).load(order::acquire) == want)
      out.push_back(f);
  }
  return out;
}

/// Flips frame `f` between OPEN and HELD (a test's stand-in for a promoter holding it).
void set_held(const frame_pool_view& p, std::uint32_t f, bool held) {
  atomic_ref<std::uint64_t> st(p.state[f]);
  std::uint64_t s = st.load(order::acquire);
  const std::uint64_t flags = frame_bits::open | frame_bits::held;
  while (!st.compare_exchange(s, (s & ~flags) | (held ? frame_bits::held : frame_bits::open),
                              order::acq_rel)) {
  }
}

/// Touches one page of each piece in [first, last) once, storing into it when `write`.
void touch(const array_ref<std::uint64_t>& ref, std::uint64_t first, std::uint64_t last,
           bool write) {
  for (std::uint64_t p = first; p < last; ++p) {
    if (write) {
      ASSERT_TRUE(ref.try_store(word_of(p), written_at(word_of(p))).ok()) << "piece " << p;
    } else {
      std::uint64_t v = 0;
      ASSERT_TRUE(ref.try_read(word_of(p), v).ok()) << "piece " << p;
    }
  }
}

/// A dense array whose sparse pieces splinter into two shared frames of the tenant: the first
/// is held while later pieces splinter, so they make a second one. Pieces below `dirty_below`
/// hold a written page.
struct two_shared {
  explicit two_shared(pinning_kind k)
      : image(pattern_image(words)),
        r(image, adaptive(k)),
        a(*r.cache, r.ssd->ref(), {.name = "splintered", .dense = true}),
        ref(a.ref()) {}

  bool build() {
    const frame_pool_view p = r.pool();
    const std::uint32_t tenant = ref.slot().tenant;
    touch(ref, 0, 12, true);  // 8 frames: later pieces splinter the sparse earlier ones
    std::vector<std::uint32_t> first = shared_frames(p, tenant);
    if (first.size() != 1) return false;
    set_held(p, first[0], true);
    touch(ref, 12, pieces, false);
    set_held(p, first[0], false);
    return shared_frames(p, tenant).size() >= 2;
  }

  /// Words of every touched piece that read wrong.
  std::uint64_t misreads(std::uint64_t dirty_below) const {
    std::uint64_t wrong = 0;
    for (std::uint64_t p = 0; p < pieces; ++p) {
      std::uint64_t v = 0;
      const std::uint64_t want = p < dirty_below ? written_at(word_of(p)) : word_at(word_of(p));
      if (!ref.try_read(word_of(p), v).ok() || v != want) ++wrong;
    }
    return wrong;
  }

  std::shared_ptr<backing_store> image;
  rig r;
  array<std::uint64_t> a;
  array_ref<std::uint64_t> ref;
};

class Compaction : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(Compaction, EmptiesASparseSharedFrameIntoAnotherAndFreesIt) {
  two_shared t(GetParam());
  ASSERT_TRUE(t.build());
  const dense_cache_ref dense = t.r.dense();
  const std::uint32_t tenant = t.ref.slot().tenant;
  const std::size_t shared_before = shared_frames(t.r.pool(), tenant).size();
  const std::uint32_t free_before = dense.free_frames();
  const std::uint32_t held_before = *t.ref.slot().frames_held;
  const std::uint64_t compacted_before = t.a.stats().bytes_compacted;
  std::uint32_t moved = 0, freed = 0;
  for (std::uint32_t n = 0; n < 64; ++n) {
    const dense_cache_ref::compact_result r = dense.compact_step(t.ref.slot());
    if (r == dense_cache_ref::compact_result::idle) break;
    moved += r != dense_cache_ref::compact_result::retry ? 1u : 0u;
    freed += r == dense_cache_ref::compact_result::freed ? 1u : 0u;
  }
  EXPECT_GT(moved, 0u);
  EXPECT_GE(freed, 1u);
  EXPECT_EQ(shared_frames(t.r.pool(), tenant).size(), shared_before - freed);
  EXPECT_EQ(dense.free_frames(), free_before + freed);
  EXPECT_EQ(*t.ref.slot().frames_held, held_before - freed);
  EXPECT_EQ(t.a.frame_stats().frames_held(), *t.ref.slot().frames_held);
  EXPECT_EQ(t.a.stats().bytes_compacted - compacted_before, std::uint64_t{moved} * 512);
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(t.a, p);
    if (entry_splintered(e)) {
      EXPECT_GT(dense.pages_in(entry_frame(e), p), 0u) << "piece " << p;
    }
  }
  EXPECT_EQ(t.misreads(12), 0u);
  EXPECT_NO_THROW(t.a.check());
}

TEST_P(Compaction, DirtyPagesThatMovedReachStorage) {
  two_shared t(GetParam());
  ASSERT_TRUE(t.build());
  const dense_cache_ref dense = t.r.dense();
  for (std::uint32_t n = 0; n < 64; ++n) {  // one piece per step; far fewer pieces than that
    if (dense.compact_step(t.ref.slot()) == dense_cache_ref::compact_result::idle) break;
  }
  t.a.flush();
  EXPECT_NO_THROW(t.a.check());
  const auto* stored = reinterpret_cast<const std::uint64_t*>(t.image->data());
  std::uint64_t lost = 0;
  for (std::uint64_t p = 0; p < 12; ++p) lost += stored[word_of(p)] != written_at(word_of(p));
  EXPECT_EQ(lost, 0u);
  // Dropping every frame sends the pieces back to storage; they read their bytes again.
  for (std::uint32_t f = 0; f < t.r.pool().geometry.frames; ++f) dense.drop_frame(f);
  EXPECT_EQ(t.misreads(12), 0u);
}

TEST_P(Compaction, AOneSharedFrameTenantHasNothingToCompact) {
  two_shared t(GetParam());
  touch(t.ref, 0, 12, false);
  ASSERT_EQ(shared_frames(t.r.pool(), t.ref.slot().tenant).size(), 1u);
  EXPECT_EQ(t.r.dense().compact_step(t.ref.slot()), dense_cache_ref::compact_result::idle);
}

TEST_P(Compaction, TheBackgroundAgentFreesAFrameWhenFreeFramesRunLow) {
  two_shared t(GetParam());
  ASSERT_TRUE(t.build());
  const std::uint32_t tenant = t.ref.slot().tenant;
  const std::size_t shared_before = shared_frames(t.r.pool(), tenant).size();
  {
    compactor agent(t.r.cache->ref(), {.low_free_frames = t.r.pool().geometry.frames});
    // A liveness bound only (a pass takes microseconds): a hang would fail here, not stall.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (agent.frames_freed() == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    agent.stop();
    EXPECT_GE(agent.frames_freed(), 1u);
  }
  EXPECT_LT(shared_frames(t.r.pool(), tenant).size(), shared_before);
  EXPECT_EQ(t.misreads(12), 0u);
  EXPECT_NO_THROW(t.a.check());
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, Compaction,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
