// Hundreds of thousands of GPU threads share a few small queues (slots wrap many times) while
// the controller completes out of order (a latency tail and late faults) and injects media
// errors. Every command must be answered exactly once, every (queue, slot, turn) once (the
// per-command-id sequence), with the right bytes or with the injected error, which must reach
// its submitter and match the controller's count.
#include <chrono>
#include <cstdio>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

constexpr std::uint32_t rounds = 2;  // each: a read, a write, a read-back
constexpr std::uint32_t commands_per_round = 3;
constexpr std::uint32_t buffer_stride = 8192;  // per thread; the buffer starts mid-page
constexpr std::uint32_t buffer_offset = 2048;  // so 4 KiB reads need PRP2

struct tallies {
  unsigned long long ok, media_errors, other_errors, timeouts, wrong_bytes, turn_violations,
      out_of_order, skipped_compares;
};

struct stress_kernel {
  device_set_ref set;
  std::uint8_t* buffers;
  std::uint32_t* seen;  // per (queue, slot, turn): completions that carried it
  std::uint32_t max_turns;
  std::uint32_t* done;      // per command: how many times it was answered
  std::uint64_t* last_pos;  // per queue: the largest position completed so far
  tallies* out;
  std::uint64_t read_blocks;  // device blocks [0, read_blocks) hold the read-only pattern
  std::uint64_t write_base;   // device block where the per-thread write slots start
  std::uint64_t active;       // threads that work (0: the warm-up launch)

  __device__ void account(const queue_pair_ref& q, std::uint32_t queue_index, const queue_ticket& t,
                          io_status s, std::uint64_t command, tallies& mine) const {
    if (s.source() == status_source::timeout || s.source() == status_source::submit_timeout ||
        s.source() == status_source::command_lost || s.source() == status_source::queue_halted) {
      ++mine.timeouts;
      return;
    }
    atomicAdd(&done[command], 1u);
    // A slot's turns are its command id's sequence numbers. (Checking that they arrive in
    // order would race: wait() hands the slot to the next turn before it returns.)
    const std::uint64_t key =
        (std::uint64_t{queue_index} * q.depth() + t.slot) * max_turns + t.turn;
    if (t.turn >= max_turns || atomicAdd(&seen[key], 1u) != 0) ++mine.turn_violations;
    const auto previous = static_cast<std::uint64_t>(
        atomicMax(reinterpret_cast<unsigned long long*>(&last_pos[queue_index]), t.position));
    if (previous > t.position) ++mine.out_of_order;
    if (s.ok()) {
      ++mine.ok;
    } else if (s.source() == status_source::device && s.sct() == 2 &&
               (s.sc() == 0x81 || s.sc() == 0x80)) {
      ++mine.media_errors;
    } else {
      ++mine.other_errors;
    }
  }

