// The queue's warp-cooperative paths: lanes of software warps drain completions and advance
// the tail together (drain_lanes, advance_tail_lanes) on small queues served by the real
// controller with out-of-order completions, while other warps drain the same queues. Every
// command's bytes are checked and every position is handed out and completed once.
//
// Each warp submits to its own queue, deeper than the warp is wide: a lane waiting in submit()
// for a slot that a lane of its own warp holds, while that lane waits for it in a collective,
// would deadlock (the rule in <bam/platform/warp.hpp>).

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/platform/warp.hpp>
#include <bam/queue/queue_pair.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "software_warp.hpp"
#include "stress_support.hpp"

namespace {

using namespace bam::testing;

struct lanes_case {
  std::uint32_t depth;
  unsigned width;
};

std::string case_name(const testing::TestParamInfo<lanes_case>& info) {
  return "Depth" + std::to_string(info.param.depth) + "Width" + std::to_string(info.param.width);
}

class LanesStress : public testing::TestWithParam<lanes_case> {};

TEST_P(LanesStress, LanesDrainingAndAdvancingTogetherServeEveryCommandOnce) {
  const lanes_case& c = GetParam();
  constexpr unsigned warps = 3;
  constexpr std::uint32_t queues = warps;
  constexpr std::uint64_t image_bytes = 1 << 20;
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = 1;
  config.queues_per_device = queues;
  config.queue_depth = c.depth;
  config.model = {.latency_us = 2, .latency_p99_us = 30, .caps = false};
  config.timeout_ns = 120'000'000'000ull;
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint64_t rounds = scaled(200, 12);
  ssd.start();

  struct lane_log {
    std::vector<std::uint64_t> positions[queues];
    std::uint64_t failed = 0, wrong = 0, done = 0;
    std::string first_failure;
  };
  std::vector<lane_log> logs(warps * c.width);
  run_software_warps(warps, c.width, [&](unsigned lane, unsigned w) {
    lane_log& log = logs[w * c.width + lane];
    rng r(w * 64 + lane + 7);
    auto buffer = std::make_unique<io_buffer>();
    const std::uint32_t qi = w;
    const bam::queue_pair_ref& q = set.queue(0, qi);
    // Even lanes drain their own queue, odd lanes the next warp's: groups of every size, and
    // drainers of other warps on the same lock.
    const std::uint32_t drained_queue = lane % 2 == 0 ? w : (w + 1) % warps;
    const bam::queue_pair_ref& dq = set.queue(0, drained_queue);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      const extent e = random_extent(set, r, 0, image_bytes, 8);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, set.block_bytes);
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(q.timeout_ns());
      bam::io_status s = q.submit(cmd, until, ticket);
      bool done = !s.ok();
      // Every lane stays in the loop until all are done, so the groups keep draining and
      // advancing together, also for lanes whose command is already back.
      const std::uint32_t all = bam::warp::active_mask();
      while (bam::warp::ballot(all, !done) != 0) {
        if (!done) done = q.poll(ticket, s);
        if (!done && until.expired()) {
          s = q.wait(ticket, until);  // abandons the command: counted as a failure below
          done = true;
        }
        q.advance_tail_lanes(all);
        dq.drain_lanes(bam::warp::match_any(all, drained_queue));
      }
      if (!s.ok()) {
        if (log.failed++ == 0) log.first_failure = s.name();
        continue;
      }
      ++log.done;
      log.positions[qi].push_back(ticket.position);
      log.wrong += pattern_mismatches(*buffer, offset, e, set.block_bytes);
    }
  });
  ssd.stop();

  std::vector<std::uint64_t> positions[queues];
  std::uint64_t done = 0;
  for (const auto& log : logs) {
    EXPECT_EQ(log.failed, 0u) << log.first_failure;
    EXPECT_EQ(log.wrong, 0u);
    done += log.done;
    for (std::uint32_t qi = 0; qi < queues; ++qi) {
      positions[qi].insert(positions[qi].end(), log.positions[qi].begin(), log.positions[qi].end());
    }
  }
  for (std::uint32_t qi = 0; qi < queues; ++qi) {
    const bam::queue_pair_ref& q = set.queue(0, qi);
    EXPECT_EQ(every_position_once(positions[qi], q.control()->ticket), "") << "queue " << qi;
    EXPECT_EQ(q.control()->counters.drained, q.control()->ticket) << "queue " << qi;
    EXPECT_EQ(q.control()->counters.submitted, q.control()->ticket) << "queue " << qi;
  }
  EXPECT_EQ(done, rounds * warps * c.width);
  EXPECT_EQ(ssd.stats().total().reads, done);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LanesStress,
                         testing::Values(lanes_case{5, 4}, lanes_case{9, 8}, lanes_case{64, 8},
                                         lanes_case{33, 32}),
                         case_name);

}  // namespace
