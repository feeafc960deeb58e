// Arrays declared dense on a two_level cache, on GPU threads: one launch of hundreds of
// thousands of threads writes and reads a dense array whose data is four times the frame pool,
// so frames are evicted (their dirty pages written back) and reserved for other pieces while
// readers run, and one warp drops pages and frames meanwhile. Writers own disjoint elements and
// read them back; readers check the elements nobody writes against the generator. A second
// launch reads every element, and after flush the image must hold exactly what was written.
// Both pinning kinds, both cache modes, two line and frame sizes. A wrong byte, a failed
// access, a pin or reader announcement left behind, or a frame count that drifted fails the
// program, naming the element, what was expected and what was read.
//
// While a launch runs, the host prints its report's counters every few seconds, and a launch
// whose counters stop moving ends the program with what was left unfinished.
//
//   gpu_mosaic_stress [--placement gpu_kernel|host_thread|both] [--small] [--grid BLOCKS]
//                     [--stall-s SECONDS] [--controller-stop-poll-us US]
//                     [--image device|pinned] [--reports device|pinned] [--fill-percent P]
//                     [--base-first]
//     --grid BLOCKS     blocks of every launch instead of the shape's (the cache is sized by it)
//     --stall-s SECONDS how long no counter may move before a launch counts as stuck (60)
//     --controller-stop-poll-us US  how often the GPU controller reads its stop flag in host
//                       memory while it has work (the storage default otherwise)
//     --image device    the emulated devices' image in GPU memory (gpu_kernel placement; the
//                       default, pinned, has the controller copy every line over PCIe)
//     --reports device  the launches' counters in GPU memory, copied out to look (the default,
//                       pinned, is mapped host memory that every thread adds to)
//     --fill-percent P  pieces that reach P% residency load the rest at once (default 0: off)
//     --base-first      pieces start on base pages and are promoted past half a frame

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>

#include "gpu_mosaic_support.cuh"
#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

using cache::mosaic::dense_cache_ref;

/// Data over frame pool: every piece cannot stay, so reservations evict.
constexpr std::uint64_t data_per_pool = 4;
/// Odd elements that each reader lane reads per run.
constexpr std::uint32_t reads_per_run = 4;
/// Bad accesses a launch keeps the details of (the rest are counted).
constexpr std::uint32_t logged_max = 8;
/// Between two drops by one evictor lane: frequent enough to race with every reader, rare
/// enough that frame-pin readers still find their frames open most of the time.
constexpr std::uint32_t drop_gap_ns = 500'000;
/// Bound on one launch. An epochs eviction waits for a grace period over every reader slot
/// of the GPU, so a launch may take far longer than with frame pins.
constexpr std::uint64_t launch_bound_ns = 300'000'000'000ull;
/// Accesses a thread counts before adding them to its report: the host sees the launch move
/// while it runs, at one atomic on host memory per this many accesses.
constexpr std::uint32_t progress_step = 16;
/// Between two progress lines of a running launch.
constexpr std::chrono::seconds progress_period{5};

/// The value writers store at element `i` (never the pattern's).
BAM_HD inline std::uint64_t written_word(std::uint64_t i) { return ~pattern_word(i * 8); }

/// What an element holds once every writer is done: even elements are written, odd ones keep
/// the image's pattern.
BAM_HD inline std::uint64_t final_word(std::uint64_t i) {
  return i % 2 == 0 ? written_word(i) : pattern_word(i * 8);
}

enum class role : std::uint32_t { reader, writer_store, writer_read_back, verifier };

const char* role_name(role r) {
  switch (r) {
    case role::reader:
      return "reader";
    case role::writer_store:
      return "writer's store";
    case role::writer_read_back:
      return "writer's read-back";
    case role::verifier:
      return "verifying read";
  }
  return "?";
}

struct bad_access {
  std::uint64_t index;
  std::uint64_t expected;
  std::uint64_t got;
  std::uint32_t status;  ///< io_status bits; 0 when the access succeeded with wrong bytes
  role who;
};

/// What one launch did, in mapped pinned host memory: the host watches the counters while
/// the launch runs (system scope, so that the GPU's additions reach host memory and not just
/// its L2) and reads everything, the log included, after it.
struct report {
  std::uint64_t reads;
  std::uint64_t writes;
  std::uint64_t wrong;
  std::uint64_t failed;
  std::uint64_t wrong_reader;     ///< of `wrong`: odd elements, which nobody writes
  std::uint64_t wrong_read_back;  ///< ... a writer's read-back of a store that succeeded
  std::uint64_t wrong_verifier;   ///< ... the verify launch's reads
  /// Reads of an element whose store failed, which may hold either value: not checked.
  std::uint64_t unverified;
  std::uint64_t finished;  ///< worker threads done (the evictors stop when all are)
  std::uint64_t writers_done;
  std::uint64_t readers_done;
  std::uint64_t evictors_done;  ///< evictor lanes
  std::uint64_t pages_dropped;
  std::uint64_t frames_dropped;
  std::uint64_t logged;
  bad_access first[logged_max];

