#pragma once
/// @file
/// PageRank by power iteration over a graph whose neighbour ids live on storage.
///
/// Pull (the default where in-lists exist): each vertex sums rank / out-degree over its
/// in-neighbours, reading each list once per iteration with one add per vertex. The lists read
/// must be in-lists: a symmetric graph's own, or a directed graph's transpose (`bam graph
/// convert --transpose`) with the out-degrees taken from the graph itself (`out_offsets`).
/// Push: each vertex adds rank / out-degree to its out-neighbours with an atomic add per edge,
/// so only out-edges are needed and any graph works. Damping d
/// (0.85), the rank of vertices without out-edges spread evenly over all vertices, ranks
/// starting at 1/n and summing to 1. Runs a fixed number of iterations, or stops earlier once
/// an iteration changes the ranks by less than a tolerance (L1 distance).
///
///     apps::pagerank_result r = apps::run_pagerank(exec, offsets, edges, {.iterations = 20});

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <bam/error.hpp>

#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"
#include "apps/pagerank_kernels.hpp"

namespace bam::apps {

enum class pagerank_algorithm { push, pull };

struct pagerank_options {
  unsigned iterations = 20;  ///< at most this many iterations
  double tolerance = 0;      ///< > 0: stop once an iteration's L1 change is below it
  double damping = 0.85;
  pagerank_algorithm algorithm = pagerank_algorithm::push;
  /// Pull over a transpose: the offsets of the graph itself (its out-degrees), while `offsets`
  /// and the edges are the transpose's. Empty: the lists read are the graph's own.
  std::span<const std::uint64_t> out_offsets = {};
};

struct pagerank_result {
  std::vector<double> ranks;
  unsigned iterations = 0;            ///< iterations run
  double last_change = 0;             ///< L1 change of the last iteration
  std::uint64_t edges_traversed = 0;  ///< adjacency entries read: iterations x m
  double seconds = 0;                 ///< the iterations alone
};

/// Runs PageRank. Throws bam::input_error for bad options or corrupt ids, bam::nvme_error for
/// an I/O error a kernel met.
template <class Exec, class Edges>
pagerank_result run_pagerank(Exec& exec, std::span<const std::uint64_t> offsets, const Edges& edges,
                             const pagerank_options& options) {
  const std::uint64_t n = checked_vertex_count(offsets, edges.size(), "pagerank");
  if (options.iterations == 0) throw input_error("pagerank: iterations must be at least 1");
  if (!(options.damping >= 0 && options.damping < 1)) {
    throw input_error("pagerank: damping must be in [0, 1), got " +
                      std::to_string(options.damping));
  }
  if (!(options.tolerance >= 0)) throw input_error("pagerank: tolerance must not be negative");
  const bool pull = options.algorithm == pagerank_algorithm::pull;
  const bool transposed = !options.out_offsets.empty();
  if (transposed && (!pull || options.out_offsets.size() != offsets.size() ||
                     options.out_offsets.back() != offsets.back())) {
    throw input_error(
        "pagerank: out-degrees of another graph are for pull over a transpose with as many "
        "vertices and edges");
  }
  auto offsets_d = upload_offsets(exec, offsets);
  // The out-degrees: the lists' own offsets, or the graph's when the lists are a transpose's.
  auto out_offsets_d = upload_offsets(exec, transposed ? options.out_offsets : offsets.first(1));
  const std::uint64_t* degree_offsets = transposed ? out_offsets_d.data() : offsets_d.data();
  auto rank = exec.template allocate<double>(n);
  auto contrib = exec.template allocate<double>(n);
  auto incoming = exec.template allocate<double>(n);
  auto scalars = exec.template allocate<double>(2);
  auto bad_ids = exec.template allocate<std::uint64_t>(1);
  fill(exec, rank, 1.0 / static_cast<double>(n));
  const std::uint64_t zero = 0;
  exec.upload(bad_ids, 0, std::span<const std::uint64_t>(&zero, 1));
  const double zeros[2] = {0, 0};

  pagerank_result r;
  const auto start = std::chrono::steady_clock::now();
  while (r.iterations < options.iterations) {
    exec.upload(scalars, 0, std::span<const double>(zeros));
    exec.launch(exec.shape_for(n),
                pagerank_prepare_kernel{degree_offsets, rank.data(), contrib.data(),
                                        incoming.data(), scalars.data(), n});
    edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
      const launch_shape shape =
          within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
      using view = typename Edges::view_type;
      if (pull) {
        exec.launch(shape,
                    pagerank_pull_kernel<view>{view_for(shape), offsets_d.data(), slice,
                                               contrib.data(), incoming.data(), bad_ids.data(), n});
      } else {
        exec.launch(shape,
                    pagerank_push_kernel<view>{view_for(shape), offsets_d.data(), slice,
                                               contrib.data(), incoming.data(), bad_ids.data(), n});
      }
    });
    exec.launch(exec.shape_for(n), pagerank_apply_kernel{incoming.data(), rank.data(),
                                                         scalars.data(), n, options.damping});
    double sums[2];
    exec.download(scalars, 0, std::span<double>(sums));
    edges.check();
    std::uint64_t bad = 0;
    exec.download(bad_ids, 0, std::span<std::uint64_t>(&bad, 1));
    check_bad_ids(bad, n, "pagerank");
    ++r.iterations;
    r.last_change = sums[pagerank_change];
    if (options.tolerance > 0 && r.last_change < options.tolerance) break;
  }
  r.seconds = seconds_since(start);
  r.edges_traversed = std::uint64_t{r.iterations} * edges.size();
  r.ranks.resize(n);
  exec.download(rank, 0, std::span<double>(r.ranks));
  return r;
}

}  // namespace bam::apps
