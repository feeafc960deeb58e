// `bam bench prefetch`: a tiled scan through a bam::array, with and without prefetch, in one
// run. Each kernel thread walks tiles of its own (tile k of thread t is tile t + k x threads);
// without prefetch it reads a tile (a cursor: one miss per line, one after another), then
// computes on it; with prefetch it starts the loads of tile k + 1 (a prefetch_ticket) before it
// computes on tile k, so a tile's lines load together and beside the computation. Few threads
// against a slow device (--model nand, 100 us): the threads in flight, not the device, limit
// the scan, which is what prefetch changes. Prints both times, their ratio, and --json.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/prefetch_ticket.hpp>
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>  // this file is compiled as CUDA in GPU builds
#endif

#include "apps/gather_scan.hpp"
#include "bam/commands.hpp"
#include "bam/shared_buffer.hpp"
#include "bam/storage_options.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::tools {

namespace {

/// Most lines of a tile: the tickets' capacity.
constexpr std::uint32_t max_tile_lines = 8;
using scan_ticket = prefetch_ticket<const std::uint64_t, max_tile_lines>;

/// The value of element `i` of the image, and one step of the computation: the scan arrays'
/// splitmix64.
BAM_HD constexpr std::uint64_t mix(std::uint64_t x) { return apps::synthetic_value(x); }

/// The computation on one element: `rounds` mixes (0: the value itself).
BAM_HD inline std::uint64_t compute(std::uint64_t v, std::uint32_t rounds) {
  for (std::uint32_t r = 0; r < rounds; ++r) v = mix(v);
  return v;
}

/// What the threads of a scan add up: read by the host after the launch.
struct scan_totals {
  std::uint64_t sum;
  std::uint64_t failed;
};

/// The scan: thread t reads tiles t, t + count, ... of `tile_elements` elements each and sums
/// compute() of every element it read.
struct tile_scan {
  array_ref<const std::uint64_t> a;
  std::uint64_t tiles;
  std::uint64_t tile_elements;
  std::uint64_t line_elements;
  std::uint32_t rounds;
  bool prefetch;
  scan_totals* totals;

  BAM_HD void operator()(thread_index t) const {
    std::uint64_t sum = 0, failed = 0;
    if (prefetch) {
      scan_prefetching(t, sum, failed);
    } else {
      scan_plain(t, sum, failed);
    }
    // relaxed: totals, read by the host after the launch has completed.
    atomic_ref<std::uint64_t>(totals->sum).fetch_add(sum, order::relaxed);
    if (failed) atomic_ref<std::uint64_t>(totals->failed).fetch_add(failed, order::relaxed);
  }

  BAM_HD void scan_plain(thread_index t, std::uint64_t& sum, std::uint64_t& failed) const {
    for (std::uint64_t tile = t.id; tile < tiles; tile += t.count) {
      auto c = a.reader();
      for (std::uint64_t i = tile * tile_elements; i < (tile + 1) * tile_elements; ++i) {
        std::uint64_t v = 0;
        if (c.try_read(i, v).ok()) {
          sum += compute(v, rounds);
        } else {
          ++failed;
        }
      }
    }
  }

