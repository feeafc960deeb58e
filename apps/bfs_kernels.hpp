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
inline constexpr unsigned hub_found = 12;    ///< vertices a bottom-up step found by their hub alone
inline constexpr unsigned probe_units = 13;  ///< bfs_hub_probe_kernel: units holding a list to read
inline constexpr unsigned count = 14;
}  // namespace bfs_counter

/// Sets `unit`'s bit in `bitmap`; 1 if this call set it, 0 if it was set already. relaxed: a
/// filter that saves most read-modify-writes on a unit already marked, and a mark whose count
/// the host reads after the launch.
BAM_HD inline std::uint64_t mark_unit(std::uint32_t* bitmap, std::uint64_t unit) {
  const std::uint32_t bit = 1u << (unit % 32);
  atomic_ref<std::uint32_t> word(bitmap[unit / 32]);
  if ((word.load(order::relaxed) & bit) != 0) return 0;
  return (word.fetch_or(bit, order::relaxed) & bit) != 0 ? 0 : 1;
}

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

  /// What one reached vertex adds to the counters, packed so that a warp sums its lanes' in one
  /// word: units emptied (bits 0-7), list ends newly marked (bits 8-15), inner units (the
  /// rest). A warp's sums stay in their fields (at most 32 and 64).
  [[nodiscard]] BAM_HD static std::uint64_t pack(std::uint64_t emptied, std::uint64_t ends,
                                                 std::uint64_t inner) {
    return emptied | ends << 8 | inner << 16;
  }

  /// A vertex whose list is [begin, end) was reached and joins the next frontier, or (`early`)
  /// the one after it: updates the per-unit tables and returns what it adds to the counters
  /// (pack), which the caller adds for its whole warp (bfs_claim::append_among).
  [[nodiscard]] BAM_HD std::uint64_t reached(std::uint64_t begin, std::uint64_t end,
                                             bool early = false) const {
    if (!on() || begin >= end) return 0;
    std::uint32_t* bitmap = early ? early_ends : next_ends;
    const std::uint64_t first = units.of(begin);
    const std::uint64_t last = units.of(end - 1);
    // relaxed: a count the host and later launches read after this launch has finished.
    const bool emptied =
        atomic_ref<std::uint32_t>(unreached_starts[first]).fetch_sub(1, order::relaxed) == 1;
    std::uint64_t ends = mark_unit(bitmap, first);
    if (last != first) ends += mark_unit(bitmap, last);
    return pack(emptied ? 1 : 0, ends, last > first + 1 ? last - first - 1 : 0);
  }

  /// Adds a warp's packed sum (reached) to the counters of the next (or the early) list.
  BAM_HD static void add(std::uint64_t packed, std::uint64_t* counters, bool early) {
    const std::uint64_t emptied = packed & 0xff;
    const std::uint64_t ends = packed >> 8 & 0xff;
    const std::uint64_t inner = packed >> 16;
    // relaxed (all three): sums the host reads after the launch has finished.
    if (emptied != 0) {
      atomic_ref<std::uint64_t>(counters[bfs_counter::emptied_units])
          .fetch_add(emptied, order::relaxed);
    }
    if (ends != 0) {
      atomic_ref<std::uint64_t>(
          counters[early ? bfs_counter::early_end_units : bfs_counter::next_end_units])
          .fetch_add(ends, order::relaxed);
    }
    if (inner != 0) {
      atomic_ref<std::uint64_t>(
          counters[early ? bfs_counter::early_inner_units : bfs_counter::next_inner_units])
          .fetch_add(inner, order::relaxed);
    }
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

/// Each vertex's k neighbours of highest degree (the graph file's hubs section), vertex u's at
/// ids[u * k, u * k + k), and what bottom-up steps ask of them.
struct bfs_hubs {
  /// The most hubs a vertex may have: graph::bcsr_max_hub_count (tools/bam checks they agree).
  static constexpr std::uint32_t most = 8;

  const std::uint64_t* ids = nullptr;  ///< n x k, or null: no hubs
  std::uint32_t k = 0;

  /// Whether one of u's hubs has depth `level` (`depth(v)` reads v's). Every hub is loaded
  /// before any depth, so the k depth loads go out together.
  template <class Depth>
  BAM_HD bool any_at(std::uint64_t u, std::uint64_t n, std::int32_t level, Depth&& depth) const {
    std::uint64_t h[most] = {};
    for (std::uint32_t j = 0; j < most && j < k; ++j) h[j] = ids[u * k + j];
    bool found = false;
    for (std::uint32_t j = 0; j < most && j < k; ++j) found |= h[j] < n && depth(h[j]) == level;
    return found;
  }

  /// Whether u's list holds nothing but its hubs: at most k entries (the hubs are its k
  /// distinct neighbours of highest degree, or all of them when it has fewer).
  BAM_HD bool cover(std::uint64_t u, const std::uint64_t* offsets) const {
    return offsets[u + 1] - offsets[u] <= k;
  }
};

/// The line rule's bottom-up count when the graph has hubs (bfs_options::hubs): before level
/// `level + 1`, the units holding the first entry of an unreached vertex none of whose hubs is
/// at `level` and whose list holds more than its hubs: the lists the bottom-up step would have
/// to read (a vertex with a hub at `level` is found without its list). Each such unit is marked
/// once in `marks` (zeroed before).
struct bfs_hub_probe_kernel {
  const std::uint64_t* offsets;  ///< n + 1
  const std::int32_t* depths;    ///< n
  bfs_hubs hubs;
  std::uint64_t n;
  std::int32_t level;
  entry_units units;
  std::uint32_t* marks;  ///< a bit per unit
  std::uint64_t* counters;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    const std::uint32_t lanes = lanes_of(w);
    // Warp-uniform bounds, so the ballot below names the whole warp.
    for (std::uint64_t base = w.warp * w.width; base < n; base += w.warps * w.width) {
      const std::uint64_t v = base + w.lane;
      bool marked = false;
      // A list of its hubs alone has nothing more to tell.
      if (v < n && depths[v] == unreached && !hubs.cover(v, offsets) &&
          !hubs.any_at(v, n, level, [&](std::uint64_t h) { return depths[h]; })) {
        marked = mark_unit(marks, units.of(offsets[v])) != 0;
      }
      const std::uint32_t newly = warp::ballot(lanes, marked);
      if (newly != 0 && w.lane == warp::lowest_lane(newly)) {
        // relaxed: a sum the host reads after the launch has finished.
        atomic_ref<std::uint64_t>(counters[bfs_counter::probe_units])
            .fetch_add(warp::popcount(newly), order::relaxed);
      }
    }
  }
};

