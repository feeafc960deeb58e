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

/// Where Afforest's sample of a list [begin, end) ends: after its first `rounds` entries, or
/// sooner at the end of the unit (cache line) holding its first entry, so a sample never loads
/// a second line. The finishing pass reads a list outside the giant component from there on.
[[nodiscard]] BAM_HD inline std::uint64_t afforest_sample_end(std::uint64_t begin,
                                                              std::uint64_t end,
                                                              std::uint64_t rounds,
                                                              const entry_units& units) {
  const std::uint64_t unit_end = (units.of(begin) + 1) * units.per_unit - units.phase;
  std::uint64_t e = end - begin > rounds ? begin + rounds : end;
  return e < unit_end ? e : unit_end;
}

/// unit_first[U] = the first vertex whose list starts in unit U (entries' units), left as it
/// was (no_vertex, filled before) for a unit where none starts. Exactly one vertex writes each
/// unit: the one whose predecessor starts in an earlier unit.
struct cc_unit_first_kernel {
  const std::uint64_t* offsets;  ///< n + 1
  std::uint64_t n;
  entry_units units;
  std::uint64_t* unit_first;  ///< units.count(m)

  static constexpr std::uint64_t no_vertex = ~std::uint64_t{0};

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t m = offsets[n];
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      const std::uint64_t begin = offsets[v];
      if (begin >= m) continue;  // empty lists at the end: no unit
      const std::uint64_t u = units.of(begin);
      if (v == 0 || units.of(offsets[v - 1]) < u) unit_first[u] = v;
    }
  }
};

