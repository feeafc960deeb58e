#pragma once
/// @file
/// `bam bench file`: random or sequential block reads of a file, in one run,
///   1. by CPU threads alone, each with its own io_uring (the ceiling: what fio's io_uring
///      engine would report at the same block size, depth and footprint);
///   2. by kernel threads through bam's NVMe queues, served by the file backend's I/O threads
///      (raw commands, no cache);
///   3. by kernel threads reading one element per line through a bam::array and its cache
///      (line = block, the cache far smaller than the file: almost every read a miss);
/// and the ceiling once more at the end (a disk's rate may drift); each with its rate, its ratio
/// to the better ceiling and the host CPU time per million commands.
/// Kernel threads are CPU threads on the CPU path (as many as the ceiling keeps in flight).
/// The file is made with a known pattern (--create) so every read is checked.

#include <cstdint>
#include <string>
#include <vector>

#include <bam/storage/file_storage.hpp>

namespace bam::bench {

struct file_bench_options {
  std::string file;
  std::uint64_t create_bytes = 0;  ///< write a pattern file of this size first (0: use the file)
  std::uint32_t block = 4096;      ///< 512 or 4096
  std::string pattern = "random";  ///< random | seq
  std::uint32_t depth = 64;        ///< in flight per I/O thread (the ceiling's per ring)
  std::uint32_t io_threads = 2;    ///< ceiling threads and the backend's I/O threads
  /// Kernel threads per I/O slot (io_threads x depth slots): more than one keeps commands
  /// waiting in bam's queues while the disk holds `depth` per thread, as the ceiling does.
  std::uint32_t threads_per_slot = 1;
  std::string io_engine = "io_uring";
  double seconds = 5;
  std::uint64_t cache_bytes = 64ull << 20;
  std::string target = "cpu";
  std::string json;
};

void run_file_bench(const file_bench_options& o);

/// The kernel threads of the bam phases: io_threads x depth x threads_per_slot.
[[nodiscard]] inline std::uint64_t kernel_threads(const file_bench_options& o) {
  return std::uint64_t{o.io_threads} * o.depth * o.threads_per_slot;
}

/// What one phase did.
struct file_phase {
  std::string name;
  std::uint64_t commands = 0;  ///< reads completed
  std::uint64_t failed = 0;
  std::uint64_t wrong = 0;  ///< reads whose word was not the pattern's
  double seconds = 0;
  double cpu_seconds = 0;  ///< host CPU of the threads that served the I/O
  [[nodiscard]] double rate() const {
    return seconds > 0 ? static_cast<double>(commands) / seconds : 0;
  }
  [[nodiscard]] double cpu_per_million() const {
    return commands ? cpu_seconds / static_cast<double>(commands) * 1e6 : 0;
  }
};

struct block_picker;

/// The file backend both targets read through: the bench's engine, threads and depth; on a
/// GPU every command staged through a pinned buffer of at most 256 KiB.
file_storage_config file_bench_disk(const file_bench_options& o, bool gpu);

/// Phases 2 and 3 with GPU threads (file_bench_gpu.cu; throws bam::input_error without CUDA).
std::vector<file_phase> run_file_phases_gpu(const file_bench_options& o, const block_picker& pick,
                                            bool patterned, std::uint64_t bytes);

}  // namespace bam::bench
