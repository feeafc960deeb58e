// The GPU controller's host side: its memory, the launch and check-in, stop, the FLUSH helper
// thread, statistics and the watchdog's view. The kernel is in controller_kernel.cuh.
#include "storage/gpu/gpu_controller.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/clock.hpp>
#include <bam/runtime/resources.hpp>

#include "storage/gpu/controller_kernel.cuh"

namespace bam::emulated {

using namespace gpu;

namespace {

/// Gives back the holds of a queue's abandoned commands (queue_pair_ref::release_abandoned_holds)
/// from the GPU, where the queue's words and the holds' words live: one thread, between
/// launches, with the controller stopped.
__global__ void release_abandoned_holds_kernel(queue_pair_ref queue, std::uint32_t* released) {
  *released = queue.release_abandoned_holds();
}

}  // namespace

struct gpu_controller::impl {
  gpu_runtime& rt;
  gpu_controller_options options;
  backing_store* image = nullptr;
  std::vector<controller_device> devices;
  std::vector<queue_slot> slots;  // host copy, device major
  std::uint32_t queues_per_device = 0;
  std::uint32_t depth = 0;
  std::uint32_t grid = 0;
  std::uint32_t block = 0;
  std::uint32_t blocks_per_sm = 0;

  // Device memory.
  device_memory d_queues, d_cursors, d_stats, d_pending, d_devices, d_next_free, d_origin, d_stop,
      d_dirty, d_flush_lock, d_flush_ticket, d_flush_broken;
  // Mapped pinned memory.
  pinned_memory h_mailbox, h_control, h_check_in, h_check_out, h_watch, h_stats, h_released;
  owned_stream copies;  // stats and resets, never behind the controller kernel
  controller_params params{};
  std::uint64_t dirty_words = 0;

  bool running = false;
  bool wedged = false;  // the kernel would not stop: its memory must outlive us
  std::uint32_t epoch = 0;
  std::thread helper;
  std::atomic<bool> helper_stop{false};
  mutable std::mutex helper_mutex;
  std::string helper_error;

  // Watchdog bookkeeping: the last gpu_now seen per queue and when (host ns).
  mutable std::mutex watch_mutex;
  mutable std::vector<std::uint64_t> seen_gpu_now, seen_at;

  explicit impl(gpu_runtime& r) : rt(r) {}

  stream_handle controller_stream() const { return rt.controller_stream(); }

  void wait_copies(const char* what) const {
    rt.synchronize(copies.get(), rt.config().stop_timeout_ns, what);
  }

  void flush_helper() {
    auto* box = h_mailbox.as<flush_mailbox>();
    // relaxed: our own earlier store, or zero.
    std::uint64_t last = atomic_ref<std::uint64_t, scope::system>(box->done).load(order::relaxed);
    while (!helper_stop.load(std::memory_order_relaxed)) {
      // acquire (system): the kernel's harvest of dirty bits and the data of the writes before
      // the FLUSH, published by its fence and release of the request.
      const std::uint64_t request =
          atomic_ref<std::uint64_t, scope::system>(box->request).load(order::acquire);
      if (request == last) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      std::uint32_t status = 0;
      try {
        image->flush();
      } catch (const std::exception& e) {
        status = nvme::make_status_field(nvme::media_status::write_fault);
        std::lock_guard lock(helper_mutex);
        helper_error = std::string("FLUSH write-back failed: ") + e.what();
      }
      // relaxed: published by the release of `done` below.
      atomic_ref<std::uint32_t, scope::system>(box->status).store(status, order::relaxed);
      // release: the write-back and the status, for the kernel's acquire of `done`.
      atomic_ref<std::uint64_t, scope::system>(box->done).store(request, order::release);
      last = request;
    }
  }

  void stop_helper() {
    if (!helper.joinable()) return;
    helper_stop.store(true, std::memory_order_relaxed);
    helper.join();
  }

  std::uint32_t count_flags(const pinned_memory& flags) const {
    std::uint32_t n = 0;
    for (std::uint32_t b = 0; b < grid; ++b) {
      // acquire: pairs with the blocks' stores; only the count is used.
      n += atomic_ref<std::uint32_t, scope::system>(flags.as<std::uint32_t>()[b])
                       .load(order::acquire) == epoch
               ? 1u
               : 0u;
    }
    return n;
  }

