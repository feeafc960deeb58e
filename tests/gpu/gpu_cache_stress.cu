// The page cache and bam::array on GPU threads, against the GPU controller: reads under heavy
// eviction in every cache mode and both line sizes, writes then flush, injected media errors,
// tiny caches, one warp on a two-line cache. Each case checks the bytes against the generator
// and the statistics' identities; any mismatch fails the program.
//
//   gpu_cache_stress [--small]

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <bam/array.hpp>
#include <bam/platform/atomic.hpp>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

/// Counters a kernel fills: wrong bytes, failed accesses, accesses made.
struct tally {
  std::uint64_t wrong;
  std::uint64_t failed;
  std::uint64_t reads;
};

BAM_HD inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/// Random reads of 8-byte elements, each checked against the pattern.
struct random_reads {
  array_ref<const std::uint64_t> a;
  std::uint64_t per_thread;
  std::uint64_t seed;
  tally* out;
  BAM_HD void operator()(thread_index t) const {
    std::uint64_t wrong = 0, failed = 0;
    for (std::uint64_t k = 0; k < per_thread; ++k) {
      const std::uint64_t i = mix(seed ^ (t.id * per_thread + k)) % a.size();
      std::uint64_t v = 0;
      if (!a.try_read(i, v).ok()) {
        ++failed;
      } else if (v != pattern_word(i * 8)) {
        ++wrong;
      }
    }
    // relaxed: totals read by the host after the launch.
    atomic_ref<std::uint64_t>(out->wrong).fetch_add(wrong, order::relaxed);
    atomic_ref<std::uint64_t>(out->failed).fetch_add(failed, order::relaxed);
    atomic_ref<std::uint64_t>(out->reads).fetch_add(per_thread, order::relaxed);
  }
};

/// A sequential scan with a cursor (reference reuse): warp-contiguous elements.
struct cursor_scan {
  array_ref<const std::uint64_t> a;
  tally* out;
  BAM_HD void operator()(thread_index t) const {
    auto c = a.reader();
    std::uint64_t wrong = 0, reads = 0;
    for (std::uint64_t i = t.id; i < a.size(); i += t.count) {
      if (c[i] != pattern_word(i * 8)) ++wrong;
      ++reads;
    }
    c.drop();
    atomic_ref<std::uint64_t>(out->wrong).fetch_add(wrong, order::relaxed);  // relaxed: totals
    atomic_ref<std::uint64_t>(out->reads).fetch_add(reads, order::relaxed);
  }
};

/// Every thread writes its own elements: value = f(i).
struct disjoint_writes {
  array_ref<std::uint64_t> a;
  BAM_HD static std::uint64_t value(std::uint64_t i) { return ~i * 0x9e3779b97f4a7c15ull; }
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < a.size(); i += t.count) a.store(i, value(i));
  }
};

struct fixture {
  gpu_runtime& rt;
  pinned_memory tally_memory{sizeof(tally)};
  tally* counts() { return tally_memory.as<tally>(); }
  void clear() { *counts() = tally{}; }
};

void warm_up_kernels(gpu_runtime& rt) {
  rt.preload({kernel_function<random_reads>(), kernel_function<cursor_scan>(),
              kernel_function<disjoint_writes>()});
  rt.warm_up([](stream_handle s) {
    warm_up_launch<random_reads>(s);
    warm_up_launch<cursor_scan>(s);
    warm_up_launch<disjoint_writes>(s);
  });
}

/// Capacity for a launch of `threads` over `data` bytes: `data / divisor`, raised to the two
/// lines per warp a launch needs to be served by the cache rather than read through (the data
/// still exceeds it, so the cache evicts).
std::uint64_t capacity_for(std::uint64_t data, std::uint64_t divisor, std::uint32_t line,
                           std::uint64_t threads) {
  const std::uint64_t needed = 2 * ((threads + 31) / 32) * line;
  return std::max(data / divisor, needed);
}

/// A victim search gives up after 5 s here (30 s by default): a cache that cannot make progress
/// fails its reads quickly, naming the reason, instead of looking hung.
cache_config short_waits(cache_config c) {
  c.victim_timeout_ns = 5'000'000'000ull;
  return c;
}

