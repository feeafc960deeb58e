#pragma once
/// @file
/// Options every command that reads data through bam shares (--backend, --cache-bytes,
/// --line-bytes, --devices, --queues, --depth, --latency-us, --cache-mode, --faults,
/// --io-timeout-ms), and the objects they build: the backing image, the emulated devices, the
/// stream and the cache.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/device_model.hpp>
#include <bam/storage/emulated_storage.hpp>
#include <bam/storage/file_storage.hpp>

namespace bam::tools {

/// Which choices a command offers beyond those every command has.
struct storage_choices {
  bool tiled = false;  ///< --backend tiled (proactive tiling: the graph apps)
  /// --backend column-copy (bam query: the query's columns copied whole into the kernels'
  /// memory first, then read there)
  bool column_copy = false;
};

struct storage_options {
  /// emulated-ssd | file | host-memory | device-memory | tiled | column-copy
  std::string backend = "emulated-ssd";
  std::uint64_t cache_bytes = 0;  ///< 0: a default chosen by the command
  std::uint64_t line_bytes = 4096;
  std::uint32_t devices = 1;
  std::uint32_t queues = 0;     ///< per device; 0: 8 on the CPU path, 128 on a GPU
  std::uint32_t depth = 0;      ///< 0: 256 on the CPU path, 1024 on a GPU
  std::string target = "auto";  ///< auto | cpu | gpu: where kernels (and the controller) run
  std::uint32_t controller_sms = 8;
  std::uint32_t wait_sleep_ns = default_wait_sleep_ns;  ///< storage_config::wait_sleep_ns
  std::uint32_t controller_sleep_ns = 1024;             ///< gpu_controller_options::idle_sleep_ns
  /// Scope of the queue edges with the GPU controller: "system", or "gpu"
  /// (gpu_controller_options::gpu_scope_edges; the controller kernel shares the GPU).
  std::string queue_edges = "system";
  /// emulated-ssd on a GPU: where the emulated devices keep their data, host (pinned) or gpu.
  std::string media = "host";
  /// How often the GPU controller reads the stop flag in mapped host memory while it has work
  /// (gpu_controller_options::stop_poll_ns), in microseconds.
  std::uint32_t controller_stop_poll_us =
      static_cast<std::uint32_t>(gpu_controller_options{}.stop_poll_ns / 1000);
  /// Device model: "" (none given: Optane's rates and 11 us, caps only with --caps, as before
  /// --model existed), optane, nand or unlimited (Optane's rates, caps off: latency only).
  std::string model_name;
  double latency_us = 11.0;  ///< replaces the model's latency when given on the command line
  bool latency_given = false;
  bool caps = false;  ///< turns the model's caps on
  std::string mode_name = "optimized";
  std::string write_behind = "on";  ///< cache_config::write_behind: on | off
  unsigned workers = 0;             ///< CPU threads (0: four per hardware thread)
  /// Translation of the cache's arrays; not a common option (`bam copy --translation` sets it:
  /// a two_level cache serves that command's arrays as dense arrays).
  translation_kind translation = translation_kind::base;
  /// --faults: injected faults of the emulated SSD (common/fault_spec.hpp); empty: none.
  std::string faults;
  /// --io-timeout-ms: deadline of one I/O command (storage_config::timeout_ns); 0: its default.
  std::uint64_t io_timeout_ms = 0;
  /// --backend file: how the I/O threads reach the files (auto | io_uring | psync), how many
  /// threads, how many commands each keeps in flight, and whether O_DIRECT is tried.
  std::string io_engine = "auto";
  std::uint32_t io_threads = 2;
  std::uint32_t io_depth = 64;
  bool buffered = false;

