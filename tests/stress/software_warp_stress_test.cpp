// The software warp under load (and, in CI, under ThreadSanitizer): 256 lane threads in eight
// warps run the coalescer's leader/follower pattern round after round while lanes leave at
// different rounds.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>

#include <bam/platform/warp.hpp>

#include "software_warp.hpp"
#include "stress_support.hpp"

namespace {

using namespace bam::testing;

constexpr unsigned warps = 8, width = 32, keys = 5;

std::uint64_t key_of(unsigned warp, std::uint64_t round, unsigned lane) {
  return pattern_word((std::uint64_t{warp} << 48) | (round << 8) | lane) % keys;
}

// Lanes leave after a lane-specific number of rounds; lane 0 stays to the end.
std::uint64_t rounds_of(unsigned warp, unsigned lane, std::uint64_t rounds) {
  if (lane == 0) return rounds;
  return rounds / 2 + pattern_word(~((std::uint64_t{warp} << 8) | lane)) % (rounds / 2);
}

TEST(SoftwareWarpStress, LeadersPublishToTheirGroupsWhileLanesLeave) {
  const std::uint64_t rounds = scaled(1000, 40);
  // Written by each group's leader with plain stores, read by its followers: the collectives
  // order them (what ThreadSanitizer checks here).
  std::array<std::array<std::uint64_t, keys>, warps> published{};
  std::atomic<std::uint64_t> wrong{0}, leader_rounds{0};
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    const std::uint64_t mine = rounds_of(warp, lane, rounds);
    for (std::uint64_t round = 0; round < mine; ++round) {
      const std::uint32_t mask = bam::warp::active_mask();
      const std::uint64_t key = key_of(warp, round, lane);
      std::uint32_t expected_group = 0, expected_ballot = 0;
      for (unsigned l = 0; l < width; ++l) {
        if (!(mask & (1u << l))) continue;
        if (key_of(warp, round, l) == key) expected_group |= 1u << l;
        if (key_of(warp, round, l) == 0) expected_ballot |= 1u << l;
      }
      const std::uint32_t group = bam::warp::match_any(mask, key);
      const unsigned leader = bam::warp::lowest_lane(group);
      const std::uint64_t value = (round << 8) | (key << 4) | warp;
      if (lane == leader) {
        published[warp][key] = value;
        leader_rounds.fetch_add(1, std::memory_order_relaxed);
      }
      const std::uint64_t got = bam::warp::shfl(group, lane == leader ? value : 0, leader);
      const std::uint32_t ballot = bam::warp::ballot(mask, key == 0);
      wrong.fetch_add((group != expected_group) + (got != value) + (published[warp][key] != value) +
                          (ballot != expected_ballot),
                      std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GE(leader_rounds.load(), warps * rounds) << "every round of every warp had a leader";
}

}  // namespace