storage_config gpu_storage(std::uint32_t devices) {
  storage_config c;
  c.devices = devices;
  c.queues_per_device = 32;
  c.queue_depth = 256;
  c.model = device_model::unlimited();
  c.placement = controller_placement::gpu_kernel;
  c.timeout_ns = 5'000'000'000ull;  // short: a stuck access fails fast, with its reason
  return c;
}

/// Checks the statistics' identities of one array (with no failed access).
void check_stats(checker& c, const cache_stats& s, const std::string& what) {
  c.expect(s.loads <= s.misses, what + ": loads <= misses");
  c.equal(s.accesses, s.hits + s.misses + s.coalesced + s.reused + s.read_through,
          what + ": accesses = probes + coalesced + reused + read-through");
  c.equal(s.io_commands(), s.loads + s.write_backs + s.read_through, what + ": I/O commands");
}

// Reads in every mode and line size under heavy eviction.
void reads_case(checker& c, bool small) {
  for (const cache_mode mode : {cache_mode::optimized, cache_mode::naive, cache_mode::none}) {
    for (const std::uint32_t line : {512u, 4096u}) {
      const std::string what =
          std::string("reads mode=") + to_string(mode) + " line=" + std::to_string(line);
      guarded(c, what, [&] {
        gpu_runtime rt(test_runtime_config());
        const std::uint64_t data = small ? (8ull << 20) : (64ull << 20);
        const std::uint32_t grid = small ? 8 : 264, block = 256;
        auto image = pattern_image(data, memory_kind::pinned, rt);
        emulated_storage ssd(gpu_storage(2), image, &rt);
        const std::uint64_t capacity = capacity_for(data, 16, line, std::uint64_t{grid} * block);
        page_cache cache(
            short_waits({.line_bytes = line, .capacity_bytes = capacity, .mode = mode}), rt);
        array<const std::uint64_t> a(cache, ssd.ref(), {.name = "pattern"});
        fixture f{rt};
        warm_up_kernels(rt);
        stop_guard stop(rt);
        rt.start();
        const std::uint64_t per_thread = small ? 4 : 16;
        f.clear();
        launch(rt.stream(), grid, block,
               random_reads{a.ref_for_launch(grid, block), per_thread, 7, f.counts()});
        wait_or_exit(c, rt, what);
        c.equal(f.counts()->wrong, std::uint64_t{0}, what + ": wrong values");
        c.equal(f.counts()->failed, std::uint64_t{0}, what + ": failed reads");
        c.equal(f.counts()->reads, std::uint64_t{grid} * block * per_thread, what + ": reads made");
        if (mode != cache_mode::none) {  // uncached, a whole scan is one command per element
          f.clear();
          launch(rt.stream(), grid, block, cursor_scan{a.ref_for_launch(grid, block), f.counts()});
          wait_or_exit(c, rt, what + " scan");
          c.equal(f.counts()->wrong, std::uint64_t{0}, what + ": wrong values in the cursor scan");
          c.equal(f.counts()->reads, a.size(), what + ": elements scanned");
        }
        a.check();
        const cache_stats s = a.stats();
        check_stats(c, s, what);
        if (mode != cache_mode::none) c.expect(s.evictions > 0, what + ": the cache evicted");
        c.note(what + ": " + std::to_string(s.accesses) + " accesses, hit rate " +
               std::to_string(s.hit_rate()) + ", " + std::to_string(s.io_commands()) +
               " I/O commands, amplification " + std::to_string(s.amplification()));
        rt.stop();
      });
    }
  }
}

