#pragma once
/// @file
/// Connected-components kernels: a concurrent union-find (the hooking of Shiloach-Vishkin and
/// ECL-CC, done asynchronously in one pass over the edges) and a final pointer jump. Portable
/// (the app kernel model); the driver is cc.hpp.
///
/// The forest lives in `parent` (n words, parent[v] = v for a root). Invariants, which hold at
/// every moment of the hooking pass whatever the interleaving:
/// - parent[v] <= v: a root is only ever hooked under a smaller root, and path halving only
///   replaces a parent by one of its ancestors. So there are no cycles, and the root of a
///   tree is its smallest vertex: the canonical label.
/// - Every value ever stored in parent[v] is an ancestor of v in every later forest (trees
///   only merge). So a thread that reads a stale parent still walks towards the root.
/// This is why every access below may be relaxed: no other data is published through the
/// parent words, and each compare-exchange needs only atomicity on its own word; the host and
/// the next launch read the forest after the launch has finished.

#include <cstdint>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>

#include "apps/kernel_support.hpp"

namespace bam::apps {

/// The forest's operations on one parent array.
struct union_find_ref {
  std::uint64_t* parent;

  [[nodiscard]] BAM_HD std::uint64_t load(std::uint64_t v) const {
    return atomic_ref<std::uint64_t>(parent[v]).load(order::relaxed);  // relaxed: see the file
  }

  /// The root of v's tree, halving the path on the way (each vertex passed is pointed at its
  /// grandparent: a racing store may undo another's shortcut, never break ancestry).
  [[nodiscard]] BAM_HD std::uint64_t find(std::uint64_t v) const {
    for (;;) {
      const std::uint64_t p = load(v);
      if (p == v) return v;
      const std::uint64_t g = load(p);
      if (g == p) return p;
      atomic_ref<std::uint64_t>(parent[v]).store(g, order::relaxed);  // relaxed: see the file
      v = g;
    }
  }

  /// Puts u and v in one tree: hooks the larger root under the smaller. A failed hook means
  /// the larger root was hooked meanwhile; the loop then follows it to its new root.
  BAM_HD void unite(std::uint64_t u, std::uint64_t v) const {
    for (;;) {
      u = find(u);
      v = find(v);
      if (u == v) return;
      if (u < v) {
        const std::uint64_t t = u;
        u = v;
        v = t;
      }
      std::uint64_t expected = u;
      // relaxed: only atomicity matters (u must still be a root); see the file.
      if (atomic_ref<std::uint64_t>(parent[u]).compare_exchange(expected, v, order::relaxed)) {
        return;
      }
    }
  }
};

/// parent[v] = v.
struct cc_init_kernel {
  std::uint64_t* parent;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t v = t.id; v < n; v += t.count) parent[v] = v;
  }
};

/// Unites the ends of every edge of `slice`: a warp per vertex u reads u's neighbours there. For a
/// symmetric graph each edge is stored both ways and is united once, from its larger end; otherwise
/// every stored edge is united (the graph is taken as undirected either way).
template <class View>
struct cc_hook_kernel {
  View ids;
  const std::uint64_t* offsets;
  edge_slice slice;
  union_find_ref forest;
  std::uint64_t* bad_ids;
  std::uint64_t n;
  bool symmetric;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    for (std::uint64_t u = slice.vertex_begin + w.warp; u < slice.vertex_end; u += w.warps) {
      for_each_neighbour(ids, w, slice, offsets[u], offsets[u + 1], n, bad_ids,
                         [&](std::uint64_t v) {
                           if (v == u || (symmetric && v > u)) return;
                           forest.unite(u, v);
                         });
    }
  }
};

/// parent[v] = root of v: afterwards every vertex names its component's smallest vertex.
/// Runs after the hooking launch, so the forest no longer changes shape, only gets shorter.
struct cc_compress_kernel {
  union_find_ref forest;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      const std::uint64_t root = forest.find(v);
      atomic_ref<std::uint64_t>(forest.parent[v]).store(root, order::relaxed);  // see the file
    }
  }
};

}  // namespace bam::apps
