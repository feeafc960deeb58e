#include "bam/storage_options.hpp"

#include <bam/error.hpp>
#include <bam/runtime/gpu_info.hpp>

#include "bam/commands.hpp"

namespace bam::tools {

void storage_options::add_to(CLI::App& c) {
  c.add_option("--backend", backend,
               "emulated-ssd (NVMe devices emulated by a controller), host-memory (read the data "
               "in place, no cache), device-memory (GPU only)")
      ->check(CLI::IsMember({"emulated-ssd", "host-memory", "device-memory"}))
      ->capture_default_str();
  c.add_option("--cache-bytes", cache_bytes, "Cache capacity (default: chosen by the command)")
      ->transform(size_transformer());
  c.add_option("--line-bytes", line_bytes, "Cache line size, a power of two from 512 to 64K")
      ->transform(size_transformer())
      ->capture_default_str();
  c.add_option("--cache-mode", mode_name, "none | naive | optimized")
      ->check(CLI::IsMember({"none", "naive", "optimized"}))
      ->capture_default_str();
  c.add_option("--devices", devices, "Emulated devices (striped)")->capture_default_str();
  c.add_option("--queues", queues, "Queue pairs per device")->capture_default_str();
  c.add_option("--depth", depth, "Entries per queue (2..65535)")->capture_default_str();
  c.add_option("--latency-us", latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  c.add_flag("--caps", caps, "Apply the device model's IOPS and bandwidth caps (Optane-like)");
  c.add_option("--cpu-threads", workers, "CPU worker threads on the CPU path (0: 4 per core)");
}

bam::cache_mode storage_options::mode() const {
  if (mode_name == "none") return bam::cache_mode::none;
  if (mode_name == "naive") return bam::cache_mode::naive;
  return bam::cache_mode::optimized;
}

storage_config storage_options::storage() const {
  storage_config s;
  s.devices = devices;
  s.queues_per_device = queues;
  s.queue_depth = depth;
  s.model = device_model::optane();
  s.model.latency_us = latency_us;
  s.model.caps = caps;
  s.stripe_bytes = line_bytes > 65536 ? line_bytes : 65536;
  return s;
}

cache_config storage_options::cache(std::uint64_t default_cache_bytes) const {
  cache_config c;
  c.line_bytes = static_cast<std::uint32_t>(line_bytes);
  c.capacity_bytes = cache_bytes ? cache_bytes : default_cache_bytes;
  if (c.capacity_bytes < line_bytes) c.capacity_bytes = line_bytes;
  c.mode = mode();
  return c;
}

data_path data_path::open(const storage_options& o, std::shared_ptr<backing_store> image,
                          std::uint64_t default_cache_bytes) {
  if (o.backend == "device-memory" && !gpu_available()) {
    throw input_error("--backend device-memory needs a GPU (" + gpu_unavailable_reason() + ")");
  }
  data_path p;
  p.image = std::move(image);
  p.stream = std::make_unique<host_stream>(o.workers);
  if (o.backend == "host-memory") return p;
  p.storage = std::make_unique<emulated_storage>(o.storage(), p.image);
  p.cache = std::make_unique<page_cache>(o.cache(default_cache_bytes), *p.stream);
  p.storage->start();
  return p;
}

data_path::~data_path() {
  cache.reset();
  if (storage) storage->stop();
}

}  // namespace bam::tools
