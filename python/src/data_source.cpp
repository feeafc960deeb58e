#include "data_source.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include <bam/error.hpp>

#include "common/fault_spec.hpp"
#include "common/sizes.hpp"

namespace bam::python {

namespace {

// The command line's CPU-path defaults (tools/bam/storage_options.cpp): queues and depth per
// device, the stripe unit (a line never spans devices), the file backend's I/O threads.
constexpr std::uint32_t cpu_queues = 8;
constexpr std::uint32_t cpu_depth = 256;
constexpr std::uint32_t io_threads = 2;
constexpr std::uint32_t io_depth = 64;
// host-cached: the largest copy a missing thread makes (a line, or a run of lines).
constexpr std::uint32_t max_copy_bytes = 256u << 10;

std::uint64_t stripe_bytes(const source_options& o) {
  return std::max<std::uint64_t>(o.line_bytes, 65536);
}

std::uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw input_error("no such file: '" + path + "'");
  if (!std::filesystem::is_regular_file(status))
    throw input_error("'" + path + "' is not a regular file");
  const std::uint64_t bytes = std::filesystem::file_size(path, ec);
  if (ec) throw input_error("cannot read the size of '" + path + "': " + ec.message());
  return bytes;
}

void check(const source_options& o) {
  const std::string& b = o.backend;
  if (b != "file" && b != "emulated-ssd" && b != "host-memory" && b != "host-cached" &&
      b != "device-memory") {
    throw input_error(
        "backend '" + b +
        "' is not one of file, emulated-ssd, host-memory, host-cached, device-memory");
  }
  if (b == "device-memory" && o.gpu_device < 0) {
    throw input_error(
        "backend 'device-memory' keeps the data in GPU memory: it needs device='cuda' and a "
        "module built with CUDA (BAM_PYTHON_CUDA=1)");
  }
  if (o.paths.empty()) throw input_error("no file named");
  if (o.paths.size() > 1 && b != "file") {
    throw input_error("a striped set of files needs backend 'file' (backend '" + b +
                      "' loads one file)");
  }
  if (b == "file" && o.devices != 1 && o.devices != o.paths.size()) {
    throw input_error("backend 'file': devices=" + std::to_string(o.devices) + " but " +
                      std::to_string(o.paths.size()) +
                      " file(s) named; a striped set is one file per device");
  }
  if ((b == "host-memory" || b == "host-cached") && o.devices != 1)
    throw input_error("backend '" + b + "' reads no devices: leave devices at 1");
  if (o.devices == 0) throw input_error("devices must be at least 1");
  if (o.controller_threads != 0 && b != "emulated-ssd") {
    throw input_error(
        "controller_threads: backend 'emulated-ssd' only (its host threads "
        "serve emulated devices; backend '" +
        b + "')");
  }
  if (o.copy_batches != 0 && (b != "emulated-ssd" || o.gpu_device < 0)) {
    throw input_error(
        "copy_batches: backend 'emulated-ssd' with device='cuda' only (its controller "
        "threads' copies into GPU memory)");
  }
  if (!o.faults.empty() && b != "emulated-ssd") {
    throw input_error("faults need backend 'emulated-ssd' (backend '" + b +
                      "' reads real files or memory; their errors are real)");
  }
  if (o.writable && (b == "host-memory" || b == "host-cached" || b == "device-memory")) {
    throw input_error("backend '" + b +
                      "' is read-only here: open with backend 'file' or 'emulated-ssd' to write");
  }
  if (b == "device-memory" && o.devices != 1)
    throw input_error("backend 'device-memory' reads no devices: leave devices at 1");
}

fault_plan device_faults(const source_options& o) {
  if (o.faults.empty()) return {};
  return tools::bad_lba_for_devices(tools::parse_fault_spec(o.faults),
                                    {.devices = o.devices,
                                     .stripe_bytes = stripe_bytes(o),
                                     .block_bytes = storage_config{}.block_bytes});
}

storage_config emulated_config(const source_options& o) {
  storage_config s;
  s.devices = o.devices;
  s.queues_per_device = cpu_queues;
  s.queue_depth = cpu_depth;
  s.placement = controller_placement::cpu_thread;
  s.controller_threads = o.controller_threads != 0 ? o.controller_threads : 1;
  // The command line's default device: Optane's latency, no IOPS or bandwidth caps.
  s.model = device_model::optane();
  s.model.caps = false;
  s.stripe_bytes = stripe_bytes(o);
  s.faults = device_faults(o);
  return s;
}

// One host controller thread with batches of copies in flight (storage_config::
// copy_batches_in_flight) served more commands than two or four on an H100 machine's 16
// cores: threads that each wait once per batch gained from a second, but threads that keep
// batches in flight contend in the CUDA driver (docs/python.md has the sweep).
constexpr std::uint32_t gpu_controller_threads = 1;

// On a GPU: more queues, so the GPU's many waiting threads spread over them, and the
// controller a host thread over pinned queues (data_source.hpp says why not the GPU kernel).
constexpr std::uint32_t gpu_queues = 32;
constexpr std::uint32_t gpu_depth = 1024;

storage_config gpu_emulated_config(const source_options& o) {
  storage_config s = emulated_config(o);
  s.queues_per_device = gpu_queues;
  s.queue_depth = gpu_depth;
  s.placement = controller_placement::host_thread;
  s.controller_threads = o.controller_threads != 0 ? o.controller_threads : gpu_controller_threads;
  if (o.copy_batches != 0) s.copy_batches_in_flight = o.copy_batches;
  return s;
}

file_storage_config files_config(const source_options& o) {
  file_storage_config f;
  f.paths = o.paths;
  f.writable = o.writable;
  f.io_threads = io_threads;
  f.io_depth = io_depth;
  f.queues_per_device = cpu_queues;
  f.queue_depth = cpu_depth;
  f.stripe_bytes = stripe_bytes(o);
  return f;
}

// As tools::storage_options::files on a GPU: every command staged through a pinned buffer.
file_storage_config gpu_files_config(const source_options& o) {
  file_storage_config f = files_config(o);
  f.queues_per_device = gpu_queues;
  f.queue_depth = gpu_depth;
  f.max_transfer_bytes =
      std::max<std::uint32_t>(256u << 10, static_cast<std::uint32_t>(o.line_bytes));
  f.gpu = true;
  return f;
}

cache_config cache_for(const source_options& o, std::uint64_t data_bytes) {
  cache_config c;
  c.line_bytes = static_cast<std::uint32_t>(o.line_bytes);
  if (c.line_bytes != o.line_bytes) throw input_error("line_bytes is far too large");
  c.capacity_bytes =
      o.cache_bytes ? o.cache_bytes : std::max<std::uint64_t>(data_bytes / 8, 1 << 20);
  c.capacity_bytes = std::max<std::uint64_t>(c.capacity_bytes, o.line_bytes);
  // The file backend's I/O threads read the PRP lists of lines over two pages (8 KiB+).
  // Both backends' controllers are host threads on a GPU (data_source.hpp).
  c.prp_lists_in_host_memory =
      (o.backend == "file" || o.backend == "emulated-ssd") && o.gpu_device >= 0;
  return c;
}

}  // namespace

