#pragma once
/// @file
/// BFS kernels: one level of a level-synchronous, frontier-based traversal. Portable (the app
/// kernel model); the driver is bfs.hpp.

#include <cstdint>
#include <type_traits>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>

#include "apps/kernel_support.hpp"

namespace bam::apps {

/// Depth of a vertex the traversal has not reached.
inline constexpr std::int32_t unreached = -1;

/// The counters one BFS level's launches add to (the host reads them after the level).
namespace bfs_counter {
inline constexpr unsigned next_size = 0;   ///< vertices on the next frontier
inline constexpr unsigned bad_ids = 1;     ///< neighbour ids >= n
inline constexpr unsigned next_edges = 2;  ///< sum of the next frontier's degrees
inline constexpr unsigned read = 3;        ///< entries bottom-up steps read
// The line rule's (bfs_units): what the next step would load either way.
inline constexpr unsigned next_inner_units = 4;  ///< units inside one next-frontier list
inline constexpr unsigned next_end_units = 5;    ///< units holding a next-frontier list's ends
inline constexpr unsigned emptied_units = 6;     ///< units whose last unreached list start went
inline constexpr unsigned start_units = 7;       ///< units holding an unreached list's start
// Early claims (bfs_bottom_up_kernel): vertices given depth + 1 during the step for `depth`.
inline constexpr unsigned early_size = 8;          ///< vertices on the early list
inline constexpr unsigned early_edges = 9;         ///< sum of their degrees
inline constexpr unsigned early_inner_units = 10;  ///< as next_inner_units, for the early list
inline constexpr unsigned early_end_units = 11;    ///< as next_end_units, for the early list
inline constexpr unsigned count = 12;
}  // namespace bfs_counter

/// What the line rule counts as vertices are claimed (bfs.hpp): the units (cache lines) the
/// next level would load top-down (those spanned by the new frontier's lists) and bottom-up
/// (those holding the first entry of an unreached vertex's list). A unit strictly inside one
/// list belongs to no other, so the first count is exact with a bitmap of the units holding a
/// list's first or last entry; the second is kept exact by a count of unreached starts per unit.
/// Null tables: the rule is off and nothing is counted.
///
/// Every order is relaxed: the host reads the counters after the launch has finished, and
/// within it only the atomicity of each count matters.
struct bfs_units {
  entry_units units;
  std::uint32_t* unreached_starts = nullptr;  ///< per unit: unreached lists starting there
  std::uint32_t* next_ends = nullptr;         ///< bitmap: units holding a next-frontier list's end
  std::uint32_t* early_ends = nullptr;        ///< the same for the early list (early claims)

  [[nodiscard]] BAM_HD bool on() const { return unreached_starts != nullptr; }

  /// A vertex whose list is [begin, end) was reached and joins the next frontier, or (`early`)
  /// the one after it.
  BAM_HD void reached(std::uint64_t begin, std::uint64_t end, std::uint64_t* counters,
                      bool early = false) const {
    if (!on() || begin >= end) return;
    const unsigned inner = early ? bfs_counter::early_inner_units : bfs_counter::next_inner_units;
    const unsigned ends = early ? bfs_counter::early_end_units : bfs_counter::next_end_units;
    std::uint32_t* bitmap = early ? early_ends : next_ends;
    const std::uint64_t first = units.of(begin);
    const std::uint64_t last = units.of(end - 1);
    // relaxed (all of these): counts the host reads after the launch has finished.
    if (atomic_ref<std::uint32_t>(unreached_starts[first]).fetch_sub(1, order::relaxed) == 1) {
      atomic_ref<std::uint64_t>(counters[bfs_counter::emptied_units]).fetch_add(1, order::relaxed);
    }
    if (last > first + 1) {
      atomic_ref<std::uint64_t>(counters[inner]).fetch_add(last - first - 1, order::relaxed);
    }
    mark_end(bitmap, first, counters + ends);
    if (last != first) mark_end(bitmap, last, counters + ends);
  }

 private:
  BAM_HD static void mark_end(std::uint32_t* bitmap, std::uint64_t unit, std::uint64_t* count) {
    const std::uint32_t bit = 1u << (unit % 32);
    atomic_ref<std::uint32_t> word(bitmap[unit / 32]);
    // relaxed: a filter that saves most read-modify-writes on a unit already marked.
    if ((word.load(order::relaxed) & bit) != 0) return;
    if ((word.fetch_or(bit, order::relaxed) & bit) != 0) return;
    atomic_ref<std::uint64_t>(*count).fetch_add(1, order::relaxed);
  }
};

/// Counts, once before the traversal, the unreached vertices (all but the source) whose list
/// starts in each unit, and the units holding at least one such start.
struct bfs_unit_starts_kernel {
  const std::uint64_t* offsets;  ///< n + 1
  std::uint64_t n;
  std::uint64_t source;
  bfs_units units;
  std::uint64_t* counters;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t v = t.id; v < n; v += t.count) {
      if (v == source || offsets[v] == offsets[v + 1]) continue;
      // relaxed: a count the host and later launches read after this launch has finished.
      if (atomic_ref<std::uint32_t>(units.unreached_starts[units.units.of(offsets[v])])
              .fetch_add(1, order::relaxed) == 0) {
        atomic_ref<std::uint64_t>(counters[bfs_counter::start_units]).fetch_add(1, order::relaxed);
      }
    }
  }
};

