// `bam bench cache --side gpu`: the GPU page cache's hit bandwidth and its cache-mode
// decomposition (figures 7a, 7b and 8 of docs/results.md), each beside a ceiling measured in the
// same run.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <bam/array.hpp>
#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/gpu_info.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "cache_bench.hpp"
#include "cache_bench_kernels.hpp"
#include "ceilings.hpp"
#include "common/sizes.hpp"
#include "io_kernels.cuh"
#include "io_report.hpp"

namespace bam::bench {

namespace {

using io::agree_on_end;
using io::full_warp;
using io::run_counts;
using io::warp_lanes;

constexpr std::uint32_t block_threads = 256;
constexpr std::uint32_t check_every = 16;  // element reads between looks at the clock

/// The warp's lane 0 reads the clock; every lane gets its answer (the warp stays together).
__device__ __forceinline__ bool warp_before(std::uint64_t end) {
  std::uint32_t go = 0;
  if (threadIdx.x % warp_lanes == 0) go = now_ns() < end ? 1u : 0u;
  return __shfl_sync(full_warp, go, 0) != 0;
}

/// Words of the 16-byte element `e` of the image that differ from the pattern.
__device__ __forceinline__ std::uint64_t wrong_words(const uint4& v, std::uint64_t e) {
  const std::uint64_t w0 = v.x | std::uint64_t{v.y} << 32;
  const std::uint64_t w1 = v.z | std::uint64_t{v.w} << 32;
  return (w0 != pattern_word(e * 16)) + (w1 != pattern_word(e * 16 + 8));
}

/// (7a) Each warp reads whole random lines through cursors, with eight 16-byte elements in
/// flight per lane as the hbm_lines ceiling has: a line is read by per_line / 8 lanes (4 of a
/// 512 B line, 32 of a 4 KiB one), so a warp has as many lines in flight as the ceiling's. A
/// lane's first element of a line moves its cursor there (one probe and pin for the lanes on
/// the line), the rest read through that pin.
struct warp_lines {
  static constexpr std::uint32_t in_flight = 8;  ///< element reads issued before any is used

  array_ref<const uint4> a;
  std::uint64_t lines;
  std::uint32_t per_line;  ///< elements per line (a multiple of 32)
  std::uint32_t seed;
  std::uint64_t duration_ns;
  run_counts* counts;  ///< completed = lines read

  __device__ void operator()(thread_index t) const {
    const std::uint64_t end = agree_on_end(&counts->end_ns, duration_ns);
    const std::uint64_t warp = t.id / warp_lanes, warps = t.count / warp_lanes;
    const auto lane = static_cast<std::uint32_t>(t.id % warp_lanes);
    const std::uint32_t line_lanes =
        per_line / in_flight < warp_lanes ? per_line / in_flight : warp_lanes;
    const std::uint32_t lines_per_warp = warp_lanes / line_lanes;
    auto cursor = a.reader();
    std::uint64_t done = 0, failed = 0, wrong = 0;
    for (std::uint64_t item = warp; warp_before(end); item += warps) {
      const std::uint64_t line =
          pick(counter_hash(item * lines_per_warp + lane / line_lanes, seed), lines);
      // Load j of a group reads line_lanes consecutive elements: whole sectors.
      for (std::uint64_t e0 = line * per_line + lane % line_lanes; e0 < (line + 1) * per_line;
           e0 += std::uint64_t{line_lanes} * in_flight) {
        // Zeroed: an element whose read fails must not keep a register of the last round live.
        uint4 v[in_flight] = {};
        const bool first_ok = cursor.try_read(e0, v[0]).ok();
        failed += first_ok ? 0 : 1;
        std::uint32_t missed = 0;
#pragma unroll
        for (std::uint32_t j = 1; j < in_flight; ++j) {
          if (!cursor.read_if_pinned(e0 + j * line_lanes, v[j])) missed |= 1u << j;
        }
        // No call may come between the loads and their checks (it would save the loaded
        // registers, waiting for them): elements the pin did not serve are read after.
#pragma unroll
        for (std::uint32_t j = 0; j < in_flight; ++j) {
          if ((j == 0 && !first_ok) || (missed & (1u << j))) continue;
          wrong += wrong_words(v[j], e0 + j * line_lanes);
        }
        for (; missed != 0; missed &= missed - 1) {
          const auto j = static_cast<std::uint32_t>(__ffs(static_cast<int>(missed)) - 1);
          const std::uint64_t e = e0 + j * line_lanes;
          uint4 x;
          if (cursor.try_read(e, x).ok()) {
            wrong += wrong_words(x, e);
          } else {
            ++failed;
          }
        }
      }
      done += lines_per_warp;
    }
    cursor.drop();
    io::add_counts(counts, lane == 0 ? done : 0, failed, wrong);
  }
};

/// (7b) Every thread reads independent random 8-byte elements through operator[].
struct random_elements {
  array_ref<const std::uint64_t> a;
  std::uint32_t seed;
  std::uint64_t duration_ns;
  run_counts* counts;  ///< completed = elements read