/// Afforest's sampling pass: each vertex u of `slice` is united with the first `rounds` entries
/// of its list that lie in the unit of its first (afforest_sample_end; those of them inside the
/// slice), the whole of what it reads. On graphs with a giant component these few links already
/// put most vertices in it (Sutton et al., IPDPS 2018), so the finishing pass can leave its
/// lists unread. Self loops are skipped.
///
/// Two walks. With `unit_first` (an array on a cache): a warp per unit, over the vertices whose
/// lists start there, so each line is sampled by one warp and loaded once: the pass moves at
/// most the edge array's bytes (warps over runs of 32 vertices shared the lines at the runs'
/// ends, and one that came after the line's eviction loaded it again: urand25, 4 devices, H100,
/// 1.008x the edge array). Without (memory, tiles: nothing to load twice): runs of 32
/// consecutive vertices per warp (for_each_vertex's batches), which spreads work evenly where
/// a unit is 128 bytes.
template <class View>
struct cc_sample_kernel {
  View ids;
  const std::uint64_t* offsets;
  edge_slice slice;
  union_find_ref forest;
  std::uint64_t* counters;  ///< [0] bad ids, [1] entries read
  std::uint64_t n;
  std::uint64_t rounds;
  entry_units units;
  const std::uint64_t* unit_first = nullptr;  ///< cc_unit_first_kernel's table, or null

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    if (unit_first != nullptr) {
      add_entries_read(w, counters, by_units(w));
      return;
    }
    std::uint64_t read = 0;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, true,
        [&](std::uint64_t u) { return offsets[u] < offsets[u + 1]; },
        [&](std::uint64_t u) {
          const std::uint64_t begin = offsets[u];
          const std::uint64_t end = afforest_sample_end(begin, offsets[u + 1], rounds, units);
          read += clipped_entries(slice, begin, end);
          for_each_neighbour(ids, w, slice, begin, end, n, &counters[0], [&](std::uint64_t v) {
            if (v != u) forest.unite(u, v);
          });
        });
    add_entries_read(w, counters, read);
  }

  /// A warp per unit of the slice's entries, over the vertices whose lists start there, a
  /// warp's width at a time: lane j samples vertex v + j, and the warp reads the r-th sampled
  /// entry of every lane's vertex in one step. All of them lie in the unit, so a step is one
  /// line's access for the warp (the first pins the line in every lane's cursor, the rest read
  /// through the pin), where a vertex at a time made a line's sampling one access per vertex,
  /// one after another (urand25, 4 devices, H100: 0.46 s against 0.38 s for runs of vertices).
  /// Every lane runs every step, reading an entry of the unit where it has none of its own, so
  /// the reads' collectives find the whole warp. Returns the entries read (the same in every
  /// lane).
  BAM_HD std::uint64_t by_units(const warp_position& w) const {
    using id_type = typename View::value_type;
    const std::uint64_t vb = slice.vertex_begin;
    const std::uint64_t ve = slice.vertex_end;
    const std::uint64_t from = offsets[vb] > slice.first ? offsets[vb] : slice.first;
    const std::uint64_t to = offsets[ve] < slice.last ? offsets[ve] : slice.last;
    if (from >= to) return 0;
    const std::uint64_t last_unit = units.of(to - 1);
    const std::uint32_t all = lanes_of(w);
    std::uint64_t read = 0;
    auto cursor = ids.reader();
    for (std::uint64_t unit = units.of(from) + w.warp; unit <= last_unit; unit += w.warps) {
      std::uint64_t v = unit_first[unit];
      if (v == cc_unit_first_kernel::no_vertex || v >= ve) continue;
      if (v < vb) v = vb;
      const std::uint64_t unit_end = (unit + 1) * units.per_unit - units.phase;
      for (bool more = true; more; v += w.width) {
        // Every lane scans the whole width, with no exit at the unit's end, so the offsets'
        // loads are independent of each other (an exit made them one round trip each).
        // Offsets grow, so the vertices starting in the unit are a prefix of the bits.
        std::uint32_t todo = 0;
        std::uint32_t inside = 0;
        std::uint64_t steps = 0;  // the longest sample of the run
        std::uint64_t mine_begin = 0;
        std::uint64_t mine_end = 0;
        std::uint64_t anchor = 0;  // an entry of the unit that idle lanes read: the first sampled
        std::uint64_t begin = offsets[v];
        for (unsigned k = 0; k < w.width; ++k) {
          const std::uint64_t next = offsets[v + k + 1 < ve ? v + k + 1 : ve];
          const bool in = v + k < ve && begin < unit_end;
          inside |= std::uint32_t{in} << k;
          std::uint64_t b = begin;
          std::uint64_t e = afforest_sample_end(begin, next, rounds, units);
          if (in && slice.clip(b, e)) {
            if (todo == 0) anchor = b;
            todo |= std::uint32_t{1} << k;
            read += e - b;
            if (e - b > steps) steps = e - b;
            if (k == w.lane) {
              mine_begin = b;
              mine_end = e;
            }
          }
          begin = next;
        }
        more = inside == all;
        if (todo == 0) continue;
        const std::uint64_t u = v + w.lane;
        for (std::uint64_t r = 0; r < steps; ++r) {
          const std::uint64_t e = mine_begin + r;
          const bool wanted = e < mine_end;
          id_type id{};  // set by a read that succeeds
          const bool ok = cursor.try_read(wanted ? e : anchor, id).ok();
          if (!wanted || !ok) continue;
          const std::uint64_t x = id;
          if (x >= n) {
            // relaxed: a count the host reads after the launch has finished.
            atomic_ref<std::uint64_t>(counters[0]).fetch_add(1, order::relaxed);
          } else if (x != u) {
            forest.unite(u, x);
          }
        }
      }
    }
    // One atomic for the warp's pins where the view has it (a tiled window's cursor holds none).
    if constexpr (requires { cursor.drop_among(all); }) cursor.drop_among(all);
    return read;
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
/// itself with the entries of its list past the sampled ones (afforest_sample_end); the lists of
/// the giant component's vertices are not read at all. Valid on a symmetric graph only: an edge {u,
/// v} is then stored as u -> v and v -> u, and if both ends were skipped both were in the giant
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
  entry_units units;             ///< the sampling pass's
  const std::uint8_t* in_giant;  ///< cc_mark_giant_kernel's snapshot

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    std::uint64_t read = 0;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, true,
        [&](std::uint64_t u) { return in_giant[u] == 0; },
        [&](std::uint64_t u) {
          const std::uint64_t end = offsets[u + 1];
          const std::uint64_t begin = afforest_sample_end(offsets[u], end, rounds, units);
          read += clipped_entries(slice, begin, end);
          for_each_neighbour(ids, w, slice, begin, end, n, &counters[0], [&](std::uint64_t v) {
            if (v != u) forest.unite(u, v);
          });
        });
    add_entries_read(w, counters, read);
  }
};

}  // namespace bam::apps
