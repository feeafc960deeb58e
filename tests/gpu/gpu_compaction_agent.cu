// The GPU compaction agent (bam/cache/mosaic/gpu_compaction_agent.hpp) beside GPU readers and
// writers, with the emulated controller running. A one-thread set-up launch splinters the sparse
// pieces of a dense array into several shared frames of its tenant (tests/support/
// compaction_workload.hpp, the workload the CPU stress test runs); then the agent starts on its
// own stream and a launch of readers and writers runs on the runtime's stream: hits on the
// splintered pieces, and a share of misses anywhere in the array that make loads, reservations,
// promotions, frame evictions and new splinters race with the agent's moves (the readers start
// once the agent has freed its first frame). The agent is stopped once the launch is done, a
// last launch reads every element, and after flush the image must hold exactly what was
// written. Both pinning kinds by default.
//
// Fails (exit 1) on a wrong or failed access, an image element that differs after flush, a
// frame pin, hold or reader announcement left behind, a frame count that drifted, a set-up that
// made fewer than two shared frames, or an agent that freed no frame before the readers started
// (it has the set-up's shared frames to itself then). An agent that does not stop within its
// bound ends the program at once (exit 2): its kernel can be neither stopped nor freed.
//
// Prints per case: the threads and frames, the shared frames the set-up made, progress every
// 5 s (the agent's counters while it runs), then "agent: P pieces moved, F frames freed, R
// steps retried, N passes, S sleeps; stop seen after T ms", the readers' reads, writes and bad
// accesses, and the cache's reservations, splinters, misses and bytes compacted.
//
// Run gpu_compaction_agent --help for the options.

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/mosaic/compaction_agent.hpp>
#include <bam/cache/mosaic/gpu_compaction_agent.hpp>

#include "compaction_workload.hpp"
#include "gpu_mosaic_support.cuh"
#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

using cache::mosaic::compaction_counts;
using cache::mosaic::gpu_compaction_agent;
namespace workload = bam::testing::compaction;

constexpr std::uint32_t line_bytes = 512;
constexpr std::uint32_t lines_per_frame = 64;  // 32 KiB frames: pieces of 64 pages
/// Bound on each launch; a launch that passes it ends the program with what it had done.
constexpr std::chrono::seconds launch_bound{120};
constexpr std::chrono::seconds progress_period{5};

const char* const usage =
    "usage: gpu_compaction_agent [options]\n"
    "  --placement gpu_kernel|host_thread  which controller serves the queues (gpu_kernel)\n"
    "  --pinning frame_pins|epochs|both     pinning kinds to run (both)\n"
    "  --frames N            frames of 32 KiB (64 lines of 512 B) in the cache (16; 8..64)\n"
    "  --grid BLOCKS         blocks of the readers' launch (128)\n"
    "  --block THREADS       threads per block (256)\n"
    "  --rounds N            accesses per reader or writer thread (64)\n"
    "  --writer-every N      every N-th warp writes, the others read (4; 0: no writers)\n"
    "  --miss-percent P      share of reads anywhere in the array rather than on the\n"
    "                        splintered pieces' pages (2)\n"
    "  --low-free-frames N   compact while at most N frames are free (default: the frame\n"
    "                        count, so the agent compacts whenever two shared frames merge)\n"
    "  --max-idle-us N       the agent's longest sleep when idle (200)\n"
    "  --stop-timeout-s N    how long stop() waits for the agent (default: the cache's victim\n"
    "                        timeout, 20 s, plus 10 s)\n"
    "  --image pinned|device where the emulated devices' image lives (device)\n"
    "  --plain-streams       no green contexts (the runtime's streams share SMs)\n"
    "  --help                this text\n"
    "Exit status: 0 pass, 1 a check failed, 2 a kernel (or the agent) did not finish.\n";

struct test_options {
  controller_placement placement = controller_placement::gpu_kernel;
  std::vector<pinning_kind> pinnings{pinning_kind::frame_pins, pinning_kind::epochs};
  std::uint32_t frames = 16;
  std::uint32_t grid = 128;
  std::uint32_t block = 256;
  std::uint32_t rounds = 64;
  std::uint32_t writer_every = 4;
  std::uint32_t miss_percent = 2;
  std::uint32_t low_free_frames = 0;  ///< 0: the frame count
  std::uint32_t max_idle_us = 200;
  std::uint32_t stop_timeout_s = 0;  ///< 0: the agent's default
  bool device_image = true;
  bool plain_streams = false;
};