  __device__ void operator()(thread_index t) const {
    const std::uint64_t end = agree_on_end(&counts->end_ns, duration_ns);
    const std::uint64_t n = a.size();
    std::uint64_t done = 0, wrong = 0;
    for (std::uint64_t k = 0; warp_before(end); k += check_every) {
#pragma unroll 4
      for (std::uint32_t j = 0; j < check_every; ++j) {
        const std::uint64_t i = pick(counter_hash((t.id << 24) + k + j, seed), n);
        const std::uint64_t v = a[i];  // poison (all ones) on failure: counted as wrong
        wrong += v != pattern_word(i * 8);
      }
      done += check_every;
    }
    io::add_counts(counts, done, 0, wrong);
  }
};

/// (8) Each warp gathers a random row of 32 consecutive 8-byte elements (256 bytes, inside one
/// line), a lane per element: the access pattern a feature or embedding gather makes.
struct row_gather {
  array_ref<const std::uint64_t> a;
  std::uint64_t rows;
  std::uint32_t seed;
  std::uint64_t duration_ns;
  run_counts* counts;  ///< completed = elements read

  __device__ void operator()(thread_index t) const {
    const std::uint64_t end = agree_on_end(&counts->end_ns, duration_ns);
    const std::uint64_t warp = t.id / warp_lanes, warps = t.count / warp_lanes;
    const auto lane = static_cast<std::uint32_t>(t.id % warp_lanes);
    std::uint64_t done = 0, failed = 0, wrong = 0;
    for (std::uint64_t item = warp; warp_before(end); item += warps) {
      const std::uint64_t i = pick(counter_hash(item, seed), rows) * warp_lanes + lane;
      std::uint64_t v = 0;
      if (!a.try_read(i, v).ok()) {
        ++failed;
      } else if (v != pattern_word(i * 8)) {
        ++wrong;
      }
      ++done;
    }
    io::add_counts(counts, done, failed, wrong);
  }
};

template <class Kernel>
std::uint32_t resident_grid(const gpu_runtime& rt) {
  int per_sm = 0;
  BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_function<Kernel>(),
                                                               block_threads, 0));
  return static_cast<std::uint32_t>(std::max(per_sm, 1)) * rt.app_sms();
}