data_source::data_source(const source_options& o) : backend_(o.backend), gpu_device_(o.gpu_device) {
  check(o);
  for (const std::string& p : o.paths) data_bytes_ += file_bytes(p);
  if (data_bytes_ == 0) throw input_error("'" + o.paths.front() + "' is empty");
  if (o.gpu_device >= 0) {
    open_on_gpu(o);
    return;
  }
  // A disk's latency is far longer than the emulated device's: the file backend needs more
  // workers waiting on it to keep its I/O threads' depth filled (as the command line).
  stream_ = std::make_unique<host_stream>(
      o.backend == "file" ? std::max(16u, io_threads * io_depth / 2) : 0u);
  if (o.backend == "file") {
    files_ = std::make_unique<file_storage>(files_config(o));
  } else {
    image_ = backing_store::from_file(o.paths.front(), o.writable, memory_kind::host);
    if (o.backend == "host-memory") return;
    if (o.backend != "host-cached") {
      storage_ = std::make_unique<emulated_storage>(emulated_config(o), image_);
    }
  }
  cache_ = std::make_unique<page_cache>(cache_for(o, data_bytes_), *stream_);
  if (storage_) storage_->start();
  if (files_) files_->start();
}

void data_source::open_on_gpu(const source_options& o) {
  runtime_config rc;
  rc.device = o.gpu_device;
  rc.quiet = true;
  // No controller kernel to set SMs aside for: plain non-blocking streams, every SM.
  rc.green_contexts = false;
  runtime_ = std::make_unique<gpu_runtime>(rc);
  if (!runtime_->gpu()) throw input_error("device='cuda': no GPU: " + runtime_->message());
  if (o.backend == "file") {
    files_ = std::make_unique<file_storage>(gpu_files_config(o), runtime_.get());
  } else {
    // Pinned: the GPU reads host-memory in place, and the controller's copies cross PCIe
    // from it without staging.
    image_ = backing_store::from_file(o.paths.front(), o.writable, memory_kind::pinned);
    if (o.backend == "host-memory") return;
    if (o.backend == "device-memory") {
      device_image_ = device_memory(image_->bytes());
      copy_async(device_image_.data(), image_->data(), image_->bytes(), runtime_->stream());
      runtime_->synchronize(runtime_->stream(), 0, "copying the data into GPU memory");
      image_.reset();  // read-only: the GPU copy is all there is to read
      return;
    }
    // host-cached has no controller: a GPU thread that misses copies its line from the image.
    if (o.backend != "host-cached") {
      storage_ = std::make_unique<emulated_storage>(gpu_emulated_config(o), image_, runtime_.get());
    }
  }
  cache_ = std::make_unique<page_cache>(cache_for(o, data_bytes_), *runtime_);
  runtime_->start();  // the attached controllers (host threads)
}