// Writers to disjoint elements, flush, then the image holds every value.
void writes_case(checker& c, bool small) {
  for (const std::uint32_t line : {512u, 4096u}) {
    const std::string what = "writes line=" + std::to_string(line);
    guarded(c, what, [&] {
      gpu_runtime rt(test_runtime_config());
      const std::uint64_t data = small ? (4ull << 20) : (64ull << 20);
      const std::uint32_t grid = small ? 8 : 264, block = 256;
      auto image = backing_store::in_memory(data, memory_kind::pinned);
      emulated_storage ssd(gpu_storage(4), image, &rt);
      const std::uint64_t capacity = capacity_for(data, 8, line, std::uint64_t{grid} * block);
      page_cache cache(short_waits({.line_bytes = line, .capacity_bytes = capacity}), rt);
      array<std::uint64_t> a(cache, ssd.ref(), {.name = "written"});
      warm_up_kernels(rt);
      stop_guard stop(rt);
      rt.start();
      launch(rt.stream(), grid, block, disjoint_writes{a.ref_for_launch(grid, block)});
      wait_or_exit(c, rt, what);
      a.flush();
      a.check();
      std::uint64_t wrong = 0;
      const auto* words = reinterpret_cast<const std::uint64_t*>(image->data());
      for (std::uint64_t i = 0; i < a.size(); ++i) wrong += words[i] != disjoint_writes::value(i);
      c.equal(wrong, std::uint64_t{0}, what + ": image words differing after flush");
      const cache_stats s = a.stats();
      c.expect(s.write_backs > 0, what + ": lines were written back");
      rt.stop();
    });
  }
}

// Injected media errors reach try_read and the host check.
void errors_case(checker& c, bool small) {
  const std::string what = "media errors";
  guarded(c, what, [&] {
    gpu_runtime rt(test_runtime_config());
    const std::uint64_t data = small ? (4ull << 20) : (32ull << 20);
    auto image = pattern_image(data, memory_kind::pinned, rt);
    storage_config sc = gpu_storage(1);
    sc.faults.bad_lba_begin = 64;  // device bytes [32 KiB, 64 KiB)
    sc.faults.bad_lba_end = 128;
    emulated_storage ssd(sc, image, &rt);
    page_cache cache(short_waits({.line_bytes = 4096, .capacity_bytes = data / 8}), rt);
    array<const std::uint64_t> a(cache, ssd.ref(), {.name = "faulty"});
    fixture f{rt};
    warm_up_kernels(rt);
    stop_guard stop(rt);
    rt.start();
    f.clear();
    launch(rt.stream(), 16, 256, cursor_scan{a.ref_for_launch(16, 256), f.counts()});
    wait_or_exit(c, rt, what);
    // Elements of the bad range read as poison (all ones), which the pattern never is there.
    const std::uint64_t bad_elements = (64ull * 512) / 8;
    c.equal(f.counts()->wrong, bad_elements, what + ": elements in the bad range read as poison");
    bool threw = false;
    try {
      a.check();
    } catch (const nvme_error& e) {
      threw = true;
      c.expect(io_status::from_bits(e.info().status).sc() == 0x81,
               what + ": unrecovered read error status");
      c.note(std::string("check() threw: ") + e.what());
    }
    c.expect(threw, what + ": check() throws bam::nvme_error");
    rt.stop();
  });
}

// A cache of very few lines: 2 lines for one warp (naive and optimized), and a launch too large
// for 64 lines falling back to read-through.
void tiny_case(checker& c) {
  for (const cache_mode mode : {cache_mode::naive, cache_mode::optimized}) {
    const std::string what = std::string("one warp, two lines, mode=") + to_string(mode);
    guarded(c, what, [&] {
      gpu_runtime rt(test_runtime_config());
      auto image = pattern_image(1ull << 20, memory_kind::pinned, rt);
      emulated_storage ssd(gpu_storage(1), image, &rt);
      page_cache cache(short_waits({.line_bytes = 512, .capacity_bytes = 1024, .mode = mode}), rt);
      array<const std::uint64_t> a(cache, ssd.ref(), {.name = "tiny"});
      fixture f{rt};
      warm_up_kernels(rt);
      stop_guard stop(rt);
      rt.start();
      f.clear();
      launch(rt.stream(), 1, 32, random_reads{a.ref(), 200, 3, f.counts()});
      wait_or_exit(c, rt, what);
      c.equal(f.counts()->wrong, std::uint64_t{0}, what + ": wrong values");
      c.equal(f.counts()->failed, std::uint64_t{0}, what + ": failed reads");
      rt.stop();
    });
  }
  const std::string what = "64 lines, a launch of 67584 threads";
  guarded(c, what, [&] {
    gpu_runtime rt(test_runtime_config());
    auto image = pattern_image(16ull << 20, memory_kind::pinned, rt);
    emulated_storage ssd(gpu_storage(1), image, &rt);
    page_cache cache(short_waits({.line_bytes = 4096, .capacity_bytes = 64 * 4096}), rt);
    array<const std::uint64_t> a(cache, ssd.ref(), {.name = "small cache"});
    fixture f{rt};
    warm_up_kernels(rt);
    stop_guard stop(rt);
    rt.start();
    const auto ref = a.ref_for_launch(264, 256);
    c.expect(ref.reads_through(), what + ": falls back to read-through");
    f.clear();
    launch(rt.stream(), 264, 256, random_reads{ref, 4, 11, f.counts()});
    wait_or_exit(c, rt, what);
    c.equal(f.counts()->wrong, std::uint64_t{0}, what + ": wrong values");
    c.equal(f.counts()->failed, std::uint64_t{0}, what + ": failed reads");
    rt.stop();
  });
}

