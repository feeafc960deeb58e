// `bam bench ceilings`: copy bandwidths and random-read rates of HBM and of pinned host memory
// read by GPU warps (zero-copy), measured in one run so other figures can be ratios of them.
#include "ceilings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/gpu_info.hpp>
#include <bam/runtime/resources.hpp>

#include "bench_pattern.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"
#include "cuda_event.cuh"
#include "runtime/memory.hpp"

namespace bam::bench {

namespace {

constexpr std::uint32_t block_threads = 256;
constexpr std::uint32_t warp_lanes = 32;
// One warp-wide load: 32 lanes x 16 bytes, contiguous and aligned, so one request per sector.
constexpr std::uint32_t chunk_shift = 9;
// A warp issues this many chunk loads before using any, so each lane has 8 reads in flight.
constexpr std::uint32_t chunks_per_round = 8;
// Lines up to 4 KiB are read 4096 / line at a time (one round); longer lines take several.
constexpr std::uint32_t round_shift = 12;
constexpr std::uint32_t words_per_round = 8;  // independent 8-byte reads per thread per round

// Writes the pattern over `count` words (host-mapped or device memory).
struct fill_pattern {
  std::uint64_t* words;
  std::uint64_t count;
  BAM_DEVICE void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < count; i += t.count) words[i] = pattern_word(i * 8);
  }
};

// Each warp reads whole random aligned lines with coalesced 16-byte loads: an item is one
// 4 KiB round of 4096 / line lines when lines are short, or one line of several rounds.
// Every word read is checked against the pattern and summed into the thread's sink word, so
// no load can be dropped and a wrong address counts in `wrong`.
struct random_lines {
  const uint4* base;
  std::uint64_t lines;       // lines in the footprint, at most 2^32
  std::uint32_t line_shift;  // log2(line bytes), chunk_shift..16
  std::uint64_t items;
  std::uint32_t seed;
  std::uint64_t* sink;  // one word per thread
  std::uint64_t* wrong;

  BAM_DEVICE void operator()(thread_index t) const {
    const std::uint64_t warp = t.id / warp_lanes;
    const std::uint64_t warps = t.count / warp_lanes;
    const auto lane = static_cast<std::uint32_t>(t.id % warp_lanes);
    const std::uint32_t line_chunks_shift = line_shift - chunk_shift;
    const std::uint32_t chunk_mask = (1u << line_chunks_shift) - 1;
    const std::uint32_t lines_per_item_shift =
        line_shift < round_shift ? round_shift - line_shift : 0;
    const std::uint32_t rounds = line_shift > round_shift ? 1u << (line_shift - round_shift) : 1;
    std::uint64_t sum = 0, bad = 0;
    for (std::uint64_t item = warp; item < items; item += warps) {
      for (std::uint32_t r = 0; r < rounds; ++r) {
        uint4 v[chunks_per_round];
        std::uint64_t at[chunks_per_round];
#pragma unroll
        for (std::uint32_t j = 0; j < chunks_per_round; ++j) {
          const std::uint32_t chunk = r * chunks_per_round + j;  // within the item
          const std::uint64_t id = (item << lines_per_item_shift) + (chunk >> line_chunks_shift);
          const std::uint64_t line = pick(counter_hash(id, seed), lines);
          at[j] = (line << line_shift) + (std::uint64_t{chunk & chunk_mask} << chunk_shift) +
                  std::uint64_t{lane} * sizeof(uint4);
          v[j] = base[at[j] / sizeof(uint4)];
        }
        // Used only after all eight loads are issued, so they are in flight together.
#pragma unroll
        for (std::uint32_t j = 0; j < chunks_per_round; ++j) {
          const std::uint64_t w0 = v[j].x | std::uint64_t{v[j].y} << 32;
          const std::uint64_t w1 = v[j].z | std::uint64_t{v[j].w} << 32;
          bad += (w0 != pattern_word(at[j])) + (w1 != pattern_word(at[j] + 8));
          sum += w0 + w1;
        }
      }
    }
    sink[t.id] = sum;
    // Relaxed: the host reads the count after the stream synchronizes.
    if (bad != 0) atomic_ref<std::uint64_t>(*wrong).fetch_add(bad, order::relaxed);
  }
};

