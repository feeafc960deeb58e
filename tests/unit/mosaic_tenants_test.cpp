// Tenants on a two_level cache: every dense array is a tenant; a frame serves one tenant at a
// time and is written back and cleared before another gets it; a tenant at its frame quota
// evicts only its own frames; per-tenant statistics count frames, resident bytes and bloat;
// the owner check on hits reports a frame that serves someone else. Both pinning kinds.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::two_level;
using bam::testing::mosaic::word_at;
using bam::testing::mosaic::written_at;

constexpr std::uint64_t line_bytes = 512;
constexpr std::uint64_t words_per_page = line_bytes / 8;
constexpr std::uint64_t pages_per_piece = 8;
constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;
constexpr std::uint32_t pool_frames = 16;  // two_level(): 128 of 256 lines in frames of 8

std::vector<std::uint64_t> pattern(std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint64_t> v(count);
  for (std::uint64_t k = 0; k < count; ++k) v[k] = word_at(first + k);
  return v;
}

/// Options for a dense array over `pieces` pieces starting at piece `first` of the image.
array_options piece_range(std::uint64_t first, std::uint64_t pieces, std::uint32_t quota = 0) {
  return {.offset_bytes = first * words_per_piece * 8,
          .count = pieces * words_per_piece,
          .name = "tenant",
          .dense = true,
          .frame_quota = quota};
}

/// The tenant a frame's state names while OPEN (0 when it is free or held).
std::uint32_t open_tenant(const frame_pool_view& p, std::uint32_t f) {
  const std::uint64_t s = atomic_ref<std::uint64_t>(p.state[f]).load(order::acquire);
  if ((s & frame_bits::open) == 0) return 0;
  return static_cast<std::uint32_t>(frame_tag(s) & entry_bits::tenant_mask);
}

class Tenants : public ::testing::TestWithParam<pinning_kind> {};

std::string kind_name(const ::testing::TestParamInfo<pinning_kind>& info) {
  return to_string(info.param);
}

TEST_P(Tenants, EachDenseArrayIsItsOwnTenantAndItsPiecesOnlyUseItsFrames) {
  rig r(pattern_image(8 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), piece_range(0, 4));
  array<const std::uint64_t> b(*r.cache, r.ssd->ref(), piece_range(4, 4));
  const std::uint32_t ta = a.ref().slot().tenant, tb = b.ref().slot().tenant;
  ASSERT_NE(ta, 0u);
  ASSERT_NE(tb, 0u);
  EXPECT_NE(ta, tb);
  EXPECT_EQ(a.read(0, 4 * words_per_piece), pattern(0, 4 * words_per_piece));
  EXPECT_EQ(b.read(0, 4 * words_per_piece), pattern(4 * words_per_piece, 4 * words_per_piece));
  const frame_pool_view pool = r.pool();
  for (std::uint64_t p = 0; p < 4; ++p) {
    EXPECT_EQ(open_tenant(pool, entry_frame(entry_of(a, p))), ta) << "piece " << p;
    EXPECT_EQ(open_tenant(pool, entry_frame(entry_of(b, p))), tb) << "piece " << p;
    EXPECT_EQ(entry_tenant(entry_of(a, p)), ta);
  }
  EXPECT_EQ(a.frame_stats().frames_coalesced, 4u);
  EXPECT_EQ(b.frame_stats().frames_coalesced, 4u);
}

