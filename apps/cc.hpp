#pragma once
/// @file
/// Connected components of a graph taken as undirected, its neighbour ids on storage.
///
/// A concurrent union-find (cc_kernels.hpp): one launch initialises the forest, one (one per
/// partition when tiled) unites the ends of every edge while reading each adjacency list once
/// (a single pass over the data on storage, where label propagation or Shiloach-Vishkin read
/// every edge again on each of their O(diameter) or O(log n) rounds), one jumps every vertex to
/// its root. The label of a vertex is the smallest vertex id of its component, so partitions
/// compare exactly.
///
/// Afforest (Sutton, Ben-Nun and Barak, IPDPS 2018), the default on a symmetric graph, reads
/// less of the same forest: a pass links every vertex with its first two neighbours and
/// compresses; the most frequent root among 1024 sampled vertices names the giant component;
/// a last pass reads the rest of the lists of the vertices outside it (as it stood after
/// sampling) only. On a graph with one
/// giant component (kron, urand, most real graphs) most lists are then read for two entries.
/// The labels are the same (the smallest vertex of each component: the forest only ever hooks
/// a root under a smaller one). It needs every edge stored both ways, so a directed graph runs
/// the union-find pass and the result says it fell back.
///
///     apps::cc_result r = apps::run_cc(exec, offsets, apps::array_edges(ids), {.symmetric = s});

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "apps/cc_kernels.hpp"
#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

enum class cc_algorithm : std::uint8_t {
  afforest,    ///< sample, then finish outside the giant component (symmetric graphs)
  union_find,  ///< one pass over every edge
};

/// "afforest" or "union-find" (the command line's names).
[[nodiscard]] inline const char* to_string(cc_algorithm a) {
  return a == cc_algorithm::afforest ? "afforest" : "union-find";
}

struct cc_options {
  /// Every edge is stored both ways (the file's symmetric flag): union-find unites each once,
  /// and Afforest may skip a list.
  bool symmetric = false;
  cc_algorithm algorithm = cc_algorithm::afforest;
  /// Afforest: neighbours each vertex links in the sampling pass (the paper's 2), and vertices
  /// whose roots vote for the giant component (GAP's 1024).
  std::uint64_t neighbour_rounds = 2;
  std::uint64_t samples = 1024;
};

struct cc_result {
  std::vector<std::uint64_t> labels;  ///< per vertex: the smallest vertex of its component
  std::uint64_t components = 0;
  std::uint64_t largest = 0;          ///< vertices in the largest component
  std::uint64_t edges_traversed = 0;  ///< every stored edge (what TEPS counts)
  std::uint64_t edges_read = 0;       ///< adjacency entries actually read from the source
  cc_algorithm algorithm = cc_algorithm::union_find;  ///< what ran
  bool fell_back = false;                             ///< Afforest asked for on a directed graph
  std::uint64_t giant_sample = 0;                     ///< Afforest: the root the sample voted for
  /// Afforest: the units a sample stays within (afforest_sample_end): cache lines, or 128-byte
  /// segments over memory and tiles.
  entry_units sample_units;
  bool sampled_by_units = false;  ///< Afforest's sampling walked a cache's lines (a warp each)
  double seconds = 0;             ///< the launches alone
};

namespace detail {

/// Vertices spread over [0, n) by a fixed sequence (splitmix64), so runs pick the same giant
/// component and read the same lists.
inline std::vector<std::uint64_t> sample_vertices(std::uint64_t n, std::uint64_t count) {
  std::vector<std::uint64_t> out(count);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::uint64_t& v : out) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    v = (z ^ (z >> 31)) % n;
  }
  return out;
}

/// The most frequent value (the smallest of those tied).
inline std::uint64_t most_frequent(std::vector<std::uint64_t> values) {
  std::sort(values.begin(), values.end());
  std::uint64_t best = values.front();
  std::uint64_t best_count = 0;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (j - i > best_count) {
      best = values[i];
      best_count = j - i;
    }
    i = j;
  }
  return best;
}

}  // namespace detail

