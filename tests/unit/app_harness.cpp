// Running an app on a .bcsr file through emulated storage and a page cache of a given shape,
// on the CPU executor or on software warps.

#include "app_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "apps/cpu_apps.hpp"
#include "apps/graph_file.hpp"
#include "apps/kernel_types.hpp"
#include "apps/tiled_edges.hpp"
#include "graph/hubs.hpp"
#include "software_warp.hpp"

namespace bam::apps::testing {

std::string to_string(const storage_shape& s) {
  if (s.host_memory) return "host-memory";
  if (s.tile_bytes > 0) {
    return "tiled/" + std::to_string(s.tile_bytes) + "B/" + std::to_string(s.workers) + "threads";
  }
  return std::string(bam::to_string(s.mode)) + "/" + std::to_string(s.line_bytes) + "B/" +
         std::to_string(s.cache_lines) + "lines/" + std::to_string(s.devices) + "dev/" +
         std::to_string(s.workers) + "threads" +
         (s.latency_us > 0 ? "/" + std::to_string(static_cast<int>(s.latency_us)) + "us" : "");
}

namespace {

// Runs kernels on software warps (tests/support/software_warp.hpp): whole warps of `width`
// std::threads, so the kernels' lane loops and the array's warp coalescing run as on a GPU.
class software_warp_executor {
 public:
  template <class T>
  using buffer = cpu_executor::buffer<T>;

  software_warp_executor(unsigned warps, unsigned width) : warps_(warps), width_(width) {}

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::uint64_t n) {
    return buffer<T>(n);
  }
  template <class T>
  void upload(buffer<T>& dst, std::uint64_t first, std::span<const T> src) {
    std::copy(src.begin(), src.end(), dst.data() + first);
  }
  template <class T>
  void download(const buffer<T>& src, std::uint64_t first, std::span<T> dst) {
    std::copy(src.data() + first, src.data() + first + dst.size(), dst.begin());
  }
  template <class Kernel>
  void launch(launch_shape, const Kernel& kernel) {
    const std::uint64_t threads = std::uint64_t{warps_} * width_;
    bam::testing::run_software_warps(warps_, width_, [&](unsigned lane, unsigned warp) {
      kernel(thread_index{std::uint64_t{warp} * width_ + lane, threads});
    });
  }
  void synchronize() {}
  [[nodiscard]] launch_shape shape_for(std::uint64_t) const { return {warps_, width_}; }
  template <class T>
  [[nodiscard]] host_tiles<T> make_tiles(std::uint64_t elements) {
    return host_tiles<T>(nullptr, elements);  // launches here finish before they return
  }

 private:
  unsigned warps_;
  unsigned width_;
};
static_assert(app_executor<software_warp_executor>);

template <class Kernel, class Tuple>
struct listed;
template <class Kernel, class... K>
struct listed<Kernel, std::tuple<K...>> : std::bool_constant<(std::is_same_v<Kernel, K> || ...)> {};

// The executor `Exec`, checking that every kernel launched through it is in
// app_kernel_types<View> (apps/kernel_types.hpp): the GPU executor loads exactly those before
// the controllers start, and a kernel missing there can hang its first launch beside them (it
// did: BFS's pieces kernel, 2026-12-06). Every app test runs through it.
template <class Exec, class View>
class listing_executor {
 public:
  template <class T>
  using buffer = typename Exec::template buffer<T>;

  explicit listing_executor(Exec& exec) : exec_(&exec) {}

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::uint64_t n) {
    return exec_->template allocate<T>(n);
  }
  template <class T>
  void upload(buffer<T>& dst, std::uint64_t first, std::span<const T> src) {
    exec_->upload(dst, first, src);
  }
  template <class T>
  void download(const buffer<T>& src, std::uint64_t first, std::span<T> dst) {
    exec_->download(src, first, dst);
  }
  template <class Kernel>
  void launch(launch_shape shape, const Kernel& kernel) {
    if constexpr (!listed<Kernel, app_kernel_types<View>>::value) {
      ADD_FAILURE() << "kernel " << typeid(Kernel).name()
                    << " was launched but is not in app_kernel_types (apps/kernel_types.hpp)";
    }
    exec_->launch(shape, kernel);
  }
  void synchronize() { exec_->synchronize(); }
  [[nodiscard]] launch_shape shape_for(std::uint64_t items) const {
    return exec_->shape_for(items);
  }
  template <class T>
  [[nodiscard]] auto make_tiles(std::uint64_t elements) {
    return exec_->template make_tiles<T>(elements);
  }

 private:
  Exec* exec_;
};

