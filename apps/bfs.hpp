#pragma once
/// @file
/// Breadth-first search over a graph whose neighbour ids live on storage.
///
/// Level synchronous and frontier based: level d's frontier (a list of vertices) is expanded
/// by one launch (bfs_kernels.hpp) that builds level d+1's frontier; the host reads its size
/// and stops when it is empty. Each adjacency list is read exactly once, so the bytes the
/// traversal needs are (sum of the reached vertices' degrees) x id size, and the work does not
/// grow with the number of levels (a topology-driven BFS scans every vertex at every level).
///
/// A large frontier is expanded by scanning the vertices in id order instead (bfs_scan_kernel):
/// the same lists, read in the order they lie on storage, so concurrent warps share cache
/// lines; a list of vertices in discovery order would touch lines at random, and a cache much
/// smaller than the graph would load each line once per list instead of once per level.
///
///     apps::cpu_executor exec(stream);
///     apps::bfs_result r = apps::run_bfs(exec, offsets, apps::array_edges(ids), {.source = s});

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <bam/error.hpp>

#include "apps/bfs_kernels.hpp"
#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

struct bfs_options {
  std::uint64_t source = 0;
  /// A level whose frontier holds more than n / scan_divisor vertices is expanded by a scan
  /// in vertex order; 0: always expand the frontier list.
  std::uint64_t scan_divisor = 64;
};

struct bfs_result {
  std::vector<std::int32_t> depths;           ///< per vertex; unreached (-1) if not reached
  std::vector<std::uint64_t> level_vertices;  ///< vertices at each depth 0, 1, ...
  std::uint64_t scanned_levels = 0;           ///< levels expanded by a scan in vertex order
  std::uint64_t reached = 0;
  std::uint64_t edges_traversed = 0;  ///< adjacency entries read: sum of reached degrees
  double seconds = 0;                 ///< the traversal (launches and frontier sizes) alone
};

/// Runs BFS from `options.source`. `offsets` are the graph's n + 1 vertex offsets in host
/// memory; `edges` a neighbour source (edges.hpp). Throws bam::input_error for a bad source
/// or corrupt ids, bam::nvme_error for an I/O error a kernel met.
template <class Exec, class Edges>
bfs_result run_bfs(Exec& exec, std::span<const std::uint64_t> offsets, const Edges& edges,
                   const bfs_options& options) {
  const std::uint64_t n = checked_vertex_count(offsets, edges.size(), "bfs");
  if (options.source >= n) {
    throw input_error("bfs: source vertex " + std::to_string(options.source) +
                      " is not below the vertex count " + std::to_string(n));
  }
  auto offsets_d = upload_offsets(exec, offsets);
  auto depths = exec.template allocate<std::int32_t>(n);
  auto frontier = exec.template allocate<std::uint64_t>(n);
  auto next = exec.template allocate<std::uint64_t>(n);
  auto counters = exec.template allocate<std::uint64_t>(2);
  fill(exec, depths, unreached);
  const std::int32_t zero_depth = 0;
  exec.upload(depths, options.source, std::span<const std::int32_t>(&zero_depth, 1));
  exec.upload(frontier, 0, std::span<const std::uint64_t>(&options.source, 1));
  const std::uint64_t zeros[2] = {0, 0};
  exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));

  bfs_result r;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t size = 1;
  for (std::int32_t depth = 1; size > 0; ++depth) {
    r.level_vertices.push_back(size);
    const bfs_claim claim{depths.data(), next.data(), counters.data(), depth};
    using view = typename Edges::view_type;
    if (options.scan_divisor != 0 && size > n / options.scan_divisor) {
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape =
            within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
        exec.launch(shape,
                    bfs_scan_kernel<view>{view_for(shape), offsets_d.data(), slice, claim, n});
      });
      ++r.scanned_levels;
    } else {
      const std::uint64_t listed = size;
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape = within(exec.shape_for(listed), edges.max_launch_threads());
        exec.launch(shape, bfs_expand_kernel<view>{view_for(shape), offsets_d.data(), slice,
                                                   frontier.data(), listed, claim, n});
      });
    }
    std::uint64_t found[2];
    exec.download(counters, 0, std::span<std::uint64_t>(found));
    edges.check();
    check_bad_ids(found[1], n, "bfs");
    size = found[0];
    exec.upload(counters, 0, std::span<const std::uint64_t>(zeros, 1));
    std::swap(frontier, next);
    if (depth == std::numeric_limits<std::int32_t>::max() && size > 0) {
      throw input_error("bfs: more levels than a 32-bit depth holds");
    }
  }
  r.seconds = seconds_since(start);

  r.depths.resize(n);
  exec.download(depths, 0, std::span<std::int32_t>(r.depths));
  for (std::uint64_t v = 0; v < n; ++v) {
    if (r.depths[v] == unreached) continue;
    ++r.reached;
    r.edges_traversed += offsets[v + 1] - offsets[v];
  }
  return r;
}

}  // namespace bam::apps