/// Claims unreached vertices for level `depth`: the first thread to claim one (a
/// compare-exchange on its depth) gives it `depth` and appends it to the next frontier. Each
/// vertex therefore enters one frontier, and each adjacency list is read once in the whole
/// traversal.
///
/// Appends are made a warp at a time (append_among): one atomic per counter for all the
/// vertices a warp's step claimed. Made a vertex at a time, every claim of the launch hit the
/// same few counter words, and those atomics, serialized where the words live, bounded the
/// large levels: kron25's second level claims 14.6 M vertices.
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

  /// Whether this thread gives unreached v `depth` (the first to try does).
  [[nodiscard]] BAM_HD bool take(std::uint64_t v) const {
    atomic_ref<std::int32_t> d(depths[v]);
    // relaxed: a filter that saves most compare-exchanges; the exchange decides.
    if (d.load(order::relaxed) != unreached) return false;
    std::int32_t expected = unreached;
    // relaxed: only atomicity matters (one winner); the launch boundary publishes the depth.
    return d.compare_exchange(expected, depth, order::relaxed);
  }

  /// A top-down walk of list [begin, end) of `ids` within `slice`, by every lane of the warp:
  /// claims each unreached neighbour.
  template <class View>
  BAM_HD void expand(const View& ids, const warp_position& w, const edge_slice& slice,
                     std::uint64_t begin, std::uint64_t end, std::uint64_t n) const {
    for_each_neighbour_step(ids, w, slice, begin, end, n, &counters[bfs_counter::bad_ids],
                            [&](std::uint64_t v, bool mine) { step(w, v, mine); });
  }

  /// One step of a top-down walk, called by every lane of the warp: a lane that holds
  /// neighbour v (`mine`) tries to claim it, and the warp appends what its lanes claimed.
  BAM_HD void step(const warp_position& w, std::uint64_t v, bool mine) const {
    append_among(w, mine && take(v), v, false);
  }

  /// Called by every lane of the warp: the lanes whose `mine` is set put their vertex v (given
  /// `depth`, or `depth + 1` when `to_early`) on the next frontier (the early list), and the
  /// warp adds their count, their edges (the direction heuristic weighs the next level by
  /// them) and the line rule's counts with one atomic each.
  BAM_HD void append_among(const warp_position& w, bool mine, std::uint64_t v,
                           bool to_early) const {
    const std::uint32_t lanes = lanes_of(w);
    const std::uint32_t winners = warp::ballot(lanes, mine);
    if (winners == 0) return;
    std::uint64_t edges = 0;
    std::uint64_t counts = 0;
    if (mine) {
      edges = offsets[v + 1] - offsets[v];
      counts = units.reached(offsets[v], offsets[v + 1], to_early);
    }
    // Sums over the warp, in every lane (a butterfly: every lane of the warp is here).
    for (unsigned k = 1; k < w.width; k <<= 1) {
      edges += warp::shfl(lanes, edges, w.lane ^ k);
      if (units.on()) counts += warp::shfl(lanes, counts, w.lane ^ k);
    }
    const unsigned leader = warp::lowest_lane(winners);
    std::uint64_t first = 0;
    if (w.lane == leader) {
      // relaxed (all): a slot index and sums; the entries are read after the launch.
      first = atomic_ref<std::uint64_t>(
                  counters[to_early ? bfs_counter::early_size : bfs_counter::next_size])
                  .fetch_add(warp::popcount(winners), order::relaxed);
      atomic_ref<std::uint64_t>(
          counters[to_early ? bfs_counter::early_edges : bfs_counter::next_edges])
          .fetch_add(edges, order::relaxed);
      bfs_units::add(counts, counters, to_early);
    }
    first = warp::shfl(lanes, first, leader);
    if (mine) {
      const std::uint32_t below = winners & ((std::uint32_t{1} << w.lane) - 1u);
      (to_early ? early : next)[first + warp::popcount(below)] = v;
    }
  }
};

