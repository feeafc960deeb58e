#include <bam/storage/emulated_storage.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

#include "runtime/memory.hpp"
#include "storage/cpu/cpu_controller.hpp"
#include "storage/gpu/gpu_controller.hpp"
#include "storage/queue_shape.hpp"
#include "storage/queue_watch.hpp"

namespace bam {

namespace {

void check(const storage_config& c) {
  storage_detail::check_queue_shape({.devices = c.devices,
                                     .queues_per_device = c.queues_per_device,
                                     .queue_depth = c.queue_depth,
                                     .block_bytes = c.block_bytes,
                                     .stripe_bytes = c.stripe_bytes,
                                     .striped = !c.replicated && c.devices > 1,
                                     .max_transfer_bytes = c.max_transfer_bytes,
                                     .timeout_ns = c.timeout_ns,
                                     .wait_sleep_ns = c.wait_sleep_ns},
                                    "storage configuration");
  auto bad = [](const std::string& what) { throw input_error("storage configuration: " + what); };
  if (c.controller.idle_sleep_ns > max_sleep_ns) {
    bad("controller idle sleep must be at most 1 ms (nanosleep's limit)");
  }
  if (c.controller.gpu_scope_edges && c.placement != controller_placement::gpu_kernel) {
    bad("GPU-scope queue edges need the gpu_kernel placement");
  }
  if (c.controller_threads == 0 || c.controller_threads > c.queues_per_device) {
    bad("controller threads must be 1 to the queues per device (" +
        std::to_string(c.queues_per_device) + "), not " + std::to_string(c.controller_threads));
  }
  if (c.copy_batches_in_flight == 0 || c.copy_batches_in_flight > 64) {
    bad("copy batches in flight must be 1 to 64, not " + std::to_string(c.copy_batches_in_flight));
  }
  if (c.controller_threads > 1 && c.placement == controller_placement::gpu_kernel) {
    bad("controller threads are host threads: the gpu_kernel placement has none");
  }
  if (c.controller_threads > 1 && c.model.caps) {
    bad("several controller threads need a device model without caps (each thread would "
        "keep a device's rate cap of its own)");
  }
}

const char* placement_name(controller_placement p) {
  switch (p) {
    case controller_placement::cpu_thread:
      return "cpu_thread";
    case controller_placement::host_thread:
      return "host_thread";
    default:
      return "gpu_kernel";
  }
}

// Which image memory each placement's controller can reach.
void check_image(const storage_config& c, const backing_store& image, const gpu_runtime* rt) {
  const memory_kind k = image.kind();
  switch (c.placement) {
    case controller_placement::cpu_thread:
      if (k != memory_kind::host) {
        throw input_error("placement cpu_thread serves host-memory images only");
      }
      return;
    case controller_placement::host_thread:
      if (k == memory_kind::device) {
        throw input_error(
            "placement host_thread needs a host or pinned image (its controller "
            "is a CPU thread)");
      }
      break;
    case controller_placement::gpu_kernel:
      if (k == memory_kind::host) {
        throw input_error(
            "placement gpu_kernel needs a pinned or device image (the GPU cannot "
            "reach pageable host memory)");
      }
      break;
  }
  if (!rt) {
    throw input_error(std::string("placement ") + placement_name(c.placement) +
                      " needs a bam::gpu_runtime");
  }
  if (!rt->gpu()) {
    throw input_error(std::string("placement ") + placement_name(c.placement) +
                      " needs a GPU: " + rt->message());
  }
  if (rt->started()) {
    throw error(
        "construct emulated storage before gpu_runtime::start(): allocation waits for "
        "running kernels");
  }
}

}  // namespace

device_stats storage_stats::total() const {
  device_stats t;
  for (const auto& d : devices) t += d;
  return t;
}

struct emulated_storage::impl final : controller_service {
  storage_config config;
  std::shared_ptr<backing_store> image;
  gpu_runtime* rt = nullptr;
  memory_kind queue_memory = memory_kind::host;
  std::uint64_t queue_bytes = 0;
  void* queue_block = nullptr;
  std::vector<queue_pair_ref> queues;  // host copy; ref() points at it on the CPU path
  device_memory device_queues;         // GPU placements: the array kernels dereference
  owned_stream copies;                 // GPU placements: copies that never wait on kernels
  pinned_memory staging;               // gpu_kernel: queue counters copied out
  /// Host placements: controller t serves queue q of each device where q % cpus.size() == t.
  std::vector<std::unique_ptr<emulated::cpu_controller>> cpus;
  std::unique_ptr<emulated::gpu_controller> gpu;
  device_set_ref view;
  bool attached = false;

