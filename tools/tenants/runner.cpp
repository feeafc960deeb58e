// One run of the study: tenants side by side on one page cache, each driving its own executor
// from its own host thread, relaunching until every tenant has finished once. In a GPU build
// nvcc compiles this file, so the executors can launch on the GPU.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/cache/mosaic/compactor.hpp>
#include <bam/cache/mosaic/gpu_compaction_agent.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.hpp>

#include "apps/cpu_apps.hpp"
#include "apps/gather_scan.hpp"
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>

#include "apps/gpu_apps.cuh"
#endif
#include "tenants/study.hpp"

namespace bam::tenants {

namespace {

// FNV-1a over a vector's bytes: a short name for a BFS or CC result.
template <class T>
std::uint64_t digest_of(const std::vector<T>& v) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(T); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// A tenant's arrays on the shared cache: neighbour ids of the file's width, or values.
struct tenant_arrays {
  std::optional<array<const std::uint32_t>> ids32;
  std::optional<array<const std::uint64_t>> ids64;  // 8-byte ids, or gather/scan values
  std::uint64_t lines = 0;                          // of the cache they read through (0: none)

  tenant_arrays(page_cache& cache, const device_set_ref& set, const tenant_spec& t,
                const tenant_data& data, bool dense, std::uint32_t quota, std::uint64_t cache_lines)
      : lines(cache_lines) {
    const array_options o{.offset_bytes = t.offset,
                          .count = t.elements,
                          .name = t.name,
                          .dense = dense,
                          .frame_quota = quota};
    if (uses_graph(t.kind) && data.graph()->id_bytes() == 4) {
      ids32.emplace(cache, set, o);
    } else {
      ids64.emplace(cache, set, o);
    }
  }
  /// Over `bytes` of the tenant's data that kernels read directly (run_direct).
  tenant_arrays(std::uint8_t* bytes, const tenant_spec& t, const tenant_data& data,
                bool host_accessible) {
    if (uses_graph(t.kind) && data.graph()->id_bytes() == 4) {
      ids32.emplace(array<const std::uint32_t>::over_memory(reinterpret_cast<std::uint32_t*>(bytes),
                                                            t.elements, host_accessible, t.name));
    } else {
      ids64.emplace(array<const std::uint64_t>::over_memory(reinterpret_cast<std::uint64_t*>(bytes),
                                                            t.elements, host_accessible, t.name));
    }
  }
  [[nodiscard]] cache_stats stats() const { return ids32 ? ids32->stats() : ids64->stats(); }
  [[nodiscard]] tenant_stats frames() const {
    return ids32 ? ids32->frame_stats() : ids64->frame_stats();
  }
  void check() const { ids32 ? ids32->check() : ids64->check(); }
};

// Run `run` (0 first) of a tenant's app; fills `out` on its first run and times its second.
template <class Exec>
void run_once(Exec& exec, const tenant_spec& t, const tenant_data& data, const tenant_arrays& a,
              const study_config& config, std::uint64_t run, tenant_run& out) {
  const bool first = run == 0;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t digest = 0;
  bool verified = false;
  auto graph_app = [&]<class Id>(const array<const Id>& ids) {
    const apps::array_edges<Id> edges(ids, a.lines);
    const std::span<const std::uint64_t> offsets = data.graph()->offset_span();
    if (t.kind == tenant_kind::bfs) {
      apps::bfs_result r =
          apps::run_bfs(exec, offsets, edges,
                        {.source = data.bfs_source(), .symmetric = data.graph()->symmetric()});
      digest = digest_of(r.depths);
      if (first && config.keep_outputs) out.depths = std::move(r.depths);
    } else {
      apps::cc_result r =
          apps::run_cc(exec, offsets, edges, {.symmetric = data.graph()->symmetric()});
      digest = digest_of(r.labels);
      if (first && config.keep_outputs) out.labels = std::move(r.labels);
    }
  };
  if (uses_graph(t.kind)) {
    if (a.ids32) {
      graph_app(*a.ids32);
    } else {
      graph_app(*a.ids64);
    }
  } else {
    const array<const std::uint64_t>& values = *a.ids64;
    auto view_for = [&](apps::launch_shape s) { return values.ref_for_launch(s.grid, s.block); };
    // Launches as wide as the cache serves, as the graph apps' (array_edges) are.
    const apps::stream_source<decltype(view_for)> source{
        view_for, apps::array_edges<std::uint64_t>(values, a.lines).max_launch_threads()};
    const apps::stream_result r =
        t.kind == tenant_kind::gather
            ? apps::run_gather(exec, config.gather_reads ? config.gather_reads : t.elements, source)
            : apps::run_scan(exec, t.elements, source);
    a.check();
    digest = r.checksum;
    verified = r.failed == 0 && r.checksum == t.expected;
  }
  if (run == 1) out.warm_seconds = apps::seconds_since(start);
  if (!first) return;
  out.seconds = apps::seconds_since(start);
  out.digest = digest;
  out.verified = verified;
}

// Runs every tenant on its own host thread: `run(i, k)` runs tenant i for the k-th time (0
// first). Each relaunches until all have finished once and it has run twice when
// config.measure_shares (its second run is timed); the first exception stops them all and is
// rethrown after every thread has joined. While they run, `config.progress` hears every
// `config.progress_interval_s` how far each tenant is (runs done, or in its first run), so a
// shared run that does not end shows whether one tenant starves or none moves.
template <class Run>
void run_side_by_side(const study_config& config, const tenant_data& data,
                      std::span<const std::size_t> which, std::vector<tenant_run>& out, Run&& run) {
  const std::size_t n = out.size();
  // relaxed: the counters only decide when to stop relaunching and what progress says; the
  // results the threads write are read after join(), which orders them.
  std::atomic<std::size_t> finished{0};
  std::atomic<std::size_t> exited{0};
  std::atomic<bool> failed{false};
  std::vector<std::atomic<std::uint64_t>> runs(n);
  std::vector<std::exception_ptr> errors(n);
  const std::uint64_t least_runs = config.measure_shares ? 2 : 1;
  std::latch go(static_cast<std::ptrdiff_t>(n));  // every tenant starts at once
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      try {
        std::uint64_t done = 0;
        do {
          run(i, done);
          done = runs[i].fetch_add(1, std::memory_order_relaxed) + 1;
          if (done == 1) finished.fetch_add(1, std::memory_order_relaxed);
        } while ((finished.load(std::memory_order_relaxed) < n || done < least_runs) &&
                 !failed.load(std::memory_order_relaxed));
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
      exited.fetch_add(1, std::memory_order_relaxed);
    });
  }
  const auto start = std::chrono::steady_clock::now();
  const auto interval = std::chrono::duration<double>(config.progress_interval_s);
  auto next = start + interval;
  while (exited.load(std::memory_order_relaxed) < n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!config.progress || config.progress_interval_s <= 0 ||
        std::chrono::steady_clock::now() < next) {
      continue;
    }
    next += interval;
    char after[48];
    std::snprintf(after, sizeof after, "still running after %.0f s:", apps::seconds_since(start));
    std::string line = after;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t done = runs[i].load(std::memory_order_relaxed);
      line += ' ';
      line += data.tenants()[which[i]].name;
      if (done == 0) {
        line += " in its first run";
      } else {
        line += ' ';
        line += std::to_string(done);
        line += " run(s) done";
      }
      if (i + 1 < n) line += ';';
    }
    config.progress(line);
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < n; ++i) out[i].runs = runs[i].load(std::memory_order_relaxed);
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

