// Many CPU threads writing their own disjoint blocks through shared small queue pairs and
// reading each write back: every write lands exactly where it was sent, every read-back sees
// it, and the image holds every thread's last writes at the end.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/storage/emulated_storage.hpp>

#include "stress_support.hpp"

namespace {

using namespace bam::testing;

struct write_case {
  const char* name;
  protocol proto;
  std::uint32_t depth;
  std::uint64_t rounds;  ///< write + read-back pairs in total, before scaling
};

std::string case_name(const testing::TestParamInfo<write_case>& info) { return info.param.name; }

constexpr unsigned threads = 64;
constexpr std::uint32_t devices = 2, queues_per_device = 4;
constexpr std::uint64_t stripe = 4096;
constexpr std::uint64_t region_bytes = 4 * stripe;  // each thread's own blocks
constexpr std::uint64_t image_bytes = threads * region_bytes;

struct client_log {
  std::vector<std::uint64_t> positions[devices * queues_per_device];
  std::uint64_t failed = 0;
  std::uint64_t wrong_words = 0;
  std::string first_failure;
};

class WriteStress : public testing::TestWithParam<write_case> {};

TEST_P(WriteStress, EveryWriteLandsInItsOwnBlocksAndReadsBack) {
  const write_case& c = GetParam();
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = devices;
  config.queues_per_device = queues_per_device;
  config.queue_depth = c.depth;
  config.stripe_bytes = stripe;
  config.model = {.latency_us = 3, .latency_p99_us = 40, .caps = false};
  config.timeout_ns = 120'000'000'000ull;
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint64_t rounds = scaled(c.rounds, 500);
  const std::uint32_t block = set.block_bytes;

  // What each thread believes its region holds: the pattern, then its own writes.
  std::vector<std::vector<std::uint64_t>> shadow(threads,
                                                 std::vector<std::uint64_t>(region_bytes / 8));
  for (unsigned t = 0; t < threads; ++t) {
    for (std::uint64_t k = 0; k < region_bytes / 8; ++k) {
      shadow[t][k] = pattern_word(t * region_bytes + k * 8);
    }
  }
  ssd.start();

  std::atomic<std::uint64_t> next{0};
  std::vector<client_log> logs(threads);
  auto client = [&](unsigned t) {
    client_log& log = logs[t];
    std::vector<std::uint64_t>& mine = shadow[t];
    rng r(1000 + t);
    auto buffer = std::make_unique<io_buffer>();
    const std::uint64_t begin = t * region_bytes;
    auto run = [&](bam::nvme::io_opcode op, const extent& e, std::uint32_t offset,
                   const auto& fill) {
      const std::uint32_t qi = static_cast<std::uint32_t>(r.below(queues_per_device));
      const bam::queue_pair_ref& q = set.queue(e.device, qi);
      const auto cmd = rw_command(op, e, *buffer, offset, block);
      fill();
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(q.timeout_ns());
      const bam::io_status s = run_command(q, c.proto, cmd, until, until, ticket);
      if (s.ok()) {
        log.positions[e.device * queues_per_device + qi].push_back(ticket.position);
      } else if (log.failed++ == 0) {
        log.first_failure = s.name();
      }
      return s.ok();
    };
    for (std::uint64_t seq = 0;; ++seq) {
      if (next.fetch_add(1, std::memory_order_relaxed) >= rounds) return;
      const extent e = random_extent(set, r, begin, begin + region_bytes, 8);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const std::uint64_t first_word = (e.image_offset - begin) / 8;
      const std::uint64_t words = e.bytes(block) / 8;
      // A value no other thread, write or word can produce.
      auto value = [&](std::uint64_t k) {
        return pattern_word(~((std::uint64_t{t} << 40) | (seq << 12) | k));
      };
      const bool wrote = run(bam::nvme::io_opcode::write, e, offset, [&] {
        for (std::uint64_t k = 0; k < words; ++k) {
          const std::uint64_t v = value(k);
          std::memcpy(buffer->data + offset + k * 8, &v, 8);
        }
      });
      if (!wrote) continue;
      for (std::uint64_t k = 0; k < words; ++k) mine[first_word + k] = value(k);
      const std::uint32_t read_offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      if (!run(bam::nvme::io_opcode::read, e, read_offset, [] {})) continue;
      for (std::uint64_t k = 0; k < words; ++k) {
        log.wrong_words += buffer->word(read_offset + k * 8) != mine[first_word + k];
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(client, t);
  for (auto& t : pool) t.join();
  ssd.stop();

  std::uint64_t failed = 0, wrong = 0;
  std::vector<std::vector<std::uint64_t>> positions(devices * queues_per_device);
  for (const auto& log : logs) {
    failed += log.failed;
    wrong += log.wrong_words;
    if (log.failed) ADD_FAILURE() << "a command failed: " << log.first_failure;
    for (std::uint32_t q = 0; q < devices * queues_per_device; ++q) {
      positions[q].insert(positions[q].end(), log.positions[q].begin(), log.positions[q].end());
    }
  }
  EXPECT_EQ(failed, 0u);
  EXPECT_EQ(wrong, 0u) << "read-back words that differ from what was written";
  for (std::uint32_t q = 0; q < devices * queues_per_device; ++q) {
    EXPECT_EQ(every_position_once(positions[q], set.queues[q].control()->ticket), "")
        << "queue " << q;
  }

  std::uint64_t image_wrong = 0;
  for (unsigned t = 0; t < threads; ++t) {
    for (std::uint64_t k = 0; k < region_bytes / 8; ++k) {
      std::uint64_t w;
      std::memcpy(&w, image->data() + t * region_bytes + k * 8, 8);
      image_wrong += w != shadow[t][k];
    }
  }
  EXPECT_EQ(image_wrong, 0u) << "image words that differ from their thread's last write";

  const bam::device_stats dev = ssd.stats().total();
  EXPECT_EQ(dev.writes, rounds);
  EXPECT_EQ(dev.reads, rounds);
  EXPECT_EQ(dev.bytes_written, dev.bytes_read) << "each read-back reads what its write wrote";
}

INSTANTIATE_TEST_SUITE_P(Queues, WriteStress,
                         testing::Values(write_case{"TicketDepth16", protocol::ticket, 16, 100'000},
                                         write_case{"TicketDepth2", protocol::ticket, 2, 20'000},
                                         write_case{"NaiveDepth16", protocol::naive, 16, 60'000}),
                         case_name);

}  // namespace
