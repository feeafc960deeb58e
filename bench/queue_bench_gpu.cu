// `bam bench queue --side gpu`: GPU threads submit and wait random reads through the ticketed
// (or naive) queue protocol against the emulated SSD controller kernel on its own SMs.
#include <cstring>
#include <iostream>
#include <vector>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/nvme/command.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"
#include "queue_bench.hpp"

namespace bam::bench {

namespace {

constexpr std::uint64_t image_bytes = 256ull << 20;

struct bench_counts {
  unsigned long long completed;
  unsigned long long failed;
  unsigned long long wrong;
};

// Each thread reads random blocks into its own buffer and checks the first word: every 8-byte
// word of the image holds its own image offset.
struct bench_reader {
  device_set_ref set;
  std::uint8_t* buffers;
  std::uint64_t stride;
  std::uint64_t commands;
  std::uint32_t blocks;
  std::uint64_t lba_span;  // per device
  bool naive;
  bench_counts* counts;

  __device__ std::uint64_t image_offset(std::uint32_t device, std::uint64_t lba) const {
    const std::uint64_t byte = lba * set.block_bytes;
    if (set.devices == 1 || set.replicated) return byte;
    const std::uint64_t stripe = byte / set.stripe_bytes;
    return (stripe * set.devices + device) * set.stripe_bytes + byte % set.stripe_bytes;
  }

  __device__ void operator()(thread_index t) const {
    std::uint8_t* buffer = buffers + t.id * stride;
    std::uint64_t x = 0x9e3779b97f4a7c15ull * (t.id + 1);
    unsigned long long completed = 0, failed = 0, wrong = 0;
    const std::uint32_t queues = set.devices * set.queues_per_device;
    for (std::uint64_t i = t.id; i < commands; i += t.count) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::uint64_t lba = x % lba_span;
      const auto qi = static_cast<std::uint32_t>(i % queues);
      const std::uint32_t device = qi / set.queues_per_device;
      const queue_pair_ref& q = set.queue(device, qi % set.queues_per_device);
      *reinterpret_cast<volatile std::uint64_t*>(buffer) = ~0ull;  // poison: a missed write shows
      const auto cmd = nvme::make_rw(nvme::io_opcode::read, 1, lba, blocks,
                                     reinterpret_cast<std::uint64_t>(buffer), 0);
      queue_ticket ticket;
      const deadline until = deadline::after_ns(q.timeout_ns());
      io_status s = naive ? q.submit_naive(cmd, until, ticket) : q.submit(cmd, until, ticket);
      if (s.ok()) s = q.wait(ticket, until);
      if (!s.ok()) {
        ++failed;
        continue;
      }
      if (*reinterpret_cast<const std::uint64_t*>(buffer) != image_offset(device, lba)) ++wrong;
      ++completed;
    }
    if (completed) atomicAdd(&counts->completed, completed);
    if (failed) atomicAdd(&counts->failed, failed);
    if (wrong) atomicAdd(&counts->wrong, wrong);
  }
};

std::shared_ptr<backing_store> pattern_image(memory_kind kind, stream_handle s, gpu_runtime& rt) {
  auto image = backing_store::in_memory(image_bytes, kind);
  std::vector<std::uint64_t> words(image_bytes / 8);
  for (std::uint64_t i = 0; i < words.size(); ++i) words[i] = i * 8;
  if (kind == memory_kind::device) {
    copy_async(image->data(), words.data(), image_bytes, s);
    rt.synchronize(s, 0, "loading the image");
  } else {
    std::memcpy(image->data(), words.data(), image_bytes);
  }
  return image;
}

}  // namespace

