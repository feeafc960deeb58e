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
/// Direction-optimizing (Beamer et al., SC 2012), the default on a symmetric graph: when the
/// frontier's lists hold more than 1/alpha of the edges not yet explored, a level is taken
/// bottom-up instead (bfs_bottom_up_kernel): every unreached vertex reads its own list only
/// until it meets a frontier vertex, so the large middle levels, where nearly every vertex is
/// reached, read a segment or two per vertex instead of every edge of the frontier. Once the
/// frontier shrinks below n/beta vertices the remaining levels go top-down again. Each edge not
/// read is I/O not done; the depths are the same (a vertex gets its depth from the level
/// structure, whichever direction found it). A directed graph has no in-lists to search, so
/// there BFS runs top-down and the result says it fell back.
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

enum class bfs_algorithm : std::uint8_t {
  direction_optimizing,  ///< top-down and bottom-up levels (symmetric graphs)
  top_down,              ///< every level expands the frontier's lists
};

/// "do" or "top-down" (the command line's names).
[[nodiscard]] inline const char* to_string(bfs_algorithm a) {
  return a == bfs_algorithm::direction_optimizing ? "do" : "top-down";
}

struct bfs_options {
  std::uint64_t source = 0;
  /// A top-down level whose frontier holds more than n / scan_divisor vertices is expanded by a
  /// scan in vertex order; 0: always expand the frontier list.
  std::uint64_t scan_divisor = 64;
  bfs_algorithm algorithm = bfs_algorithm::direction_optimizing;
  /// The graph stores every edge both ways (the file's flag): bottom-up levels need it.
  bool symmetric = false;
  /// Go bottom-up when the frontier's edges exceed the unexplored edges / alpha; back top-down
  /// when the frontier shrinks below n / beta vertices. Beamer's and GAP's values (15 and 18),
  /// not tuned here (on the scale-18 Kronecker graph they take 3 of its 5 levels bottom-up).
  double alpha = 15;
  double beta = 18;
};

struct bfs_result {
  std::vector<std::int32_t> depths;           ///< per vertex; unreached (-1) if not reached
  std::vector<std::uint64_t> level_vertices;  ///< vertices at each depth 0, 1, ...
  std::uint64_t scanned_levels = 0;           ///< top-down levels expanded by a scan in id order
  std::uint64_t bottom_up_levels = 0;         ///< levels taken bottom-up
  std::uint64_t reached = 0;
  std::uint64_t edges_traversed = 0;  ///< sum of reached degrees (what TEPS counts)
  std::uint64_t edges_read = 0;       ///< adjacency entries actually read from the source
  bfs_algorithm algorithm = bfs_algorithm::top_down;  ///< what ran
  bool fell_back = false;  ///< direction-optimizing asked for on a directed graph
  double seconds = 0;      ///< the traversal (launches and frontier sizes) alone
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
  if (!(options.alpha > 0) || !(options.beta > 0)) {
    throw input_error("bfs: alpha and beta must be positive");
  }
  auto offsets_d = upload_offsets(exec, offsets);
  auto depths = exec.template allocate<std::int32_t>(n);
  auto frontier = exec.template allocate<std::uint64_t>(n);
  auto next = exec.template allocate<std::uint64_t>(n);
  auto counters = exec.template allocate<std::uint64_t>(bfs_counter::count);
  fill(exec, depths, unreached);
  const std::int32_t zero_depth = 0;
  exec.upload(depths, options.source, std::span<const std::int32_t>(&zero_depth, 1));
  exec.upload(frontier, 0, std::span<const std::uint64_t>(&options.source, 1));
  const std::uint64_t zeros[bfs_counter::count] = {};
  exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));

  bfs_result r;
  const bool optimizing = options.algorithm == bfs_algorithm::direction_optimizing;
  r.fell_back = optimizing && !options.symmetric;
  r.algorithm = optimizing && options.symmetric ? bfs_algorithm::direction_optimizing
                                                : bfs_algorithm::top_down;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t size = 1;
  std::uint64_t frontier_edges = offsets[options.source + 1] - offsets[options.source];
  // Edges of the vertices not reached yet: what a top-down traversal still has to read.
  std::uint64_t unexplored = edges.size() - frontier_edges;
  bool bottom_up = false;
  for (std::int32_t depth = 1; size > 0; ++depth) {
    r.level_vertices.push_back(size);
    const bfs_claim claim{depths.data(), next.data(), counters.data(), offsets_d.data(), depth};
    using view = typename Edges::view_type;
    if (r.algorithm == bfs_algorithm::direction_optimizing) {
      // Beamer's switch: bottom-up pays once the frontier's edges outweigh a fraction of what
      // is left (most of those edges would find vertices already reached), top-down again once
      // the frontier is small and shrinking (the unreached vertices are then mostly far away,
      // and each would read its whole list in vain).
      const std::uint64_t previous =
          r.level_vertices.size() > 1 ? r.level_vertices[r.level_vertices.size() - 2] : 0;
      if (!bottom_up) {
        bottom_up =
            static_cast<double>(frontier_edges) > static_cast<double>(unexplored) / options.alpha;
      } else if (size < previous &&
                 static_cast<double>(size) < static_cast<double>(n) / options.beta) {
        bottom_up = false;
      }
    }
    if (bottom_up) {
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape =
            within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
        exec.launch(shape,
                    bfs_bottom_up_kernel<view>{view_for(shape), offsets_d.data(), slice, claim, n});
      });
      ++r.bottom_up_levels;
    } else if (options.scan_divisor != 0 && size > n / options.scan_divisor) {
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape =
            within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
        exec.launch(shape,
                    bfs_scan_kernel<view>{view_for(shape), offsets_d.data(), slice, claim, n});
      });
      ++r.scanned_levels;
      r.edges_read += frontier_edges;  // every list of the frontier, whole
    } else {
      const std::uint64_t listed = size;
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape = within(exec.shape_for(listed), edges.max_launch_threads());
        exec.launch(shape, bfs_expand_kernel<view>{view_for(shape), offsets_d.data(), slice,
                                                   frontier.data(), listed, claim, n});
      });
      r.edges_read += frontier_edges;
    }
    std::uint64_t found[bfs_counter::count];
    exec.download(counters, 0, std::span<std::uint64_t>(found));
    edges.check();
    check_bad_ids(found[bfs_counter::bad_ids], n, "bfs");
    size = found[bfs_counter::next_size];
    frontier_edges = found[bfs_counter::next_edges];
    unexplored -= frontier_edges;
    r.edges_read += found[bfs_counter::read];
    exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));
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
