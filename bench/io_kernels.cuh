#pragma once
// The kernels of `bam bench io` (GPU only): threads that submit and wait random commands
// through the queue protocol, the controller-alone fill/ring/collect kernels, a lock hand-off
// probe, a fence probe and a %globaltimer step probe.

#include <cstdint>

#include <bam/nvme/command.hpp>
#include <bam/nvme/completion.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/mmio.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "bench_pattern.hpp"

namespace bam::bench::io {

inline constexpr unsigned warp_lanes = 32;
inline constexpr unsigned full_warp = 0xffffffffu;

/// Totals of a run (device memory; copied out after the launch).
struct run_counts {
  std::uint64_t completed;
  std::uint64_t failed;
  std::uint64_t wrong;
  std::uint64_t end_ns;  ///< the run's deadline (%globaltimer), set by its first thread
};

/// Stamps (%globaltimer) of one sampled command: submit called, submit returned (a doorbell
/// covered it), the controller's fetch started (before its acquire of the doorbell), fetched,
/// completion posted (before the controller's fence), completion stored (after its fence and
/// release; may be an older command's: see gpu_controller_options::trace), completion seen by
/// its waiter.
struct stage_sample {
  std::uint64_t t[7];
};

/// The image byte holding byte `lba * block` of `device` (device_set_ref's striping inverted).
__device__ __forceinline__ std::uint64_t image_offset(const device_set_ref& set,
                                                      std::uint32_t device, std::uint64_t lba) {
  const std::uint64_t byte = lba * set.block_bytes;
  if (set.devices == 1 || set.replicated) return byte;
  const std::uint64_t stripe = byte / set.stripe_bytes;
  return (stripe * set.devices + device) * set.stripe_bytes + byte % set.stripe_bytes;
}

/// The deadline every thread of a run agrees on: the first to arrive sets now + duration.
__device__ __forceinline__ std::uint64_t agree_on_end(std::uint64_t* word, std::uint64_t duration) {
  atomic_ref<std::uint64_t> end(*word);
  // relaxed: the word carries only its own value (no data is published with it).
  std::uint64_t seen = end.load(order::relaxed);
  if (seen != 0) return seen;
  const std::uint64_t mine = now_ns() + duration;
  // relaxed: as above; the loser takes the winner's value.
  return end.compare_exchange(seen, mine, order::relaxed) ? mine : seen;
}

/// Adds a thread's totals (relaxed: the host reads them after the launch has completed).
__device__ __forceinline__ void add_counts(run_counts* c, std::uint64_t completed,
                                           std::uint64_t failed, std::uint64_t wrong) {
  if (completed) atomic_ref<std::uint64_t>(c->completed).fetch_add(completed, order::relaxed);
  if (failed) atomic_ref<std::uint64_t>(c->failed).fetch_add(failed, order::relaxed);
  if (wrong) atomic_ref<std::uint64_t>(c->wrong).fetch_add(wrong, order::relaxed);
}

/// Zeroes `n` words (a kernel of our own: a memset beside a running controller would be a
/// first launch of a driver kernel, DESIGN 11).
struct zero_words {
  std::uint64_t* words;
  std::uint64_t n;
  __device__ void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < n; i += t.count) words[i] = 0;
  }
};

/// Each thread submits a random command, waits for it, checks it, and repeats until the run's
/// deadline. Commands are `blocks` blocks at random command-aligned LBAs among the first
/// `slots_per_device` command-sized slots of each device. Only the first `lanes_per_warp`
/// lanes of each warp work (the others leave at once); "working thread" numbers count those,
/// so 32 working threads are one full warp or 32 warps of one lane, on the same queue.
struct io_worker {
  device_set_ref set;
  std::uint8_t* buffers;  ///< one buffer of 1 << buffer_shift bytes per thread
  std::uint32_t buffer_shift;
  std::uint32_t blocks;
  std::uint64_t slots_per_device;
  bool write;     ///< writes carry the pattern of their target, so the image stays intact
  bool naive;     ///< submit_naive instead of submit
  bool lane_map;  ///< queue per working thread (mod queues) instead of per 32 of them
  std::uint32_t lanes_per_warp;  ///< 1..32 working lanes per warp
  std::uint32_t seed;
  std::uint64_t duration_ns;
  run_counts* counts;
  std::uint64_t* trace;  ///< null, or the controller's trace (then sampling is on)
  stage_sample* samples;
  std::uint32_t sample_every;  ///< threads with id % sample_every == 0 sample
  std::uint32_t samples_per_thread;