// Each thread reads independent random 8-byte words, eight per round. The compiler keeps the
// kernel at 32 registers (full occupancy) and so interleaves checks with loads, leaving two or
// three reads in flight per thread; at 2048 threads per SM that is still thousands per SM, far
// more than HBM latency times the measured rate needs, so the figure is the memory system's.
struct random_words {
  const std::uint64_t* base;
  std::uint64_t words;  // at most 2^32
  std::uint64_t items;  // rounds in the launch
  std::uint32_t seed;
  std::uint64_t* sink;
  std::uint64_t* wrong;

  BAM_DEVICE void operator()(thread_index t) const {
    std::uint64_t sum = 0, bad = 0;
    for (std::uint64_t item = t.id; item < items; item += t.count) {
      std::uint64_t v[words_per_round];
      std::uint32_t at[words_per_round];  // word index: 32 bits keep the registers for loads
#pragma unroll
      for (std::uint32_t j = 0; j < words_per_round; ++j) {
        at[j] =
            static_cast<std::uint32_t>(pick(counter_hash(item * words_per_round + j, seed), words));
      }
#pragma unroll
      for (std::uint32_t j = 0; j < words_per_round; ++j) v[j] = base[at[j]];
      std::uint64_t diff = 0;
#pragma unroll
      for (std::uint32_t j = 0; j < words_per_round; ++j) {
        diff |= v[j] ^ pattern_word(std::uint64_t{at[j]} * 8);
        sum += v[j];
      }
      bad += diff != 0;
    }
    sink[t.id] = sum;
    // Relaxed: the host reads the count after the stream synchronizes.
    if (bad != 0) atomic_ref<std::uint64_t>(*wrong).fetch_add(bad, order::relaxed);
  }
};

// Mapped pinned host memory from cudaHostAlloc, with the GPU's address for it. Not zeroed.
class pinned_buffer {
 public:
  explicit pinned_buffer(std::uint64_t bytes) {
    BAM_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    try {
      BAM_CUDA_CHECK(cudaHostGetDevicePointer(&device_, host_, 0));
    } catch (...) {
      cudaFreeHost(host_);
      throw;
    }
  }
  ~pinned_buffer() { cudaFreeHost(host_); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  [[nodiscard]] void* host() const { return host_; }
  [[nodiscard]] void* device() const { return device_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
};

// What one ceiling measures. "Lines" are its unit: a random line, a random word or one
// cudaMemcpyAsync; `counts` says which bytes bytes_per_s counts.
struct ceiling_spec {
  std::string name;
  std::string counts;
  std::uint64_t line_bytes;
  std::uint64_t footprint_bytes;
  std::uint64_t bytes_per_line;  // bytes counted per line (2 x size for a device copy)
};

// A measured ceiling: the work of one repetition and each repetition's time.
struct ceiling {
  ceiling_spec spec;
  std::uint64_t lines_per_repetition = 0;
  std::vector<double> seconds;

  [[nodiscard]] double median_seconds() const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
  [[nodiscard]] double lines_per_s(double s) const {
    return static_cast<double>(lines_per_repetition) / s;
  }
  [[nodiscard]] double bytes_per_s(double s) const {
    return lines_per_s(s) * static_cast<double>(spec.bytes_per_line);
  }
};

// Enqueues one run of `work` units on the stream with the given seed.
using enqueue_fn = std::function<void(std::uint64_t work, std::uint32_t seed)>;

class timer {
 public:
  timer(stream_handle stream, const ceilings_options& o) : stream_(stream), o_(o) {}

  // Grows `work` from the guess until one run takes a quarter of the target, scales it to the
  // target, warms up once at that size, then times the repetitions. Returns the work per run
  // and fills `seconds`.
  std::uint64_t measure(const enqueue_fn& enqueue, std::uint64_t work, std::uint64_t max_work,
                        std::vector<double>& seconds) {
    work = std::max<std::uint64_t>(1, std::min(work, max_work));
    double t = run(enqueue, work);
    while (t < o_.seconds / 4 && work < max_work) {
      const double grow = t > 0 ? std::clamp(o_.seconds / (2 * t), 2.0, 16.0) : 16.0;
      work = std::min(max_work, static_cast<std::uint64_t>(std::ceil(work * grow)));
      t = run(enqueue, work);
    }
    work = std::min(max_work, static_cast<std::uint64_t>(std::ceil(work * o_.seconds / t)));
    run(enqueue, work);  // warm-up at the timed size
    seconds.clear();
    for (unsigned r = 0; r < o_.repetitions; ++r) seconds.push_back(run(enqueue, work));
    return work;
  }

 private:
  double run(const enqueue_fn& enqueue, std::uint64_t work) {
    BAM_CUDA_CHECK(cudaEventRecord(begin_.get(), stream_));
    enqueue(work, seed_++);
    BAM_CUDA_CHECK(cudaEventRecord(end_.get(), stream_));
    BAM_CUDA_CHECK(cudaEventSynchronize(end_.get()));
    float ms = 0;
    BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_.get(), end_.get()));
    return ms / 1e3;
  }

