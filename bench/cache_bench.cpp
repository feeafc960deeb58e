#include "cache_bench.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "cache_bench_kernels.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::bench {

namespace {

cache_mode parse_mode(const std::string& m) {
  if (m == "none") return cache_mode::none;
  if (m == "naive") return cache_mode::naive;
  if (m == "optimized") return cache_mode::optimized;
  throw input_error("--cache-mode must be none, naive or optimized, got '" + m + "'");
}

/// The options with defaults filled in, checked.
cache_bench_options resolved(cache_bench_options o) {
  if (o.pattern != "hit" && o.pattern != "miss") {
    throw input_error("--pattern must be hit or miss, got '" + o.pattern + "'");
  }
  if (o.element_bytes != 4 && o.element_bytes != 8) {
    throw input_error("--element-bytes must be 4 or 8, got " + std::to_string(o.element_bytes));
  }
  if (o.threads == 0 || o.threads > 4096) throw input_error("--threads must be 1..4096");
  if (o.accesses == 0) throw input_error("--accesses must be positive");
  if (o.latency_us < 0) throw input_error("--latency-us must not be negative");
  (void)parse_mode(o.mode);
  if (o.data_bytes == 0) o.data_bytes = o.pattern == "hit" ? o.cache_bytes / 2 : o.cache_bytes * 16;
  o.data_bytes = o.data_bytes / o.line_bytes * o.line_bytes;  // whole lines: exact amplification
  if (o.data_bytes == 0) throw input_error("--data-bytes must hold at least one line");
  if (o.pattern == "hit" && o.data_bytes > o.cache_bytes) {
    throw input_error("--pattern hit needs data that fits in the cache (" +
                      tools::format_bytes(static_cast<double>(o.data_bytes)) + " of data, " +
                      tools::format_bytes(static_cast<double>(o.cache_bytes)) + " of cache)");
  }
  return o;
}

struct figures {
  double seconds = 0;
  double ceiling_seconds = 0;
  read_faults faults;
  read_faults ceiling_faults;
  cache_stats stats;
  device_stats devices;
};

template <class T>
figures measure(const cache_bench_options& o) {
  auto image = backing_store::in_memory(o.data_bytes);
  T* values = reinterpret_cast<T*>(image->data());
  const std::uint64_t n = o.data_bytes / sizeof(T);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = value_at<T>(i);

  storage_config sc;
  sc.devices = 1;
  sc.queues_per_device = 8;
  sc.queue_depth = 256;
  sc.model = device_model::unlimited();
  sc.model.latency_us = o.latency_us;
  sc.timeout_ns = 120'000'000'000ull;
  emulated_storage ssd(sc, image);
  host_stream stream(o.threads);
  auto cache = std::make_unique<page_cache>(
      cache_config{
          .line_bytes = o.line_bytes, .capacity_bytes = o.cache_bytes, .mode = parse_mode(o.mode)},
      stream);
  ssd.start();

  figures f;
  {
    array<const T> a(*cache, ssd.ref(), {.name = "bench"});
    const array_ref<const T> ref = a.ref();
    const std::uint64_t per_line = o.line_bytes / sizeof(T);
    const std::uint64_t data_lines = o.data_bytes / o.line_bytes;
    const std::uint64_t warm = data_lines < cache->lines() ? data_lines : cache->lines();
    launch(stream, 1, o.threads, touch_lines<T>{ref, warm, per_line, &f.faults});
    stream.synchronize();
    a.reset_stats();
    const device_stats before = ssd.stats().total();

    const std::uint64_t seed = 0xbe9c4;
    auto start = std::chrono::steady_clock::now();
    launch(stream, 1, o.threads, random_reads<T>{ref, o.accesses, seed, &f.faults});
    stream.synchronize();
    f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    a.check();
    f.stats = a.stats();
    const device_stats after = ssd.stats().total();
    f.devices.reads = after.reads - before.reads;
    f.devices.bytes_read = after.bytes_read - before.bytes_read;
    f.devices.commands = after.commands - before.commands;

    start = std::chrono::steady_clock::now();
    launch(stream, 1, o.threads, random_loads<T>{values, n, o.accesses, seed, &f.ceiling_faults});
    stream.synchronize();
    f.ceiling_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  cache.reset();
  ssd.stop();
  return f;
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace

void run_cache_bench(const cache_bench_options& options) {
  if (options.side == "gpu") {
    run_cache_bench_gpu(options);
    return;
  }
  if (options.side != "cpu")
    throw input_error("--side must be cpu or gpu, got '" + options.side + "'");
  const cache_bench_options o = resolved(options);
  const figures f = o.element_bytes == 4 ? measure<std::uint32_t>(o) : measure<std::uint64_t>(o);
  const cache_stats& s = f.stats;
  const double rate = static_cast<double>(o.accesses) / f.seconds;
  const double requested_rate = static_cast<double>(s.bytes_requested) / f.seconds;
  const double ceiling_rate = static_cast<double>(o.accesses) / f.ceiling_seconds;

  tools::table t({"pattern", "mode", "line", "cache", "data", "threads", "accesses", "seconds",
                  "accesses/s", "requested/s", "hit rate", "I/O commands", "amplification",
                  "ceiling accesses/s", "of ceiling"});
  t.add_row({o.pattern, o.mode, tools::format_bytes(o.line_bytes),
             tools::format_bytes(static_cast<double>(o.cache_bytes)),
             tools::format_bytes(static_cast<double>(o.data_bytes)), std::to_string(o.threads),
             std::to_string(o.accesses), fixed(f.seconds, 3), tools::format_count(rate),
             tools::format_bytes(requested_rate) + "/s", fixed(s.hit_rate(), 4),
             std::to_string(s.io_commands()), fixed(s.amplification(), 2),
             tools::format_count(ceiling_rate), fixed(rate / ceiling_rate, 4)});
  t.print(std::cout);

  if (!o.json.empty()) {
    tools::json_writer j;
    j.begin_object().field("benchmark", "cache").key("machine");
    tools::write_json(j, tools::read_machine_info());
    j.field("side", "cpu")
        .field("pattern", o.pattern)
        .field("cache_mode", o.mode)
        .field("line_bytes", o.line_bytes)
        .field("cache_bytes", o.cache_bytes)
        .field("data_bytes", o.data_bytes)
        .field("element_bytes", o.element_bytes)
        .field("accesses", o.accesses)
        .field("threads", o.threads)
        .field("latency_us", o.latency_us)
        .field("seconds", f.seconds)
        .field("accesses_per_s", rate)
        .field("bytes_requested_per_s", requested_rate)
        .field("hit_rate", s.hit_rate())
        .field("io_commands", s.io_commands())
        .field("amplification", s.amplification())
        .field("wrong", f.faults.wrong)
        .field("failed", f.faults.failed)
        .key("ceiling")
        .begin_object()
        .field("what", "the same random reads straight from the image in host memory")
        .field("seconds", f.ceiling_seconds)
        .field("accesses_per_s", ceiling_rate)
        .end_object()
        .field("fraction_of_ceiling", rate / ceiling_rate)
        .key("stats")
        .begin_object()
        .field("accesses", s.accesses)
        .field("hits", s.hits)
        .field("misses", s.misses)
        .field("miss_waits", s.miss_waits)
        .field("coalesced", s.coalesced)
        .field("reused", s.reused)
        .field("loads", s.loads)
        .field("write_backs", s.write_backs)
        .field("read_through", s.read_through)
        .field("evictions", s.evictions)
        .field("bytes_requested", s.bytes_requested)
        .field("bytes_moved", s.bytes_moved)
        .field("errors", s.errors)
        .end_object()
        .key("devices")
        .begin_object()
        .field("commands", f.devices.commands)
        .field("reads", f.devices.reads)
        .field("bytes_read", f.devices.bytes_read)
        .end_object()
        .end_object();
    j.save(o.json);
  }
  if (f.faults.wrong != 0 || f.faults.failed != 0 || f.ceiling_faults.wrong != 0) {
    throw error(std::to_string(f.faults.failed) + " reads failed and " +
                std::to_string(f.faults.wrong + f.ceiling_faults.wrong) + " returned wrong bytes");
  }
}

}  // namespace bam::bench