  /// Double buffered: tile k's ticket was waited for before tile k + 1's loads start, and this
  /// thread reads only tile k's pinned lines while they are in flight (the ticket rule).
  BAM_HD void scan_prefetching(thread_index t, std::uint64_t& sum, std::uint64_t& failed) const {
    scan_ticket first(a), second(a);
    scan_ticket* cur = &first;
    scan_ticket* next = &second;
    auto start = [&](scan_ticket& k, std::uint64_t tile) {
      for (std::uint64_t i = tile * tile_elements; i < (tile + 1) * tile_elements;
           i += line_elements) {
        (void)k.prefetch(i);
      }
    };
    if (t.id < tiles) start(*cur, t.id);
    for (std::uint64_t tile = t.id; tile < tiles; tile += t.count) {
      cur->wait();
      if (tile + t.count < tiles) start(*next, tile + t.count);
      for (std::uint64_t i = tile * tile_elements; i < (tile + 1) * tile_elements; ++i) {
        std::uint64_t v = 0;
        if (cur->try_read(i, v).ok()) {
          sum += compute(v, rounds);
        } else {
          ++failed;
        }
      }
      cur->release();
      scan_ticket* done = cur;
      cur = next;
      next = done;
    }
  }
};

struct prefetch_bench_options {
  std::uint64_t data_bytes = 0;  ///< 0: eight times the cache, at least 64 MiB
  std::uint32_t tile_lines = 4;
  std::uint32_t threads = 0;  ///< 0: the CPU pool's workers, or 32 on a GPU
  std::uint32_t rounds = 0;
  unsigned repetitions = 3;
  std::string json;
  storage_options storage;
};

/// One timed scan.
struct scan_run {
  double seconds = 0;
  std::uint64_t sum = 0;
  std::uint64_t failed = 0;
  cache_stats stats;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

void run_prefetch_bench(const prefetch_bench_options& o) {
  o.storage.validate();
  if (o.storage.backend != "emulated-ssd") {
    throw input_error("bam bench prefetch reads through the emulated SSD (--backend emulated-ssd)");
  }
  if (o.tile_lines == 0 || o.tile_lines > max_tile_lines) {
    throw input_error("--tile-lines must be 1.." + std::to_string(max_tile_lines));
  }
  if (o.repetitions == 0) throw input_error("--repetitions must be positive");
  const std::uint64_t line = o.storage.line_bytes;
  const bool gpu = o.storage.use_gpu();
  // Default: a GPU warp, or one logical thread per CPU worker (the pool's default count).
  std::uint32_t threads = o.threads;
  if (threads == 0) threads = gpu ? 32u : o.storage.workers;
  if (threads == 0) threads = 4 * std::max(1u, std::thread::hardware_concurrency());
  // Each thread pins up to two tiles; four times that leaves the victim search room.
  const std::uint64_t pinned = std::uint64_t{threads} * 2 * o.tile_lines * line;
  const std::uint64_t default_cache = std::max<std::uint64_t>(4 * pinned, 8ull << 20);
  // The scan must miss: by default the data is eight times the cache (at least 64 MiB).
  const std::uint64_t cache_bytes = o.storage.cache_bytes ? o.storage.cache_bytes : default_cache;
  const std::uint64_t data_bytes =
      o.data_bytes ? o.data_bytes : std::max<std::uint64_t>(64ull << 20, 8 * cache_bytes);
  if (data_bytes <= cache_bytes) {
    throw input_error("--data-bytes (" + format_bytes(static_cast<double>(data_bytes)) +
                      ") must exceed the cache (" +
                      format_bytes(static_cast<double>(cache_bytes)) +
                      "): a scan of data the cache holds measures hits, not prefetch");
  }
  const std::uint64_t tiles = data_bytes / line / o.tile_lines;
  if (tiles == 0) throw input_error("--data-bytes must hold at least one tile");
  auto image = backing_store::in_memory(tiles * o.tile_lines * line,
                                        gpu ? memory_kind::pinned : memory_kind::host);
  auto* words = reinterpret_cast<std::uint64_t*>(image->data());
  const std::uint64_t n = tiles * o.tile_lines * line / 8;
  for (std::uint64_t i = 0; i < n; ++i) words[i] = mix(i);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) expected += compute(words[i], o.rounds);

  data_path path = data_path::open(o.storage, image, default_cache);
  if (std::uint64_t{path.cache->lines()} * line < 2 * pinned) {
    throw input_error("the cache (" +
                      format_bytes(static_cast<double>(path.cache->lines() * line)) +
                      ") must hold at least twice what the tickets pin (" +
                      format_bytes(static_cast<double>(pinned)) + ")");
  }
  array<const std::uint64_t> a(*path.cache, *path.devices(), {.count = n, .name = "tiles"});
  const std::uint32_t block = std::min<std::uint32_t>(threads, 256);
  const std::uint32_t grid = (threads + block - 1) / block;
  shared_buffer totals(gpu, sizeof(scan_totals));
#if defined(BAM_HAVE_CUDA)
  if (gpu) {
    path.runtime->preload({kernel_function<tile_scan>()});
    path.runtime->warm_up([](stream_handle s) { warm_up_launch<tile_scan>(s); });
  }
#endif
  path.start();
  auto scan = [&](bool prefetch) {
    scan_totals* t = totals.as<scan_totals>();
    *t = {};
    a.reset_stats();
    const tile_scan k{a.ref_for_launch(grid, block),
                      tiles,
                      o.tile_lines * line / 8,
                      line / 8,
                      o.rounds,
                      prefetch,
                      t};
    const auto began = std::chrono::steady_clock::now();
    if (!gpu) {
      launch(*path.stream, grid, block, k);
      path.stream->synchronize();
    } else {
#if defined(BAM_HAVE_CUDA)
      launch(path.runtime->stream(), grid, block, k);
      path.runtime->synchronize(path.runtime->stream(), 0, "the tiled scan");
#endif
    }
    scan_run r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    a.check();
    r.sum = t->sum;
    r.failed = t->failed;
    r.stats = a.stats();
    if (r.failed != 0 || r.sum != expected) {
      throw error("bam bench prefetch: the scan " + std::string(prefetch ? "with" : "without") +
                  " prefetch read wrong data (" + std::to_string(r.failed) + " reads failed)");
    }
    return r;
  };
  std::vector<scan_run> runs[2];
  for (unsigned rep = 0; rep < o.repetitions; ++rep) {
    for (int p = 0; p < 2; ++p) runs[p].push_back(scan(p != 0));
  }
  if (path.runtime) path.runtime->stop();