  stream_handle stream_;
  const ceilings_options& o_;
  cuda_event begin_, end_;
  std::uint32_t seed_ = 1;  // a new seed per run: repetitions read different lines
};

std::uint32_t log2_exact(std::uint64_t v) {
  std::uint32_t s = 0;
  while ((std::uint64_t{1} << s) < v) ++s;
  return s;
}

void check_options(const ceilings_options& o) {
  if (o.footprints.empty()) throw input_error("--footprint needs at least one size");
  for (const std::uint64_t f : o.footprints) {
    if (f < (64u << 10) || f > (64ull << 30)) {
      throw input_error("--footprint sizes must be 64K..64G (pinned host memory), got " +
                        std::to_string(f));
    }
  }
  if (o.line_bytes.empty()) throw input_error("--line-bytes needs at least one size");
  for (const std::uint64_t l : o.line_bytes) {
    if (l < 512 || l > 65536 || (l & (l - 1)) != 0) {
      throw input_error("--line-bytes must be powers of two from 512 to 64K, got " +
                        std::to_string(l));
    }
  }
  if (!(o.seconds >= 0.1 && o.seconds <= 10)) throw input_error("--seconds must be 0.1..10");
  if (o.repetitions < 5 || o.repetitions > 1000) {
    throw input_error("--repetitions must be 5..1000");
  }
  // Random word indices are 32-bit hashes mapped onto the buffer.
  if (o.hbm_bytes < (64u << 20) || o.hbm_bytes > (32ull << 30) || o.hbm_bytes % 65536 != 0) {
    throw input_error("--hbm-bytes must be a multiple of 64K from 64M to 32G");
  }
  if (o.copy_bytes < (1u << 20) || o.copy_bytes > (16ull << 30)) {
    throw input_error("--copy-bytes must be 1M..16G");
  }
}

std::string gbps(double bytes_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes_per_s / 1e9);
  return text;
}

void print_table(const std::vector<ceiling>& results) {
  tools::table t({"ceiling", "counts", "line", "footprint", "lines/s", "GB/s", "min..max GB/s",
                  "s/rep x reps"});
  for (const ceiling& c : results) {
    const double med = c.median_seconds();
    const auto [lo, hi] = std::minmax_element(c.seconds.begin(), c.seconds.end());
    char rep[32];
    std::snprintf(rep, sizeof rep, "%.3f x %zu", med, c.seconds.size());
    t.add_row({c.spec.name, c.spec.counts,
               tools::format_bytes(static_cast<double>(c.spec.line_bytes)),
               tools::format_bytes(static_cast<double>(c.spec.footprint_bytes)),
               tools::format_count(c.lines_per_s(med)), gbps(c.bytes_per_s(med)),
               gbps(c.bytes_per_s(*hi)) + ".." + gbps(c.bytes_per_s(*lo)), rep});
  }
  t.print(std::cout);
}