/// The runtime, its counters and timing, for one figure.
class bench_session {
 public:
  explicit bench_session(const cache_bench_options& o) : o_(o), rt_(make_config(o)) {
    if (!rt_.gpu()) throw input_error("bam bench cache --side gpu needs a GPU: " + rt_.message());
    counts_ = device_memory(sizeof(run_counts));
    counts_out_ = pinned_memory(sizeof(run_counts));
    BAM_CUDA_CHECK(cudaEventCreate(&begin_));
    BAM_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~bench_session() {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }
  bench_session(const bench_session&) = delete;
  bench_session& operator=(const bench_session&) = delete;

  gpu_runtime& rt() { return rt_; }
  run_counts* counts() { return counts_.as<run_counts>(); }

  void warm_up() {
    rt_.preload({kernel_function<warp_lines>(), kernel_function<random_elements>(),
                 kernel_function<row_gather>(), kernel_function<touch_lines<uint4>>(),
                 kernel_function<touch_lines<std::uint64_t>>(), kernel_function<io::zero_words>()});
    rt_.warm_up([](stream_handle s) {
      warm_up_launch<warp_lines>(s);
      warm_up_launch<random_elements>(s);
      warm_up_launch<row_gather>(s);
      warm_up_launch<touch_lines<uint4>>(s);
      warm_up_launch<touch_lines<std::uint64_t>>(s);
      warm_up_launch<io::zero_words>(s);
    });
  }

  /// Launches `k` (whose counts point at counts()) on every resident thread, timed by events.
  template <class Kernel>
  run_counts run(Kernel k, const std::string& what, double& seconds) {
    launch(rt_.stream(), 1, 32,
           io::zero_words{counts_.as<std::uint64_t>(), sizeof(run_counts) / 8});
    const std::uint32_t grid = resident_grid<Kernel>(rt_);
    BAM_CUDA_CHECK(cudaEventRecord(begin_, rt_.stream()));
    launch(rt_.stream(), grid, block_threads, k);
    BAM_CUDA_CHECK(cudaEventRecord(end_, rt_.stream()));
    copy_async(counts_out_.data(), counts_.data(), sizeof(run_counts), rt_.stream());
    rt_.synchronize(rt_.stream(), 0, what);
    rt_.check();
    float ms = 0;
    BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    seconds = ms / 1e3;
    return *counts_out_.as<run_counts>();
  }

  /// Reads one element of every line of `a` (fills the cache), every resident thread.
  template <class T>
  void touch(const array<const T>& a, std::uint64_t lines, std::uint64_t per_line) {
    // The counters in device memory: the GPU's atomics on mapped host memory are not atomic
    // on this machine (no native host atomics).
    launch(rt_.stream(), 1, 32,
           io::zero_words{counts_.as<std::uint64_t>(), sizeof(run_counts) / 8});
    auto* faults = reinterpret_cast<read_faults*>(counts_.as<run_counts>());
    const std::uint32_t grid = resident_grid<touch_lines<T>>(rt_);
    const array_ref<const T> ref = a.ref_for_launch(grid, block_threads);
    launch(rt_.stream(), grid, block_threads, touch_lines<T>{ref, lines, per_line, faults});
    copy_async(counts_out_.data(), counts_.data(), sizeof(run_counts), rt_.stream());
    rt_.synchronize(rt_.stream(), 0, "filling the cache");
    const auto* out = reinterpret_cast<const read_faults*>(counts_out_.as<run_counts>());
    if (out->failed != 0) {
      throw error("filling the cache: " + std::to_string(out->failed) + " reads failed");
    }
  }

  template <class Kernel>
  [[nodiscard]] std::uint32_t grid() {
    return resident_grid<Kernel>(rt_);
  }

  std::uint32_t next_seed() { return seed_++; }
  [[nodiscard]] double seconds() const { return o_.seconds; }

 private:
  static runtime_config make_config(const cache_bench_options& o) {
    runtime_config c;
    c.controller_sms = o.controller_sms;
    c.wait_timeout_ns = 120'000'000'000ull;
    return c;
  }

  const cache_bench_options& o_;
  gpu_runtime rt_;
  device_memory counts_;
  pinned_memory counts_out_;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
  std::uint32_t seed_ = 11;
};

std::shared_ptr<backing_store> pattern_image(std::uint64_t bytes) {
  auto image = backing_store::in_memory(bytes, memory_kind::device);
  const owned_stream s = owned_stream::create_non_blocking();
  fill_pattern_async(image->data(), bytes, s.get());
  BAM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  return image;
}

storage_config gpu_storage(double latency_us) {
  storage_config c;
  c.devices = 1;
  c.queues_per_device = 128;
  c.queue_depth = 1024;
  c.model = device_model::unlimited();
  c.model.latency_us = latency_us;
  c.timeout_ns = 20'000'000'000ull;
  c.placement = controller_placement::gpu_kernel;
  return c;
}

report new_report(const std::string& figure, bench_session& s) {
  report r;
  r.benchmark = "cache";
  r.figure = figure;
  r.configuration.set("side", "gpu")
      .set("controller_sms", s.rt().controller_sms())
      .set("app_sms", s.rt().app_sms())
      .set("seconds_per_run", s.seconds())
      .set("gpu", gpu_description())
      .set("storage", "1 emulated device, 128 queues x 1024, GPU-memory image, caps off");
  return r;
}

report_record stats_fields(report_record p, const cache_stats& st) {
  p.set("hit_rate", st.hit_rate())
      .set("hits", st.hits)
      .set("misses", st.misses)
      .set("coalesced", st.coalesced)
      .set("reused", st.reused)
      .set("read_through", st.read_through)
      .set("io_commands", st.io_commands())
      .set("amplification", st.amplification());
  return p;
}

report_record ceiling_record(const std::string& name, const rate_figure& f, std::uint64_t line,
                             std::uint64_t footprint) {
  report_record c;
  c.set("ceiling", name)
      .set("line_bytes", line)
      .set("footprint_bytes", footprint)
      .set("lines_per_s", f.lines_per_s)
      .set("bytes_per_s", f.bytes_per_s);
  return c;
}

void finish(const report& r, const cache_bench_options& o, const std::vector<std::string>& cols) {
  finish_report(r, cols, o.json, "bench cache", "reads");
}

// --- (7a) ------------------------------------------------------------------------------------

void figure_lines(const cache_bench_options& o) {
  bench_session s(o);
  report out = new_report("lines", s);
  const std::uint64_t data = 1ull << 30, capacity = 2ull << 30;
  out.configuration.set("data_bytes", data)
      .set("cache_bytes", capacity)
      .set("cache_mode", "optimized")
      .set("elements_in_flight_per_lane", std::uint64_t{warp_lines::in_flight});
  auto image = pattern_image(data);
  const std::vector<std::uint32_t> lines = {512, 4096};
  std::vector<double> ceiling;
  {
    const owned_stream st = owned_stream::create_non_blocking();
    for (const std::uint32_t l : lines) {
      const rate_figure f = measure_random_lines(image->data(), data, l, {.stream = st.get()});
      out.ceilings.push_back(ceiling_record("hbm_lines", f, l, data));
      ceiling.push_back(f.bytes_per_s);
    }
  }
  gpu_runtime& rt = s.rt();
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::uint32_t line = lines[k];
    emulated_storage ssd(gpu_storage(0), image, &rt);
    page_cache cache(
        {.line_bytes = line, .capacity_bytes = capacity, .mode = cache_mode::optimized}, rt);
    array<const uint4> a(cache, ssd.ref(), {.count = data / 16, .name = "lines"});
    s.warm_up();
    stop_guard stop(rt);
    rt.start();
    std::cerr << "bam: filling a " << tools::format_bytes(capacity) << " cache of " << line
              << " B lines...\n";
    s.touch(a, data / line, line / 16);
    a.reset_stats();
    const std::uint32_t grid = s.grid<warp_lines>();
    double seconds = 0;
    const run_counts c =
        s.run(warp_lines{.a = a.ref_for_launch(grid, block_threads),
                         .lines = data / line,
                         .per_line = line / 16,
                         .seed = s.next_seed(),
                         .duration_ns = static_cast<std::uint64_t>(s.seconds() * 1e9),
                         .counts = s.counts()},
              "whole-line reads", seconds);
    a.check();
    const double bytes_per_s = static_cast<double>(c.completed) * line / seconds;
    report_record p;
    p.set("line_bytes", line)
        .set("lines_read", c.completed)
        .set("seconds", seconds)
        .set("bytes_per_s", bytes_per_s)
        .set("ceiling_bytes_per_s", ceiling[k])
        .set("fraction_of_ceiling", bytes_per_s / ceiling[k])
        .set("failed", c.failed)
        .set("wrong", c.wrong);
    out.points.push_back(stats_fields(p, a.stats()));
  }
  out.notes.push_back(
      "targets: >= 50% of the same-pattern HBM ceiling (random whole lines over the same 1 GiB, "
      "all SMs), and >= 2 TB/s at 4 KiB lines; the paper's A100 reached 430 GB/s on hits");
  finish(out, o,
         {"line_bytes", "lines_read", "bytes_per_s", "ceiling_bytes_per_s", "fraction_of_ceiling",
          "hit_rate", "reused", "failed", "wrong"});
}

