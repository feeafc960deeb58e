// The test-only software warp: collectives built on a barrier, lanes leaving early, misuse
// reported instead of hanging.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <bam/platform/warp.hpp>

#include "software_warp.hpp"

namespace {

using bam::testing::run_software_warps;
using bam::testing::software_warp;

TEST(SoftwareWarp, LanesSeeTheirIndexAndTheWarpWidth) {
  software_warp w(8);
  std::array<unsigned, 8> lanes{}, widths{};
  w.run([&](unsigned lane) {
    lanes[lane] = bam::warp::lane();
    widths[lane] = bam::warp::width();
  });
  for (unsigned l = 0; l < 8; ++l) {
    EXPECT_EQ(lanes[l], l);
    EXPECT_EQ(widths[l], 8u);
  }
}

TEST(SoftwareWarp, AThreadOutsideAWarpIsAWarpOfOneLane) {
  EXPECT_EQ(bam::warp::width(), 1u);
  EXPECT_EQ(bam::warp::lane(), 0u);
  EXPECT_EQ(bam::warp::active_mask(), 1u);
  EXPECT_EQ(bam::warp::match_any(1u, 42), 1u);
  EXPECT_EQ(bam::warp::shfl(1u, 7, 0), 7u);
  EXPECT_EQ(bam::warp::ballot(1u, true), 1u);
  EXPECT_EQ(bam::warp::ballot(1u, false), 0u);
}

TEST(SoftwareWarp, ActiveMaskNamesEveryLaneOfAConvergedWarp) {
  software_warp w(32);
  std::array<std::uint32_t, 32> masks{};
  w.run([&](unsigned lane) { masks[lane] = bam::warp::active_mask(); });
  for (auto m : masks) EXPECT_EQ(m, 0xffffffffu);
}

TEST(SoftwareWarp, MatchAnyGroupsLanesWithEqualKeys) {
  software_warp w(12);
  std::array<std::uint32_t, 12> groups{};
  w.run([&](unsigned lane) { groups[lane] = bam::warp::match_any(0xfffu, lane % 3); });
  for (unsigned l = 0; l < 12; ++l) {
    EXPECT_EQ(groups[l], 0x249u << (l % 3)) << "lane " << l;
  }
}

TEST(SoftwareWarp, MatchAnyComparesAllSixtyFourBitsOfTheKey) {
  software_warp w(4);
  std::array<std::uint32_t, 4> groups{};
  w.run([&](unsigned lane) {
    // Lanes 0 and 1 differ only in the high word.
    const std::uint64_t key = lane < 2 ? (std::uint64_t{lane} << 40) | 5u : 9u;
    groups[lane] = bam::warp::match_any(0xfu, key);
  });
  EXPECT_EQ(groups[0], 0x1u);
  EXPECT_EQ(groups[1], 0x2u);
  EXPECT_EQ(groups[2], 0xcu);
  EXPECT_EQ(groups[3], 0xcu);
}

TEST(SoftwareWarp, ShflBroadcastsTheSourceLanesValue) {
  software_warp w(8);
  std::array<std::uint64_t, 8> got{};
  w.run([&](unsigned lane) { got[lane] = bam::warp::shfl(0xffu, 1000u + lane, 5); });
  for (auto v : got) EXPECT_EQ(v, 1005u);
}

TEST(SoftwareWarp, ShflLetsEachLaneReadADifferentSource) {
  software_warp w(8);
  std::array<std::uint64_t, 8> got{};
  w.run([&](unsigned lane) { got[lane] = bam::warp::shfl(0xffu, lane * 10u, (lane + 1) % 8); });
  for (unsigned l = 0; l < 8; ++l) EXPECT_EQ(got[l], ((l + 1) % 8) * 10u);
}

TEST(SoftwareWarp, BallotSetsTheBitsOfLanesWhosePredicateHolds) {
  software_warp w(8);
  std::array<std::uint32_t, 8> got{};
  w.run([&](unsigned lane) { got[lane] = bam::warp::ballot(0xffu, lane % 2 == 0); });
  for (auto v : got) EXPECT_EQ(v, 0x55u);
}

TEST(SoftwareWarp, CollectivesOnDisjointMasksCompleteIndependently) {
  software_warp w(8);
  std::array<std::uint32_t, 8> got{};
  w.run([&](unsigned lane) {
    if (lane < 4) {
      got[lane] = bam::warp::ballot(0x0fu, true);
    } else {
      got[lane] = bam::warp::match_any(0xf0u, 1);
    }
  });
  for (unsigned l = 0; l < 4; ++l) EXPECT_EQ(got[l], 0x0fu);
  for (unsigned l = 4; l < 8; ++l) EXPECT_EQ(got[l], 0xf0u);
}

TEST(SoftwareWarp, ALaneThatReturnsLeavesTheActiveMask) {
  software_warp w(8);
  std::array<std::uint32_t, 8> masks{};
  w.run([&](unsigned lane) {
    if (lane >= 5) return;
    masks[lane] = bam::warp::active_mask();
  });
  for (unsigned l = 0; l < 5; ++l) EXPECT_EQ(masks[l], 0x1fu);
}

TEST(SoftwareWarp, LanesLeavingALoopEarlyDropOutOfLaterRounds) {
  software_warp w(6);
  // Lane l runs l + 1 rounds; round r is joined by the lanes that have not left yet.
  std::array<std::vector<std::uint32_t>, 6> seen;
  w.run([&](unsigned lane) {
    for (unsigned round = 0; round <= lane; ++round) {
      const std::uint32_t mask = bam::warp::active_mask();
      seen[lane].push_back(bam::warp::ballot(mask, true));
    }
  });
  for (unsigned l = 0; l < 6; ++l) {
    ASSERT_EQ(seen[l].size(), l + 1u);
    for (unsigned round = 0; round <= l; ++round) {
      EXPECT_EQ(seen[l][round], 0x3fu & ~((1u << round) - 1u))
          << "lane " << l << " round " << round;
    }
  }
}

TEST(SoftwareWarp, TheLeaderOfAMatchGroupPublishesToItsFollowersThroughShfl) {
  // The coalescer's pattern: group equal keys, the lowest lane does the work once, shfl hands
  // the result to the group.
  software_warp w(16);
  std::array<std::uint64_t, 16> results{};
  std::array<std::uint64_t, 4> work_done{};
  std::atomic<int> leaders{0};
  w.run([&](unsigned lane) {
    const std::uint64_t key = lane % 4;
    const std::uint32_t mask = bam::warp::active_mask();
    const std::uint32_t group = bam::warp::match_any(mask, key);
    const unsigned leader = bam::warp::lowest_lane(group);
    std::uint64_t value = 0;
    if (lane == leader) {
      leaders.fetch_add(1, std::memory_order_relaxed);
      work_done[key] = key * 100 + 7;  // plain store: the collective below publishes it
      value = key * 100 + 7;
    }
    results[lane] = bam::warp::shfl(group, value, leader);
    EXPECT_EQ(work_done[key], key * 100 + 7);
  });
  EXPECT_EQ(leaders.load(), 4);
  for (unsigned l = 0; l < 16; ++l) EXPECT_EQ(results[l], (l % 4) * 100 + 7);
}

TEST(SoftwareWarp, RunSoftwareWarpsKeepsEachWarpsCollectivesToItsOwnLanes) {
  constexpr unsigned warps = 4, width = 8;
  std::array<std::array<std::uint32_t, width>, warps> groups{};
  std::array<std::array<std::uint64_t, width>, warps> broadcast{};
  run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    // Every lane of every warp offers the same key: a warp still groups only its own lanes.
    groups[warp][lane] = bam::warp::match_any(0xffu, 1);
    broadcast[warp][lane] = bam::warp::shfl(0xffu, warp * 10 + lane, 0);
  });
  for (unsigned w = 0; w < warps; ++w) {
    for (unsigned l = 0; l < width; ++l) {
      EXPECT_EQ(groups[w][l], 0xffu);
      EXPECT_EQ(broadcast[w][l], w * 10u);
    }
  }
}