  double seconds[2];
  for (int p = 0; p < 2; ++p) {
    std::vector<double> s;
    for (const scan_run& r : runs[p]) s.push_back(r.seconds);
    seconds[p] = median(s);
  }
  const double ratio = seconds[0] / seconds[1];
  const std::string model = o.storage.model_label();
  const double latency = o.storage.model().latency_us;
  table t({"prefetch", "threads", "tile lines", "line", "data", "latency", "seconds (median)",
           "lines/s", "loads", "prefetched", "speedup"});
  for (int p = 0; p < 2; ++p) {
    const cache_stats& s = runs[p].back().stats;
    t.add_row({p ? "on" : "off", std::to_string(threads), std::to_string(o.tile_lines),
               format_bytes(static_cast<double>(line)),
               format_bytes(static_cast<double>(tiles * o.tile_lines * line)),
               fixed(latency, 0) + " us (" + model + ")", fixed(seconds[p], 4),
               format_count(static_cast<double>(tiles * o.tile_lines) / seconds[p]),
               std::to_string(s.loads), std::to_string(s.prefetched),
               p ? fixed(ratio, 2) + "x" : "1.00x"});
  }
  t.print(std::cout);
  std::printf("# %s; prefetch on is %.2fx as fast as off (medians of %u)\n", path.where().c_str(),
              ratio, o.repetitions);
  if (o.json.empty()) return;
  json_writer j;
  j.begin_object().field("benchmark", std::string("prefetch")).key("machine");
  write_json(j, read_machine_info());
  j.field("where", path.where())
      .field("target", std::string(gpu ? "gpu" : "cpu"))
      .field("model", model)
      .field("latency_us", latency)
      .field("threads", threads)
      .field("tile_lines", o.tile_lines)
      .field("line_bytes", line)
      .field("data_bytes", tiles * o.tile_lines * line)
      .field("cache_bytes", std::uint64_t{path.cache->lines()} * line)
      .field("rounds", o.rounds)
      .field("repetitions", o.repetitions)
      .field("speedup", ratio);
  for (int p = 0; p < 2; ++p) {
    const cache_stats& s = runs[p].back().stats;
    j.key(p ? "prefetch_on" : "prefetch_off").begin_object().field("seconds_median", seconds[p]);
    j.key("seconds").begin_array();
    for (const scan_run& r : runs[p]) j.value(r.seconds);
    j.end_array()
        .field("lines_per_s", static_cast<double>(tiles * o.tile_lines) / seconds[p])
        .field("loads", s.loads)
        .field("prefetched", s.prefetched)
        .field("hits", s.hits)
        .field("misses", s.misses)
        .field("miss_waits", s.miss_waits)
        .field("accesses", s.accesses)
        .field("evictions", s.evictions)
        .end_object();
  }
  j.end_object();
  j.save(o.json);
}

}  // namespace

// bench prefetch: a tiled scan with and without prefetch tickets.
void add_prefetch_bench(CLI::App& bench) {
  auto o = std::make_shared<prefetch_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "prefetch",
      "A tiled scan through a bam::array on the emulated SSD, without and with prefetch of the "
      "next tile (prefetch_ticket), and the ratio of their times");
  c->add_option("--data-bytes", o->data_bytes,
                "Data scanned (whole tiles), more than the cache (default: eight times the "
                "cache, at least 64 MiB)")
      ->transform(size_transformer())
      ->check(nonzero_size());
  c->add_option("--tile-lines", o->tile_lines, "Cache lines per tile, 1..8")
      ->check(CLI::Range(1u, max_tile_lines))
      ->capture_default_str();
  c->add_option("--threads", o->threads,
                "Kernel threads, each walking tiles of its own (0: the CPU pool's workers, 32 on "
                "a GPU)")
      ->capture_default_str();
  c->add_option("--rounds", o->rounds, "Computation per element: rounds of a 64-bit mix")
      ->capture_default_str();
  c->add_option("--repetitions", o->repetitions, "Timed scans of each kind (median)")
      ->capture_default_str();
  o->storage.add_to(*c);
  add_json_option(*c, o->json);
  c->callback([o] { run_prefetch_bench(*o); });
}

}  // namespace bam::tools
