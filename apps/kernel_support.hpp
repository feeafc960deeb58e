#pragma once
/// @file
/// Pieces every app kernel uses: the warp a logical thread belongs to, the warp-cooperative
/// walk over one adjacency list, and a fill kernel. Portable code (the app kernel model,
/// bam/platform/launch.hpp): grid-stride loops, no barriers, no shared memory.

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>

namespace bam::apps {

/// Where a logical thread stands when work is handed out a warp at a time: warp `warp` of
/// `warps`, lane `lane` of `width` (32 on a GPU, 1 on a CPU thread). Executors launch whole
/// warps, so the logical thread ids of one warp are consecutive and start at a multiple of
/// the width.
struct warp_position {
  std::uint64_t warp;
  std::uint64_t warps;
  unsigned lane;
  unsigned width;
};

[[nodiscard]] BAM_HD inline warp_position warp_of(thread_index t) {
  const unsigned width = warp::width();
  return {t.id / width, t.count / width, warp::lane(), width};
}

/// The slice of the neighbour array one launch reads: entries [first, last), and the vertices
/// [vertex_begin, vertex_end) whose lists meet them. Every backend reads the whole array as one
/// slice but proactive tiling, which launches once per partition (tiled_edges.hpp); a list
/// that spans partitions is read a piece per launch.
struct edge_slice {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t vertex_begin = 0;
  std::uint64_t vertex_end = 0;

  [[nodiscard]] BAM_HD std::uint64_t vertices() const { return vertex_end - vertex_begin; }
  /// Clips entries [begin, end) to the slice's; false when none is left.
  BAM_HD bool clip(std::uint64_t& begin, std::uint64_t& end) const {
    if (begin < first) begin = first;
    if (end > last) end = last;
    return begin < end;
  }
  [[nodiscard]] BAM_HD bool holds_vertex(std::uint64_t v) const {
    return v >= vertex_begin && v < vertex_end;
  }
  /// The slice of a whole array of `edges` entries over `vertices` vertices.
  [[nodiscard]] static edge_slice whole(std::uint64_t edges, std::uint64_t vertices) {
    return {0, edges, 0, vertices};
  }
};

/// A warp's reads of an adjacency list start on a boundary of this many bytes (EMOGI's
/// alignment: a warp's loads then fill whole 128-byte memory transactions).
inline constexpr std::uint64_t aligned_read_bytes = 128;

/// How a neighbour source's entries fall into the units it moves them in: entry i lies in unit
/// (i + phase) / per_unit. Cache lines for an array on storage; aligned 128-byte segments (a
/// memory transaction of a warp's read) for one over memory or tile buffers. A driver that
/// weighs a step by the units it loads uses it (BFS's line rule).
struct entry_units {
  std::uint64_t per_unit = 1;  ///< entries per unit
  std::uint64_t phase = 0;     ///< entries of entry 0's unit before it