  /// Registers the options on `command`.
  void add_to(CLI::App& command, const storage_choices& choices = {});
  [[nodiscard]] bam::cache_mode mode() const;
  /// The device model after --model, --latency-us and --caps (see add_to for precedence).
  [[nodiscard]] device_model model() const;
  /// The model's name as reports give it ("optane", "nand", "unlimited"; "default" for none).
  [[nodiscard]] std::string model_label() const;
  /// True for the backends that read the data in place (host-memory, device-memory) or copy it
  /// in partitions (tiled) or whole (column-copy): no devices, no cache.
  [[nodiscard]] bool without_storage() const {
    return backend != "emulated-ssd" && backend != "file";
  }
  /// True for --backend file: the data stays in its file(s), read on demand.
  [[nodiscard]] bool on_files() const { return backend == "file"; }
  /// True when kernels run on a GPU (target gpu, or auto with a usable GPU).
  [[nodiscard]] bool use_gpu() const;
  /// Checks what the parser could not: options that need the emulated SSD, a --faults bad
  /// range the devices can take. Commands call it before their work; storage() checks again.
  void validate() const;
  /// The devices' configuration; throws bam::input_error for options that do not fit.
  [[nodiscard]] storage_config storage() const;
  [[nodiscard]] cache_config cache(std::uint64_t default_cache_bytes) const;
  /// The file devices' configuration over `paths` (one file, or a striped set).
  [[nodiscard]] file_storage_config files(std::vector<std::string> paths, bool writable) const;
};

/// A data file argument: one path, or a comma list naming a striped set (--backend file).
std::vector<std::string> split_paths(const std::string& text);

/// Loads `file` into memory of the kind the path for `options` needs: host memory on the CPU
/// path, pinned host memory on a GPU (the emulated SSD's DMA and zero-copy reads cross PCIe).
std::shared_ptr<backing_store> load_image(const storage_options& options, const std::string& file);

/// What a command reads through: the devices, the cache and where kernels run.
///
/// CPU path: `stream` runs kernels; open() starts the controller thread.
/// Backends host-memory, tiled and column-copy: no devices and no cache; `image` holds the data
/// (pinned on a GPU: read zero-copy, or copied with cudaMemcpyAsync). On a GPU the tiled
/// backend's runtime uses plain streams (no green contexts: it runs no controller, and its copy
/// stream's events must share the app stream's context).
/// GPU path: `runtime` runs kernels on runtime->stream(); open() allocates everything and
/// leaves the controller stopped: create arrays, reserve working memory and warm up kernels,
/// then start(). Destruction stops the controllers.
struct data_path {
  std::unique_ptr<gpu_runtime> runtime;  ///< GPU path only
  std::shared_ptr<backing_store> image;
  std::unique_ptr<emulated_storage> storage;  ///< --backend emulated-ssd
  std::unique_ptr<file_storage> files;        ///< --backend file
  std::unique_ptr<host_stream> stream;        ///< CPU path only
  std::unique_ptr<page_cache> cache;          ///< null for the memory backends
  device_memory device_image;                 ///< the device-memory backend's copy
  std::shared_ptr<backing_store> media;       ///< --media gpu: the devices' data, GPU memory

  /// Builds the path for `options` over `image` (from load_image).
  static data_path open(const storage_options& options, std::shared_ptr<backing_store> image,
                        std::uint64_t default_cache_bytes);
  /// Builds the path for --backend file over `paths` (nothing is loaded; the cache reads the
  /// files on demand). Prints the storage's notices on standard error.
  static data_path open_files(const storage_options& options, const std::vector<std::string>& paths,
                              bool writable, std::uint64_t default_cache_bytes);
  /// The device set the cache reads (emulated or files); null for the memory backends.
  [[nodiscard]] std::optional<device_set_ref> devices() const;
  /// "file: 1 file, io_uring, O_DIRECT, ..." or "emulated-ssd: 4 device(s), ..."
  [[nodiscard]] std::string describe_devices() const;
  /// Aborts the commands that never completed (an NVMe host would reset the controller):
  /// stops the emulated controllers, resets every queue, which gives back what their
  /// abandoned waiters held, and starts them again. Call only between launches. Returns the
  /// holds given back.
  std::uint32_t reset_queues();
  /// Copies bytes [at, at + bytes) of the image back from the GPU memory that kernels or the
  /// emulated devices wrote instead of it (the device-memory backend's copy, --media gpu);
  /// nothing where they wrote the image itself. Call after the writes' flush.
  void copy_back(std::uint64_t at, std::uint64_t bytes);
  /// Starts the controllers (no-op when running, or without storage).
  void start();
  [[nodiscard]] bool gpu() const { return runtime != nullptr; }
  /// The data for the memory backends: the image (host or pinned) or its device copy.
  [[nodiscard]] std::uint8_t* memory_data() const;
  /// "GPU: NVIDIA H200 ..." or "CPU: 8 threads".
  [[nodiscard]] std::string where() const;
  ~data_path();
  data_path() = default;
  data_path(data_path&&) = default;
  data_path& operator=(data_path&&) = default;

 private:
  void start_executor(const storage_options& options);
  void make_cache(const storage_options& options, std::uint64_t default_cache_bytes);
};

}  // namespace bam::tools
