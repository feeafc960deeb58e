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
///     apps::cc_result r = apps::run_cc(exec, offsets, apps::array_edges(ids), {.symmetric = s});

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "apps/cc_kernels.hpp"
#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

struct cc_options {
  /// Every edge is stored both ways (the file's symmetric flag): each is united once.
  bool symmetric = false;
};

struct cc_result {
  std::vector<std::uint64_t> labels;  ///< per vertex: the smallest vertex of its component
  std::uint64_t components = 0;
  std::uint64_t largest = 0;          ///< vertices in the largest component
  std::uint64_t edges_traversed = 0;  ///< adjacency entries read: every stored edge, once
  double seconds = 0;                 ///< the three launches alone
};

/// Labels the components. Throws bam::input_error for corrupt ids, bam::nvme_error for an I/O
/// error a kernel met.
template <class Exec, class Edges>
cc_result run_cc(Exec& exec, std::span<const std::uint64_t> offsets, const Edges& edges,
                 const cc_options& options) {
  const std::uint64_t n = checked_vertex_count(offsets, edges.size(), "cc");
  auto offsets_d = upload_offsets(exec, offsets);
  auto parent = exec.template allocate<std::uint64_t>(n);
  auto bad_ids = exec.template allocate<std::uint64_t>(1);
  const std::uint64_t zero = 0;
  exec.upload(bad_ids, 0, std::span<const std::uint64_t>(&zero, 1));

  cc_result r;
  const auto start = std::chrono::steady_clock::now();
  const union_find_ref forest{parent.data()};
  exec.launch(exec.shape_for(n), cc_init_kernel{parent.data(), n});
  edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
    const launch_shape shape = within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
    exec.launch(shape, cc_hook_kernel<typename Edges::view_type>{view_for(shape), offsets_d.data(),
                                                                 slice, forest, bad_ids.data(), n,
                                                                 options.symmetric});
  });
  exec.launch(exec.shape_for(n), cc_compress_kernel{forest, n});
  std::uint64_t bad = 0;
  exec.download(bad_ids, 0, std::span<std::uint64_t>(&bad, 1));
  r.seconds = seconds_since(start);
  edges.check();
  check_bad_ids(bad, n, "cc");

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
