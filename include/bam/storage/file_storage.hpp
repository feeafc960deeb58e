#pragma once
/// @file
/// The file backend: files on the machine's own file systems as a set of NVMe devices. Kernel
/// threads build commands and ring doorbells exactly as for the emulated SSD; a few host I/O
/// threads fetch the entries and read or write the files (io_uring, or pread/pwrite), with
/// O_DIRECT where the file system takes it, so nothing is read up front and the OS page cache
/// stays out of the way. One file is one device; several files are one striped set.
///
///     bam::file_storage disk({.paths = {"features.bin"}});
///     disk.start();
///     bam::array<const float> a(cache, disk.ref(), {.count = n});
///     ...
///     disk.stop();
///
/// On a GPU the storage belongs to a gpu_runtime (not yet started), which starts and stops its
/// threads with the others; the queues then live in pinned memory and the data moves through
/// pinned staging buffers (docs/backends.md, "The file backend").

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/storage/device_set.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam {

class gpu_runtime;

/// How the I/O threads reach the files.
enum class io_engine_kind {
  automatic,  ///< io_uring, or psync with a notice where io_uring is refused
  io_uring,   ///< io_uring only (liburing); an error where it is refused
  psync,      ///< a pool of pread/pwrite threads per I/O thread
};

struct file_storage_config {
  std::vector<std::string> paths;  ///< one device per file, striped in stripe_bytes
  bool writable = false;           ///< open read-write; otherwise writes fail (write protected)
  io_engine_kind engine = io_engine_kind::automatic;
  std::uint32_t io_threads = 2;  ///< host threads serving the queues, 1..64
  std::uint32_t io_depth = 64;   ///< commands in flight per I/O thread, 1..4096
  bool direct = true;            ///< O_DIRECT where the file system allows it
  std::uint32_t queues_per_device = 8;
  std::uint32_t queue_depth = 256;  ///< 2..65535
  std::uint32_t block_bytes = 512;  ///< 512 or 4096
  std::uint64_t stripe_bytes = 64 * 1024;
  std::uint32_t max_transfer_bytes = 1u << 20;
  std::uint64_t timeout_ns = 30'000'000'000ull;  ///< deadline of one command's wait
  std::uint32_t wait_sleep_ns = default_wait_sleep_ns;
  /// Kernels run on the runtime's GPU: queues in pinned memory, data staged.
  bool gpu = false;
};

/// What the I/O threads did, beside the per-device counters.
struct file_io_stats {
  std::string engine;              ///< "io_uring" or "psync"
  bool direct = false;             ///< every file opened with O_DIRECT
  std::uint64_t errors = 0;        ///< commands answered with an error status
  std::uint64_t buffered = 0;      ///< commands done without O_DIRECT (alignment, a tail block)
  std::uint64_t staged_bytes = 0;  ///< bytes copied through staging buffers (GPU)
  double cpu_seconds = 0;          ///< CPU time of the I/O threads and their workers so far
};

/// Owner of a file device set. Not thread safe: set-up calls from one thread.
class file_storage {
 public:
  /// Opens the files (throws bam::input_error naming the file and what is wrong). With
  /// config.gpu, `runtime` is required and must not have started.
  explicit file_storage(const file_storage_config& config, gpu_runtime* runtime = nullptr);
  ~file_storage();
  file_storage(const file_storage&) = delete;
  file_storage& operator=(const file_storage&) = delete;

  /// The view kernels use (its queue array is in GPU memory with config.gpu).
  [[nodiscard]] device_set_ref ref() const;
  /// Starts / stops the I/O threads. stop() waits (bounded) for I/O in flight.
  void start();
  void stop();
  [[nodiscard]] bool running() const;

  /// Bytes of the set's address space: the files' sizes added up.
  [[nodiscard]] std::uint64_t bytes() const;
  /// One line per thing the user should know that did not stop the open: "io_uring refused
  /// (...): using psync", "'x' is on a file system without O_DIRECT: reads go through the page
  /// cache".
  [[nodiscard]] const std::vector<std::string>& notices() const;
  /// "2 files, io_uring, O_DIRECT, 2 I/O threads x 64".
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] std::vector<std::string> stuck_queues(std::uint64_t age_ns) const;
  [[nodiscard]] storage_stats stats() const;
  [[nodiscard]] file_io_stats io_stats() const;
  [[nodiscard]] const file_storage_config& config() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The sizes of the files of a striped set of `total` bytes over `files` files in units of
/// `stripe_bytes`: what `bam copy --out A,B` writes and what file_storage checks at open.
std::vector<std::uint64_t> striped_file_bytes(std::uint64_t total, std::uint32_t files,
                                              std::uint64_t stripe_bytes);

}  // namespace bam