/// Parses the command line; false after --help.
bool parse_options(int argc, char** argv, test_options& o) {
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw input_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto number = [&](int& i, std::uint32_t low, std::uint32_t high) {
    const std::string name = argv[i];
    const std::string v = value(i);
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < low || n > high) {
      throw input_error(name + " needs a number from " + std::to_string(low) + " to " +
                        std::to_string(high) + ", not '" + v + "'");
    }
    return static_cast<std::uint32_t>(n);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return false;
    } else if (a == "--placement") {
      const std::string v = value(i);
      if (v != "gpu_kernel" && v != "host_thread") {
        throw input_error("--placement must be gpu_kernel or host_thread");
      }
      o.placement =
          v == "gpu_kernel" ? controller_placement::gpu_kernel : controller_placement::host_thread;
    } else if (a == "--pinning") {
      const std::string v = value(i);
      if (v == "frame_pins") {
        o.pinnings = {pinning_kind::frame_pins};
      } else if (v == "epochs") {
        o.pinnings = {pinning_kind::epochs};
      } else if (v != "both") {
        throw input_error("--pinning must be frame_pins, epochs or both");
      }
    } else if (a == "--frames") {
      o.frames = number(i, 8, 64);
    } else if (a == "--grid") {
      o.grid = number(i, 1, 1'000'000);
    } else if (a == "--block") {
      o.block = number(i, 32, 1024);
    } else if (a == "--rounds") {
      o.rounds = number(i, 1, 1'000'000);
    } else if (a == "--writer-every") {
      o.writer_every = number(i, 0, 1'000'000);
    } else if (a == "--miss-percent") {
      o.miss_percent = number(i, 0, 100);
    } else if (a == "--low-free-frames") {
      o.low_free_frames = number(i, 0, 1'000'000);
    } else if (a == "--max-idle-us") {
      o.max_idle_us = number(i, 1, 1'000'000);
    } else if (a == "--stop-timeout-s") {
      o.stop_timeout_s = number(i, 1, 3600);
    } else if (a == "--image") {
      const std::string v = value(i);
      if (v != "device" && v != "pinned") throw input_error("--image must be device or pinned");
      o.device_image = v == "device";
    } else if (a == "--plain-streams") {
      o.plain_streams = true;
    } else {
      throw input_error("unknown option '" + a + "' (--help lists them)");
    }
  }
  if (o.block % 32 != 0) throw input_error("--block must be a multiple of 32");
  return true;
}

/// Three set-up rounds of pieces_per_round pieces, every touched piece's home page in its own
/// hosted slot (at most 63 pieces), over an array of twice the pieces touched.
workload::shape shape_for(const test_options& o) {
  workload::shape s;
  s.words_per_page = line_bytes / 8;
  s.pages_per_piece = lines_per_frame;
  s.shared_rounds = 3;
  s.pieces_per_round = std::min<std::uint32_t>(o.frames + 4, (lines_per_frame - 1) / 3);
  s.pieces = 2 * s.touched();
  return s;
}

/// Lines for `frames` frames at 50%, and at least two per warp of the readers' launch (a
/// writable array's launch needs them; array::ref_for_launch).
std::uint64_t lines_for(const test_options& o, std::uint32_t& frame_percent) {
  const std::uint64_t frame_lines = std::uint64_t{o.frames} * lines_per_frame;
  const std::uint64_t warps = std::uint64_t{o.grid} * o.block / 32;
  const std::uint64_t lines = std::max(2 * frame_lines, 2 * warps);
  frame_percent = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, frame_lines * 100 / lines));
  return lines;
}

/// The workload's image in `kind` memory (set-up only).
std::shared_ptr<backing_store> image_for(const workload::shape& s, memory_kind kind,
                                         gpu_runtime& rt) {
  auto image = backing_store::in_memory(s.words() * 8, kind);
  std::vector<std::uint64_t> words(s.words());
  for (std::uint64_t i = 0; i < words.size(); ++i) words[i] = workload::image_word(i);
  if (kind == memory_kind::device) {
    copy_beside(rt, image->data(), words.data(), s.words() * 8, "loading the image");
  } else {
    std::copy(words.begin(), words.end(), reinterpret_cast<std::uint64_t*>(image->data()));
  }
  return image;
}

std::string counts_line(const compaction_counts& k) {
  return std::to_string(k.pieces_moved) + " pieces moved, " + std::to_string(k.frames_freed) +
         " frames freed, " + std::to_string(k.retries) + " steps retried, " +
         std::to_string(k.passes) + " passes, " + std::to_string(k.sleeps) + " sleeps";
}

/// Fails on the report's bad accesses and prints the first ones.
void expect_clean(checker& c, const workload::report& r, const std::string& what) {
  c.equal(r.wrong, std::uint64_t{0}, what + ": elements read with wrong bytes");
  c.equal(r.failed, std::uint64_t{0}, what + ": accesses that failed");
  const std::uint64_t shown = std::min<std::uint64_t>(r.logged, workload::logged_max);
  for (std::uint64_t n = 0; n < shown; ++n) {
    const workload::bad_access& b = r.first[n];
    const io_status s = io_status::from_bits(b.status);
    std::fprintf(stderr,
                 "  %s: element %" PRIu64 ": expected 0x%016" PRIx64 ", %s 0x%016" PRIx64 "%s\n",
                 what.c_str(), b.index, b.expected, s.ok() ? "got" : "failed, read", b.got,
                 s.ok() ? "" : (std::string(" (") + s.name() + ")").c_str());
  }
}

