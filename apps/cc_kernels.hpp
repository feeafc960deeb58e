#pragma once
/// @file
/// Connected-components kernels: a concurrent union-find (the hooking of Shiloach-Vishkin and
/// ECL-CC, done asynchronously in one pass over the edges), Afforest's sampling and finishing
/// passes over the same forest, and a pointer jump. Portable (the app kernel model); the driver
/// is cc.hpp.
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

/// Entries of [begin, end) inside `slice`: what a walk over that range clipped to the slice
/// reads.
[[nodiscard]] BAM_HD inline std::uint64_t clipped_entries(const edge_slice& slice,
                                                          std::uint64_t begin, std::uint64_t end) {
  return slice.clip(begin, end) ? end - begin : 0;
}

/// Adds a warp's count of entries read (the same in every lane) to counters[1], once.
BAM_HD inline void add_entries_read(const warp_position& w, std::uint64_t* counters,
                                    std::uint64_t read) {
  if (w.lane != 0 || read == 0) return;
  // relaxed: a sum the host reads after the launch has finished.
  atomic_ref<std::uint64_t>(counters[1]).fetch_add(read, order::relaxed);
}

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

/// Afforest's sampling pass: a warp per vertex u of `slice` unites u with the first `rounds`
/// entries of its list (those of them inside the slice), the whole of what it reads. On graphs
/// with a giant component these few links already put most vertices in it (Sutton et al., IPDPS
/// 2018), so the finishing pass can leave its lists unread. Self loops are skipped.
/// A warp takes runs of consecutive vertices (for_each_vertex's batches), so the short lists
/// sharing a line are sampled by one warp one after another rather than by as many warps at
/// once: a line is then loaded once and not again for a warp that arrives after its eviction
/// (urand25, 4 devices, H100: 1.06x the edge array moved, warp by warp).
template <class View>
struct cc_sample_kernel {
  View ids;
  const std::uint64_t* offsets;
  edge_slice slice;
  union_find_ref forest;
  std::uint64_t* counters;  ///< [0] bad ids, [1] entries read
  std::uint64_t n;
  std::uint64_t rounds;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    std::uint64_t read = 0;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, true, [](std::uint64_t) { return true; },
        [&](std::uint64_t u) {
          const std::uint64_t begin = offsets[u];
          const std::uint64_t end =
              offsets[u + 1] - begin > rounds ? begin + rounds : offsets[u + 1];
          read += clipped_entries(slice, begin, end);
          for_each_neighbour(ids, w, slice, begin, end, n, &counters[0], [&](std::uint64_t v) {
            if (v != u) forest.unite(u, v);
          });
        });
    add_entries_read(w, counters, read);
  }
};

/// labels[i] = root of samples[i]: the host picks the most frequent root among them as the
/// giant component without reading the whole forest back.
struct cc_gather_roots_kernel {
  union_find_ref forest;
  const std::uint64_t* samples;
  std::uint64_t* labels;
  std::uint64_t count;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < count; i += t.count) labels[i] = forest.find(samples[i]);
  }
};

/// in_giant[v] = 1 where v is in the component of `giant` after the sampling pass, else 0: the
/// finishing pass reads this snapshot rather than asking the forest, which that pass changes,
/// so every lane of a warp sees the same answer and the lists skipped do not depend on timing.
struct cc_mark_giant_kernel {
  union_find_ref forest;
  std::uint8_t* in_giant;
  std::uint64_t n;
  std::uint64_t giant;

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t root = forest.find(giant);
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      in_giant[v] = forest.find(v) == root ? 1 : 0;
    }
  }
};

/// Afforest's finishing pass: every vertex of `slice` outside the giant component unites
/// itself with the entries of its list past the `rounds` sampled ones; the lists of the giant
/// component's vertices are not read at all. Valid on a symmetric graph only: an edge {u, v}
/// is then stored as u -> v and v -> u, and if both ends were skipped both were in the giant
/// component already, so the edge is inside one component anyway; otherwise the end that was
/// not skipped united it (or sampled it). Runs of consecutive vertices per warp, as sampling.
template <class View>
struct cc_finish_kernel {
  View ids;
  const std::uint64_t* offsets;
  edge_slice slice;
  union_find_ref forest;
  std::uint64_t* counters;  ///< [0] bad ids, [1] entries read
  std::uint64_t n;
  std::uint64_t rounds;
  const std::uint8_t* in_giant;  ///< cc_mark_giant_kernel's snapshot

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    std::uint64_t read = 0;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, true,
        [&](std::uint64_t u) { return in_giant[u] == 0; },
        [&](std::uint64_t u) {
          const std::uint64_t begin =
              offsets[u + 1] - offsets[u] > rounds ? offsets[u] + rounds : offsets[u + 1];
          const std::uint64_t end = offsets[u + 1];
          read += clipped_entries(slice, begin, end);
          for_each_neighbour(ids, w, slice, begin, end, n, &counters[0], [&](std::uint64_t v) {
            if (v != u) forest.unite(u, v);
          });
        });
    add_entries_read(w, counters, read);
  }
};

}  // namespace bam::apps
