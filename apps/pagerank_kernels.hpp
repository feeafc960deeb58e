#pragma once
/// @file
/// PageRank kernels: one power iteration is prepare (contributions, dangling mass), push
/// (each vertex adds its contribution to its out-neighbours) or pull (each vertex sums its
/// in-neighbours' contributions), and apply (damping, dangling mass spread evenly, change since
/// the last iteration). Portable (the app kernel model); the driver is pagerank.hpp.
///
/// Sums go through relaxed atomic adds: each is read only by a later launch or the host,
/// after the launch that added to it has finished (stream order publishes it).

#include <bit>
#include <cstdint>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>

#include "apps/kernel_support.hpp"

namespace bam::apps {

/// Indices into the iteration's scalars.
inline constexpr unsigned pagerank_dangling = 0;  ///< rank held by vertices without out-edges
inline constexpr unsigned pagerank_change = 1;    ///< L1 distance to the previous ranks

/// contrib[v] = rank[v] / outdeg(v) (0 for a dangling vertex, whose rank is summed instead);
/// incoming[v] = 0.
struct pagerank_prepare_kernel {
  const std::uint64_t* offsets;
  const double* rank;
  double* contrib;
  double* incoming;
  double* scalars;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    double dangling = 0;
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      const std::uint64_t degree = offsets[v + 1] - offsets[v];
      if (degree == 0) {
        dangling += rank[v];
        contrib[v] = 0;
      } else {
        contrib[v] = rank[v] / static_cast<double>(degree);
      }
      incoming[v] = 0;
    }
    // relaxed: a sum read after the launch (one add per thread, not per vertex).
    if (dangling != 0) {
      atomic_ref<double>(scalars[pagerank_dangling]).fetch_add(dangling, order::relaxed);
    }
  }
};

/// incoming[v] += contrib[u] for every edge u -> v of `slice`: a warp per vertex u, lanes over
/// its out-neighbours (push: needs only out-edges, so it works for any graph).
template <class View>
struct pagerank_push_kernel {
  View ids;
  const std::uint64_t* offsets;
  edge_slice slice;
  const double* contrib;
  double* incoming;
  std::uint64_t* bad_ids;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    for (std::uint64_t u = slice.vertex_begin + w.warp; u < slice.vertex_end; u += w.warps) {
      const double c = contrib[u];
      for_each_neighbour(ids, w, slice, offsets[u], offsets[u + 1], n, bad_ids,
                         [&](std::uint64_t v) {
                           // relaxed: a sum read by the next launch.
                           atomic_ref<double>(incoming[v]).fetch_add(c, order::relaxed);
                         });
    }
  }
};

/// incoming[v] += sum of contrib[u] over the entries u of v's list in `slice` (the in-list: on
/// a symmetric graph the out-list is one): a warp per vertex v, lanes over its list, one add per
/// vertex. Each list is read once per iteration and no add contends with another, where push
/// adds once per edge into random vertices. A list split over tiled partitions adds a piece
/// per launch, hence the add rather than a store.
template <class View>
struct pagerank_pull_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< of the lists read (in-lists)
  edge_slice slice;
  const double* contrib;
  double* incoming;
  std::uint64_t* bad_ids;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    for (std::uint64_t v = slice.vertex_begin + w.warp; v < slice.vertex_end; v += w.warps) {
      double sum = 0;
      for_each_neighbour(ids, w, slice, offsets[v], offsets[v + 1], n, bad_ids,
                         [&](std::uint64_t u) { sum += contrib[u]; });
      add_warp_sum(incoming[v], sum, w);
    }
  }

  // Adds the lanes' partial sums to `target`. On a GPU the warp's lanes meet in a butterfly of
  // shuffles after the list (__shfl_sync waits for the lanes still reading) and lane 0 adds
  // once. On the host each lane adds its own: a CPU thread is a warp of one, and the software
  // warps of the tests reconverge only where every lane calls active_mask() (a lane still in
  // the list's reads would meet a shuffle there).
  BAM_HD static void add_warp_sum(double& target, double sum, const warp_position& w) {
#if BAM_DEVICE_PASS
    for (unsigned step = w.width / 2; step > 0; step /= 2) {
      sum +=
          std::bit_cast<double>(warp::shfl(~0u, std::bit_cast<std::uint64_t>(sum), w.lane ^ step));
    }
    if (w.lane != 0) return;
#else
    (void)w;
#endif
    // relaxed: a sum read by the next launch.
    if (sum != 0) atomic_ref<double>(target).fetch_add(sum, order::relaxed);
  }
};

/// rank[v] = (1 - d) / n + d * (incoming[v] + dangling / n), and the L1 change.
struct pagerank_apply_kernel {
  const double* incoming;
  double* rank;
  double* scalars;
  std::uint64_t n;
  double damping;

  BAM_HD void operator()(thread_index t) const {
    const double count = static_cast<double>(n);
    // Written by the prepare launch, which has finished.
    const double spread = scalars[pagerank_dangling] / count;
    const double base = (1.0 - damping) / count;
    double change = 0;
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      const double next = base + damping * (incoming[v] + spread);
      const double diff = next - rank[v];
      change += diff < 0 ? -diff : diff;
      rank[v] = next;
    }
    // relaxed: a sum read by the host after the launch.
    if (change != 0) {
      atomic_ref<double>(scalars[pagerank_change]).fetch_add(change, order::relaxed);
    }
  }
};

}  // namespace bam::apps