  ~impl() override {
    if (attached) rt->detach(*this);
    gpu.reset();
    cpus.clear();
    runtime::release(queue_block, queue_memory);
  }

  bool on_gpu() const { return config.placement == controller_placement::gpu_kernel; }

  /// Copies one field of every queue's control block in GPU memory into the staging buffer
  /// (room for a queue_counters per queue) and waits: out[q] is queue q's.
  template <class T>
  const T* copy_control_field(T queue_control::*field, const char* what) const {
    static_assert(sizeof(T) <= sizeof(queue_counters), "the staging buffer's room per queue");
    auto* out = staging.as<T>();
    for (std::size_t q = 0; q < queues.size(); ++q) {
      copy_async(out + q, &(queues[q].control()->*field), sizeof(T), copies.get());
    }
    rt->synchronize(copies.get(), rt->config().stop_timeout_ns, what);
    return out;
  }

  // controller_service
  void start() override {
    if (gpu) {
      gpu->start();
    } else {
      for (auto& c : cpus) c->start();
    }
  }
  void stop() override {
    if (gpu) {
      gpu->stop();
    } else {
      for (auto& c : cpus) c->stop();
    }
  }
  bool running() const override {
    if (gpu) return gpu->running();
    return std::any_of(cpus.begin(), cpus.end(), [](const auto& c) { return c->running(); });
  }
  std::vector<std::string> stuck_queues(std::uint64_t age_ns) const override {
    if (gpu) return gpu->stuck_queues(age_ns);
    std::vector<std::string> out;
    for (const auto& c : cpus) {
      for (std::string& line : c->stuck_queues(age_ns)) out.push_back(std::move(line));
    }
    return out;
  }
  std::vector<device_stats> controller_stats() const {
    if (gpu) return gpu->stats();
    std::vector<device_stats> sum = cpus.front()->stats();
    for (std::size_t t = 1; t < cpus.size(); ++t) {
      const std::vector<device_stats> more = cpus[t]->stats();
      for (std::size_t d = 0; d < sum.size(); ++d) sum[d] += more[d];
    }
    return sum;
  }
  std::string health() const override { return gpu ? gpu->health() : std::string(); }
  std::string name() const override {
    return "emulated-ssd " + std::to_string(config.devices) + "x" +
           std::to_string(config.queues_per_device) + "x" + std::to_string(config.queue_depth) +
           " " + placement_name(config.placement);
  }