  // Moves the kernel's dirty bits into the image's words (kernel stopped).
  void harvest_dirty() {
    if (!params.dirty || dirty_words == 0) return;
    std::vector<std::uint32_t> bits(dirty_words);
    copy_async(bits.data(), params.dirty, dirty_words * 4, copies.get());
    zero_async(params.dirty, dirty_words * 4, copies.get());
    wait_copies("copying the controller's dirty bits");
    for (std::uint64_t w = 0; w < dirty_words; ++w) {
      if (bits[w] == 0) continue;
      // relaxed: the kernel has ended and the copy above is complete; the host alone writes.
      atomic_ref<std::uint32_t, scope::system>(image->dirty_bits()[w])
          .fetch_or(bits[w], order::relaxed);
    }
  }
};

gpu_controller::gpu_controller(gpu_runtime& rt, std::vector<controller_device> devices,
                               backing_store* image, const gpu_controller_options& options)
    : impl_(std::make_unique<impl>(rt)) {
  impl& m = *impl_;
  if (!rt.gpu()) throw input_error("the GPU controller needs a GPU: " + rt.message());
  if (rt.started()) {
    throw error(
        "construct GPU-controlled storage before gpu_runtime::start(): allocation "
        "waits for running kernels");
  }
  if (options.threads_per_block < warp_lanes ||
      options.threads_per_block > controller_block_threads ||
      options.threads_per_block % warp_lanes != 0) {
    throw input_error("controller threads per block must be a multiple of 32 from 32 to " +
                      std::to_string(controller_block_threads));
  }
  if (devices.empty() || devices[0].queues.empty()) throw input_error("no queues to serve");
  m.options = options;
  m.image = image;
  m.devices = std::move(devices);
  m.queues_per_device = static_cast<std::uint32_t>(m.devices[0].queues.size());
  m.depth = m.devices[0].queues[0].depth();
  for (std::uint32_t d = 0; d < m.devices.size(); ++d) {
    for (const queue_pair_ref& q : m.devices[d].queues) {
      if (q.depth() != m.depth) throw input_error("GPU controller: queues must share one depth");
      queue_slot s{};
      s.sq = q.sq();
      s.cq = q.cq();
      s.sq_doorbell = q.sq_doorbell();
      s.cq_doorbell = q.cq_doorbell();
      s.depth = q.depth();
      s.queue_id = q.id();
      s.device = d;
      s.index = static_cast<std::uint32_t>(m.slots.size());
      m.slots.push_back(s);
    }
  }
  const auto queue_count = static_cast<std::uint32_t>(m.slots.size());

  // Grid: every block resident on the controllers' SMs, and no more warps than queues.
  m.block = options.threads_per_block;
  int per_sm = 0;
  BAM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, controller_kernel, m.block, 0));
  if (per_sm <= 0) throw error("the controller kernel cannot run one block per SM");
  m.blocks_per_sm = static_cast<std::uint32_t>(per_sm);
  const std::uint32_t warps_per_block = m.block / warp_lanes;
  std::uint32_t capacity = m.blocks_per_sm * rt.controller_sms();
  if (options.max_blocks != 0) capacity = std::min(capacity, options.max_blocks);
  const std::uint32_t needed = (queue_count + warps_per_block - 1) / warps_per_block;
  m.grid = std::max(1u, std::min(capacity, needed));

  // Flushes.
  flush_mode mode = flush_mode::immediate;
  if (image && !image->path().empty()) {
    mode = image->kind() == memory_kind::device ? flush_mode::unsupported : flush_mode::host_helper;
  }
  if (mode == flush_mode::host_helper) {
    const std::uint64_t allocated =
        std::max<std::uint64_t>((image->bytes() + 4095) / 4096 * 4096, 4096);
    const std::uint64_t chunks =
        (allocated + (1ull << image->chunk_shift()) - 1) >> image->chunk_shift();
    m.dirty_words = (chunks + 31) / 32;
  }

  // Memory. Set-up copies go on a private non-blocking stream, never the legacy one.
  m.copies = owned_stream::create_non_blocking();
  const stream_handle s = m.copies.get();
  m.d_queues = device_memory(sizeof(queue_slot) * queue_count);
  m.d_cursors = device_memory(sizeof(queue_cursor) * queue_count);
  m.d_stats = device_memory(sizeof(queue_stats) * queue_count);
  m.d_pending = device_memory(sizeof(pending_command) * queue_count * std::uint64_t{m.depth});
  m.d_devices = device_memory(sizeof(device_params) * m.devices.size());
  m.d_next_free = device_memory(8 * m.devices.size());
  m.d_origin = device_memory(8);
  m.d_stop = device_memory(sizeof(controller_stop_words));
  m.d_dirty = device_memory(std::max<std::uint64_t>(m.dirty_words, 1) * 4);
  m.d_flush_lock = device_memory(4);
  m.d_flush_ticket = device_memory(8);
  m.d_flush_broken = device_memory(4);
  m.h_mailbox = pinned_memory(sizeof(flush_mailbox));
  m.h_control = pinned_memory(sizeof(host_control));
  m.h_check_in = pinned_memory(4 * m.grid);
  m.h_check_out = pinned_memory(4 * m.grid);
  m.h_watch = pinned_memory(sizeof(watch_record) * queue_count);
  m.h_stats = pinned_memory(sizeof(queue_stats) * queue_count);
  m.h_released = pinned_memory(sizeof(std::uint32_t));

  std::vector<queue_cursor> cursors(queue_count);
  for (auto& c : cursors) {
    c = queue_cursor{};
    c.phase = 1;
    c.earliest_due = no_due;
  }
  std::vector<device_params> params(m.devices.size());
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    params[d].ns = m.devices[d].ns;
    params[d].timing = m.devices[d].timing;
    params[d].faults = m.devices[d].faults;
    params[d].seed = m.devices[d].seed;
  }
  copy_async(m.d_queues.data(), m.slots.data(), sizeof(queue_slot) * queue_count, s);
  copy_async(m.d_cursors.data(), cursors.data(), sizeof(queue_cursor) * queue_count, s);
  copy_async(m.d_devices.data(), params.data(), sizeof(device_params) * params.size(), s);
  zero_async(m.d_stats.data(), m.d_stats.bytes(), s);
  zero_async(m.d_next_free.data(), m.d_next_free.bytes(), s);
  zero_async(m.d_origin.data(), 8, s);
  zero_async(m.d_stop.data(), m.d_stop.bytes(), s);
  zero_async(m.d_dirty.data(), m.d_dirty.bytes(), s);
  zero_async(m.d_flush_lock.data(), 4, s);
  zero_async(m.d_flush_ticket.data(), 8, s);
  zero_async(m.d_flush_broken.data(), 4, s);
  m.wait_copies("controller set-up copies");

  controller_params& p = m.params;
  p.queues = m.d_queues.as<queue_slot>();
  p.cursors = m.d_cursors.as<queue_cursor>();
  p.stats = m.d_stats.as<queue_stats>();
  p.pending = m.d_pending.as<pending_command>();
  p.devices = m.d_devices.as<device_params>();
  p.next_free_ps = m.d_next_free.as<std::uint64_t>();
  p.origin = m.d_origin.as<std::uint64_t>();
  p.stop_words = m.d_stop.as<controller_stop_words>();
  p.dirty = mode == flush_mode::host_helper ? m.d_dirty.as<std::uint32_t>() : nullptr;
  p.host_dirty = mode == flush_mode::host_helper ? image->dirty_bits() : nullptr;
  p.dirty_words = mode == flush_mode::host_helper ? m.dirty_words : 0;
  p.flush_lock = m.d_flush_lock.as<std::uint32_t>();
  p.flush_ticket = m.d_flush_ticket.as<std::uint64_t>();
  p.flush_broken = m.d_flush_broken.as<std::uint32_t>();
  p.mailbox = m.h_mailbox.as<flush_mailbox>();
  p.control = m.h_control.as<host_control>();
  p.check_in = m.h_check_in.as<std::uint32_t>();
  p.check_out = m.h_check_out.as<std::uint32_t>();
  p.watch = m.h_watch.as<watch_record>();
  p.trace = options.trace;
  p.flushes = mode;
  p.queue_count = queue_count;
  p.warps = m.grid * warps_per_block;
  p.watch_period_ns = options.watch_period_ns;
  p.stop_poll_ns = options.stop_poll_ns;
  p.idle_stop_poll_ns = options.idle_stop_poll_ns;
  p.idle_stop_poll_after_ns = options.idle_stop_poll_after_ns;
  p.fetch_batches = options.fetch_batches;
  p.idle_sleep_ns = options.idle_sleep_ns;
  p.gpu_scope_edges = options.gpu_scope_edges ? 1u : 0u;
  p.flush_timeout_ns = options.flush_timeout_ns;
  m.seen_gpu_now.assign(queue_count, 0);
  m.seen_at.assign(queue_count, 0);

  // Load the kernel and launch it once with no work, before anything persistent runs.
  const void* fn = reinterpret_cast<const void*>(&controller_kernel);
  rt.preload({fn, reinterpret_cast<const void*>(&release_abandoned_holds_kernel)});
  controller_params warm{};
  controller_kernel<<<1, m.block, 0, rt.controller_stream()>>>(warm);
  BAM_CUDA_CHECK(cudaGetLastError());
  rt.synchronize(rt.controller_stream(), rt.config().start_timeout_ns,
                 "the controller kernel's warm-up launch");
}