/// Claims unreached vertices for level `depth`: the first thread to claim one (a
/// compare-exchange on its depth) gives it `depth` and appends it to the next frontier. Each
/// vertex therefore enters one frontier, and each adjacency list is read once in the whole
/// traversal.
///
/// Every order here is relaxed: the depths and the next frontier are read by the host or the
/// next launch only after this launch has finished (stream order publishes them); within the
/// launch only the atomicity of each claim matters.
struct bfs_claim {
  std::int32_t* depths;          ///< n
  std::uint64_t* next;           ///< room for n
  std::uint64_t* counters;       ///< bfs_counter slots
  const std::uint64_t* offsets;  ///< n + 1
  std::int32_t depth;
  bfs_units units;                 ///< what the line rule counts (off: null tables)
  std::uint64_t* early = nullptr;  ///< room for n: early claims (null: none are made)

  BAM_HD void operator()(std::uint64_t v) const {
    atomic_ref<std::int32_t> d(depths[v]);
    // relaxed: a filter that saves most compare-exchanges; the exchange decides.
    if (d.load(order::relaxed) != unreached) return;
    std::int32_t expected = unreached;
    // relaxed: only atomicity matters (one winner); the launch boundary publishes the depth.
    if (!d.compare_exchange(expected, depth, order::relaxed)) return;
    append(v);
  }

  /// Puts v, which this thread gave `depth`, on the next frontier and counts its edges (the
  /// direction heuristic weighs the next level by them).
  BAM_HD void append(std::uint64_t v) const {
    // relaxed: a slot index; the entry is read after the launch has finished.
    const std::uint64_t slot =
        atomic_ref<std::uint64_t>(counters[bfs_counter::next_size]).fetch_add(1, order::relaxed);
    next[slot] = v;
    // relaxed: a sum the host reads after the launch has finished.
    atomic_ref<std::uint64_t>(counters[bfs_counter::next_edges])
        .fetch_add(offsets[v + 1] - offsets[v], order::relaxed);
    units.reached(offsets[v], offsets[v + 1], counters);
  }

  /// Puts v, which this thread gave `depth + 1`, on the early list: the frontier after next.
  BAM_HD void append_early(std::uint64_t v) const {
    // relaxed (all three): a slot index and sums read after the launch has finished.
    const std::uint64_t slot =
        atomic_ref<std::uint64_t>(counters[bfs_counter::early_size]).fetch_add(1, order::relaxed);
    early[slot] = v;
    atomic_ref<std::uint64_t>(counters[bfs_counter::early_edges])
        .fetch_add(offsets[v + 1] - offsets[v], order::relaxed);
    units.reached(offsets[v], offsets[v + 1], counters, true);
  }
};

/// Expands the frontier list of level `depth - 1`: a warp per frontier vertex, in the order
/// the list was built (discovery order), reading the part of each list in `slice`. For small
/// frontiers.
template <class View>
struct bfs_expand_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  const std::uint64_t* frontier;
  std::uint64_t frontier_size;
  bfs_claim claim;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    for (std::uint64_t i = w.warp; i < frontier_size; i += w.warps) {
      const std::uint64_t u = frontier[i];
      if (!slice.holds_vertex(u)) continue;
      for_each_neighbour(ids, w, slice, offsets[u], offsets[u + 1], n,
                         &claim.counters[bfs_counter::bad_ids], claim);
    }
  }
};

/// Expands level `depth - 1` by scanning the vertices of `slice` in id order (a warp per
/// vertex) and expanding those at that depth. A vertex claimed while the level runs gets
/// `depth`, never `depth - 1`, so slices launched one after another see the same level. For large
/// frontiers: the lists are then read in the order they lie on storage, so warps running at once
/// share lines instead of each touching a line of its own at random (the discovery order of a
/// frontier list).
template <class View>
struct bfs_scan_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  bfs_claim claim;
  std::uint64_t n;

  bool batched = true;  ///< for_each_vertex's batches of a warp's width

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    const std::int32_t level = claim.depth - 1;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, batched,
        [&](std::uint64_t u) {
          // relaxed: level-(depth-1) depths were written by earlier launches; a claim racing
          // with this load only turns unreached into `depth`, never into `level`.
          return atomic_ref<std::int32_t>(claim.depths[u]).load(order::relaxed) == level &&
                 offsets[u] < offsets[u + 1];
        },
        [&](std::uint64_t u) {
          for_each_neighbour(ids, w, slice, offsets[u], offsets[u + 1], n,
                             &claim.counters[bfs_counter::bad_ids], claim);
        });
  }
};