  BAM_HD void note(role who, std::uint64_t index, std::uint64_t expected, std::uint64_t got,
                   io_status s) {
    // relaxed: counts and the claim of a log entry; the entry itself is read after the launch.
    atomic_ref<std::uint64_t, scope::system>(s.ok() ? wrong : failed).fetch_add(1, order::relaxed);
    if (s.ok()) {
      std::uint64_t& by_role = who == role::reader             ? wrong_reader
                               : who == role::writer_read_back ? wrong_read_back
                                                               : wrong_verifier;
      atomic_ref<std::uint64_t, scope::system>(by_role).fetch_add(1, order::relaxed);
    }
    const std::uint64_t n =
        atomic_ref<std::uint64_t, scope::system>(logged).fetch_add(1, order::relaxed);
    if (n < logged_max) first[n] = bad_access{index, expected, got, s.bits(), who};
  }
  BAM_HD void add(std::uint64_t& counter, std::uint64_t by) {
    // relaxed: a total; the host's looks during the launch need no order with anything else.
    if (by != 0) atomic_ref<std::uint64_t, scope::system>(counter).fetch_add(by, order::relaxed);
  }
};

/// Whether `v`, read at element `i`, is one a failed store may have left: `i` is even, its
/// store failed (`store_failed[i / 2]`, set by its writer) and `v` is the pattern or the
/// written value. Such a read is counted, not checked.
BAM_HD inline bool left_by_failed_store(const std::uint8_t* store_failed, std::uint64_t i,
                                        std::uint64_t v) {
  return i % 2 == 0 && store_failed[i / 2] != 0 &&
         (v == written_word(i) || v == pattern_word(i * 8));
}

/// One thread's count of accesses, added to a report counter every progress_step of them and
/// when it is destroyed.
class tally {
 public:
  BAM_HD tally(report* out, std::uint64_t& counter) : out_(out), counter_(&counter) {}
  BAM_HD ~tally() { flush(); }
  tally(const tally&) = delete;
  tally& operator=(const tally&) = delete;
  BAM_HD void operator++() {
    if (++n_ == progress_step) flush();
  }
  BAM_HD void flush() {
    out_->add(*counter_, n_);
    n_ = 0;
  }

 private:
  report* out_;
  std::uint64_t* counter_;
  std::uint64_t n_ = 0;
};

/// The stress launch. Roles go by warp, as an application's would: the first `evictor_warps`
/// warps drop random pages and frames until every other thread is done; the remaining warps
/// alternate between writers and readers. Writer w owns the even elements 2 (w + k W) (a
/// writer warp's stores share a line; step k of all writers covers one window of the array),
/// stores them all, then reads them back after the cache has moved on. A reader warp reads
/// runs of odd elements, which nobody writes, from random starts: one run per warp, or on odd
/// rounds two (odd lanes elsewhere), so lanes form one or two groups per access.
struct stress_launch {
  array_ref<std::uint64_t> a;
  page_cache_ref cache;
  report* out;
  std::uint64_t lanes;
  std::uint64_t evictor_warps;
  std::uint64_t writers;  ///< writer threads
  std::uint64_t workers;  ///< writer and reader threads
  std::uint32_t rounds;   ///< runs per reader warp
  std::uint64_t seed;
  std::uint64_t evict_for_ns;
  std::uint8_t* store_failed;  ///< one byte per even element: its store failed

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t warp = t.id / lanes;
    const std::uint64_t lane = t.id % lanes;
    if (warp < evictor_warps) {
      evict(t.id);
      return;
    }
    const std::uint64_t w = warp - evictor_warps;
    if (w % 2 == 0) {
      write_then_read_back(w / 2 * lanes + lane);
      out->add(out->writers_done, 1);
    } else {
      read_unwritten(w / 2, lane);
      out->add(out->readers_done, 1);
    }
    out->add(out->finished, 1);
  }

  BAM_HD void write_then_read_back(std::uint64_t writer) const {
    {
      tally stores(out, out->writes);
      for (std::uint64_t i = 2 * writer; i < a.size(); i += 2 * writers) {
        const io_status s = a.try_store(i, written_word(i));
        ++stores;
        if (!s.ok()) {
          out->note(role::writer_store, i, written_word(i), 0, s);
          store_failed[i / 2] = 1;  // read by this thread, and by the verify launch after it
        }
      }
    }
    tally reads(out, out->reads);
    for (std::uint64_t i = 2 * writer; i < a.size(); i += 2 * writers) {
      std::uint64_t v = 0;
      const io_status s = a.try_read(i, v);
      ++reads;
      if (s.ok() && left_by_failed_store(store_failed, i, v)) {
        out->add(out->unverified, 1);
        continue;
      }
      if (!s.ok() || v != written_word(i))
        out->note(role::writer_read_back, i, written_word(i), v, s);
    }
  }

  BAM_HD void read_unwritten(std::uint64_t reader_warp, std::uint64_t lane) const {
    const std::uint64_t span = 2 * lanes * reads_per_run;  // elements one run covers
    tally reads(out, out->reads);
    for (std::uint32_t r = 0; r < rounds; ++r) {
      // The same hash in every lane of the warp (pattern_word is a good mixer).
      const std::uint64_t key = (reader_warp * rounds + r) * 2;
      const bool elsewhere = r % 2 == 1 && lane % 2 == 1;
      const std::uint64_t start =
          pattern_word(seed ^ (key + (elsewhere ? 1 : 0))) % (a.size() - span);
      const std::uint64_t first = start | 1u;  // odd: never written
      for (std::uint32_t j = 0; j < reads_per_run; ++j) {
        const std::uint64_t i = first + 2 * (lane + lanes * j);
        std::uint64_t v = 0;
        const io_status s = a.try_read(i, v);
        ++reads;
        if (!s.ok() || v != pattern_word(i * 8))
          out->note(role::reader, i, pattern_word(i * 8), v, s);
      }
    }
  }

  BAM_HD void evict(std::uint64_t id) const {
    const dense_cache_ref dense(cache);
    const std::uint32_t frames = dense.pool().geometry.frames;
    const deadline stop = deadline::after_ns(evict_for_ns);
    backoff gap(drop_gap_ns, drop_gap_ns);
    std::uint64_t pages = 0, whole = 0;
    // relaxed: a progress count; the drops themselves order what they touch.
    for (std::uint64_t k = 0;
         atomic_ref<std::uint64_t, scope::system>(out->finished).load(order::relaxed) < workers &&
         !stop.expired();
         ++k) {
      const std::uint64_t h = pattern_word(seed ^ (id << 32) ^ k);
      if (h % 4 == 0) {
        whole += dense.drop_frame(static_cast<std::uint32_t>((h >> 8) % frames)) ? 1 : 0;
      } else {
        pages += dense.drop_page(a.slot(), (h >> 8) % a.slot().pages) ? 1 : 0;
      }
      gap.pause();
      if (k % progress_step == progress_step - 1) {  // the host sees the evictors at work
        out->add(out->pages_dropped, pages);
        out->add(out->frames_dropped, whole);
        pages = whole = 0;
      }
    }
    out->add(out->pages_dropped, pages);
    out->add(out->frames_dropped, whole);
    out->add(out->evictors_done, 1);
  }
};