cache_config cache_for(const study_config& config, std::uint64_t cache_bytes,
                       translation_kind translation) {
  cache_config c = config.cache;
  c.capacity_bytes = cache_bytes;
  c.translation = translation;
  return c;
}

void collect(std::vector<tenant_run>& out, const std::vector<std::unique_ptr<tenant_arrays>>& a) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].counters = a[i]->stats();
    out[i].frames = a[i]->frames();
  }
}

void run_on_cpu(const study_config& config, const tenant_data& data,
                std::span<const std::size_t> which, const cache_config& cc, run_outcome& result) {
  host_stream cache_stream(config.cpu_workers);
  emulated_storage storage(config.storage, data.image());
  auto cache = std::make_unique<page_cache>(cc, cache_stream);
  storage.start();
  const device_set_ref set = storage.ref();
  const bool dense = cc.translation == translation_kind::two_level;
  try {
    std::vector<std::unique_ptr<tenant_arrays>> arrays;
    std::vector<std::unique_ptr<host_stream>> streams;
    for (const std::size_t i : which) {
      arrays.push_back(std::make_unique<tenant_arrays>(*cache, set, data.tenants()[i], data, dense,
                                                       config.frame_quota, cache->lines()));
      streams.push_back(std::make_unique<host_stream>(config.cpu_workers));
    }
    // CAC on a host thread while the tenants run (two_level; it needs the dense arrays to
    // exist and is stopped before they go).
    std::optional<cache::mosaic::compactor> agent;
    if (dense && config.compaction) agent.emplace(cache->ref());
    run_side_by_side(config, data, which, result.tenants, [&](std::size_t k, std::uint64_t run) {
      apps::cpu_executor exec(*streams[k]);
      run_once(exec, data.tenants()[which[k]], data, *arrays[k], config, run, result.tenants[k]);
    });
    if (agent) result.compaction = agent->counts();
    agent.reset();
    collect(result.tenants, arrays);
  } catch (...) {
    cache.reset();  // the cache goes before the controller stops
    storage.stop();
    throw;
  }
  cache.reset();
  storage.stop();
}