/// A part of one adjacency list, entries [first, last), expanded by a warp of its own.
struct bfs_piece {
  std::uint64_t first;
  std::uint64_t last;
};

/// Long lists of a top-down step, split into pieces for the whole grid (bfs_pieces_kernel).
/// A step gives each frontier vertex to one warp, so one list of a million entries (kron25's
/// first level, from its highest-degree vertex) kept one warp busy for the whole level while
/// the rest of the GPU idled: 70 ms of a 103 ms BFS in GPU memory on an H100.
///
/// A list longer than `entries` is cut at multiples of `entries` (segment-aligned for the
/// walk when `entries` is a multiple of a segment's entries), so it makes at most
/// len / entries + 2 pieces, fewer than 3 len / entries; a launch splits each list at most
/// once, so a table of 3 m / entries + 1 pieces (capacity_for) holds a whole launch over m
/// entries.
struct bfs_pieces {
  static constexpr std::uint64_t default_entries = 8192;

  bfs_piece* table = nullptr;      ///< capacity pieces (null: lists are not split)
  std::uint64_t* count = nullptr;  ///< pieces in the table (zeroed before each launch)
  std::uint64_t capacity = 0;
  std::uint64_t entries = default_entries;  ///< a list longer than this is split

  [[nodiscard]] BAM_HD static std::uint64_t capacity_for(std::uint64_t edges,
                                                         std::uint64_t entries) {
    return 3 * (edges / entries) + 1;
  }

  /// Called by every lane of a warp with the same list [begin, end) (clipped to `slice`): puts
  /// its pieces in the table and returns true if it is long; false (nothing done) if the warp
  /// should walk it itself.
  BAM_HD bool split(const warp_position& w, const edge_slice& slice, std::uint64_t begin,
                    std::uint64_t end) const {
    if (table == nullptr || !slice.clip(begin, end) || end - begin <= entries) return false;
    const std::uint64_t first_block = begin / entries;
    const std::uint64_t k = (end - 1) / entries - first_block + 1;
    std::uint64_t at = 0;
    if (w.lane == 0) {
      // relaxed: a slot index; the pieces are read by the next launch.
      at = atomic_ref<std::uint64_t>(*count).fetch_add(k, order::relaxed);
    }
    at = warp::shfl(lanes_of(w), at, 0);
    const bool fits = at + k <= capacity;  // always (see above); if not, the warp walks it
    for (std::uint64_t j = w.lane; j < k && at + j < capacity; j += w.width) {
      const std::uint64_t from = (first_block + j) * entries;
      // Slots taken but not used hold empty pieces, never a stale piece of an earlier launch.
      table[at + j] =
          fits ? bfs_piece{from < begin ? begin : from, from + entries < end ? from + entries : end}
               : bfs_piece{0, 0};
    }
    return fits;
  }
};