/// Every element read once, warp-contiguous, while the frames turn over once more: the
/// written values came back from storage after their frames were evicted.
struct verify_launch {
  array_ref<std::uint64_t> a;
  report* out;
  const std::uint8_t* store_failed;
  BAM_HD void operator()(thread_index t) const {
    {
      tally reads(out, out->reads);
      for (std::uint64_t i = t.id; i < a.size(); i += t.count) {
        std::uint64_t v = 0;
        const io_status s = a.try_read(i, v);
        ++reads;
        if (s.ok() && left_by_failed_store(store_failed, i, v)) {
          out->add(out->unverified, 1);
          continue;
        }
        if (!s.ok() || v != final_word(i)) out->note(role::verifier, i, final_word(i), v, s);
      }
    }
    out->add(out->finished, 1);
  }
};

void warm_up_kernels(gpu_runtime& rt) {
  rt.preload({kernel_function<stress_launch>(), kernel_function<verify_launch>()});
  rt.warm_up([](stream_handle s) {
    warm_up_launch<stress_launch>(s);
    warm_up_launch<verify_launch>(s);
  });
}

struct stress_case {
  pinning_kind pinning;
  cache_mode mode;
  std::uint32_t line_bytes;
  std::uint64_t frame_bytes;  ///< as configured; small caches halve it (frame_geometry.hpp)
};

// Each pinning kind meets both modes and both geometries: 2 MiB frames of 4 KiB lines (the
// default frame, bitmaps of several words), and 64 KiB frames of 512 B lines (many frames).
constexpr stress_case cases[] = {
    {pinning_kind::frame_pins, cache_mode::optimized, 4096, 2ull << 20},
    {pinning_kind::frame_pins, cache_mode::naive, 512, 64ull << 10},
    {pinning_kind::epochs, cache_mode::optimized, 512, 64ull << 10},
    {pinning_kind::epochs, cache_mode::naive, 4096, 2ull << 20},
};

/// This program's options beside gpu_test's.
struct stress_options {
  std::uint32_t grid = 0;  ///< blocks of every launch; 0: the shape's
  std::chrono::seconds stall{60};
  std::uint32_t stop_poll_us = 0;  ///< 0: the storage default
  bool device_image = false;       ///< --image device (gpu_kernel placement)
  bool device_reports = false;     ///< --reports device
  std::uint32_t fill_percent = 0;  ///< --fill-percent (cache_config::fill_percent)
  bool base_first = false;         ///< --base-first (cache_config::base_first)
};