#if defined(BAM_HAVE_CUDA)
// Working memory of a tenant's executor: BFS and CC about 32 bytes per vertex (as `bam bfs`),
// gather and scan two counters.
std::uint64_t work_bytes(const tenant_spec& t, const tenant_data& data) {
  const std::uint64_t slack = std::uint64_t{1} << 20;
  if (!uses_graph(t.kind)) return slack;
  // BFS's line rule: a count and a bit per unit, at most one per 128 bytes of neighbours.
  const apps::graph_file& g = *data.graph();
  return 48 * (g.vertex_count() + 1) +
         apps::bfs_unit_table_bytes(g.neighbour_bytes() / apps::aligned_read_bytes + 2) + slack;
}

void run_on_gpu(const study_config& config, const tenant_data& data,
                std::span<const std::size_t> which, const cache_config& cc, run_outcome& result) {
  runtime_config rc = config.runtime;
  // Each tenant launches on a stream of its own, made in the primary context; plain streams
  // keep the runtime's streams there too, so warm_up() loads every kernel in the one context
  // the tenants launch in (a first load beside a running controller can deadlock).
  rc.green_contexts = false;
  gpu_runtime rt(rc);
  if (!rt.gpu()) throw error("--target gpu: " + rt.message());
  emulated_storage storage(config.storage, data.image(), &rt);
  page_cache cache(cc, rt);
  const device_set_ref set = storage.ref();
  const bool dense = cc.translation == translation_kind::two_level;
  std::vector<std::unique_ptr<tenant_arrays>> arrays;
  std::vector<owned_stream> streams;
  std::vector<std::unique_ptr<apps::gpu_executor>> execs;
  for (const std::size_t i : which) {
    const tenant_spec& t = data.tenants()[i];
    arrays.push_back(std::make_unique<tenant_arrays>(cache, set, t, data, dense, config.frame_quota,
                                                     cache.lines()));
    streams.push_back(owned_stream::create_non_blocking());
    execs.push_back(
        std::make_unique<apps::gpu_executor>(rt, work_bytes(t, data), streams.back().get()));
  }
  // Every kernel any tenant launches, once, before the controllers start.
  auto& first_exec = *execs.front();
  first_exec.warm_up<array_ref<const std::uint32_t>>();
  first_exec.warm_up<array_ref<const std::uint64_t>>();
  using values = array_ref<const std::uint64_t>;
  rt.preload({kernel_function<apps::gather_kernel<values>>(),
              kernel_function<apps::scan_kernel<values>>()});
  first_exec.warm_up_kernels<apps::gather_kernel<values>, apps::scan_kernel<values>>();
  // CAC on one GPU thread of its own stream (two_level). Made, loaded and launched once
  // before the controllers start (a first launch beside them can deadlock, DESIGN 11); it
  // goes before the arrays it reads.
  std::optional<cache::mosaic::gpu_compaction_agent> agent;
  if (dense && config.compaction) agent.emplace(rt, cache);
  // Stops the controllers before the executors, arrays and cache free GPU memory (a free
  // waits for every running kernel, and the controller never ends), even when a tenant throws.
  stop_guard stop(rt);
  rt.start();
  if (agent) agent->start();
  run_side_by_side(config, data, which, result.tenants, [&](std::size_t k, std::uint64_t run) {
    run_once(*execs[k], data.tenants()[which[k]], data, *arrays[k], config, run, result.tenants[k]);
  });
  if (agent) result.compaction = agent->stop();
  rt.stop();
  collect(result.tenants, arrays);
}
#endif