  void zero_queue_memory(std::uint64_t offset, std::uint64_t bytes) {
    auto* at = static_cast<unsigned char*>(queue_block) + offset;
    if (queue_memory == memory_kind::device) {
      zero_async(at, bytes, copies.get());
      rt->synchronize(copies.get(), rt->config().stop_timeout_ns, "zeroing queue memory");
    } else {
      std::memset(at, 0, bytes);
    }
  }
};

emulated_storage::emulated_storage(const storage_config& config,
                                   std::shared_ptr<backing_store> image, gpu_runtime* owner)
    : impl_(std::make_unique<impl>()) {
  check(config);
  if (!image) throw input_error("storage configuration: no backing image");
  check_image(config, *image, owner);
  impl& m = *impl_;
  m.config = config;
  m.image = std::move(image);
  m.rt = owner;
  const bool gpu_side = config.placement != controller_placement::cpu_thread;
  m.queue_memory = config.placement == controller_placement::gpu_kernel    ? memory_kind::device
                   : config.placement == controller_placement::host_thread ? memory_kind::pinned
                                                                           : memory_kind::host;
  if (gpu_side) m.copies = owned_stream::create_non_blocking();

  const queue_layout layout = queue_layout::for_depth(config.queue_depth);
  const std::uint64_t count = std::uint64_t{config.devices} * config.queues_per_device;
  m.queue_bytes = layout.bytes;
  m.queue_block = runtime::allocate(layout.bytes * count, m.queue_memory);
  m.zero_queue_memory(0, layout.bytes * count);
  for (std::uint64_t i = 0; i < count; ++i) {
    m.queues.emplace_back(
        static_cast<unsigned char*>(m.queue_block) + i * layout.bytes, config.queue_depth,
        static_cast<std::uint16_t>(1 + i % config.queues_per_device), config.timeout_ns);
    m.queues.back().set_wait_sleep_ns(config.wait_sleep_ns);
    m.queues.back().set_gpu_scope_edges(config.controller.gpu_scope_edges);
  }

  device_set_ref& v = m.view;
  v.queues = m.queues.data();
  if (gpu_side) {
    // Kernels dereference the queue array: on the GPU it must be in GPU memory.
    m.device_queues = device_memory(sizeof(queue_pair_ref) * count);
    copy_async(m.device_queues.data(), m.queues.data(), sizeof(queue_pair_ref) * count,
               m.copies.get());
    m.rt->synchronize(m.copies.get(), m.rt->config().stop_timeout_ns, "copying queue views");
    v.queues = m.device_queues.as<queue_pair_ref>();
  }
  if (config.placement == controller_placement::gpu_kernel) {
    m.staging = pinned_memory(sizeof(queue_counters) * count);
  }
  v.devices = config.devices;
  v.queues_per_device = config.queues_per_device;
  v.block_bytes = config.block_bytes;
  v.page_bytes = 4096;
  v.stripe_bytes = config.stripe_bytes;
  v.capacity_bytes = m.image->bytes();
  v.max_transfer_bytes = config.max_transfer_bytes;
  v.replicated = config.replicated;

  std::vector<emulated::controller_device> devices;
  for (std::uint32_t d = 0; d < config.devices; ++d) {
    emulated::controller_device cd;
    emulated::namespace_view& ns = cd.ns;
    ns.image = m.image->data();
    ns.image_bytes = m.image->bytes();
    ns.dirty = m.image->dirty_bits();
    ns.chunk_shift = m.image->chunk_shift();
    ns.devices = config.devices;
    ns.index = d;
    ns.stripe_bytes = config.stripe_bytes;
    ns.replicated = config.replicated;
    ns.block_bytes = config.block_bytes;
    ns.capacity_blocks =
        emulated::namespace_view::blocks_for(ns.image_bytes, config.devices, d, config.stripe_bytes,
                                             config.replicated, config.block_bytes);
    ns.max_transfer_bytes = config.max_transfer_bytes;
    ns.page_bytes = v.page_bytes;
    // A host thread serving GPU kernels meets PRPs into GPU memory (cache lines, bounce
    // buffers), which only a CUDA copy reaches.
    if (config.placement == controller_placement::host_thread) {
      ns.host_copy = &runtime::copy_any_async;
      ns.host_fence = &runtime::copy_fence;
      ns.host_mark = &runtime::copy_mark;
      ns.host_reached = &runtime::copy_reached;
      ns.host_readable = &runtime::host_readable;
    }
    cd.timing = emulated::timing_model::from(config.model);
    cd.faults = config.faults;
    cd.seed = config.faults.seed;
    for (std::uint32_t q = 0; q < config.queues_per_device; ++q) {
      cd.queues.push_back(m.queues[std::uint64_t{d} * config.queues_per_device + q]);
    }
    devices.push_back(std::move(cd));
  }
  if (config.placement == controller_placement::gpu_kernel) {
    m.gpu = std::make_unique<emulated::gpu_controller>(*m.rt, std::move(devices), m.image.get(),
                                                       config.controller);
  } else {
    const std::uint32_t threads = config.controller_threads;
    for (std::uint32_t t = 0; t < threads; ++t) {
      std::vector<emulated::controller_device> share = devices;
      for (std::uint32_t d = 0; d < config.devices; ++d) {
        share[d].queues.clear();
        for (std::uint32_t q = t; q < config.queues_per_device; q += threads) {
          share[d].queues.push_back(devices[d].queues[q]);
        }
      }
      m.cpus.push_back(std::make_unique<emulated::cpu_controller>(std::move(share), m.image.get(),
                                                                  config.copy_batches_in_flight));
    }
  }
  if (m.rt) {
    m.rt->attach(m);
    m.attached = true;
  }
}

emulated_storage::~emulated_storage() = default;

device_set_ref emulated_storage::ref() const { return impl_->view; }
void emulated_storage::start() { impl_->start(); }
void emulated_storage::stop() { impl_->stop(); }
bool emulated_storage::running() const { return impl_->running(); }

std::string emulated_storage::describe() const {
  switch (impl_->config.placement) {
    case controller_placement::gpu_kernel:
      return "GPU kernel: " + impl_->gpu->describe();
    case controller_placement::host_thread:
      return "host thread over pinned queues (debug placement)";
    default:
      return "host thread";
  }
}

std::uint32_t emulated_storage::reset_queue(std::uint32_t device, std::uint32_t queue) {
  impl& m = *impl_;
  if (device >= m.config.devices || queue >= m.config.queues_per_device) {
    throw input_error("reset_queue: no queue " + std::to_string(queue) + " on device " +
                      std::to_string(device));
  }
  const std::uint64_t i = std::uint64_t{device} * m.config.queues_per_device + queue;
  // The controller forgets the queue's commands: none of the abandoned ones can run now, so
  // what their buffers held goes back before their records are wiped. Queues in GPU memory
  // (and the words their holds name) are changed by a kernel of the GPU controller's.
  std::uint32_t released = 0;
  if (m.gpu) {
    released = m.gpu->reset_queue(device, queue);
  } else {
    const auto threads = static_cast<std::uint32_t>(m.cpus.size());
    m.cpus[queue % threads]->reset_queue(device, queue / threads);
    if (m.queue_memory == memory_kind::host) released = m.queues[i].release_abandoned_holds();
  }
  m.zero_queue_memory(i * m.queue_bytes, m.queue_bytes);
  return released;
}

std::uint32_t emulated_storage::halted_queues() const {
  const impl& m = *impl_;
  std::uint32_t halted = 0;
  if (m.queue_memory == memory_kind::device) {
    const std::uint32_t* out =
        m.copy_control_field(&queue_control::halted, "copying queue halt words");
    for (std::size_t q = 0; q < m.queues.size(); ++q) halted += out[q] != 0 ? 1u : 0u;
  } else {
    for (const queue_pair_ref& q : m.queues) halted += q.halted() ? 1u : 0u;
  }
  return halted;
}

std::vector<std::string> emulated_storage::stuck_queues(std::uint64_t age_ns) const {
  return impl_->stuck_queues(age_ns);
}

storage_stats emulated_storage::stats() const {
  const impl& m = *impl_;
  storage_stats s;
  s.devices = m.controller_stats();
  if (m.queue_memory == memory_kind::device) {
    const queue_counters* out =
        m.copy_control_field(&queue_control::counters, "copying queue counters");
    s.queues.assign(out, out + m.queues.size());
  } else {
    // Drainers and tail winners store these words while submitters run: read them atomically.
    for (const queue_pair_ref& q : m.queues) s.queues.push_back(storage_detail::read_counters(q));
  }
  return s;
}

const storage_config& emulated_storage::config() const { return impl_->config; }
backing_store& emulated_storage::image() const { return *impl_->image; }

}  // namespace bam