  __device__ void operator()(thread_index t) const {
    const auto lane = static_cast<std::uint32_t>(t.id % warp_lanes);
    if (lane >= lanes_per_warp) return;
    const std::uint64_t me = t.id / warp_lanes * lanes_per_warp + lane;  // working thread
    const std::uint64_t end = agree_on_end(&counts->end_ns, duration_ns);
    const std::uint32_t queues = set.devices * set.queues_per_device;
    // Round robin over the devices first, then their queues: a few warps already spread
    // over every device, as a striped application's reads do (device-major, the first
    // queues_per_device warps would all wait on device 0's rate).
    const std::uint64_t turn = (lane_map ? me : me / warp_lanes) % queues;
    const auto device = static_cast<std::uint32_t>(turn % set.devices);
    const auto index = static_cast<std::uint32_t>(turn / set.devices);
    const std::uint64_t qg = std::uint64_t{device} * set.queues_per_device + index;  // trace's
    const queue_pair_ref& q = set.queue(device, index);
    std::uint8_t* buffer = buffers + (me << buffer_shift);
    const std::uint64_t bytes = std::uint64_t{blocks} * set.block_bytes;
    const bool sampler = trace != nullptr && me % sample_every == 0;
    stage_sample* mine = sampler ? samples + (me / sample_every) * samples_per_thread : nullptr;
    std::uint32_t taken = 0;
    std::uint64_t completed = 0, failed = 0, wrong = 0;
    for (std::uint64_t k = 0;; ++k) {
      const std::uint64_t t0 = now_ns();
      if (t0 >= end) break;
      const std::uint64_t lba =
          pick64((me << 32) | (k & 0xffffffffu), seed, slots_per_device) * blocks;
      const std::uint64_t at = image_offset(set, device, lba);
      auto* words = reinterpret_cast<std::uint64_t*>(buffer);
      if (write) {
        for (std::uint64_t w = 0; w < bytes / 8; ++w) words[w] = pattern_word(at + 8 * w);
      } else {
        words[0] = ~0ull;  // poison: a read that moved nothing shows
        words[bytes / 8 - 1] = ~0ull;
      }
      const auto op = write ? nvme::io_opcode::write : nvme::io_opcode::read;
      const auto cmd =
          nvme::make_rw(op, 1, lba, blocks, reinterpret_cast<std::uint64_t>(buffer), 0);
      queue_ticket ticket;
      const deadline until = deadline::after_ns(q.timeout_ns());
      io_status s = naive ? q.submit_naive(cmd, until, ticket) : q.submit(cmd, until, ticket);
      const std::uint64_t t1 = now_ns();
      if (s.ok()) s = q.wait(ticket, until);
      if (!s.ok()) {
        ++failed;
        continue;
      }
      // The stamps of this command's slot, read before our own "seen" stamp so a later
      // command in the slot (submitted after wait() freed it) shows as an invalid sample.
      std::uint64_t fetching = 0, fetched = 0, posted = 0, stored = 0;
      const bool sample = sampler && taken < samples_per_thread && k >= 4 && k % 4 == 0;
      if (sample) {
        std::uint64_t* at_trace = trace + controller_trace_words * (qg * q.depth() + ticket.slot);
        // relaxed: ordered after the controller's stores by the completion's acquire chain.
        fetching = atomic_ref<std::uint64_t>(at_trace[0]).load(order::relaxed);
        fetched = atomic_ref<std::uint64_t>(at_trace[1]).load(order::relaxed);
        posted = atomic_ref<std::uint64_t>(at_trace[2]).load(order::relaxed);
        // relaxed: stored after the completion was released, so it may not be here yet.
        stored = atomic_ref<std::uint64_t>(at_trace[3]).load(order::relaxed);
      }
      const std::uint64_t t4 = now_ns();
      if (!write &&
          (words[0] != pattern_word(at) || words[bytes / 8 - 1] != pattern_word(at + bytes - 8))) {
        ++wrong;
      }
      ++completed;
      if (sample) mine[taken++] = stage_sample{{t0, t1, fetching, fetched, posted, stored, t4}};
    }
    add_counts(counts, completed, failed, wrong);
  }
};