// Two runs of tenant `which` alone over its data in host memory (the image itself).
tenant_run direct_on_cpu(const study_config& config, const tenant_data& data, std::size_t which) {
  const tenant_spec& t = data.tenants()[which];
  const tenant_arrays a(data.image()->data() + t.offset, t, data, true);
  host_stream stream(config.cpu_workers);
  apps::cpu_executor exec(stream);
  tenant_run out;
  for (std::uint64_t run = 0; run < 2; ++run) run_once(exec, t, data, a, config, run, out);
  return out;
}

#if defined(BAM_HAVE_CUDA)
// Two runs of tenant `which` alone over a copy of its data in device memory; no controllers.
tenant_run direct_on_gpu(const study_config& config, const tenant_data& data, std::size_t which) {
  const tenant_spec& t = data.tenants()[which];
  runtime_config rc = config.runtime;
  rc.green_contexts = false;  // as run_on_gpu: the executor's stream in the primary context
  gpu_runtime rt(rc);
  if (!rt.gpu()) throw error("--target gpu: " + rt.message());
  const device_memory copy(t.bytes);
  copy_async(copy.data(), data.image()->data() + t.offset, t.bytes, rt.stream());
  rt.synchronize(rt.stream());
  const tenant_arrays a(copy.as<std::uint8_t>(), t, data, false);
  const owned_stream stream = owned_stream::create_non_blocking();
  apps::gpu_executor exec(rt, work_bytes(t, data), stream.get());
  tenant_run out;
  for (std::uint64_t run = 0; run < 2; ++run) run_once(exec, t, data, a, config, run, out);
  return out;
}
#endif

}  // namespace

tenant_run run_direct(const study_config& config, const tenant_data& data, std::size_t which) {
  if (which >= data.tenants().size()) throw input_error("run_direct: no such tenant");
  if (config.gpu) {
#if defined(BAM_HAVE_CUDA)
    return direct_on_gpu(config, data, which);
#else
    throw error("this build has no CUDA: run with --target cpu");
#endif
  }
  return direct_on_cpu(config, data, which);
}

run_outcome run_tenants(const study_config& config, const tenant_data& data,
                        std::span<const std::size_t> which, std::uint64_t cache_bytes,
                        translation_kind translation) {
  if (which.empty()) throw input_error("run_tenants: no tenant to run");
  run_outcome result;
  result.tenants.resize(which.size());
  const cache_config cc = cache_for(config, cache_bytes, translation);
  const auto start = std::chrono::steady_clock::now();
  if (config.gpu) {
#if defined(BAM_HAVE_CUDA)
    run_on_gpu(config, data, which, cc, result);
#else
    throw error("this build has no CUDA: run with --target cpu");
#endif
  } else {
    run_on_cpu(config, data, which, cc, result);
  }
  result.wall_seconds = apps::seconds_since(start);
  return result;
}

}  // namespace bam::tenants