TEST_P(Tenants, AFrameGivenToAnotherTenantIsWrittenBackAndClearedFirst) {
  const std::uint64_t pieces = pool_frames;
  const std::uint64_t b_pieces = 3 * pieces;
  auto image = pattern_image((pieces + b_pieces) * words_per_piece);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, two_level(GetParam()));
  array<std::uint64_t> a(*r.cache, r.ssd->ref(), piece_range(0, pieces));
  array<const std::uint64_t> b(*r.cache, r.ssd->ref(), piece_range(pieces, b_pieces));
  const array_ref<std::uint64_t> ra = a.ref();
  // A dirties one page of every piece and so fills the whole frame pool.
  for (std::uint64_t p = 0; p < pieces; ++p) ra.store(p * words_per_piece + 1, written_at(p));
  EXPECT_EQ(a.frame_stats().frames_coalesced, pool_frames);
  // B touches one page of each of its pieces (three times the pool), round after round, until
  // CLOCK has given it every frame A held.
  const array_ref<const std::uint64_t> rb = b.ref();
  for (int round = 0; round < 20 && a.frame_stats().frames_held() != 0; ++round) {
    for (std::uint64_t p = 0; p < b_pieces; ++p) {
      const std::uint64_t i = p * words_per_piece + 3 * words_per_page;
      EXPECT_EQ(rb[i], word_at(pieces * words_per_piece + i));
    }
  }
  EXPECT_EQ(a.frame_stats().frames_held(), 0u);
  EXPECT_EQ(*a.ref().slot().frames_held, 0u);
  // B holds every frame: coalesced, or shared by its pieces that splintered (one page each).
  EXPECT_EQ(b.frame_stats().frames_held(), pool_frames);
  EXPECT_EQ(b.frame_stats().frames_reserved, 0u);
  for (std::uint64_t p = 0; p < pieces; ++p) {
    EXPECT_EQ(stored[p * words_per_piece + 1], written_at(p)) << "A's page written back";
    EXPECT_EQ(entry_of(a, p), entry_bits::empty);
  }
  // Every frame now holds exactly B's one page: A's resident and dirty bits were cleared.
  const frame_pool_view pool = r.pool();
  const std::uint64_t owner_of_b = std::uint64_t{b.ref().slot().tenant} << owner_tenant_shift;
  for (std::uint32_t f = 0; f < pool.geometry.frames; ++f) {
    EXPECT_EQ(pool.resident_count[f], 1u) << "frame " << f;
    EXPECT_EQ(pool.word(pool.resident, f, 0), frame_pool_view::bit(3)) << "frame " << f;
    EXPECT_EQ(pool.word(pool.dirty, f, 0), 0u) << "frame " << f;
    EXPECT_EQ(pool.owner[f] >> owner_tenant_shift, owner_of_b >> owner_tenant_shift);
  }
  // A reads its own data back (it comes from the devices now).
  for (std::uint64_t p = 0; p < pieces; ++p) {
    EXPECT_EQ(ra[p * words_per_piece + 1], written_at(p));
  }
}

TEST_P(Tenants, AtItsQuotaATenantEvictsOnlyItsOwnFrames) {
  rig r(pattern_image(24 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> others(*r.cache, r.ssd->ref(), piece_range(0, 8));
  array<const std::uint64_t> capped(*r.cache, r.ssd->ref(), piece_range(8, 16, 3));
  EXPECT_EQ(others.read(0, 8 * words_per_piece), pattern(0, 8 * words_per_piece));
  // The capped tenant scans twice the free frames; it may hold 3 at a time.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(capped.read(0, 16 * words_per_piece),
              pattern(8 * words_per_piece, 16 * words_per_piece));
  }
  const tenant_stats c = capped.frame_stats();
  EXPECT_EQ(c.frame_quota, 3u);
  EXPECT_EQ(c.frames_held(), 3u);
  EXPECT_EQ(*capped.ref().slot().frames_held, 3u);
  EXPECT_GE(c.counters.coalesces, 29u) << "all but the last three pieces reserved again";
  EXPECT_EQ(others.frame_stats().frames_coalesced, 8u) << "the quota kept it off others' frames";
  for (std::uint64_t p = 0; p < 8; ++p) EXPECT_TRUE(entry_coalesced(entry_of(others, p)));
}