// --- figure 1: the controller alone --------------------------------------------------------
// A round writes depth - 1 read commands into every SQ (positions round * (depth - 1) ...
// continue the ring), rings every tail doorbell at once, and waits for the last completion of
// every CQ; the collector then checks every completion and buffer and hands the CQ back by
// ringing its head doorbell. Nothing else touches these queues (no drainer, no tickets).

struct controller_round {
  device_set_ref set;
  std::uint8_t* buffers;  ///< 512 B per (queue, slot)
  std::uint64_t slots_per_device;
  std::uint32_t round;
  std::uint32_t seed;
  std::uint64_t* ring_ns;    ///< per queue: when its doorbell was rung
  std::uint64_t* finish_ns;  ///< per queue: when its last completion was seen (0: timed out)
  run_counts* counts;        ///< completed, failed (bad status or timeout), wrong bytes
  std::uint64_t timeout_ns;

  __device__ std::uint32_t queues() const { return set.devices * set.queues_per_device; }
  __device__ const queue_pair_ref& queue(std::uint64_t qg) const {
    return set.queue(static_cast<std::uint32_t>(qg / set.queues_per_device),
                     static_cast<std::uint32_t>(qg % set.queues_per_device));
  }
  __device__ std::uint64_t position(std::uint32_t depth, std::uint64_t k) const {
    return std::uint64_t{round} * (depth - 1) + k;
  }
  __device__ std::uint64_t lba(std::uint64_t qg, std::uint64_t pos) const {
    return pick64((qg << 40) | pos, seed, slots_per_device);
  }
  __device__ std::uint8_t* buffer(std::uint64_t qg, std::uint32_t depth, std::uint32_t slot) const {
    return buffers + ((qg * depth + slot) << 9);
  }
};

/// Writes the round's entries (a thread per entry).
struct controller_fill {
  controller_round r;
  __device__ void operator()(thread_index t) const {
    const std::uint32_t depth = r.queue(0).depth();
    const std::uint64_t per_queue = depth - 1;
    for (std::uint64_t i = t.id; i < r.queues() * per_queue; i += t.count) {
      const std::uint64_t qg = i / per_queue;
      const std::uint64_t pos = r.position(depth, i % per_queue);
      const auto slot = static_cast<std::uint32_t>(pos % depth);
      std::uint8_t* b = r.buffer(qg, depth, slot);
      *reinterpret_cast<std::uint64_t*>(b) = ~0ull;  // poison
      nvme::submission_entry e = nvme::make_rw(nvme::io_opcode::read, 1, r.lba(qg, pos), 1,
                                               reinterpret_cast<std::uint64_t>(b), 0);
      e.command_id = static_cast<std::uint16_t>(slot);
      r.queue(qg).sq()[slot] = e;  // published by the kernel boundary and the ring's release
    }
  }
};

/// Rings every queue's tail doorbell (a thread per queue).
struct controller_ring {
  controller_round r;
  __device__ void operator()(thread_index t) const {
    for (std::uint64_t qg = t.id; qg < r.queues(); qg += t.count) {
      const queue_pair_ref& q = r.queue(qg);
      const std::uint64_t tail = r.position(q.depth(), q.depth() - 1);
      r.ring_ns[qg] = now_ns();
      ring_doorbell(q.sq_doorbell(), static_cast<std::uint32_t>(tail % q.depth()), false);
    }
  }
};

