// bam bench file --target gpu: GPU threads read a file through the file backend's queues (raw
// commands into GPU memory) and through a page cache in GPU memory; the backend's I/O threads
// stage the data through pinned buffers.
#include <cstdint>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/file_storage.hpp>

#include "file_bench.hpp"
#include "file_bench_kernels.hpp"

namespace bam::bench {

namespace {

/// The memory page of the queues' PRP entries (the CPU phase aligns its buffers alike).
constexpr std::uint64_t page_bytes = 4096;

std::uint8_t* page_aligned(std::uint8_t* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<std::uint8_t*>((a + page_bytes - 1) & ~std::uintptr_t{page_bytes - 1});
}

runtime_config plain_runtime() {
  runtime_config c;
  c.quiet = true;
  c.green_contexts = false;  // no controller kernel: the controllers are host threads
  return c;
}

/// Runs `kernel` on `threads` GPU threads (blocks of up to 128) and returns its counts and
/// the seconds the launch took as the host saw them.
template <class Kernel>
std::pair<read_counts, double> run(gpu_runtime& rt, Kernel kernel, device_memory& counts,
                                   std::uint64_t threads, double seconds) {
  const std::uint32_t block = threads < 128 ? static_cast<std::uint32_t>(threads) : 128u;
  const auto grid = static_cast<std::uint32_t>((threads + block - 1) / block);
  pinned_memory out(sizeof(read_counts));
  zero_async(counts.data(), sizeof(read_counts), rt.stream());
  kernel.counts = counts.as<read_counts>();
  const std::uint64_t began = now_ns();
  launch(rt.stream(), grid, block, kernel);
  copy_async(out.data(), counts.data(), sizeof(read_counts), rt.stream());
  rt.synchronize(rt.stream(), static_cast<std::uint64_t>(seconds * 1e9) + 60'000'000'000ull,
                 "the file readers");
  const double s = static_cast<double>(now_ns() - began) * 1e-9;
  return {*out.as<read_counts>(), s};
}

file_phase phase_of(const char* name, const read_counts& c, double seconds,
                    const file_storage& disk) {
  file_phase p;
  p.name = name;
  p.commands = c.completed;
  p.failed = c.failed;
  p.wrong = c.wrong;
  p.seconds = seconds;
  p.cpu_seconds = disk.io_stats().cpu_seconds;
  return p;
}

}  // namespace

std::vector<file_phase> run_file_phases_gpu(const file_bench_options& o, const block_picker& pick,
                                            bool patterned, std::uint64_t bytes) {
  std::vector<file_phase> phases;
  const std::uint64_t threads = kernel_threads(o);
  const auto duration = static_cast<std::uint64_t>(o.seconds * 1e9);
  {
    gpu_runtime rt(plain_runtime());
    if (!rt.gpu()) throw input_error("bam bench file --target gpu: " + rt.message());
    file_storage disk(file_bench_disk(o, true), &rt);
    // Each thread's block lies in one memory page, so its command needs no second PRP entry.
    device_memory buffers(threads * o.block + page_bytes);
    auto* const first_buffer = page_aligned(buffers.as<std::uint8_t>());
    device_memory counts(sizeof(read_counts));
    rt.preload({kernel_function<raw_block_reader>()});
    rt.warm_up([](stream_handle s) { warm_up_launch<raw_block_reader>(s); });
    rt.start();
    raw_block_reader k{disk.ref(), first_buffer, o.block, pick, patterned, duration, nullptr};
    const auto [c, s] = run(rt, k, counts, threads, o.seconds);
    rt.stop();
    phases.push_back(phase_of("bam queues, raw commands (GPU threads)", c, s, disk));
  }
  {
    gpu_runtime rt(plain_runtime());
    file_storage disk(file_bench_disk(o, true), &rt);
    page_cache cache({.line_bytes = o.block, .capacity_bytes = o.cache_bytes}, rt);
    array<const std::uint64_t> a(cache, disk.ref(), {.count = bytes / 8, .name = o.file});
    device_memory counts(sizeof(read_counts));
    rt.preload({kernel_function<line_element_reader>()});
    rt.warm_up([](stream_handle s) { warm_up_launch<line_element_reader>(s); });
    rt.start();
    const std::uint32_t block = threads < 128 ? static_cast<std::uint32_t>(threads) : 128u;
    const auto grid = static_cast<std::uint32_t>((threads + block - 1) / block);
    line_element_reader k{
        a.ref_for_launch(grid, block), o.block, pick, patterned, duration, nullptr};
    const auto [c, s] = run(rt, k, counts, threads, o.seconds);
    rt.stop();
    a.check();
    phases.push_back(phase_of("bam array, one element per line (GPU threads)", c, s, disk));
  }
  return phases;
}

}  // namespace bam::bench
