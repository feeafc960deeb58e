// acquire_result packs into one 64-bit word for the warp shuffle that hands a leader's probe
// to its group: line, status and kind all survive.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/cache/page_cache.hpp>

namespace {

using namespace bam;

void expect_round_trip(const acquire_result& r) {
  const acquire_result back = acquire_result::unpack(r.pack());
  EXPECT_EQ(back.line, r.line);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.kind, r.kind);
}

TEST(AcquireResult, AHitOnLineZeroPacksToZero) {
  EXPECT_EQ((acquire_result{0, {}, probe_kind::hit}.pack()), 0u);
}

TEST(AcquireResult, EveryKindRoundTrips) {
  for (const probe_kind k :
       {probe_kind::hit, probe_kind::miss, probe_kind::miss_wait, probe_kind::failed}) {
    expect_round_trip({12345, {}, k});
  }
}

TEST(AcquireResult, TheLargestLineRoundTrips) {
  expect_round_trip({0xffffffffu, {}, probe_kind::miss});
}

TEST(AcquireResult, ADeviceStatusRoundTrips) {
  expect_round_trip(
      {0,
       io_status::from_device(nvme::make_status_field(nvme::media_status::unrecovered_read_error)),
       probe_kind::failed});
  expect_round_trip({7, io_status::from_device(0x7fff), probe_kind::failed});
}

TEST(AcquireResult, EveryHostSourceRoundTrips) {
  for (const status_source src : {status_source::timeout, status_source::command_lost,
                                  status_source::invalid_request, status_source::cache_exhausted,
                                  status_source::index_out_of_range, status_source::queue_halted,
                                  status_source::submit_timeout}) {
    expect_round_trip({3, io_status::host(src), probe_kind::failed});
  }
}

TEST(AcquireResult, StatusBitsFitTheTwentyFourBitsTheyArePackedIn) {
  // Source in bits 23:16, status field in 14:0: nothing of io_status lies above bit 23.
  EXPECT_EQ(io_status::host(status_source::queue_halted).bits() & ~0xffffffu, 0u);
  EXPECT_EQ(io_status::from_device(0xffff).bits() & ~0xffffffu, 0u);
}

}  // namespace