void write_json(const std::string& path, const ceilings_options& o,
                const std::vector<ceiling>& results, const cudaDeviceProp& prop) {
  tools::json_writer j;
  j.begin_object().field("benchmark", "ceilings").key("machine");
  tools::write_json(j, tools::read_machine_info());
  j.key("configuration")
      .begin_object()
      .field("seconds_per_repetition", o.seconds)
      .field("repetitions", o.repetitions)
      .field("hbm_bytes", o.hbm_bytes)
      .field("copy_bytes", o.copy_bytes)
      .field("l2_bytes", static_cast<std::uint64_t>(prop.l2CacheSize))
      .field("sms", prop.multiProcessorCount)
      .key("footprints")
      .begin_array();
  for (const std::uint64_t f : o.footprints) j.value(f);
  j.end_array().key("line_bytes").begin_array();
  for (const std::uint64_t l : o.line_bytes) j.value(l);
  j.end_array().end_object().key("ceilings").begin_array();
  for (const ceiling& c : results) {
    const double med = c.median_seconds();
    const auto [lo, hi] = std::minmax_element(c.seconds.begin(), c.seconds.end());
    j.begin_object()
        .field("name", c.spec.name)
        .field("counts", c.spec.counts)
        .field("line_bytes", c.spec.line_bytes)
        .field("footprint_bytes", c.spec.footprint_bytes)
        .field("lines_per_s", c.lines_per_s(med))
        .field("bytes_per_s", c.bytes_per_s(med))
        .field("bytes_per_s_min", c.bytes_per_s(*hi))
        .field("bytes_per_s_max", c.bytes_per_s(*lo))
        .field("seconds", med)
        .field("repetitions", static_cast<std::uint64_t>(c.seconds.size()))
        .field("lines_per_repetition", c.lines_per_repetition)
        .key("repetition_seconds")
        .begin_array();
    for (const double s : c.seconds) j.value(s);
    j.end_array().end_object();
  }
  j.end_array().end_object();
  j.save(path);
}

template <class Kernel>
std::uint32_t resident_grid(const cudaDeviceProp& prop) {
  int per_sm = 0;
  BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_function<Kernel>(),
                                                               block_threads, 0));
  return static_cast<std::uint32_t>(std::max(per_sm, 1) * prop.multiProcessorCount);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

namespace {

cudaDeviceProp current_device_properties() {
  int device = 0;
  BAM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BAM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop;
}

rate_figure to_figure(const ceiling& c) {
  const double med = c.median_seconds();
  return {.lines_per_s = c.lines_per_s(med),
          .bytes_per_s = c.bytes_per_s(med),
          .seconds = med,
          .lines_per_repetition = c.lines_per_repetition,
          .repetition_seconds = c.seconds};
}

void throw_if_wrong(const device_memory& wrong, stream_handle stream, const char* what) {
  std::uint64_t n = 0;
  BAM_CUDA_CHECK(cudaMemcpyAsync(&n, wrong.data(), sizeof n, cudaMemcpyDeviceToHost, stream));
  BAM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (n != 0) {
    throw error(std::string(what) + ": reads returned bytes other than the pattern (" +
                std::to_string(n) + " wrong words or rounds of words)");
  }
}

}  // namespace

void fill_pattern_async(void* base, std::uint64_t bytes, stream_handle stream) {
  const cudaDeviceProp prop = current_device_properties();
  launch(stream, resident_grid<fill_pattern>(prop), block_threads,
         fill_pattern{static_cast<std::uint64_t*>(base), bytes / 8});
}