  __device__ void operator()(thread_index t) const {
    if (t.id >= active) return;
    tallies mine{};
    std::uint8_t* buffer = buffers + t.id * buffer_stride + buffer_offset;
    std::uint64_t x = 0x2545f4914f6cdd1dull * (t.id + 7);
    const std::uint32_t queues = set.devices * set.queues_per_device;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      const std::uint32_t qi = static_cast<std::uint32_t>((t.id + r) % queues);
      const std::uint32_t device = qi / set.queues_per_device;
      const queue_pair_ref& q = set.queue(device, qi % set.queues_per_device);
      const std::uint64_t first_command = (t.id * rounds + r) * commands_per_round;

      // 1. A random read of 1 to 8 blocks (4 KiB crosses into the next page: PRP2).
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::uint32_t blocks = 1 + static_cast<std::uint32_t>(x % 8);
      const std::uint64_t lba = (x >> 8) % (read_blocks - blocks);
      const std::uint64_t bytes = std::uint64_t{blocks} * set.block_bytes;
      for (std::uint64_t o = 0; o < bytes; o += 8) {
        *reinterpret_cast<std::uint64_t*>(buffer + o) = ~0ull;  // poison
      }
      auto cmd = nvme::make_rw(nvme::io_opcode::read, 1, lba, blocks,
                               reinterpret_cast<std::uint64_t>(buffer),
                               (reinterpret_cast<std::uint64_t>(buffer) & ~4095ull) + 4096);
      queue_ticket ticket;
      io_status s = q.execute(cmd, ticket);
      account(q, qi, ticket, s, first_command, mine);
      if (s.ok()) {
        for (std::uint64_t o = 0; o < bytes; o += 8) {
          const std::uint64_t want =
              pattern_word(image_byte(set, device, lba * set.block_bytes + o));
          if (*reinterpret_cast<const std::uint64_t*>(buffer + o) != want) {
            ++mine.wrong_bytes;
            break;
          }
        }
      }

      // 2. Write this thread's own block, then 3. read it back.
      const std::uint32_t wdevice = static_cast<std::uint32_t>(t.id % set.devices);
      const queue_pair_ref& wq = set.queue(
          wdevice, static_cast<std::uint32_t>((t.id / set.devices + r) % set.queues_per_device));
      const std::uint32_t wqi =
          wdevice * set.queues_per_device +
          static_cast<std::uint32_t>((t.id / set.devices + r) % set.queues_per_device);
      const std::uint64_t wlba = write_base + t.id / set.devices;
      for (std::uint32_t o = 0; o < set.block_bytes; o += 8) {
        *reinterpret_cast<std::uint64_t*>(buffer + o) = (t.id << 24) ^ (std::uint64_t{r} << 16) ^ o;
      }
      cmd = nvme::make_rw(nvme::io_opcode::write, 1, wlba, 1,
                          reinterpret_cast<std::uint64_t>(buffer), 0);
      s = wq.execute(cmd, ticket);
      account(wq, wqi, ticket, s, first_command + 1, mine);
      const bool written = s.ok();
      for (std::uint32_t o = 0; o < set.block_bytes; o += 8) {
        *reinterpret_cast<std::uint64_t*>(buffer + o) = ~0ull;
      }
      cmd = nvme::make_rw(nvme::io_opcode::read, 1, wlba, 1,
                          reinterpret_cast<std::uint64_t>(buffer), 0);
      s = wq.execute(cmd, ticket);
      account(wq, wqi, ticket, s, first_command + 2, mine);
      if (s.ok() && written) {
        for (std::uint32_t o = 0; o < set.block_bytes; o += 8) {
          const std::uint64_t want = (t.id << 24) ^ (std::uint64_t{r} << 16) ^ o;
          if (*reinterpret_cast<const std::uint64_t*>(buffer + o) != want) {
            ++mine.wrong_bytes;
            break;
          }
        }
      } else {
        ++mine.skipped_compares;  // an injected error left the block as it was
      }
    }
    auto add = [](unsigned long long* to, unsigned long long v) {
      if (v) atomicAdd(to, v);
    };
    add(&out->ok, mine.ok);
    add(&out->media_errors, mine.media_errors);
    add(&out->other_errors, mine.other_errors);
    add(&out->timeouts, mine.timeouts);
    add(&out->wrong_bytes, mine.wrong_bytes);
    add(&out->turn_violations, mine.turn_violations);
    add(&out->out_of_order, mine.out_of_order);
    add(&out->skipped_compares, mine.skipped_compares);
  }
};

