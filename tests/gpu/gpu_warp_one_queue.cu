// The 32 lanes of one warp share one queue of depth 2 (one usable slot): every submission
// waits for the lane before it, through the slot's turn counter, the tail lock and the CQ
// lock, with independent thread scheduling. Each lane reads random blocks and checks bytes,
// that every (slot, turn) and every command is answered once.
#include <cstdio>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

constexpr std::uint32_t lanes = 32;

struct warp_kernel {
  device_set_ref set;
  std::uint8_t* buffers;
  std::uint32_t* seen;  // per (slot, turn): completions that carried it
  std::uint32_t* done;  // per command
  unsigned long long* failures;
  std::uint32_t per_lane;
  std::uint64_t blocks_total;

  __device__ void operator()(thread_index t) const {
    if (t.id >= lanes || per_lane == 0) return;
    const queue_pair_ref& q = set.queue(0, 0);
    std::uint8_t* buffer = buffers + t.id * 4096;
    std::uint64_t x = 0x9e3779b97f4a7c15ull ^ (t.id * 0x632be59bd9b4e019ull);
    unsigned long long bad = 0;
    for (std::uint32_t i = 0; i < per_lane; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::uint64_t lba = x % blocks_total;
      *reinterpret_cast<std::uint64_t*>(buffer) = ~0ull;
      const auto cmd = nvme::make_rw(nvme::io_opcode::read, 1, lba, 1,
                                     reinterpret_cast<std::uint64_t>(buffer), 0);
      queue_ticket ticket;
      const io_status s = q.execute(cmd, ticket);
      if (!s.ok()) {
        ++bad;
        continue;
      }
      atomicAdd(&done[t.id * per_lane + i], 1u);
      // Each (slot, turn) once: the command id's sequence numbers. (Order is not checkable
      // here: wait() hands the slot to the next turn before it returns.)
      const std::uint32_t turns = lanes * per_lane;
      if (ticket.turn >= turns || atomicAdd(&seen[ticket.slot * turns + ticket.turn], 1u) != 0) {
        ++bad;
      }
      for (std::uint32_t o = 0; o < set.block_bytes; o += 8) {
        if (*reinterpret_cast<const std::uint64_t*>(buffer + o) !=
            pattern_word(lba * set.block_bytes + o)) {
          ++bad;
          break;
        }
      }
    }
    if (bad) atomicAdd(failures, bad);
  }
};

void run(checker& c, controller_placement placement, const options& o) {
  gpu_runtime rt(test_runtime_config());
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
  storage_config cfg;
  cfg.devices = 1;
  cfg.queues_per_device = 1;
  cfg.queue_depth = 2;
  cfg.model = device_model::unlimited();
  cfg.model.latency_us = 2;
  cfg.model.latency_p99_us = 20;
  cfg.timeout_ns = 30'000'000'000ull;
  cfg.placement = placement;
  const std::uint64_t image_bytes = 4ull << 20;
  auto image = pattern_image(
      image_bytes, placement == controller_placement::gpu_kernel ? o.image : memory_kind::pinned,
      rt);
  emulated_storage ssd(cfg, image, &rt);
  const std::uint32_t per_lane = o.small ? 20 : 300;

  io_memory buffers(placement, lanes * 4096);
  device_memory seen(sizeof(std::uint32_t) * 2 * lanes * per_lane);
  device_memory done(sizeof(std::uint32_t) * lanes * per_lane);
  device_memory failures(sizeof(unsigned long long));
  zero_async(seen.data(), seen.bytes(), rt.stream());
  zero_async(done.data(), done.bytes(), rt.stream());
  zero_async(failures.data(), failures.bytes(), rt.stream());
  warp_kernel k{ssd.ref(),
                buffers.data(),
                seen.as<std::uint32_t>(),
                done.as<std::uint32_t>(),
                failures.as<unsigned long long>(),
                0,
                image_bytes / cfg.block_bytes};
  rt.preload({kernel_function<warp_kernel>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, lanes, k); });  // per_lane = 0: no work
  k.per_lane = per_lane;
  stop_guard guard(rt);
  rt.start();
  launch(rt.stream(), 1, lanes, k);
  rt.synchronize(rt.stream(), 0, "the one-warp kernel");
  const storage_stats stats = ssd.stats();
  rt.check();
  rt.stop();

  const auto bad = download(rt, failures.as<unsigned long long>(), 1)[0];
  const auto answered = download(rt, done.as<std::uint32_t>(), lanes * per_lane);
  std::uint64_t wrong_count = 0;
  for (std::uint32_t n : answered) wrong_count += n != 1;
  const std::string p = name(placement);
  c.note(p + ": " + std::to_string(lanes * per_lane) + " commands through one depth-2 queue; " +
         std::to_string(stats.queues[0].sq_doorbells) + " doorbells");
  c.equal(bad, 0ull, p + ": failed, out-of-turn or wrong-byte commands");
  c.equal(wrong_count, std::uint64_t{0}, p + ": commands not answered exactly once");
  c.equal(stats.total().commands, std::uint64_t{lanes} * per_lane, p + ": commands fetched");
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  return bam::gpu_test::run_per_placement(argc, argv, "gpu_warp_one_queue", bam::gpu_test::run);
}
