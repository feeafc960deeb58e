#include "bam/storage_options.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/runtime/gpu_info.hpp>

#include "bam/commands.hpp"
#include "common/fault_spec.hpp"

namespace bam::tools {

namespace {

// The devices' stripe unit: the line when larger than 64 KiB (a line never spans devices).
std::uint64_t stripe_bytes(const storage_options& o) {
  return o.line_bytes > 65536 ? o.line_bytes : 65536;
}

// The plan every emulated device gets: --faults, its bad range mapped from the set's blocks
// onto the devices' (one shared range, so it must be the same range of each device).
fault_plan device_faults(const storage_options& o) {
  if (o.faults.empty()) return {};
  return bad_lba_for_devices(parse_fault_spec(o.faults),
                             {.devices = o.devices,
                              .stripe_bytes = stripe_bytes(o),
                              .block_bytes = storage_config{}.block_bytes});
}

}  // namespace

void storage_options::add_to(CLI::App& c, const storage_choices& choices) {
  std::vector<std::string> backends = {"emulated-ssd", "file", "host-memory", "device-memory"};
  std::string help =
      "emulated-ssd (NVMe devices emulated by a controller, read through the page cache), "
      "file (the data file itself, read and written on demand by host I/O threads through the "
      "page cache; a comma list of files is one striped set), "
      "host-memory (read the data in place, no cache: on a GPU zero-copy over PCIe, a warp per "
      "list in aligned 128 B reads as EMOGI), device-memory (GPU only: all data in GPU memory)";
  if (choices.tiled) {
    backends.emplace_back("tiled");
    help +=
        ", tiled (proactive tiling: the host copies partitions of the data into a GPU buffer of "
        "--cache-bytes, two halves, one launch per partition on every pass)";
  }
  if (choices.column_copy) {
    backends.emplace_back("column-copy");
    help +=
        ", column-copy (the CPU-centric baseline: the columns the query reads copied whole into "
        "GPU memory, the copy timed, then the same kernel over them)";
  }
  c.add_option("--backend", backend, help)->check(CLI::IsMember(backends))->capture_default_str();
  c.add_option("--cache-bytes", cache_bytes,
               "Cache capacity, more than 0; with --backend tiled the tile buffer (default: "
               "chosen by the command)")
      ->transform(size_transformer())
      ->check(nonzero_size());
  c.add_option("--line-bytes", line_bytes, "Cache line size, a power of two from 512 to 64K")
      ->transform(size_transformer())
      ->capture_default_str();
  c.add_option("--cache-mode", mode_name, "none | naive | optimized")
      ->check(CLI::IsMember({"none", "naive", "optimized"}))
      ->capture_default_str();
  c.add_option("--write-behind", write_behind,
               "on: a load's first dirty victim is written back beside the load's read "
               "(asynchronous write-back); off: before it")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  c.add_option("--devices", devices, "Emulated devices (striped)")->capture_default_str();
  c.add_option("--queues", queues, "Queue pairs per device (default: 8 on CPU, 128 on a GPU)");
  c.add_option("--depth", depth,
               "Entries per queue, 2..65535 (default: 256 on CPU, 1024 on a GPU)");
  c.add_option("--target", target, "Where kernels run: auto (a GPU when there is one), cpu, gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  c.add_option("--controller-sms", controller_sms, "SMs of the emulated controller (GPU)")
      ->capture_default_str();
  c.add_option("--wait-sleep-ns", wait_sleep_ns,
               "GPU: longest sleep between polls of a thread waiting on a queue (0: no sleep)")
      ->check(CLI::Range(0u, max_sleep_ns))
      ->capture_default_str();
  c.add_option("--controller-sleep-ns", controller_sleep_ns,
               "GPU: longest sleep of an idle controller warp (0: no sleep)")
      ->check(CLI::Range(0u, max_sleep_ns))
      ->capture_default_str();
  c.add_option("--queue-edges", queue_edges,
               "GPU: scope of the doorbell and completion edges between the app's threads and "
               "the emulated controller kernel: system, or gpu (both sides are on this GPU)")
      ->check(CLI::IsMember({"system", "gpu"}))
      ->capture_default_str();
  c.add_option("--media", media,
               "emulated-ssd on a GPU: where the emulated devices keep their data: host (pinned "
               "host memory, which the controller reads over PCIe; any size) or gpu (GPU "
               "memory, when it fits: the device model alone sets the pace, as real SSDs' DMA "
               "into GPU memory would)")
      ->check(CLI::IsMember({"host", "gpu"}))
      ->capture_default_str();
  c.add_option("--controller-stop-poll-us", controller_stop_poll_us,
               "GPU: how often the controller reads its stop flag in host memory while it has "
               "work (us; frequent reads of host memory slow every barrier on the GPU)")
      ->check(CLI::Range(1u, 100'000u))
      ->capture_default_str();
  c.add_option("--model", model_name,
               "Device model: optane (11 us; 5.1 M IOPS at 512 B, 1.5 M at 4 KiB; caps on), nand "
               "(100 us; 0.8 M IOPS at 4 KiB; caps on), unlimited (latency only, no caps). "
               "Without it: 11 us, no caps unless --caps. --latency-us replaces the model's "
               "latency; --caps turns the caps on")
      ->check(CLI::IsMember({"optane", "nand", "unlimited"}));
  c.add_option("--latency-us", latency_us,
               "Modelled device latency in microseconds (default: the model's, 11 without "
               "--model)")
      ->each([this](const std::string&) { latency_given = true; });
  c.add_flag("--caps", caps,
             "Apply the model's IOPS and bandwidth caps (Optane's without --model)");
  c.add_option("--cpu-threads", workers,
               "CPU worker threads on the CPU path (0: 4 per core; --backend file: half the "
               "I/O threads x depth, so the disk's queue stays full)");
  c.add_option("--faults", faults,
               "emulated-ssd: injected faults, a comma list of key=value: error-rate=R (reads "
               "and writes fail with a media error), write-error-rate=R (writes fail with a "
               "write fault), late-rate=R and late-us=U (completions U microseconds late), "
               "drop-rate=R (completions never posted: the command times out, see "
               "--io-timeout-ms), bad-lba=A-B (512-byte blocks A to B of the device set fail "
               "every read and write), seed=S (the per-command draws). Rates are shares of "
               "commands from 0 to 1. Example: --faults error-rate=0.001,seed=7")
      ->type_name("SPEC")
      ->check(CLI::Validator(
          [](const std::string& text) {
            try {
              (void)parse_fault_spec(text);
            } catch (const input_error& e) {
              return e.message();
            }
            return std::string();
          },
          "", "fault spec"));
  c.add_option("--io-engine", io_engine,
               "--backend file: auto (io_uring, or psync where io_uring is refused), io_uring, "
               "psync (threads doing pread/pwrite)")
      ->check(CLI::IsMember({"auto", "io_uring", "psync"}))
      ->capture_default_str();
  c.add_option("--io-threads", io_threads, "--backend file: host threads serving the queues")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  c.add_option("--io-depth", io_depth, "--backend file: commands in flight per I/O thread")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  c.add_flag("--buffered", buffered,
             "--backend file: go through the OS page cache instead of O_DIRECT");
  c.add_option("--io-timeout-ms", io_timeout_ms,
               "emulated-ssd and file: how long one I/O command may take before it fails with "
               "a timeout, in milliseconds (default 30000); the cache waits at most four of "
               "these for a line it can reuse")
      ->type_name("MS")
      ->transform(whole_number())
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{24} * 3600 * 1000));
}

void storage_options::validate() const {
  if (on_files() && !faults.empty()) {
    throw input_error(
        "--faults needs --backend emulated-ssd (--backend file reads real files; their errors "
        "are real)");
  }
  if (media != "host" && backend != "emulated-ssd") {
    throw input_error("--media " + media + " needs --backend emulated-ssd (--backend " + backend +
                      " has no emulated devices)");
  }
  if (!on_files() && (io_engine != "auto" || buffered)) {
    throw input_error("--io-engine and --buffered need --backend file");
  }
  if (without_storage()) {
    if (!faults.empty()) {
      throw input_error("--faults needs --backend emulated-ssd (--backend " + backend +
                        " reads no device)");
    }
    if (io_timeout_ms != 0) {
      throw input_error("--io-timeout-ms needs --backend emulated-ssd or file (--backend " +
                        backend + " reads no device)");
    }
    return;
  }
  if (!faults.empty()) (void)device_faults(*this);
}

device_model storage_options::model() const {
  device_model m = device_model::optane();
  if (model_name == "nand") {
    m = device_model::nand();
  } else if (model_name == "unlimited") {
    m = device_model::latency_only(device_model::optane().latency_us);
  } else if (model_name.empty()) {
    m.caps = false;  // as before --model: Optane's rates, caps only with --caps
  }
  if (latency_given) m.latency_us = latency_us;
  if (caps) m.caps = true;
  return m;
}

std::string storage_options::model_label() const {
  return model_name.empty() ? std::string("default") : model_name;
}

bam::cache_mode storage_options::mode() const {
  if (mode_name == "none") return bam::cache_mode::none;
  if (mode_name == "naive") return bam::cache_mode::naive;
  return bam::cache_mode::optimized;
}

bool storage_options::use_gpu() const {
  if (target == "cpu") return false;
  if (target == "gpu") {
    if (!gpu_available()) throw input_error("--target gpu: " + gpu_unavailable_reason());
    return true;
  }
  return gpu_available();
}

storage_config storage_options::storage() const {
  const bool gpu = use_gpu();
  storage_config s;
  s.devices = devices;
  s.queues_per_device = queues ? queues : (gpu ? 128u : 8u);
  s.queue_depth = depth ? depth : (gpu ? 1024u : 256u);
  s.placement = gpu ? controller_placement::gpu_kernel : controller_placement::cpu_thread;
  s.model = model();
  s.stripe_bytes = stripe_bytes(*this);
  s.faults = device_faults(*this);
  if (io_timeout_ms != 0) s.timeout_ns = io_timeout_ms * 1'000'000;
  s.wait_sleep_ns = wait_sleep_ns;
  s.controller.idle_sleep_ns = controller_sleep_ns;
  s.controller.stop_poll_ns = std::uint64_t{controller_stop_poll_us} * 1000;
  if (queue_edges == "gpu") {
    if (!gpu) throw input_error("--queue-edges gpu needs the GPU controller (--target gpu)");
    s.controller.gpu_scope_edges = true;
  }
  return s;
}

cache_config storage_options::cache(std::uint64_t default_cache_bytes) const {
  cache_config c;
  c.line_bytes = static_cast<std::uint32_t>(line_bytes);
  c.capacity_bytes = cache_bytes ? cache_bytes : default_cache_bytes;
  if (c.capacity_bytes < line_bytes) c.capacity_bytes = line_bytes;
  c.mode = mode();
  c.translation = translation;
  c.write_behind = write_behind == "on";
  // The file backend's I/O threads read the PRP lists of lines over two pages (8 KiB+).
  c.prp_lists_in_host_memory = backend == "file" && use_gpu();
  // --io-timeout-ms bounds a faulted run: a line the cache cannot free (held by a command
  // that may still run) is waited for a few command timeouts, not the default 30 s.
  if (io_timeout_ms != 0) c.victim_timeout_ns = 4 * io_timeout_ms * 1'000'000;
  return c;
}

file_storage_config storage_options::files(std::vector<std::string> paths, bool writable) const {
  const bool gpu = use_gpu();
  file_storage_config f;
  f.paths = std::move(paths);
  f.writable = writable;
  f.engine = io_engine == "io_uring" ? io_engine_kind::io_uring
             : io_engine == "psync"  ? io_engine_kind::psync
                                     : io_engine_kind::automatic;
  f.io_threads = io_threads;
  f.io_depth = io_depth;
  f.direct = !buffered;
  f.queues_per_device = queues ? queues : (gpu ? 32u : 8u);
  f.queue_depth = depth ? depth : (gpu ? 1024u : 256u);
  f.stripe_bytes = stripe_bytes(*this);
  // On a GPU every command is staged through a pinned buffer of this size per I/O slot.
  if (gpu)
    f.max_transfer_bytes =
        std::max<std::uint32_t>(256u << 10, static_cast<std::uint32_t>(line_bytes));
  if (io_timeout_ms != 0) f.timeout_ns = io_timeout_ms * 1'000'000;
  f.wait_sleep_ns = wait_sleep_ns;
  f.gpu = gpu;
  return f;
}

std::vector<std::string> split_paths(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (out.back().empty()) throw input_error("an empty file name in '" + text + "'");
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

std::shared_ptr<backing_store> load_image(const storage_options& o, const std::string& file) {
  return backing_store::from_file(file, false,
                                  o.use_gpu() ? memory_kind::pinned : memory_kind::host);
}

data_path data_path::open(const storage_options& o, std::shared_ptr<backing_store> image,
                          std::uint64_t default_cache_bytes) {
  const bool gpu = o.use_gpu();
  if (o.backend == "device-memory" && !gpu) {
    throw input_error(
        "--backend device-memory needs a GPU (" +
        (gpu_available() ? std::string("--target cpu was given") : gpu_unavailable_reason()) + ")");
  }
  if (gpu && image->kind() == memory_kind::host) {
    throw input_error("on a GPU the image must be in pinned memory (load it with load_image)");
  }
  data_path p;
  p.image = std::move(image);
  p.start_executor(o);
  if (o.backend == "device-memory") {
    p.device_image = device_memory(p.image->bytes());
    copy_async(p.device_image.data(), p.image->data(), p.image->bytes(), p.runtime->stream());
    p.runtime->synchronize(p.runtime->stream(), 0, "copying the data into GPU memory");
    return p;
  }
  if (o.backend == "host-memory" || o.backend == "tiled" || o.backend == "column-copy") return p;
  if (o.on_files()) throw input_error("--backend file reads the files named: use open_files");
  std::shared_ptr<backing_store> devices_data = p.image;
  if (o.media == "gpu") {
    if (!gpu) {
      throw input_error(
          "--media gpu needs a GPU (" +
          (gpu_available() ? std::string("--target cpu was given") : gpu_unavailable_reason()) +
          ")");
    }
    p.media = backing_store::in_memory(p.image->bytes(), memory_kind::device);
    copy_async(p.media->data(), p.image->data(), p.image->bytes(), p.runtime->stream());
    p.runtime->synchronize(p.runtime->stream(), 0, "copying the devices' data into GPU memory");
    devices_data = p.media;
  }
  p.storage = std::make_unique<emulated_storage>(o.storage(), devices_data, p.runtime.get());
  p.make_cache(o, default_cache_bytes);
  return p;
}

data_path data_path::open_files(const storage_options& o, const std::vector<std::string>& paths,
                                bool writable, std::uint64_t default_cache_bytes) {
  data_path p;
  p.start_executor(o);
  p.files = std::make_unique<file_storage>(o.files(paths, writable), p.runtime.get());
  for (const std::string& n : p.files->notices()) std::fprintf(stderr, "# notice: %s\n", n.c_str());
  p.make_cache(o, default_cache_bytes);
  return p;
}

void data_path::make_cache(const storage_options& o, std::uint64_t default_cache_bytes) {
  // On the CPU path every worker is a warp of one thread, and a launch over all of them needs
  // two lines per worker or it reads through (array::ref_for_launch): a default cache is
  // never smaller than that (the file backend's 64 workers need 128 lines). GPU apps size
  // their launches to the cache instead.
  if (!runtime && o.cache_bytes == 0) {
    default_cache_bytes = std::max(default_cache_bytes, 2 * stream->workers() * o.line_bytes);
  }
  if (runtime) {
    cache = std::make_unique<page_cache>(o.cache(default_cache_bytes), *runtime);
  } else {
    cache = std::make_unique<page_cache>(o.cache(default_cache_bytes), *stream);
    if (storage) storage->start();
    if (files) files->start();
  }
}

void data_path::start_executor(const storage_options& o) {
  if (o.use_gpu()) {
    runtime_config rc;
    rc.controller_sms = o.controller_sms;
    rc.quiet = true;
    // Tiling runs no controller, and its copy stream orders itself against the app stream
    // with events, which must share the app stream's context: plain streams, every SM. The
    // file backend's controllers are host threads: no SMs to set aside either.
    if (o.backend == "tiled" || o.backend == "column-copy" || o.on_files()) {
      rc.green_contexts = false;
    }
    runtime = std::make_unique<gpu_runtime>(rc);
    if (!runtime->gpu()) throw error("no GPU after all: " + runtime->message());
  } else {
    // A disk's latency is far longer than the emulated device's: the file backend needs more
    // CPU workers waiting on it to keep its I/O threads' depth filled.
    const unsigned disk_workers = std::max(16u, o.io_threads * o.io_depth / 2);
    stream = std::make_unique<host_stream>(o.workers      ? o.workers
                                           : o.on_files() ? disk_workers
                                                          : 0u);
  }
}

std::uint32_t data_path::reset_queues() {
  if (!storage) return 0;
  const bool was_running = runtime ? runtime->started() : storage->running();
  if (runtime) {
    if (was_running) runtime->stop();
  } else {
    storage->stop();
  }
  std::uint32_t released = 0;
  const storage_config& c = storage->config();
  for (std::uint32_t d = 0; d < c.devices; ++d) {
    for (std::uint32_t q = 0; q < c.queues_per_device; ++q) released += storage->reset_queue(d, q);
  }
  if (was_running) start();
  return released;
}

std::optional<device_set_ref> data_path::devices() const {
  if (storage) return storage->ref();
  if (files) return files->ref();
  return std::nullopt;
}

std::string data_path::describe_devices() const {
  if (files) return "file: " + files->describe();
  if (!storage) return "";
  const storage_config& c = storage->config();
  return "emulated-ssd: " + std::to_string(c.devices) + " device(s), " +
         std::to_string(c.queues_per_device) + " queues x " + std::to_string(c.queue_depth);
}

void data_path::start() {
  if (runtime) {
    if (!runtime->started()) runtime->start();
  } else {
    if (storage && !storage->running()) storage->start();
    if (files && !files->running()) files->start();
  }
}

void data_path::copy_back(std::uint64_t at, std::uint64_t bytes) {
  const std::uint8_t* from = device_image.data() ? device_image.as<std::uint8_t>()
                             : media             ? media->data()
                                                 : nullptr;
  if (from == nullptr || bytes == 0) return;
  copy_async(image->data() + at, from + at, bytes, runtime->stream());
  runtime->synchronize(runtime->stream(), 0, "copying written data out of GPU memory");
}

std::uint8_t* data_path::memory_data() const {
  if (device_image.data()) return device_image.as<std::uint8_t>();
  return image ? image->data() : nullptr;  // --backend file: no image, the data stays on disk
}

std::string data_path::where() const {
  if (runtime) return "GPU: " + gpu_description();
  return "CPU: " + std::to_string(stream->workers()) + " threads";
}

data_path::~data_path() {
  // Arrays are gone by now (they live in the command's scope, made after the path).
  try {
    if (runtime && runtime->started()) runtime->stop();
  } catch (...) {
  }
  cache.reset();
  if (storage && !runtime) storage->stop();
  storage.reset();
  try {
    if (files && !runtime) files->stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "# file storage: %s\n", e.what());
  }
  files.reset();
}
}  // namespace bam::tools