/// Expands the frontier list of level `depth - 1`: a warp per frontier vertex, in the order
/// the list was built (discovery order), reading the part of each list in `slice`; a long list
/// is split into `pieces` for bfs_pieces_kernel instead. For small frontiers.
template <class View>
struct bfs_expand_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  const std::uint64_t* frontier;
  std::uint64_t frontier_size;
  bfs_claim claim;
  bfs_pieces pieces;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    for (std::uint64_t i = w.warp; i < frontier_size; i += w.warps) {
      const std::uint64_t u = frontier[i];
      if (!slice.holds_vertex(u) || pieces.split(w, slice, offsets[u], offsets[u + 1])) continue;
      claim.expand(ids, w, slice, offsets[u], offsets[u + 1], n);
    }
  }
};

/// Expands the pieces of long lists that the launch before put in `pieces` (a top-down step's
/// expand or scan kernel): a warp per piece, over the whole grid.
template <class View>
struct bfs_pieces_kernel {
  View ids;
  edge_slice slice;
  bfs_pieces pieces;
  bfs_claim claim;
  std::uint64_t n;

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    // relaxed: written by the launch before, which stream order has finished.
    std::uint64_t total = atomic_ref<std::uint64_t>(*pieces.count).load(order::relaxed);
    if (total > pieces.capacity) total = pieces.capacity;
    for (std::uint64_t i = w.warp; i < total; i += w.warps) {
      const bfs_piece p = pieces.table[i];
      claim.expand(ids, w, slice, p.first, p.last, n);
    }
  }
};

/// Expands level `depth - 1` by scanning the vertices of `slice` in id order (a warp per
/// vertex) and expanding those at that depth. A vertex claimed while the level runs gets
/// `depth`, never `depth - 1`, so slices launched one after another see the same level. For large
/// frontiers: the lists are then read in the order they lie on storage, so warps running at once
/// share lines instead of each touching a line of its own at random (the discovery order of a
/// frontier list). Long lists are split into `pieces`, as the expand kernel's.
template <class View>
struct bfs_scan_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  bfs_claim claim;
  bfs_pieces pieces;
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
          if (pieces.split(w, slice, offsets[u], offsets[u + 1])) return;
          claim.expand(ids, w, slice, offsets[u], offsets[u + 1], n);
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
///
/// Hubs (`hubs` set: each vertex's k neighbours of highest degree, the file's hubs section):
/// each lane first looks up its own vertex's hubs, and a vertex with a hub at `depth - 1` gets
/// `depth` without its list being read; the warp then searches the lists of the rest, one
/// vertex at a time as above. On a power-law graph a hub is the parent of most vertices, so
/// most lists are never loaded, and a list of at most k entries (its hubs) never. Exact: a hub
/// is a neighbour, so finding one at `depth - 1` is finding a parent, and a vertex whose only
/// neighbours are its hubs has none when no hub is there.
template <class View>
struct bfs_bottom_up_kernel {
  View ids;
  const std::uint64_t* offsets;  ///< n + 1
  edge_slice slice;
  bfs_claim claim;
  std::uint64_t n;

  bool batched = true;  ///< for_each_vertex's batches of a warp's width (hubs: always batched)
  bfs_hubs hubs = {};   ///< hubs.ids null: none