// --- (7b) ------------------------------------------------------------------------------------

void figure_elements(const cache_bench_options& o) {
  bench_session s(o);
  report out = new_report("elements", s);
  const std::uint64_t data = 1ull << 30, capacity = 2ull << 30;
  out.configuration.set("data_bytes", data)
      .set("cache_bytes", capacity)
      .set("cache_mode", "optimized");
  auto image = pattern_image(data);
  double ceiling = 0;
  {
    const owned_stream st = owned_stream::create_non_blocking();
    const rate_figure f = measure_random_words(image->data(), data, {.stream = st.get()});
    out.ceilings.push_back(ceiling_record("hbm_random_8b", f, 8, data));
    ceiling = f.lines_per_s;
  }
  gpu_runtime& rt = s.rt();
  const std::uint64_t n = data / 8;
  {
    // The same kernel over the data in HBM, no cache: what operator[] costs beyond the load.
    s.warm_up();
    const array<const std::uint64_t> direct = array<const std::uint64_t>::over_memory(
        reinterpret_cast<std::uint64_t*>(image->data()), n, false, "direct");
    double seconds = 0;
    const run_counts c =
        s.run(random_elements{.a = direct.ref(),
                              .seed = s.next_seed(),
                              .duration_ns = static_cast<std::uint64_t>(s.seconds() * 1e9),
                              .counts = s.counts()},
              "direct element reads", seconds);
    const double rate = static_cast<double>(c.completed) / seconds;
    out.ceilings.push_back(report_record{}
                               .set("ceiling", "same_kernel_direct_hbm")
                               .set("line_bytes", std::uint64_t{8})
                               .set("footprint_bytes", data)
                               .set("lines_per_s", rate)
                               .set("bytes_per_s", rate * 8)
                               .set("wrong", c.wrong));
    if (c.wrong) throw error("direct element reads returned wrong bytes");
    const double direct_rate = rate;
    for (const std::uint32_t line : {512u, 4096u}) {
      emulated_storage ssd(gpu_storage(0), image, &rt);
      page_cache cache(
          {.line_bytes = line, .capacity_bytes = capacity, .mode = cache_mode::optimized}, rt);
      array<const std::uint64_t> a(cache, ssd.ref(), {.count = n, .name = "elements"});
      s.warm_up();
      stop_guard stop(rt);
      rt.start();
      s.touch(a, data / line, line / 8);
      a.reset_stats();
      const std::uint32_t grid = s.grid<random_elements>();
      const run_counts r =
          s.run(random_elements{.a = a.ref_for_launch(grid, block_threads),
                                .seed = s.next_seed(),
                                .duration_ns = static_cast<std::uint64_t>(s.seconds() * 1e9),
                                .counts = s.counts()},
                "element reads", seconds);
      a.check();
      const double accesses = static_cast<double>(r.completed) / seconds;
      report_record p;
      p.set("line_bytes", line)
          .set("accesses", r.completed)
          .set("seconds", seconds)
          .set("accesses_per_s", accesses)
          .set("bytes_per_s", accesses * 8)
          .set("fraction_of_hbm_random_8b", accesses / ceiling)
          .set("fraction_of_direct", accesses / direct_rate)
          .set("failed", r.failed)
          .set("wrong", r.wrong);
      out.points.push_back(stats_fields(p, a.stats()));
    }
  }
  out.notes.push_back(
      "hbm_random_8b: independent random 8-byte reads (8 per thread in flight); "
      "same_kernel_direct_hbm: this figure's kernel over a bam::array view of the same HBM "
      "bytes (no cache): the gap between them is the kernel's index math and one read in "
      "flight per thread, the gap to it is the cache");
  finish(out, o,
         {"line_bytes", "accesses_per_s", "bytes_per_s", "fraction_of_hbm_random_8b",
          "fraction_of_direct", "hit_rate", "coalesced", "failed", "wrong"});
}