  [[nodiscard]] BAM_HD std::uint64_t of(std::uint64_t i) const { return (i + phase) / per_unit; }
  /// Units spanned by entries [0, entries): the size of a table indexed by of().
  [[nodiscard]] BAM_HD std::uint64_t count(std::uint64_t entries) const {
    return entries == 0 ? 0 : of(entries - 1) + 1;
  }
  /// Units a list [begin, end) spans (0 for an empty list).
  [[nodiscard]] BAM_HD std::uint64_t spanned(std::uint64_t begin, std::uint64_t end) const {
    return end > begin ? of(end - 1) - of(begin) + 1 : 0;
  }
};

/// Views that can start the loads of lines ahead of a walk: bam::array_ref on a cache (views of
/// memory and tile buffers have nothing to load).
template <class View>
concept looks_ahead = requires(const View& v, std::uint64_t i) {
  { v.lookahead_lines() } -> std::convertible_to<std::uint32_t>;
  { v.line_index(i) } -> std::convertible_to<std::uint64_t>;
  { v.line_first(i) } -> std::convertible_to<std::uint64_t>;
};

/// The element whose read starts the load of the `lane`-th line from the one holding element
/// `at`, in a list [begin, end); `end` or more when the lane has no line to start. A line
/// holds at least a warp's entries (lines are 512 B or more, ids 4 or 8 B), so while a line
/// follows the warp's, every lane is still inside the list.
template <class View>
BAM_HD std::uint64_t lookahead_target(const View& ids, std::uint64_t at, std::uint64_t begin,
                                      std::uint64_t end, unsigned lane, std::uint32_t lines) {
  if (lane >= lines) return end;
  const std::uint64_t i = ids.line_first(ids.line_index(at) + lane);
  return i < begin ? begin : i;
}

/// A warp's walk of list [begin, end) of ids of type Id within `slice`: clips the list to the
/// slice and sets `start`, the entry the warp's first step reads from (on a GPU warp the
/// 128-byte boundary at or before `begin`, EMOGI's alignment; on a CPU thread `begin`). False
/// when nothing of the list lies in the slice.
template <class Id>
BAM_HD bool clip_walk(const warp_position& w, const edge_slice& slice, std::uint64_t& begin,
                      std::uint64_t& end, std::uint64_t& start) {
  if (!slice.clip(begin, end)) return false;
  constexpr std::uint64_t per_segment = aligned_read_bytes / sizeof(Id);
  start = w.width > 1 ? begin - begin % per_segment : begin;
  return true;
}

/// For a walk of list [begin, end) whose warp stands at entry `at` (the same in every lane): when
/// the warp reaches a line whose load it has not started (`started_to`), lane k reads one entry
/// of the k-th line from there (up to the view's lookahead_lines()), so the misses of the next
/// lines are in flight together instead of one round trip per line. Every lane calls it.
template <class View>
BAM_HD void start_lines_ahead(const View& ids, const warp_position& w, std::uint64_t at,
                              std::uint64_t begin, std::uint64_t end, std::uint64_t& started_to) {
  if constexpr (looks_ahead<View>) {
    using id_type = typename View::value_type;
    const std::uint32_t lines = w.width > 1 ? ids.lookahead_lines() : 0;
    if (lines > 1 && at >= started_to && ids.line_index(end - 1) > ids.line_index(at)) {
      // Every lane reads (lanes without a line of their own read the entry at the warp's
      // position, which the walk needs next anyway), through a cursor like the walk's reads:
      // lanes of a warp may reach this and the walk's read at once (a lane that finished
      // its list early is on the next one), and the cursor path is written for lanes that
      // want different things.
      const std::uint64_t i = lookahead_target(ids, at, begin, end, w.lane, lines);
      auto ahead = ids.reader();
      id_type ignored{};
      (void)ahead.try_read(i < end ? i : at, ignored);  // a miss overlaps the other lanes'
      ahead.drop();
      started_to = ids.line_first(ids.line_index(at) + lines);
    }
  } else {
    (void)ids, (void)w, (void)at, (void)begin, (void)end, (void)started_to;
  }
}

/// Calls `visit(v)` for every neighbour v of one vertex whose ids are [begin, end) of `ids`,
/// clipped to `slice`, with the lanes of the calling warp reading consecutive entries. Every
/// lane of the warp calls this for the same vertex.
///
/// EMOGI's access pattern: the warp starts at the entry on the 128-byte boundary at or before
/// the list's first entry (element indices and addresses align alike: the neighbour section
/// starts on a 64 KiB boundary and tile buffers on 256 bytes), and lanes before the list read
/// nothing; so each step of the warp reads whole aligned 128-byte segments (one memory
/// transaction each from host or GPU memory, and the fewest cache lines through the cache).
/// The entries visited, hence every result, are those of the unaligned walk. On a CPU thread
/// (a warp of one lane) there is nothing to align.
///
/// A lane keeps one cursor, so the entries it reads from one line cost one pin; the cursor
/// drops its pin at the lane's last step of the list, so a warp never holds more than the
/// lines of the list it is on, and no lane holds one while it waits for the others to finish.
///
/// A list over several lines of a cached view is read ahead (start_lines_ahead). The entries
/// read ahead are read again by the walk.
///
/// An id that cannot be read (the array recorded the error; the host's check() throws) is
/// skipped; an id >= n (a corrupt file, or the poison value) is counted in `*bad_ids`.
template <class View, class Visit>
BAM_HD void for_each_neighbour(const View& ids, const warp_position& w, const edge_slice& slice,
                               std::uint64_t begin, std::uint64_t end, std::uint64_t n,
                               std::uint64_t* bad_ids, Visit&& visit) {
  using id_type = typename View::value_type;
  std::uint64_t start = 0;
  if (!clip_walk<id_type>(w, slice, begin, end, start)) return;
  auto cursor = ids.reader();
  std::uint64_t started_to = 0;  // entries below this are in lines whose loads were started
  for (std::uint64_t e = start + w.lane; e < end; e += w.width) {
    start_lines_ahead(ids, w, e - w.lane < begin ? begin : e - w.lane, begin, end, started_to);
    if (e < begin) continue;  // before the list: this lane sits out the warp's first step
    id_type id{};  // set by a read that succeeds; the compiler cannot see try_read's contract
    const bool read = cursor.try_read(e, id).ok();
    // On a dense array a lane's last step drops its pin before the lane leaves the loop (and
    // waits there for the lanes with one more step, which may miss): a frame pin held through
    // that wait keeps the whole frame from eviction. A base-page line is kept to the end of the
    // list, as before dense arrays had cursors: the next lists mostly start in it (CC on kron25,
    // 4 devices, H200: 7.08 M loads with the early drop on every array, 6.54-6.74 M without).
    if constexpr (requires { ids.dense(); }) {
      if (e + w.width >= end && ids.dense()) cursor.drop();
    }
    if (!read) continue;
    const std::uint64_t v = id;
    if (v >= n) {
      // relaxed: a count the host reads after the launch has finished.
      atomic_ref<std::uint64_t>(*bad_ids).fetch_add(1, order::relaxed);
      continue;
    }
    visit(v);
  }
}

/// One lane's read in a warp-wide step (every lane in every step) of a walk over [begin, end)
/// that starts at `base`: the lane reads entry base + lane, or, outside the list, an entry of
/// the list in the step's own aligned segment (the same line), so the array's collectives
/// always find the whole warp (a lane that went on instead would leave the others waiting in
/// them, as a software warp's active_mask does). As in for_each_neighbour, a lane's last step
/// drops a dense array's frame pin. True, with the id in `v`, when the lane holds a neighbour:
/// inside the list, read, and below n (an id >= n is counted in `*bad_ids`).
template <class View, class Cursor>
BAM_HD bool read_step(const View& ids, Cursor& cursor, const warp_position& w, std::uint64_t base,
                      std::uint64_t begin, std::uint64_t end, std::uint64_t n,
                      std::uint64_t* bad_ids, std::uint64_t& v) {
  using id_type = typename View::value_type;
  const std::uint64_t e = base + w.lane;
  const std::uint64_t at = e < begin ? begin : (e < end ? e : end - 1);
  id_type id{};
  const bool read = cursor.try_read(at, id).ok();
  if constexpr (requires { ids.dense(); }) {
    if (e + w.width >= end && ids.dense()) cursor.drop();
  }
  if (!read || e < begin || e >= end) return false;
  if (id >= n) {
    // relaxed: a count the host reads after the launch has finished.
    atomic_ref<std::uint64_t>(*bad_ids).fetch_add(1, order::relaxed);
    return false;
  }
  v = id;
  return true;
}

/// for_each_neighbour in warp-wide steps: every lane of the warp runs every step and calls
/// `visit(v, mine)` once per step, `mine` false where the lane holds no neighbour in that step
/// (before or past the list, a failed read, an id >= n), so that `visit` may use collectives
/// over the whole warp (BFS's claims append a step's winners with one atomic). A lane outside
/// the list reads an entry of the step's own segment (as find_neighbour's do), so the reads'
/// collectives always find the whole warp.
template <class View, class Visit>
BAM_HD void for_each_neighbour_step(const View& ids, const warp_position& w,
                                    const edge_slice& slice, std::uint64_t begin, std::uint64_t end,
                                    std::uint64_t n, std::uint64_t* bad_ids, Visit&& visit) {
  using id_type = typename View::value_type;
  std::uint64_t start = 0;
  if (!clip_walk<id_type>(w, slice, begin, end, start)) return;
  auto cursor = ids.reader();
  std::uint64_t started_to = 0;
  for (std::uint64_t base = start; base < end; base += w.width) {
    start_lines_ahead(ids, w, base < begin ? begin : base, begin, end, started_to);
    std::uint64_t v = 0;
    const bool mine = read_step(ids, cursor, w, base, begin, end, n, bad_ids, v);
    visit(v, mine);
  }
}

/// Every lane of the calling warp: the mask its collectives name. Kernels run whole warps
/// (executors launch them) and loop over work in warp-uniform steps, so every lane is there.
[[nodiscard]] BAM_HD inline std::uint32_t lanes_of(const warp_position& w) {
  return w.width >= 32 ? ~0u : (1u << w.width) - 1u;
}

/// Runs `body(u)`, in every lane of the warp with the same u, for each vertex u of
/// [begin, end) that this warp owns and `wanted(u)` accepts.
///
/// Batched: the warp owns runs of `width` consecutive vertices; it tests the whole run first
/// (loads of consecutive words with no dependence between them, in flight together) and then
/// runs the body for the accepted vertices in turn. A vertex passed over then costs a load that
/// overlaps the others of its run, not a warp's iteration of dependent loads: most vertices of a
/// large graph are passed over at most levels of a BFS (reached already, or not at the level a
/// scan expands). Every lane tests the whole run itself, with no collective: a body that ends
/// with lanes at different points (for_each_neighbour's walk) would otherwise leave a lane
/// waiting in a vote while the others wait in an access's collectives.
/// Unbatched: a warp per vertex (the order before batches existed).
/// `wanted(u)` must answer the same in every lane; it may only change during the launch by the
/// body's own writes to u.
template <class Wanted, class Body>
BAM_HD void for_each_vertex(const warp_position& w, std::uint64_t begin, std::uint64_t end,
                            bool batched, Wanted&& wanted, Body&& body) {
  if (!batched) {
    for (std::uint64_t u = begin + w.warp; u < end; u += w.warps) {
      if (wanted(u)) body(u);
    }
    return;
  }
  const std::uint64_t step = w.warps * w.width;
  for (std::uint64_t base = begin + w.warp * w.width; base < end; base += step) {
    const auto run = static_cast<unsigned>(end - base < w.width ? end - base : w.width);
    std::uint32_t todo = 0;
    for (unsigned k = 0; k < run; ++k) todo |= std::uint32_t{wanted(base + k)} << k;
    while (todo != 0) {
      const unsigned k = warp::lowest_lane(todo);
      todo &= todo - 1;
      body(base + k);
    }
  }
}

/// The entries of [begin, end) that a warp step starting at `base` reads: the same number in
/// every lane, so one lane can count them for the warp.
[[nodiscard]] BAM_HD inline std::uint64_t step_entries(std::uint64_t base, unsigned width,
                                                       std::uint64_t begin, std::uint64_t end) {
  const std::uint64_t from = base < begin ? begin : base;
  const std::uint64_t to = end - base < width ? end : base + width;
  return to > from ? to - from : 0;
}

/// The early-exit form of for_each_neighbour, for a search that needs one neighbour only
/// (bottom-up BFS): the warp reads the list a step (one aligned 128-byte segment) at a time and
/// stops after the first step in which some lane's `wanted(v)` is true, so entries past it are
/// never read and lines past it never loaded. It does not read ahead: a line started ahead
/// would mostly be one the search never needs. Returns whether a wanted neighbour was found (in
/// every lane) and adds the entries the warp read to `entries_read` (in every lane). Every lane
/// of the warp calls this for the same vertex (the ballot that ends a step names them all).
template <class View, class Wanted>
BAM_HD bool find_neighbour(const View& ids, const warp_position& w, const edge_slice& slice,
                           std::uint64_t begin, std::uint64_t end, std::uint64_t n,
                           std::uint64_t* bad_ids, std::uint64_t& entries_read, Wanted&& wanted) {
  using id_type = typename View::value_type;
  std::uint64_t start = 0;
  if (!clip_walk<id_type>(w, slice, begin, end, start)) return false;
  const std::uint32_t lanes = lanes_of(w);
  auto cursor = ids.reader();
  // Every lane runs the same steps (the loop bound is the same in every lane): the ballot
  // names the whole warp.
  for (std::uint64_t base = start; base < end; base += w.width) {
    std::uint64_t v = 0;
    const bool hit = read_step(ids, cursor, w, base, begin, end, n, bad_ids, v) && wanted(v);
    entries_read += step_entries(base, w.width, begin, end);
    if (warp::ballot(lanes, hit) != 0) return true;
  }
  return false;
}

/// data[i] = value for every i < n.
template <class T>
struct fill_kernel {
  T* data;
  std::uint64_t n;
  T value;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < n; i += t.count) data[i] = value;
  }
};

/// Queues a fill of a whole executor buffer.
template <class Exec, class Buffer,
          class T = std::remove_pointer_t<decltype(std::declval<Buffer&>().data())>>
void fill(Exec& exec, Buffer& buffer, std::type_identity_t<T> value) {
  if (buffer.size() == 0) return;
  exec.launch(exec.shape_for(buffer.size()), fill_kernel<T>{buffer.data(), buffer.size(), value});
}

}  // namespace bam::apps