/// Waits for the launch on the runtime's stream, printing the agent's counters every
/// progress_period; past launch_bound the program ends (a running kernel can be neither
/// stopped nor freed).
void watch(checker& c, gpu_runtime& rt, const gpu_compaction_agent& agent,
           const std::string& what) {
  using clock = std::chrono::steady_clock;
  const clock::time_point began = clock::now();
  clock::time_point next = began + progress_period;
  while (cudaStreamQuery(rt.stream()) == cudaErrorNotReady) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const clock::time_point now = clock::now();
    if (now >= next) {
      next += progress_period;
      c.note(what + " at " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - began).count()) +
             " s; agent: " + counts_line(agent.counts_now()));
    }
    if (now - began > launch_bound) {
      c.expect(false, what + " did not finish within " + std::to_string(launch_bound.count()) +
                          " s; agent: " + counts_line(agent.counts_now()));
      exit_without_cleanup(rt, what);
    }
  }
  wait_or_exit(c, rt, what);  // at once; a failed launch ends the process
}

/// After flush the image holds expected_word at every element.
void expect_image(checker& c, gpu_runtime& rt, const backing_store& image, const workload::shape& s,
                  const std::string& what) {
  std::vector<std::uint64_t> words(s.words());
  copy_beside(rt, words.data(), image.data(), s.words() * 8, "copying the image out");
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < words.size(); ++i) {
    if (words[i] == s.expected_word(i)) continue;
    if (differ++ < workload::logged_max) {
      std::fprintf(stderr,
                   "  %s: image element %" PRIu64 ": expected 0x%016" PRIx64 ", got 0x%016" PRIx64
                   "\n",
                   what.c_str(), i, s.expected_word(i), words[i]);
    }
  }
  c.equal(differ, std::uint64_t{0}, what + ": image elements differing after flush");
}

void warm_up_kernels(gpu_runtime& rt) {
  rt.preload({kernel_function<workload::build_shared_frames>(),
              kernel_function<workload::read_and_write>(),
              kernel_function<workload::verify_all>()});
  rt.warm_up([](stream_handle s) {
    warm_up_launch<workload::build_shared_frames>(s);
    warm_up_launch<workload::read_and_write>(s);
    warm_up_launch<workload::verify_all>(s);
  });
}

