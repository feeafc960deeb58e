// Many CPU threads reading a pattern image through a few small queue pairs of the emulated
// SSD, with out-of-order completions: every command completes exactly once, with its own
// bytes and a success status, on both submission protocols.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <bam/storage/emulated_storage.hpp>

#include "stress_support.hpp"

namespace {

using namespace bam::testing;

struct read_case {
  const char* name;
  protocol proto;
  std::uint32_t devices;
  std::uint32_t queues_per_device;
  std::uint32_t depth;
  unsigned threads;
  std::uint64_t commands;  ///< before scaling
};

std::string case_name(const testing::TestParamInfo<read_case>& info) { return info.param.name; }

// What one client thread saw.
struct client_log {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> taken;  // (queue index, position)
  std::uint64_t failed = 0;
  std::uint64_t wrong_words = 0;
  std::string first_failure;
};

class ReadStress : public testing::TestWithParam<read_case> {};

TEST_P(ReadStress, EveryReadCompletesExactlyOnceWithItsOwnBytes) {
  const read_case& c = GetParam();
  constexpr std::uint64_t stripe = 16 * 1024;
  const std::uint64_t image_bytes = std::uint64_t{c.devices} * 64 * stripe;  // 1 MiB per device
  auto image = pattern_image(image_bytes);

  bam::storage_config config;
  config.devices = c.devices;
  config.queues_per_device = c.queues_per_device;
  config.queue_depth = c.depth;
  config.stripe_bytes = stripe;
  // Out of order: a shifted exponential with a long tail, plus a few late commands.
  config.model = {.latency_us = 4, .latency_p99_us = 60, .caps = false};
  config.faults = {.late_rate = 0.01, .late_us = 300, .seed = 11};
  config.timeout_ns = 120'000'000'000ull;
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint64_t commands = scaled(c.commands, 1000);
  ssd.start();

  std::atomic<std::uint64_t> next{0};
  std::vector<client_log> logs(c.threads);
  auto client = [&](unsigned t) {
    client_log& log = logs[t];
    rng r(t + 1);
    auto buffer = std::make_unique<io_buffer>();
    for (;;) {
      const std::uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= commands) return;
      const extent e = random_extent(set, r, 0, image_bytes, 16);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const std::uint32_t qi = static_cast<std::uint32_t>(r.below(c.queues_per_device));
      const bam::queue_pair_ref& q = set.queue(e.device, qi);
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, set.block_bytes);
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(q.timeout_ns());
      const bam::io_status s = run_command(q, c.proto, cmd, until, until, ticket);
      if (!s.ok()) {
        if (log.failed++ == 0) log.first_failure = s.name();
        continue;
      }
      log.taken.emplace_back(e.device * c.queues_per_device + qi, ticket.position);
      log.wrong_words += pattern_mismatches(*buffer, offset, e, set.block_bytes);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < c.threads; ++t) threads.emplace_back(client, t);
  for (auto& t : threads) t.join();
  ssd.stop();

  std::uint64_t failed = 0, wrong = 0;
  const std::uint32_t queue_count = c.devices * c.queues_per_device;
  std::vector<std::vector<std::uint64_t>> positions(queue_count);
  for (const auto& log : logs) {
    failed += log.failed;
    wrong += log.wrong_words;
    if (log.failed) ADD_FAILURE() << "a command failed: " << log.first_failure;
    for (const auto& [queue, position] : log.taken) positions[queue].push_back(position);
  }
  EXPECT_EQ(failed, 0u);
  EXPECT_EQ(wrong, 0u) << "words that differ from the image";

  // Per queue, the positions whose completions were taken are exactly 0..ticket-1, once each:
  // no command id carried two commands' completions and none was lost.
  const bam::storage_stats stats = ssd.stats();
  std::uint64_t taken = 0;
  for (std::uint32_t qi = 0; qi < queue_count; ++qi) {
    const std::uint64_t handed_out = set.queues[qi].control()->ticket;
    EXPECT_EQ(every_position_once(positions[qi], handed_out), "") << "queue " << qi;
    EXPECT_EQ(stats.queues[qi].submitted, handed_out) << "queue " << qi;
    EXPECT_EQ(stats.queues[qi].drained, handed_out) << "queue " << qi;
    EXPECT_EQ(stats.queues[qi].late_completions, 0u) << "queue " << qi;
    EXPECT_EQ(stats.queues[qi].bad_completions, 0u) << "queue " << qi;
    taken += positions[qi].size();
  }
  EXPECT_EQ(taken, commands);

  const bam::device_stats dev = stats.total();
  EXPECT_EQ(dev.commands, commands);
  EXPECT_EQ(dev.reads, commands);
  EXPECT_EQ(dev.invalid, 0u);
  EXPECT_EQ(dev.injected_errors, 0u);
  EXPECT_GT(dev.late, 0u) << "the run exercised late (reordered) completions";
  EXPECT_TRUE(ssd.stuck_queues(0).empty());
}

// The first case is the long run: a million commands in the Release build.
INSTANTIATE_TEST_SUITE_P(
    Queues, ReadStress,
    testing::Values(read_case{"TicketEightQueuesOfDepth32", protocol::ticket, 2, 4, 32, 128,
                              1'000'000},
                    read_case{"TicketDepth2", protocol::ticket, 1, 4, 2, 64, 40'000},
                    read_case{"TicketDepth3With256Threads", protocol::ticket, 2, 2, 3, 256, 25'000},
                    read_case{"NaiveEightQueuesOfDepth32", protocol::naive, 2, 4, 32, 128, 200'000},
                    read_case{"NaiveDepth2", protocol::naive, 1, 4, 2, 64, 40'000}),
    case_name);

}  // namespace