TEST_P(Tenants, WithoutAQuotaATenantTakesFreeFramesBeforeEvicting) {
  rig r(pattern_image(8 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), piece_range(0, 8));
  EXPECT_EQ(a.read(0, 8 * words_per_piece), pattern(0, 8 * words_per_piece));
  EXPECT_EQ(a.stats().evictions, 0u);
  EXPECT_EQ(*a.ref().slot().frames_held, 8u);
}

TEST_P(Tenants, StatisticsCountFramesResidentBytesBloatAndTraffic) {
  rig r(pattern_image(4 * words_per_piece), two_level(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), piece_range(0, 4));
  const array_ref<const std::uint64_t> ref = a.ref();
  EXPECT_EQ(ref[5], word_at(5));  // piece 0: one page
  for (std::uint64_t i = words_per_piece; i < 2 * words_per_piece; i += words_per_page) {
    EXPECT_EQ(ref[i], word_at(i));  // piece 1: every page
  }
  EXPECT_EQ(ref[6], word_at(6));  // a hit
  const tenant_stats t = a.frame_stats();
  EXPECT_EQ(t.tenant, a.ref().slot().tenant);
  EXPECT_EQ(t.frames_coalesced, 2u);
  EXPECT_EQ(t.frames_reserved, 0u);
  EXPECT_EQ(t.frames_shared, 0u);
  EXPECT_EQ(t.resident_bytes, 9 * line_bytes);
  EXPECT_EQ(t.bloat_bytes, 7 * line_bytes);
  EXPECT_EQ(t.counters.coalesces, 2u);
  EXPECT_EQ(t.counters.bytes_fetched, 9 * line_bytes);
  EXPECT_EQ(t.counters.misses, 9u);
  EXPECT_EQ(t.counters.hits, 1u);
  EXPECT_EQ(t.counters.splinters, 0u);
  EXPECT_EQ(t.counters.bytes_compacted, 0u);
  EXPECT_TRUE(r.dense().drop_frame(entry_frame(entry_of(a, 1))));
  EXPECT_EQ(a.frame_stats().frames_coalesced, 1u);
  EXPECT_EQ(*a.ref().slot().frames_held, 1u);
}

TEST_P(Tenants, TheOwnerCheckReportsAFrameThatServesSomeoneElse) {
  cache_config c = two_level(GetParam());
  c.check_frame_owners = true;
  rig r(pattern_image(2 * words_per_piece), c);
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), piece_range(0, 2));
  const array_ref<const std::uint64_t> ref = a.ref();
  std::uint64_t v = 0;
  ASSERT_TRUE(ref.try_read(5, v).ok());
  EXPECT_NO_THROW(a.check());
  // Make the frame claim to serve another tenant's piece (what a protocol bug would do).
  const frame_pool_view pool = r.pool();
  const std::uint32_t f = entry_frame(entry_of(a, 0));
  atomic_ref<std::uint64_t> owner(pool.owner[f]);
  const std::uint64_t real = owner.load(order::acquire);
  owner.store(real + (std::uint64_t{1} << owner_tenant_shift), order::release);
  EXPECT_FALSE(ref.try_read(6, v).ok());
  EXPECT_THROW(a.check(), nvme_error);
  owner.store(real, order::release);
  EXPECT_TRUE(ref.try_read(6, v).ok());
  EXPECT_EQ(v, word_at(6));
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, Tenants,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

TEST(TenantConfig, TheOwnerCheckIsOnInDebugBuildsOnly) {
  EXPECT_EQ(cache_config{}.check_frame_owners, debug_build);
}

TEST(TenantConfig, AnArrayOnBasePagesIsNoTenant) {
  rig r(pattern_image(1024), two_level(pinning_kind::frame_pins));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.frame_quota = 4});
  const tenant_stats t = a.frame_stats();
  EXPECT_EQ(t.tenant, 0u);
  EXPECT_EQ(t.frame_quota, 0u);
  EXPECT_EQ(t.frames_held(), 0u);
}

}  // namespace