/// Waits for each queue's last completion, stamps it, checks the round, hands the CQ back
/// (a warp per queue). Launch with whole warps.
struct controller_collect {
  controller_round r;
  __device__ void operator()(thread_index t) const {
    const unsigned lane = static_cast<unsigned>(t.id % warp_lanes);
    const std::uint64_t warps = t.count / warp_lanes;
    for (std::uint64_t qg = t.id / warp_lanes; qg < r.queues(); qg += warps) {
      const queue_pair_ref& q = r.queue(qg);
      const std::uint32_t depth = q.depth();
      const std::uint64_t last = r.position(depth, depth - 2);
      const bool last_phase = (last / depth) % 2 == 0;  // the first lap posts phase 1
      std::uint32_t seen = 0;
      if (lane == 0) {
        backoff pause(32, 512);
        const deadline until = deadline::after_ns(r.timeout_ns);
        for (;;) {
          // acquire (system): the completions and data the controller released before it.
          const std::uint32_t dw3 =
              atomic_ref<std::uint32_t, scope::system>(q.cq()[last % depth].dw3)
                  .load(order::acquire);
          if (nvme::completion_entry::phase(dw3) == last_phase) {
            seen = 1;
            break;
          }
          if (until.expired()) break;
          pause.pause();
        }
        r.finish_ns[qg] = seen ? now_ns() : 0;
      }
      seen = __shfl_sync(full_warp, seen, 0);
      std::uint64_t ok = 0, bad = 0, wrong = 0;
      if (seen) {
        for (std::uint64_t k = lane; k < depth - 1; k += warp_lanes) {
          const std::uint64_t pos = r.position(depth, k);
          // acquire (system): this completion's dwords and its command's data.
          const std::uint32_t dw3 =
              atomic_ref<std::uint32_t, scope::system>(q.cq()[pos % depth].dw3)
                  .load(order::acquire);
          const bool phase_ok = nvme::completion_entry::phase(dw3) == ((pos / depth) % 2 == 0);
          const bool status_ok = nvme::completion_entry::status_field(dw3) == 0;
          if (phase_ok && status_ok) {
            ++ok;
          } else {
            ++bad;
          }
          // The buffer of SQ position pos: every completion of the round has been seen, so
          // every command's data is here (each completion's release covered its own data).
          const auto* b = reinterpret_cast<const std::uint64_t*>(
              r.buffer(qg, depth, static_cast<std::uint32_t>(pos % depth)));
          if (*b != pattern_word(image_offset(
                        r.set, static_cast<std::uint32_t>(qg / r.set.queues_per_device),
                        r.lba(qg, pos)))) {
            ++wrong;
          }
        }
      } else if (lane == 0) {
        bad = depth - 1;
      }
      __syncwarp();
      if (lane == 0 && seen) {
        // release: every lane's loads of the entries (ordered by the barrier above) come
        // before the controller may overwrite them.
        ring_doorbell(q.cq_doorbell(), static_cast<std::uint32_t>((last + 1) % depth), false);
      }
      add_counts(r.counts, ok, bad, wrong);
    }
  }
};

// --- figure 6: lock hand-off ---------------------------------------------------------------

/// Threads (a warp per lock, warps dealt round robin, as the naive queue's submitters are)
/// take a lock with the naive queue's test-and-test-and-set and backoff, optionally do its
/// critical section (a 64-byte entry store, a system fence and a doorbell store), count, and
/// release, until the deadline.
struct lock_handoff {
  std::uint32_t* locks;             ///< lock l at locks[l * 32] (own 128-byte line)
  std::uint64_t* acquired;          ///< lock l's count at acquired[l * 16], written by holders only
  nvme::submission_entry* entries;  ///< lock l's entry at entries[l * 2]
  std::uint32_t* doorbells;         ///< lock l's doorbell at doorbells[l * 32]
  std::uint32_t lock_count;
  bool critical_section;
  std::uint64_t duration_ns;
  run_counts* counts;

  __device__ void operator()(thread_index t) const {
    const std::uint64_t end = agree_on_end(&counts->end_ns, duration_ns);
    const std::uint64_t l = (t.id / warp_lanes) % lock_count;
    atomic_ref<std::uint32_t> lock(locks[l * 32]);
    atomic_ref<std::uint64_t> count(acquired[l * 16]);
    backoff pause;
    while (now_ns() < end) {
      std::uint32_t unlocked = 0;
      // acquire: the previous holder's count and entry stores (its release below).
      if (lock.load(order::relaxed) != 0 || !lock.compare_exchange(unlocked, 1u, order::acquire)) {
        pause.pause();
        continue;
      }
      pause.reset();
      const std::uint64_t n = count.load(order::relaxed);  // relaxed: holders only, under the lock
      if (critical_section) {
        entries[l * 2] = nvme::make_rw(nvme::io_opcode::read, 1, n, 1, 0, 0);
        ring_doorbell(doorbells + l * 32, static_cast<std::uint32_t>(n), false);
      }
      count.store(n + 1, order::relaxed);  // relaxed: published by the release below
      lock.store(0u, order::release);      // release: the count and entry for the next holder
    }
  }
};

// --- fences --------------------------------------------------------------------------------

