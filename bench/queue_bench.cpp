#include "queue_bench.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include <bam/error.hpp>
#include <bam/nvme/command.hpp>
#include <bam/runtime/gpu_info.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::bench {

namespace {

constexpr std::uint64_t image_bytes = 64ull << 20;

// Every 8-byte word of the image holds its own offset, so a read can be checked cheaply.
void fill_pattern(backing_store& image) {
  auto* words = reinterpret_cast<std::uint64_t*>(image.data());
  for (std::uint64_t i = 0; i < image.bytes() / 8; ++i) words[i] = i * 8;
}

}  // namespace

void run_queue_bench(const queue_bench_options& options) {
  if (options.side != "" && options.side != "cpu" && options.side != "gpu") {
    throw input_error("--side must be gpu or cpu, got '" + options.side + "'");
  }
  const std::string side = !options.side.empty() ? options.side : gpu_available() ? "gpu" : "cpu";
  if (side == "gpu") {
    if (!gpu_available()) throw input_error("--side gpu needs a GPU: " + gpu_unavailable_reason());
    run_queue_bench_gpu(options);
    return;
  }
  queue_bench_options o = options;
  if (o.threads == 0) o.threads = 64;
  if (o.queues == 0) o.queues = 4;
  if (o.depth == 0) o.depth = 64;
  if (o.devices != 1) throw input_error("--devices applies to --side gpu only");
  if (o.protocol != "ticket" && o.protocol != "naive") {
    throw input_error("--protocol must be ticket or naive, got '" + o.protocol + "'");
  }
  if (o.threads > 4096) throw input_error("--threads must be 1..4096");
  if (o.commands == 0) throw input_error("--commands must be positive");
  if (o.io_bytes % 512 != 0 || o.io_bytes == 0 || o.io_bytes > 4096) {
    throw input_error("--io-bytes must be a multiple of 512 up to 4096");
  }
  const bool naive = o.protocol == "naive";

  auto image = backing_store::in_memory(image_bytes);
  fill_pattern(*image);
  storage_config config;
  config.devices = 1;
  config.queues_per_device = o.queues;
  config.queue_depth = o.depth;
  config.model = device_model::unlimited();
  config.model.latency_us = o.latency_us;
  config.timeout_ns = 60'000'000'000ull;
  emulated_storage ssd(config, image);
  const device_set_ref set = ssd.ref();
  ssd.start();

  std::atomic<std::uint64_t> next{0}, completed{0}, failed{0}, wrong{0};
  const std::uint64_t blocks = o.io_bytes / 512;
  const std::uint64_t lba_span = image_bytes / 512 - blocks;
  auto worker = [&](unsigned t) {
    alignas(4096) static thread_local std::uint8_t buffer[4096];
    std::uint64_t x = 0x9e3779b97f4a7c15ull * (t + 1);
    for (;;) {
      const std::uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= o.commands) return;
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::uint64_t lba = x % lba_span;
      const queue_pair_ref& q = set.queue(0, static_cast<std::uint32_t>(i % o.queues));
      const auto cmd =
          nvme::make_rw(nvme::io_opcode::read, 1, lba, static_cast<std::uint32_t>(blocks),
                        reinterpret_cast<std::uint64_t>(buffer), 0);
      queue_ticket ticket;
      const deadline until = deadline::after_ns(q.timeout_ns());
      io_status s = naive ? q.submit_naive(cmd, until, ticket) : q.submit(cmd, until, ticket);
      if (s.ok()) s = q.wait(ticket, until);
      if (!s.ok()) {
        failed.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      std::uint64_t first = 0;
      std::memcpy(&first, buffer, 8);
      if (first != lba * 512) wrong.fetch_add(1, std::memory_order_relaxed);
      completed.fetch_add(1, std::memory_order_relaxed);
    }
  };

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < o.threads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ssd.stop();

  const storage_stats stats = ssd.stats();
  std::uint64_t doorbells = 0, submitted = 0;
  for (const auto& q : stats.queues) {
    doorbells += q.sq_doorbells;
    submitted += q.submitted;
  }
  const double rate = static_cast<double>(completed.load()) / seconds;
  const double batch =
      doorbells ? static_cast<double>(submitted) / static_cast<double>(doorbells) : 0;

  tools::table t({"protocol", "threads", "queues x depth", "commands", "completed", "failed",
                  "wrong bytes", "seconds", "commands/s", "entries/doorbell"});
  t.add_row({o.protocol, std::to_string(o.threads),
             std::to_string(o.queues) + " x " + std::to_string(o.depth), std::to_string(o.commands),
             std::to_string(completed.load()), std::to_string(failed.load()),
             std::to_string(wrong.load()), std::to_string(seconds), tools::format_count(rate),
             std::to_string(batch)});
  t.print(std::cout);

  if (!o.json.empty()) {
    tools::json_writer j;
    j.begin_object().field("benchmark", "queue").key("machine");
    tools::write_json(j, tools::read_machine_info());
    j.field("side", "cpu")
        .field("protocol", o.protocol)
        .field("threads", o.threads)
        .field("queues", o.queues)
        .field("depth", o.depth)
        .field("io_bytes", o.io_bytes)
        .field("latency_us", o.latency_us)
        .field("commands", o.commands)
        .field("completed", completed.load())
        .field("failed", failed.load())
        .field("wrong_bytes", wrong.load())
        .field("seconds", seconds)
        .field("commands_per_s", rate)
        .field("entries_per_doorbell", batch)
        .end_object();
    j.save(o.json);
  }
  if (failed.load() != 0 || wrong.load() != 0) {
    throw error(std::to_string(failed.load()) + " commands failed and " +
                std::to_string(wrong.load()) + " returned wrong bytes");
  }
}

}  // namespace bam::bench