TEST(SoftwareWarp, AMaskNamingAnExitedLaneThrowsInsteadOfHanging) {
  software_warp w(4);
  EXPECT_THROW(w.run([](unsigned lane) {
    if (lane == 3) return;
    (void)bam::warp::ballot(0xfu, true);
  }),
               std::logic_error);
}

TEST(SoftwareWarp, AMaskThatDoesNotNameTheCallerThrows) {
  software_warp w(2);
  // Lane 0 is not in mask 0x2.
  EXPECT_THROW(w.run([](unsigned) { (void)bam::warp::ballot(0x2u, true); }), std::logic_error);
}

TEST(SoftwareWarp, AShflFromALaneOutsideTheMaskThrows) {
  software_warp w(4);
  EXPECT_THROW(w.run([](unsigned lane) {
    if (lane < 2) (void)bam::warp::shfl(0x3u, lane, 3);
  }),
               std::logic_error);
}

TEST(SoftwareWarp, LanesWaitingInDifferentCollectivesReportADeadlock) {
  software_warp w(2);
  EXPECT_THROW(w.run([](unsigned lane) {
    if (lane == 0) {
      (void)bam::warp::ballot(0x3u, true);
    } else {
      (void)bam::warp::match_any(0x3u, 1);
    }
  }),
               std::logic_error);
}

TEST(SoftwareWarp, ACollectiveWaitingPastTheTimeoutThrows) {
  software_warp w(2, std::chrono::milliseconds(50));
  std::atomic<bool> release{false};
  EXPECT_THROW(w.run([&](unsigned lane) {
    if (lane == 0) {
      try {
        (void)bam::warp::active_mask();  // lane 1 never comes: it spins outside any collective
      } catch (...) {
        release.store(true);
        throw;
      }
      release.store(true);
    } else {
      while (!release.load()) std::this_thread::yield();
    }
  }),
               std::logic_error);
}

TEST(SoftwareWarp, AnExceptionInALaneReachesTheCaller) {
  software_warp w(4);
  EXPECT_THROW(w.run([](unsigned lane) {
    if (lane == 2) throw std::runtime_error("lane 2 failed");
  }),
               std::runtime_error);
}

TEST(SoftwareWarp, AWarpCanRunAgainAfterARun) {
  software_warp w(4);
  for (int run = 0; run < 3; ++run) {
    std::array<std::uint32_t, 4> masks{};
    w.run([&](unsigned lane) {
      if (lane == static_cast<unsigned>(run)) return;
      masks[lane] = bam::warp::active_mask();
    });
    for (unsigned l = 0; l < 4; ++l) {
      if (l != static_cast<unsigned>(run)) {
        EXPECT_EQ(masks[l], 0xfu & ~(1u << run));
      }
    }
  }
}

TEST(SoftwareWarp, WidthsOutsideTwoToThirtyTwoAreRejected) {
  EXPECT_THROW(software_warp(1), std::invalid_argument);
  EXPECT_THROW(software_warp(33), std::invalid_argument);
}

}  // namespace