// --- (8) -------------------------------------------------------------------------------------

void figure_modes(const cache_bench_options& o) {
  bench_session s(o);
  report out = new_report("modes", s);
  const std::uint64_t data = 4ull << 30, capacity = 512ull << 20;
  const std::uint32_t line = 4096;
  out.configuration.set("data_bytes", data)
      .set("cache_bytes", capacity)
      .set("line_bytes", line)
      .set("latency_us", o.latency_us)
      .set("workload", "each warp reads a random row of 32 consecutive 8-byte elements");
  auto image = pattern_image(data);
  const std::uint64_t n = data / 8;
  gpu_runtime& rt = s.rt();
  {
    s.warm_up();
    const array<const std::uint64_t> direct = array<const std::uint64_t>::over_memory(
        reinterpret_cast<std::uint64_t*>(image->data()), n, false, "direct");
    double seconds = 0;
    const run_counts c =
        s.run(row_gather{.a = direct.ref(),
                         .rows = n / warp_lanes,
                         .seed = s.next_seed(),
                         .duration_ns = static_cast<std::uint64_t>(s.seconds() * 1e9),
                         .counts = s.counts()},
              "direct gather", seconds);
    const double rate = static_cast<double>(c.completed) / seconds;
    out.ceilings.push_back(report_record{}
                               .set("ceiling", "gather_from_hbm")
                               .set("footprint_bytes", data)
                               .set("accesses_per_s", rate)
                               .set("bytes_per_s", rate * 8)
                               .set("wrong", c.wrong));
    if (c.wrong) throw error("direct gather returned wrong bytes");
  }
  emulated_storage ssd(gpu_storage(o.latency_us), image, &rt);
  for (const cache_mode mode : {cache_mode::none, cache_mode::naive, cache_mode::optimized}) {
    page_cache cache({.line_bytes = line, .capacity_bytes = capacity, .mode = mode}, rt);
    array<const std::uint64_t> a(cache, ssd.ref(), {.count = n, .name = "gather"});
    s.warm_up();
    stop_guard stop(rt);
    rt.start();
    std::cerr << "bam: gather, mode " << to_string(mode) << "...\n";
    const std::uint32_t grid = s.grid<row_gather>();
    double seconds = 0;
    const run_counts c =
        s.run(row_gather{.a = a.ref_for_launch(grid, block_threads),
                         .rows = n / warp_lanes,
                         .seed = s.next_seed(),
                         .duration_ns = static_cast<std::uint64_t>(s.seconds() * 1e9),
                         .counts = s.counts()},
              std::string("gather, mode ") + to_string(mode), seconds);
    a.check();
    const double rate = static_cast<double>(c.completed) / seconds;
    report_record p;
    p.set("mode", to_string(mode))
        .set("accesses", c.completed)
        .set("seconds", seconds)
        .set("accesses_per_s", rate)
        .set("bytes_per_s", rate * 8)
        .set("fraction_of_hbm_gather", rate / out.ceilings.front().number("accesses_per_s"))
        .set("failed", c.failed)
        .set("wrong", c.wrong);
    out.points.push_back(stats_fields(p, a.stats()));
  }
  out.notes.push_back(
      "a cold cache at the start of each mode's run; data 8x the cache, so most rows miss; "
      "none: every access its own I/O (no sharing); naive: the cache, a probe per lane; "
      "optimized: one probe per warp per line (match_any)");
  finish(out, o,
         {"mode", "accesses_per_s", "bytes_per_s", "fraction_of_hbm_gather", "hit_rate",
          "io_commands", "amplification", "coalesced", "failed", "wrong"});
}

}  // namespace

void run_cache_bench_gpu(const cache_bench_options& options) {
  if (!gpu_available()) {
    throw input_error("bam bench cache --side gpu needs a GPU: " + gpu_unavailable_reason());
  }
  if (options.seconds < 0.02 || options.seconds > 30) {
    throw input_error("--seconds must be 0.02..30");
  }
  if (options.figure == "lines") {
    figure_lines(options);
  } else if (options.figure == "elements") {
    figure_elements(options);
  } else if (options.figure == "modes") {
    figure_modes(options);
  } else {
    throw input_error("--figure must be lines, elements or modes, got '" + options.figure + "'");
  }
}

}  // namespace bam::bench