void run(checker& c, controller_placement placement, const options& o) {
  const bool on_gpu = placement == controller_placement::gpu_kernel;
  gpu_runtime rt(test_runtime_config());
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;

  storage_config cfg;
  cfg.devices = o.small ? 1 : 2;
  cfg.queues_per_device = o.small ? 2 : 4;
  cfg.queue_depth = o.small ? 4 : 16;
  cfg.model = device_model::unlimited();
  cfg.model.latency_us = o.small ? 2 : 4;
  cfg.model.latency_p99_us = o.small ? 10 : 60;
  cfg.faults.error_rate = 0.002;
  cfg.faults.late_rate = o.small ? 0 : 0.01;
  cfg.faults.late_us = 300;
  cfg.faults.seed = 7;
  cfg.timeout_ns = 60'000'000'000ull;
  cfg.placement = placement;
  const std::uint64_t image_bytes = o.small ? (8ull << 20) : (256ull << 20);
  const memory_kind kind = on_gpu ? o.image : memory_kind::pinned;
  auto image = pattern_image(image_bytes, kind, rt);
  emulated_storage ssd(cfg, image, &rt);
  const device_set_ref set = ssd.ref();

  const std::uint32_t block = o.small ? 64 : 256;
  const std::uint32_t grid = o.small ? 4 : on_gpu ? 1024 : 32;
  const std::uint64_t threads = std::uint64_t{grid} * block;
  const std::uint64_t commands = threads * rounds * commands_per_round;
  const std::uint64_t blocks_per_device = image_bytes / cfg.devices / cfg.block_bytes;
  c.note(std::string(name(placement)) + ": " + std::to_string(threads) + " threads, " +
         std::to_string(commands) + " commands, " + std::to_string(cfg.devices) + " x " +
         std::to_string(cfg.queues_per_device) + " queues of depth " +
         std::to_string(cfg.queue_depth) + ", image " +
         (kind == memory_kind::device ? "device" : "pinned") + "; " + ssd.describe());

  io_memory buffers(placement, threads * buffer_stride);
  const std::uint32_t queue_count = cfg.devices * cfg.queues_per_device;
  const std::uint32_t max_turns =
      static_cast<std::uint32_t>(2 * commands / (queue_count * cfg.queue_depth) + 64);
  device_memory seen(sizeof(std::uint32_t) * queue_count * cfg.queue_depth * max_turns);
  device_memory done(sizeof(std::uint32_t) * commands);
  device_memory last_pos(sizeof(std::uint64_t) * queue_count);
  device_memory out(sizeof(tallies));
  zero_async(seen.data(), seen.bytes(), rt.stream());
  zero_async(done.data(), done.bytes(), rt.stream());
  zero_async(last_pos.data(), last_pos.bytes(), rt.stream());
  zero_async(out.data(), out.bytes(), rt.stream());
  stress_kernel k{set,
                  buffers.data(),
                  seen.as<std::uint32_t>(),
                  max_turns,
                  done.as<std::uint32_t>(),
                  last_pos.as<std::uint64_t>(),
                  out.as<tallies>(),
                  blocks_per_device / 2,
                  blocks_per_device / 2,
                  0};
  rt.preload({kernel_function<stress_kernel>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, 32, k); });  // no work: active = 0
  k.active = threads;

  stop_guard guard(rt);
  rt.start();
  const auto began = std::chrono::steady_clock::now();
  launch(rt.stream(), grid, block, k);
  rt.synchronize(rt.stream(), 0, "the stress kernel");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const storage_stats stats = ssd.stats();
  rt.check();
  rt.stop();

  const tallies t = download(rt, out.as<tallies>(), 1)[0];
  const std::vector<std::uint32_t> answered = download(rt, done.as<std::uint32_t>(), commands);
  std::uint64_t never = 0, twice = 0;
  for (std::uint32_t n : answered) {
    never += n == 0;
    twice += n > 1;
  }
  const device_stats total = stats.total();
  std::uint64_t submitted = 0, drained = 0, late = 0, bad = 0;
  for (const queue_counters& q : stats.queues) {
    submitted += q.submitted;
    drained += q.drained;
    late += q.late_completions;
    bad += q.bad_completions;
  }
  c.note(std::string(name(placement)) + ": " + std::to_string(seconds) + " s, " +
         std::to_string(static_cast<double>(commands) / seconds / 1e6) + " M commands/s; ok " +
         std::to_string(t.ok) + ", media errors " + std::to_string(t.media_errors) + ", late " +
         std::to_string(total.late) + ", completions seen out of submission order " +
         std::to_string(t.out_of_order));
  const std::string p = name(placement);
  c.equal(t.timeouts, 0ull, p + ": commands without an answer before the deadline");
  c.equal(t.other_errors, 0ull, p + ": unexpected error statuses");
  c.equal(t.wrong_bytes, 0ull, p + ": commands that returned wrong bytes");
  c.equal(t.turn_violations, 0ull, p + ": (queue, slot, turn) answered more than once");
  c.equal(never, std::uint64_t{0}, p + ": commands never answered");
  c.equal(twice, std::uint64_t{0}, p + ": commands answered more than once");
  c.equal(t.ok + t.media_errors, commands, p + ": answered commands");
  c.equal(t.media_errors, total.injected_errors,
          p + ": media errors seen by submitters vs injected by the controller");
  c.equal(total.commands, commands, p + ": commands the controller fetched");
  c.equal(total.invalid, std::uint64_t{0}, p + ": commands the controller rejected");
  c.equal(total.dropped, std::uint64_t{0}, p + ": commands dropped");
  c.equal(submitted, commands, p + ": entries the tails passed");
  c.equal(drained, commands, p + ": completions drained");
  c.equal(late, std::uint64_t{0}, p + ": completions after their submitter gave up");
  c.equal(bad, std::uint64_t{0}, p + ": completions naming a bad command id");
  if (!o.small) {
    c.expect(total.injected_errors > 0, p + ": some media errors were injected");
    c.expect(total.late > 0, p + ": some completions were made late");
  }
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  return bam::gpu_test::run_per_placement(argc, argv, "gpu_queue_stress", bam::gpu_test::run);
}