// BAM_DIAG="GRID,BLOCK,READS,LINES,MODE,PLACEMENT,LINE_BYTES" (PLACEMENT gpu or host): one
// random-read launch over a 1 MiB pattern, then every counter and the error record. For
// bisecting a stuck cache by launch shape, cache size, mode and controller placement.
void diag_case(checker& c, const std::string& spec) {
  unsigned grid = 1, block = 1, reads = 4, lines = 64, line = 512;
  char mode_name[16] = "naive", where[8] = "gpu";
  if (std::sscanf(spec.c_str(), "%u,%u,%u,%u,%15[a-z],%7[a-z],%u", &grid, &block, &reads, &lines,
                  mode_name, where, &line) != 7) {
    c.expect(false, "BAM_DIAG: expected GRID,BLOCK,READS,LINES,MODE,PLACEMENT,LINE_BYTES");
    return;
  }
  const std::string what = "diag " + spec;
  const cache_mode mode = std::string(mode_name) == "none"    ? cache_mode::none
                          : std::string(mode_name) == "naive" ? cache_mode::naive
                                                              : cache_mode::optimized;
  gpu_runtime rt(test_runtime_config());
  auto image = pattern_image(1ull << 20, memory_kind::pinned, rt);
  storage_config sc = gpu_storage(1);
  if (std::string(where) == "host") sc.placement = controller_placement::host_thread;
  emulated_storage ssd(sc, image, &rt);
  page_cache cache(
      short_waits(
          {.line_bytes = line, .capacity_bytes = std::uint64_t{lines} * line, .mode = mode}),
      rt);
  array<const std::uint64_t> a(cache, ssd.ref(), {.name = "diag"});
  fixture f{rt};
  warm_up_kernels(rt);
  stop_guard stop(rt);
  rt.start();
  f.clear();
  const auto ref = a.ref_for_launch(grid, block);
  c.note(what + ": reads through: " + std::to_string(ref.reads_through()));
  launch(rt.stream(), grid, block, random_reads{ref, reads, 3, f.counts()});
  wait_or_exit(c, rt, what, 20'000'000'000ull);
  c.note(what + ": wrong " + std::to_string(f.counts()->wrong) + ", failed " +
         std::to_string(f.counts()->failed) + ", reads " + std::to_string(f.counts()->reads));
  const cache_stats st = a.stats();
  c.note(what + ": accesses " + std::to_string(st.accesses) + " hits " + std::to_string(st.hits) +
         " misses " + std::to_string(st.misses) + " miss_waits " + std::to_string(st.miss_waits) +
         " loads " + std::to_string(st.loads) + " evictions " + std::to_string(st.evictions) +
         " read_through " + std::to_string(st.read_through) + " errors " +
         std::to_string(st.errors));
  try {
    a.check();
  } catch (const std::exception& e) {
    c.note(what + ": check: " + e.what());
  }
  rt.stop();
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  using namespace bam::gpu_test;
  checker c("gpu_cache_stress");
  try {
    bool small = false;
    for (int i = 1; i < argc; ++i) small |= std::string(argv[i]) == "--small";
    if (const char* spec = std::getenv("BAM_DIAG")) {
      guarded(c, "diag", [&] { diag_case(c, spec); });
      return c.result();
    }
    reads_case(c, small);
    writes_case(c, small);
    errors_case(c, small);
    tiny_case(c);
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