  /// Vertices the warp found and has not appended yet, a lane each: lane k holds the k-th
  /// (`count` is the same in every lane). Appended a warp's width at a time (append_among).
  struct pending {
    std::uint64_t vertex = 0;
    bool early = false;
    unsigned count = 0;
  };

  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    std::uint64_t read = 0;
    pending found;
    auto wanted = [&](std::uint64_t u) {
      // relaxed: only u's owner writes u's depth during the launch (in visit, after the
      // test), and earlier launches' writes are published by the launch boundary. An
      // empty list finds nothing and claims nothing early.
      return atomic_ref<std::int32_t>(claim.depths[u]).load(order::relaxed) == unreached &&
             offsets[u] < offsets[u + 1];
    };
    if (hubs.ids != nullptr) {
      by_hubs(w, wanted, read, found);
    } else {
      for_each_vertex(w, slice.vertex_begin, slice.vertex_end, batched, wanted,
                      [&](std::uint64_t u) { visit(w, u, read, found); });
    }
    append(w, found);
    // Counted per warp (every lane holds the same count): one lane adds it.
    if (w.lane == 0 && read > 0) {
      // relaxed: a sum the host reads after the launch has finished.
      atomic_ref<std::uint64_t>(claim.counters[bfs_counter::read]).fetch_add(read, order::relaxed);
    }
  }

  /// The walk with hubs: a lane per vertex looks up its hubs; the warp appends those found so
  /// and searches the others' lists together (visit).
  template <class Wanted>
  BAM_HD void by_hubs(const warp_position& w, Wanted&& wanted, std::uint64_t& read,
                      pending& found) const {
    const std::uint32_t lanes = lanes_of(w);
    const std::int32_t level = claim.depth - 1;
    const std::uint64_t step = w.warps * w.width;
    // Warp-uniform bounds: every ballot and append names the whole warp.
    for (std::uint64_t base = slice.vertex_begin + w.warp * w.width; base < slice.vertex_end;
         base += step) {
      const std::uint64_t u = base + w.lane;
      bool search = u < slice.vertex_end && wanted(u);
      bool by_hub = false;
      if (search) {
        by_hub = hubs.any_at(u, n, level, [&](std::uint64_t h) {
          // relaxed: as in visit's test of a neighbour; a racing write makes a depth `depth` or
          // `depth + 1`, never `level`.
          return atomic_ref<std::int32_t>(claim.depths[h]).load(order::relaxed);
        });
        // A list of its hubs alone has nothing more to tell: most such vertices of a power-law
        // graph hang off a hub one level further down, and would otherwise load a line each
        // for an entry or two in every step before their own.
        search = !by_hub && !hubs.cover(u, offsets);
      }
      if (by_hub) {
        // relaxed: as visit's store; this lane owns u.
        atomic_ref<std::int32_t>(claim.depths[u]).store(claim.depth, order::relaxed);
      }
      claim.append_among(w, by_hub, u, false);
      const std::uint32_t hub_lanes = warp::ballot(lanes, by_hub);
      if (w.lane == 0 && hub_lanes != 0) {
        // relaxed: a sum the host reads after the launch has finished.
        atomic_ref<std::uint64_t>(claim.counters[bfs_counter::hub_found])
            .fetch_add(warp::popcount(hub_lanes), order::relaxed);
      }
      std::uint32_t todo = warp::ballot(lanes, search);
      while (todo != 0) {
        const unsigned k = warp::lowest_lane(todo);
        todo &= todo - 1;
        visit(w, base + k, read, found);
      }
    }
  }

  /// Searches unreached u's list for a parent (every lane with the same u).
  BAM_HD void visit(const warp_position& w, std::uint64_t u, std::uint64_t& read,
                    pending& found) const {
    const std::int32_t level = claim.depth - 1;
    bool met_depth = false;  // this lane read a neighbour already at `depth`
    const bool parent = find_neighbour(
        ids, w, slice, offsets[u], offsets[u + 1], n, &claim.counters[bfs_counter::bad_ids], read,
        [&](std::uint64_t v) {
          // relaxed: depths of level - 1 were written by earlier launches; a racing write
          // turns unreached into `depth` (or `depth + 1`), which is not `level` either, and
          // a `depth` read is final whichever warp wrote it.
          const std::int32_t d = atomic_ref<std::int32_t>(claim.depths[v]).load(order::relaxed);
          met_depth = met_depth || d == claim.depth;
          return d == level;
        });
    if (parent) {
      if (w.lane == 0) {
        // relaxed: the host and later launches read it after this launch has finished;
        // within it no other warp writes u, and readers only compare with `level` and
        // `depth`.
        atomic_ref<std::int32_t>(claim.depths[u]).store(claim.depth, order::relaxed);
      }
      hold(w, u, false, found);
    } else if (claim.early != nullptr && offsets[u] >= slice.first &&
               offsets[u + 1] <= slice.last && warp::ballot(lanes_of(w), met_depth) != 0) {
      // The whole list was read (not a piece of a tiled one) and met no `level`: u is at
      // `depth + 1`. relaxed: as above.
      if (w.lane == 0) {
        atomic_ref<std::int32_t>(claim.depths[u]).store(claim.depth + 1, order::relaxed);
      }
      hold(w, u, true, found);
    }
  }

  /// Keeps found vertex u (in lane `found.count`) until the warp holds a width of them.
  BAM_HD void hold(const warp_position& w, std::uint64_t u, bool early, pending& found) const {
    if (w.lane == found.count) {
      found.vertex = u;
      found.early = early;
    }
    if (++found.count == w.width) append(w, found);
  }

  BAM_HD void append(const warp_position& w, pending& found) const {
    if (found.count == 0) return;
    const bool mine = w.lane < found.count;
    claim.append_among(w, mine && !found.early, found.vertex, false);
    if (claim.early != nullptr) claim.append_among(w, mine && found.early, found.vertex, true);
    found.count = 0;
  }
};

}  // namespace bam::apps