struct shape {
  std::uint32_t grid;
  std::uint32_t block;
  std::uint32_t rounds;  ///< runs per reader warp
};

shape shape_for(controller_placement p, bool small, const stress_options& so) {
  shape s{264, 256, 8};
  if (small) {
    s = {8, 128, 4};
  } else if (p == controller_placement::host_thread) {
    s = {64, 256, 8};  // a host thread serves every command there (one CUDA copy each)
  }
  // The gpu_kernel shape: 264 x 256 = 67,584 threads, 2 blocks per SM of the H200's 132 (all
  // resident at once if registers allow) = 2,112 warps, so the cache has 2 x 2,112 = 4,224
  // lines (lines_for) and half of them, 2,112 lines, are frames:
  // - 4 KiB lines: 2 MiB frames would be 4, under min_frames (8), so 8 frames of 1 MiB; 32 MiB
  //   of data in 32 pieces; 33,792 writers store 2 M even elements, 62 each.
  // - 512 B lines: 16 frames of 64 KiB; 4 MiB in 64 pieces; under 8 stores per writer.
  // Writers sweep every piece, so either way there are at least 32 reservations of at most 16
  // frames and every frame is evicted at least once per sweep. The previous 1,024 blocks gave
  // 4x the data (128 MiB, 64 pieces) and 4x the writers (262,144 threads, more than one SM
  // round) for the same 16 frames, and did not finish within 100 s.
  if (so.grid != 0) s.grid = so.grid;
  return s;
}

/// A writable array's launch needs two lines per warp it runs (array::ref_for_launch); at
/// least 256 lines, so that even the small run has frames of several lines.
std::uint64_t lines_for(const shape& s) {
  const std::uint64_t warps = std::uint64_t{s.grid} * s.block / 32;
  return std::max<std::uint64_t>(2 * warps, 256);
}

storage_config storage_for(controller_placement p, const stress_options& so) {
  storage_config c = dense_test_storage(p);
  if (so.stop_poll_us != 0) c.controller.stop_poll_ns = std::uint64_t{so.stop_poll_us} * 1000;
  return c;
}

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, v);
  return text;
}

/// Fails on any bad access of a launch and prints the first ones.
void expect_clean(checker& c, const report& r, const std::string& what) {
  c.equal(r.wrong, std::uint64_t{0}, what + ": elements read with wrong bytes");
  c.equal(r.failed, std::uint64_t{0}, what + ": accesses that failed");
  const std::uint64_t shown = std::min<std::uint64_t>(r.logged, logged_max);
  for (std::uint64_t n = 0; n < shown; ++n) {
    const bad_access& b = r.first[n];
    const io_status s = io_status::from_bits(b.status);
    std::string line = what + ": element " + std::to_string(b.index) + " (" + role_name(b.who) +
                       "): expected " + hex(b.expected);
    line += s.ok() ? ", got " + hex(b.got) : ", failed: " + std::string(s.name());
    std::fprintf(stderr, "  %s\n", line.c_str());
  }
  if (r.logged > shown) {
    std::fprintf(stderr, "  %s: %" PRIu64 " more not shown\n", what.c_str(), r.logged - shown);
  }
}