template <class Exec, class Edges>
void run_on(Exec& inner, const graph_file& g, const Edges& edges, const app_request& request,
            app_outcome& out) {
  listing_executor<Exec, typename Edges::view_type> exec(inner);
  std::vector<std::uint64_t> hubs;
  if (request.bfs_hubs && request.bfs_hub_table.empty()) {
    hubs = graph::load_hubs(g.path).ids;
    if (hubs.empty()) {
      const graph::csr c = graph::read_csr(g.path);
      hubs.resize(c.vertex_count() * graph::bcsr_default_hub_count);
      graph::fill_hubs(c.offsets, c.neighbors, hubs);
    }
  }
  switch (request.app) {
    case app_request::kind::bfs:
      out.bfs =
          run_bfs(exec, g.offset_span(), edges,
                  {.source = request.source,
                   .scan_divisor = request.bfs_scan_divisor,
                   .algorithm = request.bfs,
                   .symmetric = g.symmetric(),
                   .switch_rule = request.bfs_rule,
                   .early_claims = request.bfs_early_claims,
                   .vertex_batches = request.bfs_vertex_batches,
                   .alpha = request.bfs_alpha,
                   .beta = request.bfs_beta,
                   .piece_entries = request.bfs_piece_entries,
                   .hubs = request.bfs_hub_table.empty() ? std::span<const std::uint64_t>(hubs)
                                                         : request.bfs_hub_table});
      break;
    case app_request::kind::cc:
      out.cc = run_cc(exec, g.offset_span(), edges,
                      {.symmetric = g.symmetric(), .algorithm = request.cc});
      break;
    case app_request::kind::pagerank:
      out.pagerank = run_pagerank(exec, g.offset_span(), edges,
                                  {.iterations = request.iterations,
                                   .tolerance = request.tolerance,
                                   .algorithm = request.pagerank,
                                   .out_offsets = request.pagerank_out_offsets});
      break;
  }
  if (auto s = edges.stats()) out.stats = *s;
}

// Proactive tiling: the file's neighbour ids copied a partition at a time from the image.
template <class Exec>
void run_tiled(Exec& exec, const graph_file& g, const backing_store& image,
               std::uint64_t tile_bytes, const app_request& request, app_outcome& out) {
  auto run = [&]<class Id>(Id*) {
    const auto* ids = reinterpret_cast<const Id*>(image.data() + g.header.neighbors.offset);
    const tiled_edges<Id, Exec> edges(exec, g.offset_span(), ids, g.edge_count(), tile_bytes);
    run_on(exec, g, edges, request, out);
    const tile_traffic t = edges.traffic();
    out.partitions = t.partitions;
    out.tile_copies = t.copies;
    out.bytes_copied = t.bytes_copied;
  };
  if (g.id_bytes() == 4) {
    run(static_cast<std::uint32_t*>(nullptr));
  } else {
    run(static_cast<std::uint64_t*>(nullptr));
  }
}

}  // namespace

app_outcome run_app(const std::filesystem::path& bcsr, const storage_shape& shape,
                    const app_request& request) {
  const graph_file g = graph_file::open(bcsr);
  auto image = backing_store::from_file(bcsr.string(), false);
  host_stream stream(shape.workers);
  app_outcome out;
  auto run = [&](page_cache* cache, const device_set_ref* set) {
    with_edges(g, cache, set, image->data(), true, [&](const auto& edges) {
      if (request.software_warp_width > 1) {
        software_warp_executor exec(request.software_warps, request.software_warp_width);
        run_on(exec, g, edges, request, out);
      } else {
        cpu_executor exec(stream);
        run_on(exec, g, edges, request, out);
      }
    });
  };
  if (shape.host_memory) {
    run(nullptr, nullptr);
    return out;
  }
  if (shape.tile_bytes > 0) {
    if (request.software_warp_width > 1) {
      software_warp_executor exec(request.software_warps, request.software_warp_width);
      run_tiled(exec, g, *image, shape.tile_bytes, request, out);
    } else {
      cpu_executor exec(stream);
      run_tiled(exec, g, *image, shape.tile_bytes, request, out);
    }
    return out;
  }
  storage_config sc;
  sc.devices = shape.devices;
  sc.queues_per_device = 4;
  sc.queue_depth = 64;
  sc.model = shape.latency_us > 0 ? device_model::optane() : device_model::unlimited();
  sc.model.latency_us = shape.latency_us;
  sc.model.caps = false;
  sc.faults.bad_lba_begin = shape.bad_lba_begin;
  sc.faults.bad_lba_end = shape.bad_lba_end;
  emulated_storage storage(sc, image);
  cache_config cc;
  cc.line_bytes = shape.line_bytes;
  cc.capacity_bytes = shape.cache_lines * shape.line_bytes;
  cc.mode = shape.mode;
  if (shape.clock_chunk_one) cc.clock_chunk = 1;
  auto cache = std::make_unique<page_cache>(cc, stream);
  storage.start();
  const device_set_ref set = storage.ref();
  try {
    run(cache.get(), &set);
  } catch (...) {
    cache.reset();  // as the command line does: the cache goes before the controller stops
    storage.stop();
    throw;
  }
  cache.reset();
  storage.stop();
  return out;
}

app_outcome run_bfs_as(const std::filesystem::path& bcsr, std::uint64_t source,
                       const bfs_variant& variant, const storage_shape& shape,
                       std::span<const std::uint64_t> hub_table) {
  app_request r;
  r.app = app_request::kind::bfs;
  r.source = source;
  variant.apply(r);
  r.bfs_hub_table = hub_table;
  if (!hub_table.empty()) r.bfs_hubs = true;
  return run_app(bcsr, shape, r);
}

}  // namespace bam::apps::testing