rate_figure measure_random_lines(const void* base, std::uint64_t footprint,
                                 std::uint64_t line_bytes, const measure_options& m) {
  if (line_bytes < 512 || line_bytes > 65536 || (line_bytes & (line_bytes - 1)) != 0 ||
      footprint < line_bytes || (footprint / line_bytes) > (std::uint64_t{1} << 32)) {
    throw input_error("random line ceiling: bad line size or footprint");
  }
  const cudaDeviceProp prop = current_device_properties();
  const std::uint32_t grid = resident_grid<random_lines>(prop);
  device_memory sink(std::uint64_t{grid} * block_threads * sizeof(std::uint64_t));
  device_memory wrong(sizeof(std::uint64_t));
  zero_async(wrong.data(), sizeof(std::uint64_t), m.stream);
  ceilings_options o;
  o.seconds = m.seconds;
  o.repetitions = m.repetitions;
  timer time(m.stream, o);
  const std::uint32_t shift = log2_exact(line_bytes);
  const std::uint64_t per_item =
      shift < round_shift ? std::uint64_t{1} << (round_shift - shift) : 1;
  const random_lines k{.base = static_cast<const uint4*>(base),
                       .lines = footprint >> shift,
                       .line_shift = shift,
                       .items = 0,
                       .seed = 0,
                       .sink = sink.as<std::uint64_t>(),
                       .wrong = wrong.as<std::uint64_t>()};
  ceiling c;
  c.spec = {.name = "random_lines",
            .counts = "bytes read",
            .line_bytes = line_bytes,
            .footprint_bytes = footprint,
            .bytes_per_line = line_bytes};
  const std::uint64_t guess = std::max<std::uint64_t>(1, ((64ull << 20) >> shift) / per_item);
  const stream_handle stream = m.stream;
  c.lines_per_repetition = time.measure(
                               [=](std::uint64_t items, std::uint32_t seed) {
                                 random_lines run = k;
                                 run.items = items;
                                 run.seed = seed;
                                 launch(stream, grid, block_threads, run);
                               },
                               guess, std::uint64_t{1} << 40, c.seconds) *
                           per_item;
  throw_if_wrong(wrong, m.stream, "random line ceiling");
  return to_figure(c);
}

rate_figure measure_random_words(const void* base, std::uint64_t bytes, const measure_options& m) {
  if (bytes < 4096 || bytes / 8 > (std::uint64_t{1} << 32)) {
    throw input_error("random word ceiling: the buffer must hold 512 to 2^32 words");
  }
  const cudaDeviceProp prop = current_device_properties();
  const std::uint32_t grid = resident_grid<random_words>(prop);
  device_memory sink(std::uint64_t{grid} * block_threads * sizeof(std::uint64_t));
  device_memory wrong(sizeof(std::uint64_t));
  zero_async(wrong.data(), sizeof(std::uint64_t), m.stream);
  ceilings_options o;
  o.seconds = m.seconds;
  o.repetitions = m.repetitions;
  timer time(m.stream, o);
  const random_words k{.base = static_cast<const std::uint64_t*>(base),
                       .words = bytes / 8,
                       .items = 0,
                       .seed = 0,
                       .sink = sink.as<std::uint64_t>(),
                       .wrong = wrong.as<std::uint64_t>()};
  ceiling c;
  c.spec = {.name = "random_8b",
            .counts = "bytes read",
            .line_bytes = 8,
            .footprint_bytes = bytes,
            .bytes_per_line = 8};
  const stream_handle stream = m.stream;
  c.lines_per_repetition = time.measure(
                               [=](std::uint64_t items, std::uint32_t seed) {
                                 random_words run = k;
                                 run.items = items;
                                 run.seed = seed;
                                 launch(stream, grid, block_threads, run);
                               },
                               (1u << 24) / words_per_round, std::uint64_t{1} << 40, c.seconds) *
                           words_per_round;
  throw_if_wrong(wrong, m.stream, "random word ceiling");
  return to_figure(c);
}

