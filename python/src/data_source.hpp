#pragma once
/// @file
/// What one bam.open() reads through: the kernel stream (CPU path) or the GPU runtime
/// (device="cuda"), the data (a loaded image, its GPU copy, or the files themselves), the
/// devices and the page cache.
///
/// On a GPU no persistent kernel runs, so the caller's framework (PyTorch, CuPy) may allocate,
/// free and launch as it likes between and during gathers: the file backend's controllers are
/// I/O threads, and emulated-ssd's controller is a host thread over queues in pinned memory
/// (placement host_thread; its copies run on a non-blocking stream of its own); host-cached
/// has none (a GPU thread that misses copies its line from pinned memory itself). The GPU
/// controller kernel (placement gpu_kernel) is faster but makes CUDA calls of other code wait
/// or deadlock (DESIGN 6 and 11), which a Python session cannot promise to avoid.
///
/// A thin adapter beside tools/bam/storage_options.cpp (bam::tools::data_path): that one is
/// compiled into the command line only and is built from CLI11 options, so the module builds
/// the same objects from bam_host here, with the command line's defaults (queues, depth,
/// stripe unit, workers, default cache size), and reads --faults with the command line's
/// parser (bam_tool_common). Keep the two in step when a default changes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>
#include <bam/storage/file_storage.hpp>

namespace bam::python {

/// bam.open()'s storage arguments, checked by data_source.
struct source_options {
  std::vector<std::string> paths;  ///< one file, or the files of a striped set (backend file)
  /// file | emulated-ssd | host-memory | host-cached | device-memory
  std::string backend = "file";
  std::uint64_t cache_bytes = 0;   ///< 0: an eighth of the data, at least 1 MiB
  std::uint64_t line_bytes = 4096;
  std::uint32_t devices = 1;  ///< emulated-ssd: devices the data is striped over
  bool writable = false;
  std::string faults;   ///< emulated-ssd: the command line's --faults spec
  /// emulated-ssd: host threads serving the devices' queues; 0: one (gpu_controller_threads)
  std::uint32_t controller_threads = 0;
  /// emulated-ssd on a GPU: batches of copies a controller thread keeps in flight; 0: the
  /// storage default (storage_config::copy_batches_in_flight)
  std::uint32_t copy_batches = 0;
  int gpu_device = -1;  ///< -1: the CPU path; else the CUDA device kernels run on
};

/// Owner of the stream, data, devices and cache of one opened array; starts the controllers
/// at construction and stops them at destruction. Arrays made over it must go first. Not
/// thread safe: the owner serializes calls.
class data_source {
 public:
  /// Throws bam::input_error (a bad option or file) with a one-line reason.
  explicit data_source(const source_options& options);
  ~data_source();
  data_source(const data_source&) = delete;
  data_source& operator=(const data_source&) = delete;

  /// Bytes of data: the file, or the files of a striped set together.
  [[nodiscard]] std::uint64_t data_bytes() const { return data_bytes_; }
  /// True when reads go through the page cache (file, emulated-ssd, host-cached).
  [[nodiscard]] bool cached() const { return cache_ != nullptr; }
  /// True when GPU threads wait on queues in pinned host memory (file and emulated-ssd on a GPU,
  /// whose controllers are host threads): each waiting thread polls over PCIe.
  [[nodiscard]] bool polls_host_queues() const { return runtime_ && (storage_ || files_); }
  /// True when a gather returns only once done, also when asked not to wait: on the CPU, and
  /// where misses wait on host threads' CUDA copies (polls_host_queues). Such a kernel must
  /// not be left running: a synchronizing call the program makes meanwhile (a free, a
  /// kernel's first launch) holds those copies back and waits for the kernel, for ever
  /// (DESIGN 11).
  [[nodiscard]] bool gathers_wait() const { return !gpu() || polls_host_queues(); }
  /// True when kernels run on a GPU (device="cuda").
  [[nodiscard]] bool gpu() const { return runtime_ != nullptr; }
  /// The GPU path's runtime (gpu() only): its device, its bounded synchronize.
  [[nodiscard]] gpu_runtime& runtime() { return *runtime_; }
  [[nodiscard]] int gpu_device() const { return gpu_device_; }
  [[nodiscard]] page_cache& cache() { return *cache_; }
  [[nodiscard]] device_set_ref devices() const;
  /// host-memory: the loaded image, read in place (pinned on a GPU); device-memory: its
  /// copy in GPU memory.
  [[nodiscard]] std::uint8_t* memory() const;
  /// True when memory() is host memory (host-memory), false for GPU memory (device-memory).
  [[nodiscard]] bool memory_on_host() const { return device_image_.data() == nullptr; }
  /// The CPU path's stream (not gpu()).
  [[nodiscard]] host_stream& stream() { return *stream_; }
  /// "emulated-ssd: 1 device(s), 8 queues x 256, cache 1 MiB of 4 KiB lines, 8 CPU threads"
  [[nodiscard]] std::string describe() const;

 private:
  void open_on_gpu(const source_options& options);

  std::uint64_t data_bytes_ = 0;
  std::string backend_;
  int gpu_device_ = -1;
  std::unique_ptr<gpu_runtime> runtime_;  // GPU path; destroyed last (the storage attaches)
  std::unique_ptr<host_stream> stream_;   // CPU path
  std::shared_ptr<backing_store> image_;
  std::unique_ptr<emulated_storage> storage_;
  std::unique_ptr<file_storage> files_;
  std::unique_ptr<page_cache> cache_;
  device_memory device_image_;  // device-memory: the data in GPU memory
};

}  // namespace bam::python