/// After flush, the image holds the written even elements and the pattern's odd ones.
void expect_image(checker& c, gpu_runtime& rt, const backing_store& image, std::uint64_t elements,
                  const std::vector<std::uint8_t>& store_failed, const std::string& what) {
  std::vector<std::uint64_t> copy;  // a GPU-memory image, brought out to compare
  const auto* words = reinterpret_cast<const std::uint64_t*>(image.data());
  if (image.kind() == memory_kind::device) {
    copy.resize(elements);
    copy_beside(rt, copy.data(), image.data(), elements * sizeof(std::uint64_t),
                "copying the image out");
    words = copy.data();
  }
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < elements; ++i) {
    if (words[i] == final_word(i)) continue;
    if (left_by_failed_store(store_failed.data(), i, words[i])) continue;
    if (differ++ < logged_max) {
      std::fprintf(stderr, "  %s: image element %" PRIu64 ": expected %s, got %s\n", what.c_str(),
                   i, hex(final_word(i)).c_str(), hex(words[i]).c_str());
    }
  }
  c.equal(differ, std::uint64_t{0}, what + ": image elements differing after flush");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A counter of the report (an alias: nvcc's host code would put a spelled-out member pointer
/// in parentheses, which GCC warns about).
using report_counter = std::uint64_t report::*;

/// A counter of a running launch's report the host shows, and how far it should get (0: no
/// known end). Counters that `move` are progress; the evictors' drops are not (they go on
/// while every worker is stuck).
struct gauge {
  const char* name;
  report_counter counter;
  std::uint64_t expected;
  bool moves;
};

/// Where the two launches' reports live. Pinned (mapped host memory): the host reads them in
/// place, and every count the GPU adds is a system-scope atomic on host memory. Device: GPU
/// memory, which the host copies out on a stream of its own to look. Host-memory traffic of
/// any warp makes every `fence.sc` on the GPU slow (docs/results.md, "The stop poll"), and an
/// epochs reader fences on every announcement, so the pinned home can slow that case down.
class report_home {
 public:
  report_home(bool device, gpu_runtime& rt) : device_(device), rt_(&rt) {
    if (device_) {
      gpu_ = device_memory(2 * sizeof(report));
      const std::vector<std::uint8_t> zeros(2 * sizeof(report), 0);
      copy_beside(rt, gpu_.data(), zeros.data(), zeros.size(), "zeroing the reports");
      copier_ = owned_stream::create_non_blocking();  // the looks while a launch runs
      staging_ = pinned_memory(sizeof(report));
    } else {
      mapped_ = pinned_memory(2 * sizeof(report));  // zero-filled
    }
  }
  /// Report `k` (0: stress, 1: verify) as the kernels address it.
  [[nodiscard]] report* kernel_view(int k) const {
    return (device_ ? gpu_.as<report>() : mapped_.as<report>()) + k;
  }
  /// Report `k` now. While a launch runs the log entries may still be filling in.
  [[nodiscard]] report snapshot(int k) const {
    report r{};
    if (device_) {
      copy_async(staging_.data(), kernel_view(k), sizeof(report), copier_.get());
      rt_->synchronize(copier_.get(), 0, "copying a report out");
      std::memcpy(&r, staging_.data(), sizeof(report));
      return r;
    }
    report& live = *kernel_view(k);
    // relaxed: progress looks; the GPU adds with system-scope atomics.
    for (report_counter f :
         {&report::reads, &report::writes, &report::wrong, &report::failed, &report::wrong_reader,
          &report::wrong_read_back, &report::wrong_verifier, &report::unverified, &report::finished,
          &report::writers_done, &report::readers_done, &report::evictors_done,
          &report::pages_dropped, &report::frames_dropped, &report::logged}) {
      r.*f = atomic_ref<std::uint64_t, scope::system>(live.*f).load(order::relaxed);
    }
    std::memcpy(r.first, live.first, sizeof r.first);  // best effort, as said
    return r;
  }
  [[nodiscard]] const char* where() const { return device_ ? "GPU memory" : "mapped host memory"; }

 private:
  bool device_;
  gpu_runtime* rt_;
  pinned_memory mapped_;
  device_memory gpu_;
  owned_stream copier_;
  pinned_memory staging_;
};

std::string describe(const report& r, std::span<const gauge> gauges, bool unfinished_only) {
  std::string line;
  for (const gauge& g : gauges) {
    const std::uint64_t v = r.*g.counter;
    if (unfinished_only && (g.expected == 0 || v >= g.expected)) continue;
    if (!line.empty()) line += ", ";
    line += g.name;
    line += ' ';
    line += std::to_string(v);
    if (g.expected != 0) {
      line += '/';
      line += std::to_string(g.expected);
    }
  }
  return line;
}

/// Waits for the launch on the runtime's stream, printing report `k`'s counters every
/// progress_period. When no counter that `moves` has changed for `stall` (or the launch passed
/// launch_bound_ns), prints what is unfinished and the first bad accesses, and ends the
/// process: a running kernel can be neither stopped nor freed (a free waits for it), so
/// std::_Exit after flushing is the only way out of a test binary that would otherwise hang.
void watch_launch(checker& c, gpu_runtime& rt, const report_home& home, int k,
                  std::span<const gauge> gauges, const std::string& what,
                  std::chrono::seconds stall, const std::function<std::string()>& explain) {
  using clock = std::chrono::steady_clock;
  const clock::time_point began = clock::now();
  clock::time_point moved = began, next_line = began + progress_period;
  std::vector<std::uint64_t> last(gauges.size(), 0);
  std::uint64_t printed = 0;  // bad accesses of the log shown so far
  for (;;) {
    const cudaError_t e = cudaStreamQuery(rt.stream());
    if (e != cudaErrorNotReady) break;  // done, or failed: the checked wait below tells
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const clock::time_point now = clock::now();
    const report r = home.snapshot(k);
    for (std::size_t i = 0; i < gauges.size(); ++i) {
      const std::uint64_t v = r.*gauges[i].counter;
      if (gauges[i].moves && v != last[i]) moved = now;
      last[i] = v;
    }
    if (now >= next_line) {
      next_line += progress_period;
      c.note(what + " at " + std::to_string(static_cast<int>(seconds_since(began))) +
             " s: " + describe(r, gauges, false) + (explain ? "; " + explain() : ""));
      // The first bad accesses as they come (an entry may still be filling in: best effort).
      for (; printed < std::min<std::uint64_t>(r.logged, logged_max); ++printed) {
        const bad_access& b = r.first[printed];
        const io_status st = io_status::from_bits(b.status);
        std::fprintf(stderr, "  %s: element %" PRIu64 " (%s): expected %s, %s\n", what.c_str(),
                     b.index, role_name(b.who), hex(b.expected).c_str(),
                     st.ok() ? ("got " + hex(b.got)).c_str() : st.name());
      }
    }
    const bool stalled = now - moved > stall;
    if (!stalled &&
        now - began < std::chrono::nanoseconds(static_cast<std::int64_t>(launch_bound_ns)))
      continue;
    c.expect(false, what +
                        (stalled ? " made no progress for " + std::to_string(stall.count()) + " s"
                                 : " passed its bound of " +
                                       std::to_string(launch_bound_ns / 1'000'000'000) + " s") +
                        " after " + std::to_string(static_cast<int>(seconds_since(began))) +
                        " s; unfinished: " + describe(r, gauges, true) +
                        "; all: " + describe(r, gauges, false));
    const std::uint64_t shown = std::min<std::uint64_t>(r.logged, logged_max);
    for (std::uint64_t n = 0; n < shown; ++n) {
      const bad_access& b = r.first[n];
      std::fprintf(stderr, "  %s: element %" PRIu64 " (%s): %s\n", what.c_str(), b.index,
                   role_name(b.who), io_status::from_bits(b.status).name());
    }
    if (explain) std::fprintf(stderr, "  %s: %s\n", what.c_str(), explain().c_str());
    exit_without_cleanup(rt, what);
  }
  wait_or_exit(c, rt, what, launch_bound_ns);  // at once; a failed launch ends the process
}

void run_case(checker& c, controller_placement placement, const options& o,
              const stress_options& so, const stress_case& k) {
  const std::string what = std::string(name(placement)) + " " + to_string(k.pinning) + " " +
                           to_string(k.mode) + " line=" + std::to_string(k.line_bytes);
  guarded(c, what, [&] {
    gpu_runtime rt(test_runtime_config());
    if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
    const shape s = shape_for(placement, o.small, so);
    const cache_config config{.line_bytes = k.line_bytes,
                              .capacity_bytes = lines_for(s) * k.line_bytes,
                              .mode = k.mode,
                              // Longer than gpu_cache_stress's: an epochs eviction waits
                              // for a scan of every reader slot of the GPU.
                              .victim_timeout_ns = 20'000'000'000ull,
                              .translation = translation_kind::two_level,
                              .pinning = k.pinning,
                              .frame_bytes = k.frame_bytes,
                              .frame_percent = 50,
                              .fill_percent = so.fill_percent,
                              .base_first = so.base_first,
                              .check_frame_owners = true};
    page_cache cache(config, rt);
    const std::uint32_t lanes = cache.warp_width();
    const cache::mosaic::frame_geometry g = cache.ref().frames().geometry;
    const std::uint64_t data = data_per_pool * g.frames * g.frame_bytes;
    // A GPU-memory image keeps the controller's data copies off PCIe (gpu_kernel only: a host
    // thread's copies need host memory on one side).
    const bool device_image = so.device_image && placement == controller_placement::gpu_kernel;
    auto image = pattern_image(data, device_image ? memory_kind::device : memory_kind::pinned, rt);
    emulated_storage ssd(storage_for(placement, so), image, &rt);
    array<std::uint64_t> a(cache, ssd.ref(), {.name = "dense", .dense = true});
    const report_home reports(so.device_reports, rt);
    report* const stressed = reports.kernel_view(0);
    report* const verified = reports.kernel_view(1);
    const std::uint64_t evens = (a.size() + 1) / 2;
    const device_memory store_failed(evens);
    {
      const std::vector<std::uint8_t> zeros(evens, 0);
      copy_beside(rt, store_failed.data(), zeros.data(), evens, "zeroing the failed-store flags");
    }
    warm_up_kernels(rt);
    int resident_blocks = 0;  // per SM, for reading the timings
    BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident_blocks, kernel_function<stress_launch>(), static_cast<int>(s.block), 0));
    stop_guard stop(rt);
    rt.start();

    const array_ref<std::uint64_t> ref = a.ref_for_launch(s.grid, s.block);
    if (!c.expect(ref.slot().large_table != nullptr && !ref.reads_through(),
                  what + ": the array goes through frames")) {
      return;
    }
    const std::uint64_t threads = std::uint64_t{s.grid} * s.block;
    const std::uint64_t warps = threads / lanes;
    const std::uint64_t evictor_warps = 1;
    const std::uint64_t worker_warps = warps - evictor_warps;
    const std::uint64_t writers = (worker_warps + 1) / 2 * lanes;
    const std::uint64_t readers = worker_warps * lanes - writers;
    c.note(what + ": " + std::to_string(s.grid) + " x " + std::to_string(s.block) + " = " +
           std::to_string(threads) + " threads (" + std::to_string(writers) + " writers, " +
           std::to_string(resident_blocks) + " blocks per SM resident), " +
           std::to_string(g.frames) + " frames of " + std::to_string(g.frame_bytes >> 10) +
           " KiB, " + std::to_string(data >> 10) + " KiB of data (" +
           std::to_string(data / g.frame_bytes) + " pieces); image in " +
           (device_image ? "GPU memory" : "pinned host memory") + ", reports in " +
           reports.where() + "; " + ssd.describe());

    const gauge stress_gauges[] = {
        {"writes", &report::writes, (a.size() + 1) / 2, true},
        {"reads", &report::reads, (a.size() + 1) / 2 + readers * s.rounds * reads_per_run, true},
        {"writers done", &report::writers_done, writers, true},
        {"readers done", &report::readers_done, readers, true},
        {"evictor lanes done", &report::evictors_done, evictor_warps * lanes, true},
        {"pages dropped", &report::pages_dropped, 0, false},
        {"frames dropped", &report::frames_dropped, 0, false},
        {"wrong", &report::wrong, 0, true},
        {"of them reader", &report::wrong_reader, 0, true},
        {"read-back", &report::wrong_read_back, 0, true},
        {"failed", &report::failed, 0, true},
        {"unverified", &report::unverified, 0, true}};
    auto t0 = std::chrono::steady_clock::now();
    launch(rt.stream(), s.grid, s.block,
           stress_launch{ref, cache.ref(), stressed, lanes, evictor_warps, writers,
                         worker_warps * lanes, s.rounds, 0x5eed0000ull + k.line_bytes,
                         launch_bound_ns, store_failed.as<std::uint8_t>()});
    // Under epochs: grace periods begun and proved, and which reader slot (SM, warp slot, lane)
    // a grace period that waited long waited on, with the slot of the thread that waited.
    const page_cache_ref view = cache.ref();  // frames() refers into it
    const auto epoch_words = [&]() -> std::string {
      // The array's statistics, summed over its shards (a side-stream copy: the launch runs).
      const stats_ref st = ref.slot().stats;
      std::vector<stat_shard> shards(st.count);
      copy_beside(rt, shards.data(), st.shards, sizeof(stat_shard) * st.count,
                  "copying the statistics out");
      cache_stats sum;
      for (const stat_shard& sh : shards) sum += sh.counters;
      const std::string counts = std::to_string(sum.coalesces) + " reservations, " +
                                 std::to_string(sum.evictions) + " frame evictions, " +
                                 std::to_string(sum.misses) + " misses";
      const cache::mosaic::frame_pool_view& f = view.frames();
      if (f.epoch_scan == nullptr) return counts;
      std::uint64_t words[cache::mosaic::epoch_scan_words] = {}, epoch = 0;
      copy_beside(rt, words, f.epoch_scan, sizeof words, "copying the epoch words out");
      copy_beside(rt, &epoch, f.epoch, sizeof epoch, "copying the epoch out");
      std::string line = counts + "; epoch " + std::to_string(epoch) + ", proved quiet " +
                         std::to_string(words[cache::mosaic::epoch_quiet_word]) +
                         (words[cache::mosaic::epoch_scanning_word] != 0 ? ", a scan running" : "");
      const std::uint64_t scans = words[cache::mosaic::epoch_scans_word];
      if (scans != 0) {
        char cost[160];
        std::snprintf(cost, sizeof cost,
                      "; %" PRIu64
                      " scans, %.2f ms, %.1f chunk passes and %.1f chunks by helpers each",
                      scans,
                      static_cast<double>(words[cache::mosaic::epoch_scan_ns_word]) / 1e6 /
                          static_cast<double>(scans),
                      static_cast<double>(words[cache::mosaic::epoch_scan_passes_word]) /
                          static_cast<double>(scans),
                      static_cast<double>(words[cache::mosaic::epoch_helped_word]) /
                          static_cast<double>(scans));
        line += cost;
      }
      const std::uint64_t on = words[cache::mosaic::epoch_stalled_word];
      const std::uint64_t by = words[cache::mosaic::epoch_stalled_by_word];
      if (on == 0) return line + "; no scan waited over 100 ms";
      const auto where = [](std::uint64_t slot) {
        return std::to_string(slot) + " (SM " + std::to_string(slot / 2048) + ", warp slot " +
               std::to_string(slot / 32 % 64) + ", lane " + std::to_string(slot % 32) + ")";
      };
      const bool mates = by != 0 && (on - 1) / 32 == (by - 1) / 32;
      return line + "; a scan waited over 100 ms on reader slot " + where(on - 1) +
             ", scanned by slot " + (by == 0 ? std::string("?") : where(by - 1)) +
             (mates ? ": the same warp" : "");
    };
    watch_launch(c, rt, reports, 0, stress_gauges, what + ": stress launch", so.stall, epoch_words);
    const double stress_s = seconds_since(t0);
    const cache_stats during = a.stats();
    const report r1 = reports.snapshot(0);  // the launch is over: all of it
    expect_clean(c, r1, what + ": stress launch");
    c.equal(r1.writes, (a.size() + 1) / 2, what + ": stores made (every even element once)");
    c.equal(r1.finished, worker_warps * lanes, what + ": worker threads finished");
    // More pieces given a frame than there are frames: frames were evicted and reserved again
    // for other pieces while the readers ran.
    const std::string reserved = std::to_string(during.coalesces) + " reservations of " +
                                 std::to_string(g.frames) + " frames";
    // Under base first pieces start on base pages and are promoted once dense enough, which
    // the verify launch's sweep makes every piece (checked below, over both launches).
    if (!so.base_first) {
      c.expect(during.coalesces > g.frames, what + ": frames reserved again (" + reserved + ")");
    }
    c.expect(during.evictions > 0, what + ": frames evicted during the stress launch");

    const gauge verify_gauges[] = {{"reads", &report::reads, a.size(), true},
                                   {"threads done", &report::finished, threads, true},
                                   {"wrong", &report::wrong, 0, true},
                                   {"failed", &report::failed, 0, true},
                                   {"unverified", &report::unverified, 0, true}};
    t0 = std::chrono::steady_clock::now();
    launch(rt.stream(), s.grid, s.block,
           verify_launch{ref, verified, store_failed.as<std::uint8_t>()});
    watch_launch(c, rt, reports, 1, verify_gauges, what + ": verify launch", so.stall, epoch_words);
    const double verify_s = seconds_since(t0);
    const report r2 = reports.snapshot(1);
    expect_clean(c, r2, what + ": verify launch");
    c.equal(r2.reads, a.size(), what + ": elements verified");
    a.flush();
    rt.check();
    rt.stop();

    const cache_stats st = a.stats();
    c.equal(st.accesses, r1.reads + r1.writes + r2.reads, what + ": accesses counted");
    if (so.base_first) c.expect(st.promotions > 0, what + ": pieces promoted from base pages");
    c.equal(st.accesses, st.hits + st.misses + st.coalesced,
            what + ": accesses = hits + misses + coalesced");
    expect_frames_at_rest(c, rt, cache, a, ref.slot().frames_held, what);
    try {
      a.check();
    } catch (const std::exception& e) {
      c.expect(false, what + ": " + e.what());
    }
    expect_image(c, rt, *image, a.size(),
                 download(rt, store_failed.as<std::uint8_t>(), static_cast<std::size_t>(evens)),
                 what);
    c.note(what + ": stress " + std::to_string(stress_s) + " s, verify " +
           std::to_string(verify_s) + " s; " + std::to_string(st.accesses) +
           " accesses, hit rate " + std::to_string(st.hit_rate()) + ", " +
           std::to_string(st.coalesces) + " frame reservations (" + std::to_string(st.promotions) +
           " promotions), " + std::to_string(st.evictions) + " frame evictions, " +
           std::to_string(st.loads) + " loads, " + std::to_string(st.write_backs) +
           " write-backs; dropped " + std::to_string(r1.pages_dropped) + " pages and " +
           std::to_string(r1.frames_dropped) + " frames");
  });
}

/// Takes this program's options out of argv, leaving gpu_test's to parse().
stress_options take_stress_options(std::vector<char*>& args) {
  stress_options so;
  auto number = [&](std::size_t i) {
    if (i + 1 >= args.size()) throw input_error(std::string(args[i]) + " needs a number");
    char* end = nullptr;
    const unsigned long v = std::strtoul(args[i + 1], &end, 10);
    if (*end != '\0' || v == 0 || v > 1'000'000) {
      throw input_error(std::string(args[i]) + " needs a positive number, not '" + args[i + 1] +
                        "'");
    }
    return static_cast<std::uint32_t>(v);
  };
  for (std::size_t i = 1; i < args.size();) {
    const std::string a = args[i];
    if (a == "--grid") {
      so.grid = number(i);
    } else if (a == "--stall-s") {
      so.stall = std::chrono::seconds(number(i));
    } else if (a == "--controller-stop-poll-us") {
      so.stop_poll_us = number(i);
    } else if (a == "--fill-percent") {
      so.fill_percent = number(i);
    } else if (a == "--base-first") {
      so.base_first = true;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    } else if (a == "--image" || a == "--reports") {
      const std::string v = i + 1 < args.size() ? args[i + 1] : "";
      if (v != "device" && v != "pinned") throw input_error(a + " needs device or pinned");
      (a == "--image" ? so.device_image : so.device_reports) = v == "device";
    } else {
      ++i;
      continue;
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
               args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
  return so;
}

}  // namespace
}  // namespace bam::gpu_test

// Each case is guarded on its own (placement in its name), so BAM_GPU_TEST_ONLY=epochs picks
// the epochs cases of every placement.
int main(int argc, char** argv) {
  using namespace bam::gpu_test;
  checker c("gpu_mosaic_stress");
  try {
    std::vector<char*> args(argv, argv + argc);
    const stress_options so = take_stress_options(args);
    const options o = parse(static_cast<int>(args.size()), args.data());
    for (const bam::controller_placement p : o.placements) {
      for (const stress_case& k : cases) run_case(c, p, o, so, k);
    }
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
