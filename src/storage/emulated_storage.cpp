#include <bam/storage/emulated_storage.hpp>

#include <cstring>

#include <bam/error.hpp>

#include "runtime/memory.hpp"
#include "storage/cpu/cpu_controller.hpp"

namespace bam {

namespace {

bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

void check(const storage_config& c) {
  auto bad = [](const std::string& what) { throw input_error("storage configuration: " + what); };
  if (c.devices == 0 || c.devices > 1024)
    bad("devices must be 1..1024, got " + std::to_string(c.devices));
  if (c.queues_per_device == 0 || c.queues_per_device > 65535) {
    bad("queues per device must be 1..65535, got " + std::to_string(c.queues_per_device));
  }
  if (c.queue_depth < 2 || c.queue_depth > max_queue_depth) {
    bad("queue depth must be 2..65535, got " + std::to_string(c.queue_depth));
  }
  if (c.block_bytes != 512 && c.block_bytes != 4096) {
    bad("block size must be 512 or 4096, got " + std::to_string(c.block_bytes));
  }
  if (!c.replicated && c.devices > 1 &&
      (c.stripe_bytes == 0 || c.stripe_bytes % c.block_bytes != 0)) {
    bad("stripe unit must be a multiple of the block size, got " + std::to_string(c.stripe_bytes));
  }
  if (!power_of_two(c.max_transfer_bytes) || c.max_transfer_bytes < c.block_bytes) {
    bad("max transfer must be a power of two of at least one block");
  }
  if (c.timeout_ns == 0) bad("timeout must be positive");
}

}  // namespace

device_stats storage_stats::total() const {
  device_stats t;
  for (const auto& d : devices) {
    t.commands += d.commands;
    t.reads += d.reads;
    t.writes += d.writes;
    t.flushes += d.flushes;
    t.bytes_read += d.bytes_read;
    t.bytes_written += d.bytes_written;
    t.invalid += d.invalid;
    t.injected_errors += d.injected_errors;
    t.dropped += d.dropped;
    t.late += d.late;
  }
  return t;
}

struct emulated_storage::impl {
  storage_config config;
  std::shared_ptr<backing_store> image;
  memory_kind queue_memory = memory_kind::host;
  std::uint64_t queue_bytes = 0;
  void* queue_block = nullptr;
  std::vector<queue_pair_ref> queues;  // host copy; ref() points at it (CPU path)
  std::unique_ptr<emulated::cpu_controller> controller;
  device_set_ref view;

  ~impl() {
    controller.reset();
    runtime::release(queue_block, queue_memory);
  }
};

emulated_storage::emulated_storage(const storage_config& config,
                                   std::shared_ptr<backing_store> image)
    : impl_(std::make_unique<impl>()) {
  check(config);
  if (!image) throw input_error("storage configuration: no backing image");
  if (image->kind() != memory_kind::host) {
    throw input_error("the CPU controller serves host-memory images only");
  }
  impl_->config = config;
  impl_->image = std::move(image);

  const queue_layout layout = queue_layout::for_depth(config.queue_depth);
  const std::uint64_t count = std::uint64_t{config.devices} * config.queues_per_device;
  impl_->queue_bytes = layout.bytes;
  impl_->queue_block = runtime::allocate(layout.bytes * count, impl_->queue_memory);
  std::memset(impl_->queue_block, 0, layout.bytes * count);
  for (std::uint64_t i = 0; i < count; ++i) {
    impl_->queues.emplace_back(
        static_cast<unsigned char*>(impl_->queue_block) + i * layout.bytes, config.queue_depth,
        static_cast<std::uint16_t>(1 + i % config.queues_per_device), config.timeout_ns);
  }

  device_set_ref& v = impl_->view;
  v.queues = impl_->queues.data();
  v.devices = config.devices;
  v.queues_per_device = config.queues_per_device;
  v.block_bytes = config.block_bytes;
  v.page_bytes = 4096;
  v.stripe_bytes = config.stripe_bytes;
  v.capacity_bytes = impl_->image->bytes();
  v.max_transfer_bytes = config.max_transfer_bytes;
  v.replicated = config.replicated;

  std::vector<emulated::controller_device> devices;
  for (std::uint32_t d = 0; d < config.devices; ++d) {
    emulated::controller_device cd;
    emulated::namespace_view& ns = cd.ns;
    ns.image = impl_->image->data();
    ns.image_bytes = impl_->image->bytes();
    ns.dirty = impl_->image->dirty_bits();
    ns.chunk_shift = impl_->image->chunk_shift();
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
    cd.timing = emulated::timing_model::from(config.model);
    cd.faults = config.faults;
    cd.seed = config.faults.seed;
    for (std::uint32_t q = 0; q < config.queues_per_device; ++q) {
      cd.queues.push_back(impl_->queues[std::uint64_t{d} * config.queues_per_device + q]);
    }
    devices.push_back(std::move(cd));
  }
  impl_->controller =
      std::make_unique<emulated::cpu_controller>(std::move(devices), impl_->image.get());
}

emulated_storage::~emulated_storage() = default;

device_set_ref emulated_storage::ref() const { return impl_->view; }
void emulated_storage::start() { impl_->controller->start(); }
void emulated_storage::stop() { impl_->controller->stop(); }
bool emulated_storage::running() const { return impl_->controller->running(); }

void emulated_storage::reset_queue(std::uint32_t device, std::uint32_t queue) {
  if (device >= impl_->config.devices || queue >= impl_->config.queues_per_device) {
    throw input_error("reset_queue: no queue " + std::to_string(queue) + " on device " +
                      std::to_string(device));
  }
  impl_->controller->reset_queue(device, queue);
  const std::uint64_t i = std::uint64_t{device} * impl_->config.queues_per_device + queue;
  std::memset(static_cast<unsigned char*>(impl_->queue_block) + i * impl_->queue_bytes, 0,
              impl_->queue_bytes);
}

std::vector<std::string> emulated_storage::stuck_queues(std::uint64_t age_ns) const {
  return impl_->controller->stuck_queues(age_ns);
}

storage_stats emulated_storage::stats() const {
  storage_stats s;
  s.devices = impl_->controller->stats();
  for (const queue_pair_ref& q : impl_->queues) s.queues.push_back(q.control()->counters);
  return s;
}

const storage_config& emulated_storage::config() const { return impl_->config; }
backing_store& emulated_storage::image() const { return *impl_->image; }

}  // namespace bam