gpu_controller::~gpu_controller() {
  try {
    stop();
  } catch (const std::exception& e) {
    impl_->rt.log(std::string("GPU controller: ") + e.what());
  }
  if (impl_->wedged) {
    // The kernel still runs and uses this memory: leak it rather than free it under the kernel
    // (freeing would also wait for the kernel forever).
    impl_->rt.log("GPU controller: kernel did not stop; leaking its memory");
    (void)impl_.release();  // intentionally leaked
  }
}

void gpu_controller::start() {
  impl& m = *impl_;
  if (m.running) return;
  if (m.wedged) throw error("GPU controller: the previous kernel never stopped");
  ++m.epoch;
  m.params.epoch = m.epoch;
  // relaxed: the kernel is not running; the launch below orders these stores before it.
  atomic_ref<std::uint32_t, scope::system>(m.h_control.as<host_control>()->stop)
      .store(0u, order::relaxed);
  if (m.params.flushes == flush_mode::host_helper) {
    m.helper_stop.store(false, std::memory_order_relaxed);
    m.helper = std::thread([&m] { m.flush_helper(); });
  }
  controller_kernel<<<m.grid, m.block, 0, m.controller_stream()>>>(m.params);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) {
    m.stop_helper();
    BAM_CUDA_CHECK(launched);
  }
  m.running = true;

  // Every block checks in before apps launch: a block that never becomes resident would leave
  // its queues unserved (and the grid is sized to fit, so this is a set-up error).
  const deadline until = deadline::after_ns(m.rt.config().start_timeout_ns);
  for (;;) {
    const std::uint32_t in = m.count_flags(m.h_check_in);
    if (in == m.grid) break;
    const cudaError_t e = cudaStreamQuery(m.controller_stream());
    if (e != cudaErrorNotReady || until.expired()) {
      std::string why = e == cudaSuccess ? "the kernel ended early"
                        : e != cudaErrorNotReady
                            ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                            : "only " + std::to_string(in) + " of " + std::to_string(m.grid) +
                                  " blocks checked in within " +
                                  std::to_string(m.rt.config().start_timeout_ns / 1'000'000) +
                                  " ms (not all resident: other work on the "
                                  "controller's SMs?)";
      try {
        stop();
      } catch (const std::exception& s) {
        why += "; stopping: " + std::string(s.what());
      }
      throw error("GPU controller failed to start: " + why);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void gpu_controller::stop() {
  impl& m = *impl_;
  if (!m.running) return;
  // release: nothing is published with the flag; the kernel only ends.
  atomic_ref<std::uint32_t, scope::system>(m.h_control.as<host_control>()->stop)
      .store(1u, order::release);
  const deadline until = deadline::after_ns(m.rt.config().stop_timeout_ns);
  cudaError_t e;
  while ((e = cudaStreamQuery(m.controller_stream())) == cudaErrorNotReady && !until.expired()) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  m.stop_helper();
  if (e == cudaErrorNotReady) {
    m.wedged = true;
    const std::uint32_t out = m.count_flags(m.h_check_out);
    throw error("GPU controller did not stop within " +
                std::to_string(m.rt.config().stop_timeout_ns / 1'000'000) +
                " ms: " + std::to_string(m.grid - out) + " of " + std::to_string(m.grid) +
                " blocks still running");
  }
  m.running = false;
  BAM_CUDA_CHECK(e);
  m.harvest_dirty();
}

bool gpu_controller::running() const { return impl_->running; }

std::uint32_t gpu_controller::reset_queue(std::uint32_t device, std::uint32_t queue) {
  impl& m = *impl_;
  if (m.running) throw error("reset_queue needs a stopped controller");
  const std::uint32_t q = device * m.queues_per_device + queue;
  // The controller is stopped, so none of the queue's abandoned commands can run any more:
  // their buffers go back before the caller wipes the queue's records.
  auto* released = m.h_released.as<std::uint32_t>();
  *released = 0;
  release_abandoned_holds_kernel<<<1, 1, 0, m.copies.get()>>>(m.devices[device].queues[queue],
                                                              released);
  BAM_CUDA_CHECK(cudaGetLastError());
  // The queue starts over, but its draw sequence goes on: fault and latency draws are keyed
  // by it, and commands retried after a reset must not meet the same injected errors again.
  queue_cursor old{};
  copy_async(&old, m.params.cursors + q, sizeof old, m.copies.get());
  m.wait_copies("reading a queue's cursor");
  queue_cursor c{};
  c.phase = 1;
  c.earliest_due = no_due;
  c.sequence = old.sequence;
  copy_async(m.params.cursors + q, &c, sizeof c, m.copies.get());
  m.wait_copies("resetting a queue");
  return *released;
}

std::vector<device_stats> gpu_controller::stats() const {
  const impl& m = *impl_;
  const std::size_t n = m.slots.size();
  copy_async(m.h_stats.data(), m.params.stats, sizeof(queue_stats) * n, m.copies.get());
  m.wait_copies("copying controller statistics");
  std::vector<device_stats> out(m.devices.size());
  const auto* qs = m.h_stats.as<queue_stats>();
  for (std::size_t q = 0; q < n; ++q) {
    device_stats& d = out[m.slots[q].device];
    d.commands += qs[q].commands;
    d.reads += qs[q].reads;
    d.writes += qs[q].writes;
    d.flushes += qs[q].flushes;
    d.bytes_read += qs[q].bytes_read;
    d.bytes_written += qs[q].bytes_written;
    d.invalid += qs[q].invalid;
    d.injected_errors += qs[q].injected_errors;
    d.dropped += qs[q].dropped;
    d.late += qs[q].late;
  }
  return out;
}

std::vector<std::string> gpu_controller::stuck_queues(std::uint64_t age_ns) const {
  const impl& m = *impl_;
  std::vector<std::string> out;
  if (!m.running) return out;
  const std::uint64_t host_now = now_ns();
  auto* watch = m.h_watch.as<watch_record>();
  std::lock_guard lock(m.watch_mutex);
  for (std::size_t q = 0; q < m.slots.size(); ++q) {
    watch_record& w = watch[q];
    // relaxed: a report; one writer (the owner warp).
    const std::uint64_t gpu_now =
        atomic_ref<std::uint64_t, scope::system>(w.gpu_now).load(order::relaxed);
    const std::uint64_t oldest =
        atomic_ref<std::uint64_t, scope::system>(w.oldest).load(order::relaxed);
    const std::uint32_t cid =
        atomic_ref<std::uint32_t, scope::system>(w.oldest_cid).load(order::relaxed);
    const std::uint32_t outstanding =
        atomic_ref<std::uint32_t, scope::system>(w.outstanding).load(order::relaxed);
    const std::string name = "device " + std::to_string(m.slots[q].device) + " queue " +
                             std::to_string(m.slots[q].queue_id);
    if (gpu_now != m.seen_gpu_now[q] || m.seen_at[q] == 0) {
      m.seen_gpu_now[q] = gpu_now;
      m.seen_at[q] = host_now;
    } else if (host_now - m.seen_at[q] > age_ns + 2 * m.options.watch_period_ns) {
      out.push_back(name + ": its controller warp has not reported for " +
                    std::to_string((host_now - m.seen_at[q]) / 1'000'000) + " ms");
      continue;
    }
    if (outstanding != 0 && oldest != 0 && gpu_now > oldest && gpu_now - oldest > age_ns) {
      out.push_back(name + ": command id " + std::to_string(cid) + " outstanding for " +
                    std::to_string((gpu_now - oldest) / 1'000'000) + " ms (" +
                    std::to_string(outstanding) + " outstanding)");
    }
  }
  return out;
}

std::string gpu_controller::health() const {
  const impl& m = *impl_;
  {
    std::lock_guard lock(m.helper_mutex);
    if (!m.helper_error.empty()) return m.helper_error;
  }
  if (!m.running) return {};
  const cudaError_t e = cudaStreamQuery(m.controller_stream());
  if (e == cudaErrorNotReady) return {};
  if (e == cudaSuccess) return "the controller kernel ended while it should run";
  return std::string("the controller kernel failed: ") + cudaGetErrorName(e) + ": " +
         cudaGetErrorString(e);
}

std::string gpu_controller::describe() const {
  const impl& m = *impl_;
  return "grid " + std::to_string(m.grid) + " x " + std::to_string(m.block) + " (" +
         std::to_string(m.params.warps) + " warps, " + std::to_string(m.blocks_per_sm) +
         " blocks per SM possible) on " + std::to_string(m.rt.controller_sms()) + " SMs, " +
         std::to_string(m.slots.size()) + " queues";
}

}  // namespace bam::emulated