void run_ceilings(const ceilings_options& options) {
  const ceilings_options& o = options;
  check_options(o);
  if (!gpu_available()) {
    throw input_error("bam bench ceilings needs a GPU: " + gpu_unavailable_reason());
  }
  int device = 0;
  BAM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BAM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::cerr << "bam: ceilings on " << gpu_description() << "\n";

  const owned_stream owned = owned_stream::create_non_blocking();
  const stream_handle stream = owned.get();
  const std::uint64_t pinned_bytes =
      std::max(*std::max_element(o.footprints.begin(), o.footprints.end()), o.copy_bytes);

  // Pinning faults in and maps every page: seconds per 8 GiB.
  auto start = std::chrono::steady_clock::now();
  std::cerr << "bam: pinning " << tools::format_bytes(static_cast<double>(pinned_bytes))
            << " of host memory..." << std::flush;
  pinned_buffer pinned(pinned_bytes);
  std::cerr << " " << seconds_since(start) << " s\n";
  device_memory hbm(o.hbm_bytes);
  device_memory copy_a(o.copy_bytes), copy_b(o.copy_bytes);

  // One resident wave per kernel: the grid-stride loops then need no second wave of blocks.
  const std::uint32_t grid_lines = resident_grid<random_lines>(prop);
  const std::uint32_t grid_words = resident_grid<random_words>(prop);
  const std::uint32_t grid_fill = resident_grid<fill_pattern>(prop);
  device_memory sink(std::uint64_t{std::max(grid_lines, grid_words)} * block_threads *
                     sizeof(std::uint64_t));
  device_memory wrong(sizeof(std::uint64_t));
  zero_async(wrong.data(), sizeof(std::uint64_t), stream);

  start = std::chrono::steady_clock::now();
  // Filled from the GPU: PCIe writes fill 16 GiB in a fraction of a second, a host thread not.
  std::cerr << "bam: writing the pattern..." << std::flush;
  launch(stream, grid_fill, block_threads,
         fill_pattern{static_cast<std::uint64_t*>(pinned.device()), pinned_bytes / 8});
  launch(stream, grid_fill, block_threads, fill_pattern{hbm.as<std::uint64_t>(), o.hbm_bytes / 8});
  BAM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::cerr << " " << seconds_since(start) << " s\n";

  timer time(stream, o);
  std::vector<ceiling> results;
  auto measure = [&](const ceiling_spec& spec, const enqueue_fn& enqueue, std::uint64_t guess,
                     std::uint64_t max_work, std::uint64_t lines_per_work) {
    ceiling c;
    c.spec = spec;
    std::cerr << "bam: " << spec.name << " line " << tools::format_bytes(double(spec.line_bytes))
              << " footprint " << tools::format_bytes(double(spec.footprint_bytes)) << "..."
              << std::flush;
    c.lines_per_repetition = time.measure(enqueue, guess, max_work, c.seconds) * lines_per_work;
    std::cerr << " " << gbps(c.bytes_per_s(c.median_seconds())) << " GB/s\n";
    results.push_back(std::move(c));
  };
  auto copies = [&](void* dst, const void* src) {
    return [=, &o](std::uint64_t n, std::uint32_t) {
      for (std::uint64_t i = 0; i < n; ++i) {
        BAM_CUDA_CHECK(cudaMemcpyAsync(dst, src, o.copy_bytes, cudaMemcpyDefault, stream));
      }
    };
  };
  constexpr std::uint64_t max_copies = 100'000;
  // Order matters: each copy leaves the pattern where the next reads, and the device-to-host
  // copy writes the pattern back over the pinned bytes it came from.
  measure({.name = "h2d_copy",
           .counts = "bytes copied",
           .line_bytes = o.copy_bytes,
           .footprint_bytes = o.copy_bytes,
           .bytes_per_line = o.copy_bytes},
          copies(copy_a.data(), pinned.host()), 1, max_copies, 1);
  measure({.name = "hbm_copy",
           .counts = "bytes read + written",
           .line_bytes = o.copy_bytes,
           .footprint_bytes = 2 * o.copy_bytes,
           .bytes_per_line = 2 * o.copy_bytes},
          copies(copy_b.data(), copy_a.data()), 1, max_copies, 1);
  measure({.name = "d2h_copy",
           .counts = "bytes copied",
           .line_bytes = o.copy_bytes,
           .footprint_bytes = o.copy_bytes,
           .bytes_per_line = o.copy_bytes},
          copies(pinned.host(), copy_b.data()), 1, max_copies, 1);

  // Random whole lines: `base` over `footprint` bytes.
  auto lines = [&](const std::string& name, const void* base, std::uint64_t footprint,
                   std::uint64_t line_bytes) {
    const std::uint32_t shift = log2_exact(line_bytes);
    const std::uint64_t per_item =
        shift < round_shift ? std::uint64_t{1} << (round_shift - shift) : 1;
    const random_lines k{.base = static_cast<const uint4*>(base),
                         .lines = footprint >> shift,
                         .line_shift = shift,
                         .items = 0,
                         .seed = 0,
                         .sink = sink.as<std::uint64_t>(),
                         .wrong = wrong.as<std::uint64_t>()};
    // A first guess of 256 MiB read; the timer grows it to the target time.
    const std::uint64_t guess = std::max<std::uint64_t>(1, ((256ull << 20) >> shift) / per_item);
    measure(
        {.name = name,
         .counts = "bytes read",
         .line_bytes = line_bytes,
         .footprint_bytes = footprint,
         .bytes_per_line = line_bytes},
        [=](std::uint64_t items, std::uint32_t seed) {
          random_lines run = k;
          run.items = items;
          run.seed = seed;
          launch(stream, grid_lines, block_threads, run);
        },
        guess, std::uint64_t{1} << 40, per_item);
  };
  for (const std::uint64_t f : o.footprints) {
    for (const std::uint64_t l : o.line_bytes) lines("zero_copy_lines", pinned.device(), f, l);
  }
  for (const std::uint64_t l : o.line_bytes) lines("hbm_lines", hbm.data(), o.hbm_bytes, l);

  const random_words words{.base = hbm.as<std::uint64_t>(),
                           .words = o.hbm_bytes / 8,
                           .items = 0,
                           .seed = 0,
                           .sink = sink.as<std::uint64_t>(),
                           .wrong = wrong.as<std::uint64_t>()};
  measure(
      {.name = "hbm_random_8b",
       .counts = "bytes read",
       .line_bytes = 8,
       .footprint_bytes = o.hbm_bytes,
       .bytes_per_line = 8},
      [=](std::uint64_t items, std::uint32_t seed) {
        random_words run = words;
        run.items = items;
        run.seed = seed;
        launch(stream, grid_words, block_threads, run);
      },
      (1u << 24) / words_per_round, std::uint64_t{1} << 40, words_per_round);

  // What a host thread that serves GPU kernels (the host_thread controller) can move: random
  // lines of pinned memory copied to random lines of HBM, 1,024 copies per batch call, issued
  // by this one thread. Each repetition is bounded by the API calls or the copy engine.
  constexpr std::size_t copies_per_batch = 1024;
  for (const std::uint64_t l : o.line_bytes) {
    std::vector<void*> dsts(copies_per_batch);
    std::vector<const void*> srcs(copies_per_batch);
    std::vector<std::size_t> sizes(copies_per_batch, l);
    const std::uint64_t from_lines = o.footprints.front() / l, to_lines = o.hbm_bytes / l;
    measure(
        {.name = "batched_line_copies",
         .counts = "bytes copied",
         .line_bytes = l,
         .footprint_bytes = o.footprints.front(),
         .bytes_per_line = l},
        [&](std::uint64_t batches, std::uint32_t seed) {
          for (std::uint64_t b = 0; b < batches; ++b) {
            for (std::size_t k = 0; k < copies_per_batch; ++k) {
              const std::uint64_t n = 2 * (b * copies_per_batch + k);
              srcs[k] =
                  static_cast<const std::uint8_t*>(pinned.host()) + pick64(n, seed, from_lines) * l;
              dsts[k] = static_cast<std::uint8_t*>(hbm.data()) + pick64(n + 1, seed, to_lines) * l;
            }
            runtime::detail::cuda_copy_batch_async(dsts.data(), srcs.data(), sizes.data(),
                                                   copies_per_batch, stream);
          }
        },
        4, 1u << 20, copies_per_batch);
  }

  std::uint64_t wrong_words = 0;  // words (line reads) or rounds of 8 words (word reads)
  BAM_CUDA_CHECK(cudaMemcpyAsync(&wrong_words, wrong.data(), sizeof wrong_words,
                                 cudaMemcpyDeviceToHost, stream));
  BAM_CUDA_CHECK(cudaStreamSynchronize(stream));

  print_table(results);
  if (!o.json.empty()) write_json(o.json, o, results, prop);
  if (wrong_words != 0) {
    throw error("reads returned bytes other than the pattern written (" +
                std::to_string(wrong_words) + " wrong words or rounds of words)");
  }
}

}  // namespace bam::bench