/// A bottom-up step (Beamer's direction-optimizing BFS) for level `depth`: a warp per unreached
/// vertex of `slice`, in id order, reads the vertex's list only until it meets a neighbour at
/// `depth - 1` (find_neighbour), and gives the vertex `depth`. Valid on a symmetric graph only,
/// where a vertex's out-list is its in-list. When most vertices are reached from a large
/// frontier, most lists are left after their first segment, so far fewer entries are read than
/// a top-down step's expansion of every frontier list.
///
/// Exact for the same reason as the scan: a vertex found here gets `depth`, never `depth - 1`,
/// so what one warp writes never changes another's answer, and the step finds exactly the
/// unreached vertices with a neighbour at `depth - 1`. A list split over slices (tiling) is read
/// a piece per launch; the later piece is skipped once the vertex has its depth.
///
/// Early claims (`claim.early` set): a vertex that read its whole list without meeting
/// `depth - 1` has no neighbour above `depth`'s (every depth below `depth` is final and none is
/// in its list), so if the list holds a vertex already at `depth` (found earlier in this step,
/// or claimed early by the last) its depth is `depth + 1`, and it gets it now, while its list is
/// loaded, instead of reading the list again in the next step. What it writes is neither
/// `depth - 1` nor `depth`, so no other warp's answer changes; which vertices are claimed early
/// depends on the order warps run in, never the depths.
template <class View>
struct bfs_bottom_up_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  bfs_claim claim;
  std::uint64_t n;

  bool batched = true;  ///< for_each_vertex's batches of a warp's width

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    std::uint64_t read = 0;
    for_each_vertex(
        w, slice.vertex_begin, slice.vertex_end, batched,
        [&](std::uint64_t u) {
          // relaxed: only u's owner writes u's depth during the launch (in visit, after the
          // test), and earlier launches' writes are published by the launch boundary. An
          // empty list finds nothing and claims nothing early.
          return atomic_ref<std::int32_t>(claim.depths[u]).load(order::relaxed) == unreached &&
                 offsets[u] < offsets[u + 1];
        },
        [&](std::uint64_t u) { visit(w, u, read); });
    // Counted per warp (every lane holds the same count): one lane adds it.
    if (w.lane == 0 && read > 0) {
      // relaxed: a sum the host reads after the launch has finished.
      atomic_ref<std::uint64_t>(claim.counters[bfs_counter::read]).fetch_add(read, order::relaxed);
    }
  }

  /// Searches unreached u's list for a parent (every lane with the same u).
  BAM_HD void visit(const warp_position& w, std::uint64_t u, std::uint64_t& read) const {
    const std::int32_t level = claim.depth - 1;
    bool met_depth = false;  // this lane read a neighbour already at `depth`
    const bool found = find_neighbour(
        ids, w, slice, offsets[u], offsets[u + 1], n, &claim.counters[bfs_counter::bad_ids], read,
        [&](std::uint64_t v) {
          // relaxed: depths of level - 1 were written by earlier launches; a racing write
          // turns unreached into `depth` (or `depth + 1`), which is not `level` either, and
          // a `depth` read is final whichever warp wrote it.
          const std::int32_t d = atomic_ref<std::int32_t>(claim.depths[v]).load(order::relaxed);
          met_depth = met_depth || d == claim.depth;
          return d == level;
        });
    if (found) {
      if (w.lane == 0) {
        // relaxed: the host and later launches read it after this launch has finished;
        // within it no other warp writes u, and readers only compare with `level` and
        // `depth`.
        atomic_ref<std::int32_t>(claim.depths[u]).store(claim.depth, order::relaxed);
        claim.append(u);
      }
    } else if (claim.early != nullptr && offsets[u] >= slice.first &&
               offsets[u + 1] <= slice.last && warp::ballot(lanes_of(w), met_depth) != 0 &&
               w.lane == 0) {
      // The whole list was read (not a piece of a tiled one) and met no `level`: u is at
      // `depth + 1`. relaxed: as above.
      atomic_ref<std::int32_t>(claim.depths[u]).store(claim.depth + 1, order::relaxed);
      claim.append_early(u);
    }
  }
};

}  // namespace bam::apps