void run_case(checker& c, const test_options& o, pinning_kind k) {
  const std::string what = std::string(name(o.placement)) + " " + to_string(k);
  guarded(c, what, [&] {
    runtime_config rc = test_runtime_config();
    rc.green_contexts = !o.plain_streams;
    gpu_runtime rt(rc);
    if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
    const workload::shape s = shape_for(o);
    std::uint32_t frame_percent = 50;
    const std::uint64_t lines = lines_for(o, frame_percent);
    const cache_config config{.line_bytes = line_bytes,
                              .capacity_bytes = lines * line_bytes,
                              .mode = cache_mode::optimized,
                              .victim_timeout_ns = 20'000'000'000ull,
                              .translation = translation_kind::two_level,
                              .pinning = k,
                              .frame_bytes = std::uint64_t{lines_per_frame} * line_bytes,
                              .frame_percent = frame_percent,
                              .check_frame_owners = true};
    page_cache cache(config, rt);
    const cache::mosaic::frame_geometry g = cache.ref().frames().geometry;
    const bool device_image = o.device_image && o.placement == controller_placement::gpu_kernel;
    auto image = image_for(s, device_image ? memory_kind::device : memory_kind::pinned, rt);
    emulated_storage ssd(dense_test_storage(o.placement), image, &rt);
    array<std::uint64_t> a(cache, ssd.ref(), {.name = "splintered", .dense = true});
    // Three reports: set-up, readers and writers, verify. GPU memory, copied out after each.
    const device_memory reports(3 * sizeof(workload::report));
    {
      const std::vector<std::uint8_t> zeros(reports.bytes(), 0);
      copy_beside(rt, reports.data(), zeros.data(), zeros.size(), "zeroing the reports");
    }
    workload::report* const report_at = reports.as<workload::report>();
    auto report = [&](int n) { return download(rt, report_at + n, 1)[0]; };
    warm_up_kernels(rt);
    const std::uint32_t low = o.low_free_frames != 0 ? o.low_free_frames : g.frames;
    gpu_compaction_agent agent(rt, cache,
                               {.low_free_frames = low, .max_idle_ns = o.max_idle_us * 1000},
                               std::uint64_t{o.stop_timeout_s} * 1'000'000'000ull);
    stop_guard stop(rt);  // after the memory it must outlive, the agent's included
    rt.start();

    const array_ref<std::uint64_t> ref = a.ref_for_launch(o.grid, o.block);
    if (!c.expect(ref.slot().large_table != nullptr && !ref.reads_through(),
                  what + ": the array goes through frames")) {
      return;
    }
    c.note(what + ": " + std::to_string(o.grid) + " x " + std::to_string(o.block) +
           " threads, every " + std::to_string(o.writer_every) + "th warp writing, " +
           std::to_string(o.miss_percent) + "% reads anywhere; " + std::to_string(g.frames) +
           " frames of " + std::to_string(g.frame_bytes >> 10) + " KiB; " +
           std::to_string(s.pieces) + " pieces, " + std::to_string(s.touched()) +
           " touched by the set-up; agent compacts at <= " + std::to_string(low) +
           " free frames; " + (rt.green_contexts() ? "green contexts" : "plain streams") + "; " +
           ssd.describe());

    launch(rt.stream(), 1, 1, workload::build_shared_frames{ref, cache.ref(), s, report_at});
    wait_or_exit(c, rt, what + ": set-up launch", 120'000'000'000ull);
    const workload::report built = report(0);
    expect_clean(c, built, what + ": set-up");
    c.note(what + ": the set-up made " + std::to_string(built.shared_built) + " shared frames");
    if (!c.expect(built.shared_built >= 2, what + ": the set-up made at least two shared frames")) {
      return;
    }
    a.reset_stats();

    const auto t0 = std::chrono::steady_clock::now();
    agent.start();
    // Its first frame freed while nothing else runs (the set-up's shared frames merge at
    // once); the rest of its moves race with the readers and writers.
    compaction_counts first = agent.counts_now();
    for (int n = 0; n < 10'000 && first.frames_freed == 0; ++n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      first = agent.counts_now();
    }
    c.expect(
        first.frames_freed >= 1,
        what + ": the agent freed a frame before the readers started (" + counts_line(first) + ")");
    launch(rt.stream(), o.grid, o.block,
           workload::read_and_write{.a = ref,
                                    .s = s,
                                    .out = report_at + 1,
                                    .lanes = cache.warp_width(),
                                    .rounds = o.rounds,
                                    .writer_every = o.writer_every,
                                    .miss_percent = o.miss_percent,
                                    .seed = 0x5eedull + static_cast<std::uint64_t>(k)});
    watch(c, rt, agent, what + ": readers and writers");
    const double run_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto asked = std::chrono::steady_clock::now();
    compaction_counts counts;
    try {
      counts = agent.stop();
    } catch (const std::exception& e) {
      c.expect(false, what + ": " + e.what());
      exit_without_cleanup(rt, what + ": the compaction agent");
    }
    const double stop_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
    const cache_stats during = a.stats();
    const workload::report rw = report(1);
    expect_clean(c, rw, what + ": readers and writers");
    c.equal(rw.threads_done, std::uint64_t{o.grid} * o.block, what + ": threads finished");

    launch(rt.stream(), o.grid, o.block, workload::verify_all{ref, s, report_at + 2});
    wait_or_exit(c, rt, what + ": verify launch", 120'000'000'000ull);
    const workload::report verified = report(2);
    expect_clean(c, verified, what + ": verify");
    c.equal(verified.reads, s.words(), what + ": elements verified");
    a.flush();
    rt.check();
    rt.stop();

    expect_frames_at_rest(c, rt, cache, a, a.ref().slot().frames_held, what);
    try {
      a.check();
    } catch (const std::exception& e) {
      c.expect(false, what + ": " + e.what());
    }
    expect_image(c, rt, *image, s, what);
    char timing[96];
    std::snprintf(timing, sizeof timing, "; stop seen after %.2f ms; launch %.3f s", stop_ms,
                  run_s);
    c.note(what + ": agent: " + counts_line(counts) + timing);
    c.note(what + ": readers and writers: " + std::to_string(rw.reads) + " reads, " +
           std::to_string(rw.writes) + " writes, " + std::to_string(rw.wrong) + " wrong, " +
           std::to_string(rw.failed) + " failed; cache: " + std::to_string(during.coalesces) +
           " reservations, " + std::to_string(during.splinters) + " splinters, " +
           std::to_string(during.misses) + " misses, " +
           std::to_string(during.bytes_compacted >> 10) + " KiB compacted");
  });
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  using namespace bam::gpu_test;
  checker c("gpu_compaction_agent");
  try {
    test_options o;
    if (!parse_options(argc, argv, o)) return 0;
    for (const bam::pinning_kind k : o.pinnings) run_case(c, o, k);
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