/// Labels the components. Throws bam::input_error for corrupt ids, bam::nvme_error for an I/O
/// error a kernel met.
template <class Exec, class Edges>
cc_result run_cc(Exec& exec, std::span<const std::uint64_t> offsets, const Edges& edges,
                 const cc_options& options) {
  const std::uint64_t n = checked_vertex_count(offsets, edges.size(), "cc");
  auto offsets_d = upload_offsets(exec, offsets);
  auto parent = exec.template allocate<std::uint64_t>(n);
  auto counters = exec.template allocate<std::uint64_t>(2);  // bad ids, entries read
  const std::uint64_t zeros[2] = {0, 0};
  exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));

  cc_result r;
  const bool afforest = options.algorithm == cc_algorithm::afforest;
  r.fell_back = afforest && !options.symmetric;
  r.algorithm = afforest && options.symmetric ? cc_algorithm::afforest : cc_algorithm::union_find;
  // Afforest's snapshot of the giant component; it lives as long as the launches reading it.
  auto in_giant = exec.template allocate<std::uint8_t>(
      r.algorithm == cc_algorithm::afforest ? n : std::uint64_t{0});
  using view = typename Edges::view_type;
  const auto start = std::chrono::steady_clock::now();
  const union_find_ref forest{parent.data()};
  exec.launch(exec.shape_for(n), cc_init_kernel{parent.data(), n});
  if (r.algorithm == cc_algorithm::union_find) {
    edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
      const launch_shape shape =
          within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
      exec.launch(shape, cc_hook_kernel<view>{view_for(shape), offsets_d.data(), slice, forest,
                                              counters.data(), n, options.symmetric});
    });
    r.edges_read = edges.size();
  } else {
    const std::uint64_t rounds = options.neighbour_rounds;
    const entry_units units = edges.units();
    r.sample_units = units;
    // Through a cache, a warp per line (cc_sample_kernel): the table of each line's first vertex.
    r.sampled_by_units = edges.stats().has_value();
    const std::uint64_t unit_count = r.sampled_by_units ? units.count(edges.size()) : 0;
    auto unit_first = exec.template allocate<std::uint64_t>(unit_count);
    if (unit_count != 0) {
      fill(exec, unit_first, cc_unit_first_kernel::no_vertex);
      exec.launch(exec.shape_for(n),
                  cc_unit_first_kernel{offsets_d.data(), n, units, unit_first.data()});
    }
    edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
      // By units: a warp per line of the slice, as many warps as the lines ask for.
      const launch_shape shape =
          within(exec.shape_for(unit_count != 0 ? units.spanned(slice.first, slice.last) * 32
                                                : slice.vertices()),
                 edges.max_launch_threads());
      exec.launch(shape, cc_sample_kernel<view>{view_for(shape), offsets_d.data(), slice, forest,
                                                counters.data(), n, rounds, units,
                                                unit_count != 0 ? unit_first.data() : nullptr});
    });
    // Compressed, every sampled vertex's parent is its root, and the finishing pass's
    // membership test is a load or two.
    exec.launch(exec.shape_for(n), cc_compress_kernel{forest, n});
    const std::vector<std::uint64_t> picks =
        detail::sample_vertices(n, std::max<std::uint64_t>(options.samples, 1));
    auto samples = exec.template allocate<std::uint64_t>(picks.size());
    auto roots = exec.template allocate<std::uint64_t>(picks.size());
    exec.upload(samples, 0, std::span<const std::uint64_t>(picks));
    exec.launch(exec.shape_for(picks.size()),
                cc_gather_roots_kernel{forest, samples.data(), roots.data(), picks.size()});
    std::vector<std::uint64_t> sampled_roots(picks.size());
    exec.download(roots, 0, std::span<std::uint64_t>(sampled_roots));
    r.giant_sample = detail::most_frequent(sampled_roots);
    exec.launch(exec.shape_for(n),
                cc_mark_giant_kernel{forest, in_giant.data(), n, r.giant_sample});
    edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
      const launch_shape shape =
          within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
      exec.launch(shape,
                  cc_finish_kernel<view>{view_for(shape), offsets_d.data(), slice, forest,
                                         counters.data(), n, rounds, units, in_giant.data()});
    });
  }
  exec.launch(exec.shape_for(n), cc_compress_kernel{forest, n});
  std::uint64_t counted[2] = {0, 0};
  exec.download(counters, 0, std::span<std::uint64_t>(counted));
  r.seconds = seconds_since(start);
  edges.check();
  check_bad_ids(counted[0], n, "cc");
  if (r.algorithm == cc_algorithm::afforest) r.edges_read = counted[1];

  r.labels.resize(n);
  exec.download(parent, 0, std::span<std::uint64_t>(r.labels));
  r.edges_traversed = edges.size();
  std::vector<std::uint64_t> sizes(n, 0);
  for (const std::uint64_t label : r.labels) ++sizes[label];
  for (const std::uint64_t s : sizes) {
    if (s == 0) continue;
    ++r.components;
    r.largest = std::max(r.largest, s);
  }
  return r;
}

}  // namespace bam::apps
