#include "file_bench.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/file_storage.hpp>

#include "bench_pattern.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "file_bench_kernels.hpp"
#include "runtime/thread_cpu_time.hpp"
#include "storage/file/io_engine.hpp"

namespace bam::bench {

namespace {

using phase_result = file_phase;

/// How long the ceiling's threads wait for their last reads once the phase has ended.
constexpr std::uint64_t drain_bound_ns = 30'000'000'000ull;

/// Counters the ceiling's threads add to (relaxed: read after they have all finished).
struct tally {
  std::atomic<std::uint64_t> commands{0}, failed{0}, wrong{0};
  void add(std::uint64_t c, std::uint64_t f, std::uint64_t w) {
    commands.fetch_add(c, std::memory_order_relaxed);
    failed.fetch_add(f, std::memory_order_relaxed);
    wrong.fetch_add(w, std::memory_order_relaxed);
  }
};

void create_pattern_file(const std::string& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw input_error("--create: cannot write '" + path + "': " + std::strerror(errno));
  constexpr std::uint64_t chunk = 8ull << 20;
  std::vector<std::uint64_t> words(chunk / 8);
  const auto began = std::chrono::steady_clock::now();
  for (std::uint64_t at = 0; at < bytes; at += chunk) {
    const std::uint64_t n = std::min(chunk, bytes - at);
    for (std::uint64_t w = 0; w < n / 8; ++w) words[w] = pattern_word(at + 8 * w);
    if (::pwrite(fd, words.data(), n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) {
      ::close(fd);
      throw error("--create: writing '" + path + "': " + std::strerror(errno));
    }
    if (at % (1ull << 30) == 0 && at != 0) {
      std::fprintf(stderr, "# writing the pattern file: %" PRIu64 " of %" PRIu64 " GiB\n", at >> 30,
                   bytes >> 30);
    }
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    throw error("--create: syncing '" + path + "': " + std::strerror(errno));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::fprintf(stderr, "# wrote a %s pattern file in %.1f s\n",
               tools::format_bytes(static_cast<double>(bytes)).c_str(), s);
}

/// Whether the file holds the pattern (its first and last words say so).
bool holds_pattern(const std::string& path, std::uint64_t bytes) {
  if (bytes < 16) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  const std::uint64_t end = bytes / 8 * 8 - 8;
  const bool ok =
      ::pread(fd, &first, 8, 0) == 8 && ::pread(fd, &last, 8, static_cast<off_t>(end)) == 8;
  ::close(fd);
  return ok && first == pattern_word(0) && last == pattern_word(end);
}

std::unique_ptr<file_io::io_engine> engine_for(const file_bench_options& o) {
  if (o.io_engine == "psync") return file_io::make_psync_engine(o.depth, std::min(o.depth, 16u));
  std::string why;
  auto e = file_io::make_uring_engine(o.depth, why);
  if (!e) throw input_error("bam bench file: " + why + " (--io-engine psync measures without it)");
  return e;
}

// 1. CPU threads alone, one engine each, `depth` reads in flight per thread.
phase_result ceiling(const file_bench_options& o, const block_picker& pick, bool patterned) {
  const int fd = ::open(o.file.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) throw input_error("'" + o.file + "': O_DIRECT open: " + std::strerror(errno));
  tally t;
  std::atomic<std::uint64_t> cpu_ns{0};
  const std::uint64_t end = now_ns() + static_cast<std::uint64_t>(o.seconds * 1e9);
  const std::uint64_t began = now_ns();
  std::vector<std::thread> threads;
  std::string failure;
  std::atomic<bool> failed{false};
  for (std::uint32_t th = 0; th < o.io_threads; ++th) {
    threads.emplace_back([&, th] {
      const std::uint64_t cpu0 = runtime::thread_cpu_ns();
      try {
        auto engine = engine_for(o);
        void* memory = nullptr;
        if (::posix_memalign(&memory, 4096, std::uint64_t{o.depth} * o.block) != 0)
          throw error("no memory");
        std::unique_ptr<void, decltype(&std::free)> hold(memory, &std::free);
        auto* buffers = static_cast<std::uint8_t*>(memory);
        std::vector<iovec> iov(o.depth);
        std::vector<std::uint64_t> issued(o.depth, 0);
        std::vector<std::uint64_t> offset(o.depth, 0);
        auto submit = [&](std::uint32_t j) {
          const std::uint64_t s = std::uint64_t{th} * o.depth + j;
          offset[j] = pick(s, issued[j]++) * o.block;
          iov[j] = {buffers + std::uint64_t{j} * o.block, o.block};
          engine->submit({file_io::io_kind::read, fd, offset[j], &iov[j], 1, j});
        };
        for (std::uint32_t j = 0; j < o.depth; ++j) submit(j);
        engine->kick();
        std::uint32_t in_flight = o.depth;
        std::uint64_t done = 0, bad = 0, wrong = 0;
        std::vector<file_io::io_result> results;
        while (in_flight > 0) {
          if (now_ns() > end + drain_bound_ns) {
            // The reads still in flight name the buffers and the ring: leave them be.
            (void)hold.release();
            (void)engine.release();
            throw error(std::to_string(in_flight) + " read(s) of '" + o.file +
                        "' still in flight " + std::to_string(drain_bound_ns / 1'000'000'000) +
                        " s after the phase ended");
          }
          results.clear();
          engine->reap(results, 1'000'000, 1);
          const bool more = now_ns() < end;
          for (const auto& r : results) {
            const auto j = static_cast<std::uint32_t>(r.tag);
            if (r.value != static_cast<std::int64_t>(o.block)) {
              ++bad;
            } else {
              ++done;
              std::uint64_t w = 0;
              std::memcpy(&w, buffers + std::uint64_t{j} * o.block, 8);
              if (patterned && w != pattern_word(offset[j])) ++wrong;
            }
            if (more) {
              submit(j);
            } else {
              --in_flight;
            }
          }
          engine->kick();
        }
        t.add(done, bad, wrong);
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) failure = e.what();
      }
      cpu_ns.fetch_add(runtime::thread_cpu_ns() - cpu0, std::memory_order_relaxed);
    });
  }
  for (auto& th : threads) th.join();
  ::close(fd);
  if (failed) throw error("bam bench file: the ceiling's threads failed: " + failure);
  phase_result r;
  r.name = "CPU threads, " + o.io_engine + " (ceiling)";
  r.commands = t.commands;
  r.failed = t.failed;
  r.wrong = t.wrong;
  r.seconds = static_cast<double>(now_ns() - began) * 1e-9;
  r.cpu_seconds = static_cast<double>(cpu_ns.load()) * 1e-9;
  return r;
}

// 2. Kernel threads (CPU workers here), one command in flight each, through the queues.
phase_result raw(const file_bench_options& o, const block_picker& pick, bool patterned) {
  file_storage disk(file_bench_disk(o, false));
  disk.start();
  const device_set_ref set = disk.ref();
  const std::uint64_t threads = kernel_threads(o);
  void* memory = nullptr;
  if (::posix_memalign(&memory, 4096, threads * o.block) != 0) throw error("no memory");
  std::unique_ptr<void, decltype(&std::free)> hold(memory, &std::free);
  auto* buffers = static_cast<std::uint8_t*>(memory);
  read_counts counts{};
  host_stream stream(static_cast<unsigned>(threads));
  const std::uint64_t began = now_ns();
  launch(stream, static_cast<std::uint32_t>(threads), 1,
         raw_block_reader{set, buffers, o.block, pick, patterned,
                          static_cast<std::uint64_t>(o.seconds * 1e9), &counts});
  stream.synchronize();
  phase_result r;
  r.seconds = static_cast<double>(now_ns() - began) * 1e-9;
  disk.stop();
  r.name = "bam queues, raw commands";
  r.commands = counts.completed;
  r.failed = counts.failed;
  r.wrong = counts.wrong;
  r.cpu_seconds = disk.io_stats().cpu_seconds;
  return r;
}

// 3. Kernel threads reading one 8-byte element of a picked line through the cache.
phase_result cached(const file_bench_options& o, const block_picker& pick, bool patterned,
                    std::uint64_t bytes) {
  file_storage disk(file_bench_disk(o, false));
  disk.start();
  const std::uint64_t threads = kernel_threads(o);
  host_stream stream(static_cast<unsigned>(threads));
  page_cache cache({.line_bytes = o.block, .capacity_bytes = o.cache_bytes}, stream);
  array<const std::uint64_t> a(cache, disk.ref(), {.count = bytes / 8, .name = o.file});
  const array_ref<const std::uint64_t> ref =
      a.ref_for_launch(static_cast<std::uint32_t>(threads), 1);
  read_counts counts{};
  const std::uint64_t began = now_ns();
  launch(stream, static_cast<std::uint32_t>(threads), 1,
         line_element_reader{ref, o.block, pick, patterned,
                             static_cast<std::uint64_t>(o.seconds * 1e9), &counts});
  stream.synchronize();
  phase_result r;
  r.seconds = static_cast<double>(now_ns() - began) * 1e-9;
  const cache_stats s = a.stats();
  r.name = "bam array, one element per line (" +
           tools::format_bytes(static_cast<double>(o.cache_bytes)) + " cache)";
  // The element reads are the figure's work; the cache's commands are printed below.
  r.commands = counts.completed;
  r.failed = counts.failed;
  r.wrong = counts.wrong;
  disk.stop();
  r.cpu_seconds = disk.io_stats().cpu_seconds;
  std::fprintf(stderr, "# cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " I/O commands\n",
               s.hits, s.misses, s.io_commands());
  return r;
}

}  // namespace

file_storage_config file_bench_disk(const file_bench_options& o, bool gpu) {
  file_storage_config c;
  c.paths = {o.file};
  c.engine = o.io_engine == "psync" ? io_engine_kind::psync : io_engine_kind::io_uring;
  c.io_threads = o.io_threads;
  c.io_depth = o.depth;
  c.queues_per_device = std::max<std::uint32_t>(8, o.io_threads);
  c.queue_depth = std::max<std::uint32_t>(
      256, static_cast<std::uint32_t>(std::min<std::uint64_t>(2 * kernel_threads(o), 4096)));
  if (gpu) c.max_transfer_bytes = 256u << 10;
  c.gpu = gpu;
  return c;
}

void run_file_bench(const file_bench_options& o) {
  if (o.block != 512 && o.block != 4096) throw input_error("--block must be 512 or 4K");
  if (o.create_bytes != 0) {
    std::error_code ec;
    if (!std::filesystem::exists(o.file) ||
        std::filesystem::file_size(o.file, ec) != o.create_bytes ||
        !holds_pattern(o.file, o.create_bytes)) {
      create_pattern_file(o.file, o.create_bytes);
    }
  }
  if (!std::filesystem::exists(o.file)) {
    throw input_error("'" + o.file + "' does not exist (--create SIZE writes one)");
  }
  const std::uint64_t bytes = std::filesystem::file_size(o.file);
  const std::uint64_t blocks = bytes / o.block;
  if (blocks < 2) throw input_error("'" + o.file + "' is smaller than two blocks");
  const bool patterned = holds_pattern(o.file, bytes);
  const std::uint64_t streams = std::uint64_t{o.io_threads} * o.depth;
  const block_picker pick{blocks, streams, o.pattern == "random", 0x5eedu};
  // The kernel threads' streams: one per thread, so sequential streams do not overlap.
  const block_picker kernel_pick{blocks, kernel_threads(o), o.pattern == "random", 0x5eedu};

  std::vector<phase_result> phases;
  phases.push_back(ceiling(o, pick, patterned));
  if (o.target == "gpu") {
    for (file_phase& p : run_file_phases_gpu(o, kernel_pick, patterned, blocks * o.block)) {
      phases.push_back(std::move(p));
    }
  } else {
    phases.push_back(raw(o, kernel_pick, patterned));
    phases.push_back(cached(o, kernel_pick, patterned, blocks * o.block));
  }

  // The ceiling again, so a disk whose rate drifts during the run (a cloud disk's burst
  // credit, writeback of the pattern file) shows; ratios are taken to the better of the two.
  phases.push_back(ceiling(o, pick, patterned));
  phases.back().name += ", again";
  const double base = std::max(phases.front().rate(), phases.back().rate());
  std::printf(
      "bam bench file: '%s' (%s), %s %s reads, %u I/O threads x depth %u, %s, "
      "%u kernel thread(s) per slot on the %s%s\n",
      o.file.c_str(), tools::format_bytes(static_cast<double>(bytes)).c_str(),
      tools::format_bytes(o.block).c_str(), o.pattern.c_str(), o.io_threads, o.depth,
      o.io_engine.c_str(), o.threads_per_slot, o.target == "gpu" ? "GPU" : "CPU",
      patterned ? "; every read checked" : "");
  std::printf("  %-52s %12s %10s %10s %16s\n", "phase", "reads/s", "GB/s", "of ceiling",
              "CPU s / M reads");
  for (const phase_result& p : phases) {
    std::printf("  %-52s %12.0f %10.3f %10.3f %16.3f\n", p.name.c_str(), p.rate(),
                p.rate() * o.block / 1e9, base > 0 ? p.rate() / base : 0.0, p.cpu_per_million());
  }
  std::uint64_t wrong = 0;
  std::uint64_t failed = 0;
  for (const phase_result& p : phases) {
    wrong += p.wrong;
    failed += p.failed;
  }
  if (!o.json.empty()) {
    tools::json_writer j;
    j.begin_object().field("benchmark", std::string("file")).key("machine");
    tools::write_json(j, tools::read_machine_info());
    j.field("file_bytes", bytes)
        .field("block_bytes", o.block)
        .field("pattern", o.pattern)
        .field("io_threads", o.io_threads)
        .field("depth", o.depth)
        .field("threads_per_slot", o.threads_per_slot)
        .field("io_engine", o.io_engine)
        .field("target", o.target)
        .field("cache_bytes", o.cache_bytes)
        .field("seconds", o.seconds)
        .field("checked", patterned)
        .key("phases")
        .begin_array();
    for (const phase_result& p : phases) {
      j.begin_object()
          .field("name", p.name)
          .field("reads", p.commands)
          .field("failed", p.failed)
          .field("wrong", p.wrong)
          .field("seconds", p.seconds)
          .field("reads_per_s", p.rate())
          .field("of_ceiling", base > 0 ? p.rate() / base : 0.0)
          .field("cpu_seconds", p.cpu_seconds)
          .field("cpu_seconds_per_million", p.cpu_per_million())
          .end_object();
    }
    j.end_array().end_object();
    j.save(o.json);
  }
  if (wrong != 0 || failed != 0) {
    throw error("bam bench file: " + std::to_string(wrong) + " read(s) returned wrong bytes and " +
                std::to_string(failed) + " failed");
  }
}

}  // namespace bam::bench
