// Commands issued from a kernel launched with bam::launch on the CPU thread pool (the app
// kernel model) instead of raw threads: a grid-stride loop of reads, each checked against the
// image, on both protocols.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "stress_support.hpp"

namespace {

using namespace bam::testing;

// Per-run tallies a kernel adds to; plain words updated through bam::atomic_ref.
struct tallies {
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  std::uint64_t wrong_words = 0;
  std::uint64_t first_failure = 0;  // io_status bits + 1, 0: none
};

// The kernel: logical thread t reads commands t, t + count, ... into its own buffer.
struct read_kernel {
  bam::device_set_ref set;
  protocol proto;
  std::uint64_t commands;
  std::uint64_t image_bytes;
  io_buffer* buffers;  // one per logical thread
  tallies* out;

  void operator()(bam::thread_index t) const {
    io_buffer& buffer = buffers[t.id];
    rng r(t.id + 17);
    std::uint64_t ok = 0, failed = 0, wrong = 0;
    for (std::uint64_t i = t.id; i < commands; i += t.count) {
      const extent e = random_extent(set, r, 0, image_bytes, 8);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const bam::queue_pair_ref& q =
          set.queue(e.device, static_cast<std::uint32_t>(i % set.queues_per_device));
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, buffer, offset, set.block_bytes);
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(q.timeout_ns());
      const bam::io_status s = run_command(q, proto, cmd, until, until, ticket);
      if (!s.ok()) {
        ++failed;
        std::uint64_t none = 0;
        // relaxed: read after the stream synchronizes, which orders it.
        bam::atomic_ref<std::uint64_t>(out->first_failure)
            .compare_exchange(none, s.bits() + 1u, bam::order::relaxed);
        continue;
      }
      ++ok;
      wrong += pattern_mismatches(buffer, offset, e, set.block_bytes);
    }
    // relaxed: statistics, read after synchronize().
    bam::atomic_ref<std::uint64_t>(out->ok).fetch_add(ok, bam::order::relaxed);
    bam::atomic_ref<std::uint64_t>(out->failed).fetch_add(failed, bam::order::relaxed);
    bam::atomic_ref<std::uint64_t>(out->wrong_words).fetch_add(wrong, bam::order::relaxed);
  }
};

class LaunchStress : public testing::TestWithParam<protocol> {};

std::string protocol_name(const testing::TestParamInfo<protocol>& info) {
  return info.param == protocol::ticket ? "Ticket" : "Naive";
}

TEST_P(LaunchStress, ReadsFromALaunchedKernelAllCompleteWithTheirBytes) {
  constexpr std::uint64_t image_bytes = 2 << 20;
  constexpr std::uint32_t grid = 32, block = 32;
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = 2;
  config.queues_per_device = 2;
  config.queue_depth = 8;
  config.stripe_bytes = 8192;
  config.model = {.latency_us = 3, .latency_p99_us = 40, .caps = false};
  config.timeout_ns = 120'000'000'000ull;
  bam::emulated_storage ssd(config, image);
  const std::uint64_t commands = scaled(100'000, 2000);
  std::vector<io_buffer> buffers(std::uint64_t{grid} * block);
  tallies out;
  bam::host_stream stream(64);  // 64 workers: more than the cores, as the launch model wants
  ssd.start();

  // Two launches in stream order: the second starts after the first finished.
  bam::launch(stream, grid, block,
              read_kernel{ssd.ref(), GetParam(), commands / 2, image_bytes, buffers.data(), &out});
  bam::launch(stream, grid, block,
              read_kernel{ssd.ref(), GetParam(), commands - commands / 2, image_bytes,
                          buffers.data(), &out});
  stream.synchronize();
  ssd.stop();

  EXPECT_EQ(out.failed, 0u)
      << (out.first_failure
              ? bam::io_status::from_bits(static_cast<std::uint32_t>(out.first_failure - 1)).name()
              : "");
  EXPECT_EQ(out.wrong_words, 0u);
  EXPECT_EQ(out.ok, commands);
  const bam::storage_stats stats = ssd.stats();
  EXPECT_EQ(stats.total().reads, commands);
  EXPECT_EQ(total(stats.queues).drained, commands);
  EXPECT_EQ(total(stats.queues).late_completions, 0u);
}

INSTANTIATE_TEST_SUITE_P(Protocols, LaunchStress,
                         testing::Values(protocol::ticket, protocol::naive), protocol_name);

}  // namespace
