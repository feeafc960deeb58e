// The runtime's lifecycle: green contexts (and the plain-stream fallback), start and stop
// twice with reads checked each time, the watchdog naming a queue whose command the
// controller dropped, and the %globaltimer step the latency model relies on.
#include <chrono>
#include <cstdio>
#include <thread>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

struct timer_probe {
  unsigned long long* out;  // [0]: smallest non-zero step, [1]: distinct values seen
  bool run;
  __device__ void operator()(thread_index t) const {
    if (t.id != 0 || !run) return;
    unsigned long long last = now_ns(), smallest = ~0ull, changes = 0;
    for (int i = 0; i < 200000; ++i) {
      const unsigned long long v = now_ns();
      if (v != last) {
        smallest = v - last < smallest ? v - last : smallest;
        ++changes;
        last = v;
      }
    }
    out[0] = smallest;
    out[1] = changes;
  }
};

struct reader {
  device_set_ref set;
  std::uint8_t* buffers;
  unsigned long long* bad;
  std::uint32_t per_thread;
  std::uint64_t blocks;
  __device__ void operator()(thread_index t) const {
    std::uint8_t* buffer = buffers + t.id * 512;
    unsigned long long wrong = 0;
    for (std::uint32_t i = 0; i < per_thread; ++i) {
      const std::uint64_t lba = (t.id * 7919 + i * 104729) % blocks;
      const queue_pair_ref& q =
          set.queue(0, static_cast<std::uint32_t>((t.id + i) % set.queues_per_device));
      queue_ticket ticket;
      const io_status s = q.execute(nvme::make_rw(nvme::io_opcode::read, 1, lba, 1,
                                                  reinterpret_cast<std::uint64_t>(buffer), 0),
                                    ticket);
      if (!s.ok() ||
          *reinterpret_cast<const std::uint64_t*>(buffer + 256) != pattern_word(lba * 512 + 256)) {
        ++wrong;
      }
    }
    if (wrong) atomicAdd(bad, wrong);
  }
};

struct lone_read {
  device_set_ref set;
  std::uint8_t* buffer;
  std::uint32_t* status;
  bool run;
  __device__ void operator()(thread_index t) const {
    if (t.id != 0 || !run) return;
    queue_ticket ticket;
    *status = set.queue(0, 0)
                  .execute(nvme::make_rw(nvme::io_opcode::read, 1, 3, 1,
                                         reinterpret_cast<std::uint64_t>(buffer), 0),
                           ticket)
                  .bits();
  }
};

void probe_timer(checker& c) {
  gpu_runtime rt(test_runtime_config());
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
  device_memory out(16);
  timer_probe k{out.as<unsigned long long>(), true};
  launch(rt.stream(), 1, 32, k);
  rt.synchronize(rt.stream());
  const auto v = download(rt, out.as<unsigned long long>(), 2);
  c.note("%globaltimer: smallest step " + std::to_string(v[0]) + " ns, " + std::to_string(v[1]) +
         " changes in 200000 reads");
  c.expect(v[1] > 0, "%globaltimer advances");
}

void start_stop_twice(checker& c, bool green) {
  runtime_config rc = test_runtime_config();
  rc.green_contexts = green;
  gpu_runtime rt(rc);
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
  const std::string mode = green ? "green" : "plain";
  c.note(mode + ": " + rt.message());
  if (green)
    c.note(std::string("green contexts ") +
           (rt.green_contexts() ? "in use" : "NOT in use (fallback)"));
  storage_config cfg;
  cfg.queues_per_device = 4;
  cfg.queue_depth = 32;
  cfg.model = device_model::unlimited();
  cfg.model.latency_us = 5;
  cfg.placement = controller_placement::gpu_kernel;
  cfg.timeout_ns = 20'000'000'000ull;
  auto image = pattern_image(16ull << 20, memory_kind::pinned, rt);
  emulated_storage ssd(cfg, image, &rt);
  c.note(mode + ": " + ssd.describe());
  constexpr std::uint32_t threads = 4096;
  device_memory buffers(threads * 512);
  device_memory bad(8);
  zero_async(bad.data(), 8, rt.stream());
  reader k{ssd.ref(), buffers.as<std::uint8_t>(), bad.as<unsigned long long>(), 0,
           (16ull << 20) / 512};
  rt.preload({kernel_function<reader>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, 32, k); });
  k.per_thread = 8;
  stop_guard guard(rt);
  for (int round = 0; round < 2; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    rt.start();
    const double start_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    launch(rt.stream(), threads / 256, 256, k);
    rt.synchronize(rt.stream(), 0, "reads");
    rt.check();
    const auto t1 = std::chrono::steady_clock::now();
    rt.stop();
    const double stop_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    c.note(mode + " round " + std::to_string(round) + ": start " + std::to_string(start_ms) +
           " ms, stop " + std::to_string(stop_ms) + " ms");
  }
  const auto wrong = download(rt, bad.as<unsigned long long>(), 1)[0];
  c.equal(wrong, 0ull, mode + ": failed or wrong reads over two start/stop rounds");
  c.equal(ssd.stats().total().commands, std::uint64_t{2} * threads * 8,
          mode + ": commands the controller fetched");
}

void watchdog_names_a_dropped_command(checker& c) {
  runtime_config rc = test_runtime_config();
  rc.watchdog_period_ns = 100'000'000;
  rc.stuck_after_ns = 300'000'000;
  gpu_runtime rt(rc);
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
  storage_config cfg;
  cfg.queues_per_device = 2;
  cfg.queue_depth = 8;
  cfg.model = device_model::unlimited();
  cfg.faults.drop_rate = 1.0;  // the controller never answers
  cfg.timeout_ns = 1'500'000'000ull;
  cfg.placement = controller_placement::gpu_kernel;
  cfg.controller.watch_period_ns = 20'000'000;
  auto image = pattern_image(1ull << 20, memory_kind::pinned, rt);
  emulated_storage ssd(cfg, image, &rt);
  device_memory buffer(4096);
  device_memory status(4);
  lone_read k{ssd.ref(), buffer.as<std::uint8_t>(), status.as<std::uint32_t>(), false};
  rt.preload({kernel_function<lone_read>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, 32, k); });
  k.run = true;
  stop_guard guard(rt);
  rt.start();
  launch(rt.stream(), 1, 32, k);
  rt.synchronize(rt.stream(), 0, "the lone read");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a watchdog pass or two more
  const auto stuck = ssd.stuck_queues(300'000'000);
  const auto reports = rt.watchdog_reports();
  const storage_stats stats = ssd.stats();
  rt.stop();
  const auto bits = download(rt, status.as<std::uint32_t>(), 1)[0];
  c.expect(io_status::from_bits(bits).source() == status_source::timeout,
           std::string("the dropped read times out: got ") + io_status::from_bits(bits).name());
  c.equal(stats.total().dropped, std::uint64_t{1}, "dropped commands");
  bool named = false;
  for (const auto& l : reports) {
    c.note("watchdog said: " + l);
    named |= l.find("queue 1: command id 0") != std::string::npos;
  }
  c.expect(named, "the watchdog named device 0 queue 1, command id 0");
  c.expect(!stuck.empty(), "stuck_queues names the queue");
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  using namespace bam::gpu_test;
  checker c("gpu_runtime_lifecycle");
  try {
    (void)parse(argc, argv);
    guarded(c, "timer", [&] { probe_timer(c); });
    guarded(c, "green", [&] { start_stop_twice(c, true); });
    guarded(c, "plain", [&] { start_stop_twice(c, false); });
    guarded(c, "watchdog", [&] { watchdog_names_a_dropped_command(c); });
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