/// What fence_probe times. A load's latency shows only through the block fence after it (a
/// fence waits for the thread's earlier loads; a clock read would not).
enum class probe_op : std::uint32_t {
  clock,                   ///< nothing: two clock reads
  fence_block,             ///< fence.sc.cta
  fence_gpu,               ///< fence.sc.gpu
  fence_sys,               ///< fence.sc.sys
  release_store_gpu,       ///< a GPU-scope release store
  release_store_sys,       ///< a system-scope release store
  relaxed_load_sys,        ///< a system-scope relaxed load, then fence.sc.cta
  acquire_load_sys,        ///< a system-scope acquire load, then fence.sc.cta
  doorbell_sys,            ///< ring_doorbell (emulated: fence.sc.sys, system release store)
  entry_and_doorbell_sys,  ///< a 64-byte entry, then ring_doorbell: the tail winner's work
  entry_and_doorbell_gpu,  ///< the same at GPU scope (queue_pair_ref::set_gpu_scope_edges)
  count
};
inline constexpr std::uint32_t probe_ops = static_cast<std::uint32_t>(probe_op::count);
inline constexpr std::uint32_t probe_reps = 64;

/// One thread times each probe_op probe_reps times, each between two %globaltimer reads, into
/// out[op * probe_reps + rep] (ns). Launch one warp.
struct fence_probe {
  std::uint32_t* words;           ///< 64 words of GPU memory (two 128-byte lines)
  nvme::submission_entry* entry;  ///< a 64-byte entry of GPU memory
  std::uint64_t* out;             ///< probe_ops x probe_reps durations
  std::uint64_t* sink;            ///< the loads' values (so they are not dropped)

  __device__ void operator()(thread_index t) const {
    if (t.id != 0) return;
    std::uint32_t seen = 0;
    for (std::uint32_t op = 0; op < probe_ops; ++op) {
      for (std::uint32_t r = 0; r < probe_reps; ++r) {
        const std::uint64_t a = now_ns();
        switch (static_cast<probe_op>(op)) {
          case probe_op::clock:
            break;
          case probe_op::fence_block:
            device_fence<scope::block>();
            break;
          case probe_op::fence_gpu:
            device_fence<scope::device>();
            break;
          case probe_op::fence_sys:
            device_fence<scope::system>();
            break;
          case probe_op::release_store_gpu:
            // release: nothing to publish; the order's cost is what is measured.
            atomic_ref<std::uint32_t>(words[0]).store(r, order::release);
            break;
          case probe_op::release_store_sys:
            // release: as above, at system scope.
            atomic_ref<std::uint32_t, scope::system>(words[0]).store(r, order::release);
            break;
          case probe_op::relaxed_load_sys:
            // relaxed: the load's own cost, without an order.
            seen += atomic_ref<std::uint32_t, scope::system>(words[32]).load(order::relaxed);
            device_fence<scope::block>();
            break;
          case probe_op::acquire_load_sys:
            // acquire: nothing to wait for; the order's cost is what is measured.
            seen += atomic_ref<std::uint32_t, scope::system>(words[32]).load(order::acquire);
            device_fence<scope::block>();
            break;
          case probe_op::doorbell_sys:
            ring_doorbell(&words[0], r, false);
            break;
          case probe_op::entry_and_doorbell_sys:
            *entry = nvme::make_rw(nvme::io_opcode::read, 1, r, 1, 0, 0);
            ring_doorbell(&words[0], r, false);
            break;
          case probe_op::entry_and_doorbell_gpu:
            *entry = nvme::make_rw(nvme::io_opcode::read, 1, r, 1, 0, 0);
            device_fence<scope::device>();
            // release: the entry, for a controller kernel on this GPU.
            atomic_ref<std::uint32_t>(words[0]).store(r, order::release);
            break;
          case probe_op::count:
            break;
        }
        out[op * probe_reps + r] = now_ns() - a;
      }
    }
    *sink = seen;
  }
};

// --- the clock -----------------------------------------------------------------------------

/// One thread reads %globaltimer back to back: the smallest nonzero step and the mean step
/// between changes, in ns.
struct timer_step {
  std::uint64_t* out;  ///< [0] smallest step, [1] mean step, [2] changes seen
  __device__ void operator()(thread_index t) const {
    if (t.id != 0) return;
    std::uint64_t last = now_ns();
    const std::uint64_t first = last;
    std::uint64_t smallest = ~0ull, changes = 0;
    for (int i = 0; i < 200000 && changes < 2000; ++i) {
      const std::uint64_t v = now_ns();
      if (v != last) {
        smallest = v - last < smallest ? v - last : smallest;
        ++changes;
        last = v;
      }
    }
    out[0] = changes ? smallest : 0;
    out[1] = changes ? (last - first) / changes : 0;
    out[2] = changes;
  }
};

}  // namespace bam::bench::io
