// The virtual queue near its wrap: queues of depth 2 and 3 whose ticket counters start a few
// laps before the per-slot uint32 turn counters wrap to zero, served by the real controller and
// shared by many threads, keep every command's bytes and count each completion once.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/queue/queue_pair.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "stress_support.hpp"

namespace {

using namespace bam::testing;

struct wrap_case {
  protocol proto;
  std::uint32_t depth;
};

std::string case_name(const testing::TestParamInfo<wrap_case>& info) {
  return std::string(info.param.proto == protocol::ticket ? "Ticket" : "Naive") + "Depth" +
         std::to_string(info.param.depth);
}

// Puts a fresh queue where it would be after ~2^32 laps, `laps_before_wrap` laps short of
// the lap whose turn is zero: every slot's previous lap completed, was taken and was drained.
// The controller's state of a fresh queue already matches (position % depth == 0).
std::uint64_t preset_near_turn_wrap(const bam::queue_pair_ref& q, std::uint32_t laps_before_wrap) {
  const bam::queue_layout l = bam::queue_layout::for_depth(q.depth());
  auto* base = reinterpret_cast<unsigned char*>(q.control());
  auto* turn = reinterpret_cast<std::uint32_t*>(base + l.turn);
  auto* mark = reinterpret_cast<std::uint32_t*>(base + l.mark);
  auto* cq_laps = reinterpret_cast<std::uint32_t*>(base + l.cq_laps);
  const std::uint32_t lap = 0u - laps_before_wrap;
  const std::uint64_t position = std::uint64_t{lap} * q.depth();
  q.control()->ticket = position;
  q.control()->vtail = position;
  for (std::uint32_t s = 0; s < q.depth(); ++s) {
    turn[s] = lap;
    mark[s] = lap;
    cq_laps[s] = lap;
  }
  return position;
}

class WrapStress : public testing::TestWithParam<wrap_case> {};

TEST_P(WrapStress, QueuesCrossingTheTurnWrapKeepServingEveryCommandOnce) {
  const wrap_case& c = GetParam();
  constexpr unsigned threads = 32;
  constexpr std::uint32_t queues = 2;
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
  std::uint64_t start[queues];
  for (std::uint32_t qi = 0; qi < queues; ++qi)
    start[qi] = preset_near_turn_wrap(set.queue(0, qi), 3);
  const std::uint64_t commands = scaled(12'000, 400);
  ssd.start();

  struct client_log {
    std::vector<std::uint64_t> positions[queues];
    std::uint64_t failed = 0, wrong = 0;
    std::string first_failure;
  };
  std::vector<client_log> logs(threads);
  std::atomic<std::uint64_t> next{0};
  auto client = [&](unsigned t) {
    client_log& log = logs[t];
    rng r(t + 99);
    auto buffer = std::make_unique<io_buffer>();
    while (next.fetch_add(1, std::memory_order_relaxed) < commands) {
      const std::uint32_t qi = static_cast<std::uint32_t>(r.below(queues));
      const bam::queue_pair_ref& q = set.queue(0, qi);
      const extent e = random_extent(set, r, 0, image_bytes, 8);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, set.block_bytes);
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(q.timeout_ns());
      const bam::io_status s = run_command(q, c.proto, cmd, until, until, ticket);
      if (!s.ok()) {
        if (log.failed++ == 0) log.first_failure = s.name();
        continue;
      }
      log.positions[qi].push_back(ticket.position - start[qi]);
      log.wrong += pattern_mismatches(*buffer, offset, e, set.block_bytes);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(client, t);
  for (auto& t : pool) t.join();
  ssd.stop();

  std::vector<std::uint64_t> positions[queues];
  for (const auto& log : logs) {
    EXPECT_EQ(log.failed, 0u) << log.first_failure;
    EXPECT_EQ(log.wrong, 0u);
    for (std::uint32_t qi = 0; qi < queues; ++qi) {
      positions[qi].insert(positions[qi].end(), log.positions[qi].begin(), log.positions[qi].end());
    }
  }
  for (std::uint32_t qi = 0; qi < queues; ++qi) {
    const std::uint64_t handed_out = set.queue(0, qi).control()->ticket - start[qi];
    EXPECT_GT(handed_out, 6u * c.depth) << "queue " << qi << " crossed the wrap by laps";
    EXPECT_EQ(every_position_once(positions[qi], handed_out), "") << "queue " << qi;
  }
  EXPECT_EQ(ssd.stats().total().reads, commands);
}

INSTANTIATE_TEST_SUITE_P(Depths, WrapStress,
                         testing::Values(wrap_case{protocol::ticket, 2},
                                         wrap_case{protocol::ticket, 3},
                                         wrap_case{protocol::naive, 2},
                                         wrap_case{protocol::naive, 3}),
                         case_name);

}  // namespace