void run_queue_bench_gpu(const queue_bench_options& options) {
  queue_bench_options o = options;
  if (o.queues == 0) o.queues = 128;
  if (o.depth == 0) o.depth = 1024;
  if (o.protocol != "ticket" && o.protocol != "naive") {
    throw input_error("--protocol must be ticket or naive, got '" + o.protocol + "'");
  }
  if (o.io_bytes % 512 != 0 || o.io_bytes == 0 || o.io_bytes > 4096) {
    throw input_error("--io-bytes must be a multiple of 512 up to 4096");
  }
  if (o.image != "pinned" && o.image != "device") {
    throw input_error("--image must be pinned or device, got '" + o.image + "'");
  }
  if (o.devices == 0 || o.commands == 0) throw input_error("--devices and --commands must be > 0");

  runtime_config rc;
  rc.controller_sms = o.controller_sms;
  rc.watchdog = true;
  gpu_runtime rt(rc);
  if (!rt.gpu()) throw input_error("--side gpu needs a GPU: " + rt.message());
  const memory_kind kind = o.image == "device" ? memory_kind::device : memory_kind::pinned;
  auto image = pattern_image(kind, rt.stream(), rt);

  storage_config config;
  config.devices = o.devices;
  config.queues_per_device = o.queues;
  config.queue_depth = o.depth;
  config.model = device_model::unlimited();
  config.model.latency_us = o.latency_us;
  config.timeout_ns = 60'000'000'000ull;
  config.placement = controller_placement::gpu_kernel;
  emulated_storage ssd(config, image, &rt);

  // The grid: every thread that can be resident on the applications' SMs, unless asked.
  constexpr std::uint32_t block = 256;
  int per_sm = 0;
  BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel_function<bench_reader>(), block, 0));
  const std::uint64_t resident = std::uint64_t(per_sm) * block * rt.app_sms();
  const std::uint64_t threads = o.threads ? o.threads : resident;
  const auto grid = static_cast<std::uint32_t>((threads + block - 1) / block);
  std::uint64_t stride = 512;
  while (stride < o.io_bytes) stride *= 2;  // a power of two: a buffer never crosses a page

  device_memory buffers(grid * std::uint64_t{block} * stride);
  device_memory counts(sizeof(bench_counts));
  pinned_memory counts_out(sizeof(bench_counts));
  zero_async(counts.data(), sizeof(bench_counts), rt.stream());
  cudaEvent_t begin = nullptr, end = nullptr;
  BAM_CUDA_CHECK(cudaEventCreate(&begin));
  BAM_CUDA_CHECK(cudaEventCreate(&end));

  bench_reader kernel{
      ssd.ref(),
      buffers.as<std::uint8_t>(),
      stride,
      o.commands,
      o.io_bytes / config.block_bytes,
      image_bytes / o.devices / config.block_bytes - o.io_bytes / config.block_bytes,
      o.protocol == "naive",
      counts.as<bench_counts>()};
  rt.preload({kernel_function<bench_reader>()});
  rt.warm_up([&](stream_handle s) {
    bench_reader idle = kernel;
    idle.commands = 0;
    launch(s, 1, 32, idle);
  });

  rt.start();
  std::cerr << "bam: " << rt.message() << "\nbam: controller " << ssd.describe() << "\n";
  float ms = 0;
  storage_stats stats;
  try {
    BAM_CUDA_CHECK(cudaEventRecord(begin, rt.stream()));
    launch(rt.stream(), grid, block, kernel);
    BAM_CUDA_CHECK(cudaEventRecord(end, rt.stream()));
    copy_async(counts_out.data(), counts.data(), sizeof(bench_counts), rt.stream());
    rt.synchronize(rt.stream(), 0, "the benchmark kernel");
    BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    stats = ssd.stats();
    rt.check();
    rt.stop();
  } catch (...) {
    // Stop the controller before the buffers are freed: cudaFree waits for running kernels.
    try {
      rt.stop();
    } catch (const std::exception& e) {
      rt.log(std::string("stop after a failure: ") + e.what());
    }
    throw;
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);

  const bench_counts c = *counts_out.as<bench_counts>();
  std::uint64_t doorbells = 0, submitted = 0;
  for (const auto& q : stats.queues) {
    doorbells += q.sq_doorbells;
    submitted += q.submitted;
  }
  const double seconds = ms / 1e3;
  const double rate = static_cast<double>(c.completed) / seconds;
  const double batch =
      doorbells ? static_cast<double>(submitted) / static_cast<double>(doorbells) : 0;
  const std::uint64_t controller_commands = stats.total().commands;

  tools::table t({"side", "protocol", "threads", "devices x queues x depth", "image", "commands",
                  "completed", "failed", "wrong bytes", "seconds", "commands/s",
                  "entries/doorbell"});
  t.add_row({"gpu", o.protocol, std::to_string(threads),
             std::to_string(o.devices) + " x " + std::to_string(o.queues) + " x " +
                 std::to_string(o.depth),
             o.image, std::to_string(o.commands), std::to_string(c.completed),
             std::to_string(c.failed), std::to_string(c.wrong), std::to_string(seconds),
             tools::format_count(rate), std::to_string(batch)});
  t.print(std::cout);

  if (!o.json.empty()) {
    tools::json_writer j;
    j.begin_object().field("benchmark", "queue").key("machine");
    tools::write_json(j, tools::read_machine_info());
    j.field("side", "gpu")
        .field("protocol", o.protocol)
        .field("threads", threads)
        .field("devices", o.devices)
        .field("queues", o.queues)
        .field("depth", o.depth)
        .field("io_bytes", o.io_bytes)
        .field("latency_us", o.latency_us)
        .field("image", o.image)
        .field("controller_sms", rt.controller_sms())
        .field("app_sms", rt.app_sms())
        .field("green_contexts", rt.green_contexts())
        .field("controller", ssd.describe())
        .field("commands", o.commands)
        .field("completed", static_cast<std::uint64_t>(c.completed))
        .field("failed", static_cast<std::uint64_t>(c.failed))
        .field("wrong_bytes", static_cast<std::uint64_t>(c.wrong))
        .field("controller_commands", controller_commands)
        .field("seconds", seconds)
        .field("commands_per_s", rate)
        .field("entries_per_doorbell", batch)
        .end_object();
    j.save(o.json);
  }
  if (c.failed != 0 || c.wrong != 0 || c.completed != o.commands) {
    throw error(std::to_string(c.failed) + " commands failed, " + std::to_string(c.wrong) +
                " returned wrong bytes, " + std::to_string(c.completed) + " of " +
                std::to_string(o.commands) + " completed");
  }
}

}  // namespace bam::bench