std::uint8_t* data_source::memory() const {
  if (device_image_.data() != nullptr) return device_image_.as<std::uint8_t>();
  return image_ ? image_->data() : nullptr;
}

data_source::~data_source() {
  // As tools::data_path: the controllers stop, the cache goes before the devices it reads,
  // and the storage is freed after them. Destructors never throw.
  if (runtime_) {
    try {
      if (runtime_->started()) runtime_->stop();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bam: stopping the GPU runtime: %s\n", e.what());
    }
  }
  cache_.reset();
  try {
    if (storage_ && !runtime_) storage_->stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bam: emulated storage: %s\n", e.what());
  }
  storage_.reset();
  try {
    if (files_ && !runtime_) files_->stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bam: file storage: %s\n", e.what());
  }
  files_.reset();
  device_image_ = device_memory();
  image_.reset();
  runtime_.reset();
}

device_set_ref data_source::devices() const {
  if (storage_) return storage_->ref();
  if (files_) return files_->ref();
  return device_set_ref::over_memory(image_->data(), image_->bytes(), max_copy_bytes);
}

std::string data_source::describe() const {
  std::string d = backend_;
  if (files_) d += ": " + files_->describe();
  if (storage_) {
    const storage_config& c = storage_->config();
    d += ": " + std::to_string(c.devices) + " device(s), " + std::to_string(c.queues_per_device) +
         " queues x " + std::to_string(c.queue_depth);
  }
  if (backend_ == "host-cached") {
    d += std::string(": ") + (runtime_ ? "pinned" : "host") +
         " memory, each miss copied by the thread that missed";
  }
  if (cache_) {
    d += "; cache " + tools::format_bytes(static_cast<double>(cache_->config().capacity_bytes)) +
         " of " + tools::format_bytes(cache_->config().line_bytes) + " lines";
  }
  if (runtime_) return d + "; GPU " + std::to_string(gpu_device_);
  return d + "; " + std::to_string(stream_->workers()) + " CPU threads";
}

}  // namespace bam::python
