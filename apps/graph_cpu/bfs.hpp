#pragma once
/// @file
/// Direction-optimizing breadth-first search (Beamer, Asanović and Patterson, SC'12) on the
/// CPU with OpenMP: the reference `bam bench graph-cpu` times bam's GPU BFS against.
///
/// Top-down steps expand a frontier queue (each thread claims unvisited neighbours with a
/// compare-and-swap on their depth). When the frontier's out-edges outgrow the edges still
/// unexplored / alpha, steps go bottom-up: every unvisited vertex scans its neighbours for one
/// in the frontier (a bitmap) and stops at the first; once the frontier shrinks again (below
/// n / beta and no longer growing) they go back to top-down. Bottom-up steps read a vertex's
/// out-list as its in-list, so they are only right on a symmetric graph: on a directed one
/// pass `direction_optimizing = false` (top-down only).
///
///     graph_cpu::bfs_result r = graph_cpu::bfs(g.view(), {.source = s});

#include <cstdint>
#include <span>

#include "apps/graph_cpu/graph.hpp"

namespace bam::apps::graph_cpu {

struct bfs_options {
  std::uint64_t source = 0;
  /// Switch to bottom-up steps when they pay (symmetric graphs only).
  bool direction_optimizing = true;
  /// Go bottom-up once the frontier's edges exceed the unexplored edges / alpha.
  double alpha = 15;
  /// Go back top-down once the frontier holds fewer than n / beta vertices and shrinks.
  double beta = 18;
  /// Each vertex's k highest-degree neighbours (the graph file's hubs section, n x k ids, each
  /// below n as graph::load_hubs checks), or empty: bottom-up steps test them before the list
  /// and skip a list of at most k entries, as bam bfs does.
  /// Not GAP's algorithm, so off unless asked for (`bam bench graph-cpu --hubs on`).
  std::span<const std::uint64_t> hubs = {};
};

struct bfs_result {
  host_buffer<std::int32_t> depths;  ///< per vertex: its depth, or -1 if not reached
  std::uint64_t reached = 0;         ///< vertices with a depth
  unsigned top_down_steps = 0;
  unsigned bottom_up_steps = 0;
};

/// Runs BFS from `options.source` on every OpenMP thread. Throws bam::input_error for a source
/// not below n.
template <class Id>
[[nodiscard]] bfs_result bfs(csr_view<Id> g, const bfs_options& options);

extern template bfs_result bfs(csr_view<std::uint32_t>, const bfs_options&);
extern template bfs_result bfs(csr_view<std::uint64_t>, const bfs_options&);

}  // namespace bam::apps::graph_cpu
