#pragma once
/// @file
/// Breadth-first search over a graph whose neighbour ids live on storage.
///
/// Level synchronous and frontier based: level d's frontier (a list of vertices) is expanded
/// by one launch (bfs_kernels.hpp) that builds level d+1's frontier; the host reads its size
/// and stops when it is empty. Each adjacency list is read exactly once, so the bytes the
/// traversal needs are (sum of the reached vertices' degrees) x id size, and the work does not
/// grow with the number of levels (a topology-driven BFS scans every vertex at every level).
///
/// A large frontier is expanded by scanning the vertices in id order instead (bfs_scan_kernel):
/// the same lists, read in the order they lie on storage, so concurrent warps share cache
/// lines; a list of vertices in discovery order would touch lines at random, and a cache much
/// smaller than the graph would load each line once per list instead of once per level.
///
/// Direction-optimizing (Beamer et al., SC 2012), the default on a symmetric graph: a level may
/// be taken bottom-up instead (bfs_bottom_up_kernel): every unreached vertex reads its own list
/// only until it meets a frontier vertex, so the large middle levels, where nearly every vertex
/// is reached, read a segment or two per vertex instead of every edge of the frontier. The
/// depths are the same (a vertex gets its depth from the level structure, whichever direction
/// found it), so each level's direction is free, and two rules pick it:
///
/// - lines (the default through a cache): the direction that loads fewer units (cache lines),
///   counted exactly as vertices are claimed: top-down loads the units the frontier's lists
///   span, bottom-up at least the units holding the first entry of an unreached vertex's list.
///   A bottom-up step reads a few entries per vertex but loads a whole line for them, and a line
///   holds the starts of many lists, so it costs about as many lines as there are lines with an
///   unreached start, whatever the entries it reads.
/// - edges (the default over memory): Beamer's, with GAP's parameters: bottom-up when the
///   frontier's lists hold more than 1/alpha of the edges not yet explored, top-down again once
///   the frontier shrinks below n/beta vertices.
///
/// With hubs (bfs_options::hubs, the graph file's hubs section: each vertex's highest-degree
/// neighbour) a bottom-up step looks a vertex's hub up before its list, and reads the list only
/// when the hub is not on the frontier; on a power-law graph that leaves few lists to load.
///
/// A directed graph has no in-lists to search, so there BFS runs top-down and the result says
/// it fell back.
///
///     apps::cpu_executor exec(stream);
///     apps::bfs_result r = apps::run_bfs(exec, offsets, apps::array_edges(ids), {.source = s});

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <bam/cache/stats.hpp>
#include <bam/error.hpp>

#include "apps/bfs_kernels.hpp"
#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

enum class bfs_algorithm : std::uint8_t {
  direction_optimizing,  ///< top-down and bottom-up levels (symmetric graphs)
  top_down,              ///< every level expands the frontier's lists
};

/// "do" or "top-down" (the command line's names).
[[nodiscard]] inline const char* to_string(bfs_algorithm a) {
  return a == bfs_algorithm::direction_optimizing ? "do" : "top-down";
}

/// How a direction-optimizing BFS picks each level's direction (above).
enum class bfs_switch_rule : std::uint8_t {
  automatic,  ///< lines when the source reads through a cache, else edges
  lines,      ///< the fewer units (cache lines; 128-byte segments over memory) to load
  edges,      ///< Beamer's alpha/beta over edge and vertex counts
};

/// "auto", "lines" or "edges" (the command line's names).
[[nodiscard]] inline const char* to_string(bfs_switch_rule r) {
  return r == bfs_switch_rule::lines   ? "lines"
         : r == bfs_switch_rule::edges ? "edges"
                                       : "auto";
}

/// How one level was expanded.
enum class bfs_direction : std::uint8_t {
  listed,     ///< top-down from the frontier list
  scanned,    ///< top-down by a scan in vertex order
  bottom_up,  ///< every unreached vertex searched its list
};

[[nodiscard]] inline const char* to_string(bfs_direction d) {
  return d == bfs_direction::listed    ? "top-down"
         : d == bfs_direction::scanned ? "top-down-scan"
                                       : "bottom-up";
}

/// One level: what it cost, and what the line rule expected either direction to load.
struct bfs_level {
  bfs_direction direction = bfs_direction::listed;
  std::uint64_t frontier = 0;         ///< vertices at the previous depth
  std::uint64_t found = 0;            ///< vertices given this depth (early claims included)
  std::uint64_t early = 0;            ///< vertices given the depth after it (early claims)
  std::uint64_t hub_found = 0;        ///< vertices a bottom-up step found by their hub alone
  std::uint64_t edges_read = 0;       ///< adjacency entries read
  std::uint64_t top_down_units = 0;   ///< units the frontier's lists span (line rule; else 0)
  std::uint64_t bottom_up_units = 0;  ///< units holding an unreached list's start (line rule)
  std::uint64_t loads = 0;            ///< cache line loads (0 without a cache)
  std::uint64_t bytes_moved = 0;      ///< bytes the cache's I/O commands moved
  double seconds = 0;                 ///< the level's launches and counter reads
};

struct bfs_options {
  std::uint64_t source = 0;
  /// A top-down level whose frontier holds more than n / scan_divisor vertices is expanded by a
  /// scan in vertex order; 0: always expand the frontier list.
  std::uint64_t scan_divisor = 64;
  bfs_algorithm algorithm = bfs_algorithm::direction_optimizing;
  /// The graph stores every edge both ways (the file's flag): bottom-up levels need it.
  bool symmetric = false;
  bfs_switch_rule switch_rule = bfs_switch_rule::automatic;
  /// Bottom-up steps give depth + 1 at once to a vertex whose whole list they read without a
  /// parent but with a vertex already at depth (bfs_bottom_up_kernel): its list is not read
  /// again in the next step. The depths are the same either way.
  bool early_claims = true;
  /// Scans and bottom-up steps hand a warp a run of its width of vertices, each lane testing
  /// one, instead of a warp per vertex (apps::for_each_vertex); the depths are the same.
  bool vertex_batches = true;
  /// The edge rule: go bottom-up when the frontier's edges exceed the unexplored edges / alpha;
  /// back top-down when the frontier shrinks below n / beta vertices. Beamer's and GAP's values
  /// (15 and 18), not tuned here (on the scale-18 Kronecker graph they take 3 of its 5 levels
  /// bottom-up).
  double alpha = 15;
  double beta = 18;
  /// Top-down steps split a list longer than this many entries into pieces of it, a warp each
  /// over the whole grid (bfs_pieces); 0: never split.
  std::uint64_t piece_entries = bfs_pieces::default_entries;
  /// Each vertex's k neighbours of highest degree (the graph file's hubs section, n x k entries,
  /// vertex u's at [u * k, u * k + k), 1 <= k <= 8), or empty: bottom-up steps look a vertex's
  /// hubs up before reading its list (bfs_bottom_up_kernel), and the line rule counts only the
  /// lists they would still read. The depths are the same either way, and with any table that
  /// names k distinct neighbours of each vertex, or all of them when it has fewer (the vertex
  /// itself in the places left): a list of at most k entries is taken to be its hubs and is not
  /// read.
  std::span<const std::uint64_t> hubs = {};
};

struct bfs_result {
  std::vector<std::int32_t> depths;           ///< per vertex; unreached (-1) if not reached
  std::vector<std::uint64_t> level_vertices;  ///< vertices at each depth 0, 1, ...
  std::uint64_t scanned_levels = 0;           ///< top-down levels expanded by a scan in id order
  std::uint64_t bottom_up_levels = 0;         ///< levels taken bottom-up
  std::uint64_t reached = 0;
  std::uint64_t edges_traversed = 0;  ///< sum of reached degrees (what TEPS counts)
  std::uint64_t edges_read = 0;       ///< adjacency entries actually read from the source
  bfs_algorithm algorithm = bfs_algorithm::top_down;  ///< what ran
  bfs_switch_rule switch_rule = bfs_switch_rule::edges;  ///< the rule that ran (lines or edges)
  bool fell_back = false;  ///< direction-optimizing asked for on a directed graph
  bool early_claims = false;  ///< bottom-up steps made early claims (bfs_options::early_claims)
  bool vertex_batches = false;  ///< bfs_options::vertex_batches
  bool hubs = false;            ///< bottom-up steps looked up hubs (bfs_options::hubs)
  std::uint64_t hub_found = 0;  ///< vertices found by their hub alone
  double seconds = 0;      ///< the traversal (launches and frontier sizes) alone
  std::vector<bfs_level> levels;  ///< one per level expanded, in order
};

/// Executor memory the line rule's tables take for a source of `units` units (run_bfs allocates
/// them besides its 36 bytes per vertex): a count and two bits per unit.
[[nodiscard]] inline std::uint64_t bfs_unit_table_bytes(std::uint64_t units) {
  return units * sizeof(std::uint32_t) + 2 * (units + 31) / 32 * sizeof(std::uint32_t) + 1024;
}

/// The rule `asked` resolves to on a source that does (`cached`) or does not read through a
/// cache.
[[nodiscard]] inline bfs_switch_rule resolve(bfs_switch_rule asked, bool cached) {
  if (asked != bfs_switch_rule::automatic) return asked;
  return cached ? bfs_switch_rule::lines : bfs_switch_rule::edges;
}

/// Runs BFS from `options.source`. `offsets` are the graph's n + 1 vertex offsets in host
/// memory; `edges` a neighbour source (edges.hpp). Throws bam::input_error for a bad source
/// or corrupt ids, bam::nvme_error for an I/O error a kernel met.
template <class Exec, class Edges>
bfs_result run_bfs(Exec& exec, std::span<const std::uint64_t> offsets, const Edges& edges,
                   const bfs_options& options) {
  const std::uint64_t n = checked_vertex_count(offsets, edges.size(), "bfs");
  if (options.source >= n) {
    throw input_error("bfs: source vertex " + std::to_string(options.source) +
                      " is not below the vertex count " + std::to_string(n));
  }
  if (!(options.alpha > 0) || !(options.beta > 0)) {
    throw input_error("bfs: alpha and beta must be positive");
  }
  const std::uint64_t hub_count = n == 0 ? 0 : options.hubs.size() / n;
  if (!options.hubs.empty() &&
      (hub_count * n != options.hubs.size() || hub_count > bfs_hubs::most)) {
    throw input_error("bfs: " + std::to_string(options.hubs.size()) + " hubs for " +
                      std::to_string(n) + " vertices (1 to " + std::to_string(bfs_hubs::most) +
                      " per vertex)");
  }
  auto offsets_d = upload_offsets(exec, offsets);
  auto depths = exec.template allocate<std::int32_t>(n);
  auto frontier = exec.template allocate<std::uint64_t>(n);
  auto next = exec.template allocate<std::uint64_t>(n);
  const bool optimizing = options.algorithm == bfs_algorithm::direction_optimizing;
  const bool early_claims = optimizing && options.symmetric && options.early_claims;
  // Early claims' list: the vertices of the frontier after next, found during a bottom-up step.
  auto early = exec.template allocate<std::uint64_t>(early_claims ? n : 0);
  auto counters = exec.template allocate<std::uint64_t>(bfs_counter::count);
  // Long lists of top-down steps, split for the whole grid (bfs_pieces).
  const std::uint64_t piece_entries = options.piece_entries;
  auto piece_table = exec.template allocate<bfs_piece>(
      piece_entries ? bfs_pieces::capacity_for(edges.size(), piece_entries) : 0);
  auto piece_count = exec.template allocate<std::uint64_t>(1);
  const bfs_pieces pieces{piece_entries ? piece_table.data() : nullptr, piece_count.data(),
                          piece_table.size(), piece_entries};
  fill(exec, depths, unreached);
  const std::int32_t zero_depth = 0;
  exec.upload(depths, options.source, std::span<const std::int32_t>(&zero_depth, 1));
  exec.upload(frontier, 0, std::span<const std::uint64_t>(&options.source, 1));
  const std::uint64_t zeros[bfs_counter::count] = {};
  exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));

  // Hubs serve bottom-up steps only: a directed graph (top-down only) leaves them unread.
  const bool use_hubs = optimizing && options.symmetric && !options.hubs.empty();
  auto hubs = exec.template allocate<std::uint64_t>(use_hubs ? options.hubs.size() : 0);
  if (use_hubs) exec.upload(hubs, 0, options.hubs);
  const bfs_hubs hub_table{use_hubs ? hubs.data() : nullptr,
                           static_cast<std::uint32_t>(use_hubs ? hub_count : 0)};

  bfs_result r;
  r.hubs = use_hubs;
  r.early_claims = early_claims;
  r.vertex_batches = options.vertex_batches;
  r.fell_back = optimizing && !options.symmetric;
  r.algorithm = optimizing && options.symmetric ? bfs_algorithm::direction_optimizing
                                                : bfs_algorithm::top_down;
  const std::optional<cache_stats> stats_before = edges.stats();
  r.switch_rule = resolve(options.switch_rule, stats_before.has_value());
  const bool by_lines = r.algorithm == bfs_algorithm::direction_optimizing &&
                        r.switch_rule == bfs_switch_rule::lines;
  // The line rule's tables: unreached list starts per unit, and a bitmap of the units holding
  // an end of a next-frontier list (cleared every level). Empty when the rule is off.
  const entry_units units = edges.units();
  const std::uint64_t unit_count = by_lines ? units.count(edges.size()) : 0;
  auto unreached_starts = exec.template allocate<std::uint32_t>(unit_count);
  auto next_ends = exec.template allocate<std::uint32_t>((unit_count + 31) / 32);
  auto early_ends =
      exec.template allocate<std::uint32_t>(early_claims ? (unit_count + 31) / 32 : 0);
  // With hubs: the units the hub probe found holding a list a bottom-up step would read.
  auto probe_marks = exec.template allocate<std::uint32_t>(use_hubs ? (unit_count + 31) / 32 : 0);

  const auto start = std::chrono::steady_clock::now();
  std::uint64_t size = 1;
  const std::uint64_t source_begin = offsets[options.source];
  const std::uint64_t source_end = offsets[options.source + 1];
  std::uint64_t frontier_edges = source_end - source_begin;
  // Edges of the vertices not reached yet: what a top-down traversal still has to read.
  std::uint64_t unexplored = edges.size() - frontier_edges;
  // The line rule's costs of the next level: top-down, the units the frontier's lists span;
  // bottom-up, the units holding an unreached vertex's first entry.
  std::uint64_t top_down_units = units.spanned(source_begin, source_end);
  std::uint64_t bottom_up_units = 0;
  if (by_lines) {
    fill(exec, unreached_starts, 0u);
    fill(exec, next_ends, 0u);
    fill(exec, early_ends, 0u);
    const bfs_units tables{units, unreached_starts.data(), next_ends.data(), early_ends.data()};
    exec.launch(exec.shape_for(n), bfs_unit_starts_kernel{offsets_d.data(), n, options.source,
                                                          tables, counters.data()});
    std::uint64_t found[bfs_counter::count];
    exec.download(counters, 0, std::span<std::uint64_t>(found));
    bottom_up_units = found[bfs_counter::start_units];
    exec.upload(counters, 0, std::span<const std::uint64_t>(zeros));
  }
  // The hub probe (bfs_hub_probe_kernel) costs a pass over the vertices; a frontier whose
  // lists span fewer units than this goes top-down without it.
  constexpr std::uint64_t hub_probe_min_units = 64;
  auto probe_hub_units = [&](std::int32_t level) {
    fill(exec, probe_marks, 0u);
    exec.launch(exec.shape_for(n),
                bfs_hub_probe_kernel{offsets_d.data(), depths.data(), hub_table, n, level, units,
                                     probe_marks.data(), counters.data()});
    // Only the probe's slot: the others hold the level's presets (early claims).
    std::uint64_t at_least = 0;
    exec.download(counters, bfs_counter::probe_units, std::span<std::uint64_t>(&at_least, 1));
    const std::uint64_t zero = 0;
    exec.upload(counters, bfs_counter::probe_units, std::span<const std::uint64_t>(&zero, 1));
    return at_least;
  };
  std::optional<cache_stats> stats_at = stats_before;
  // What the counters start each level with: the early claims of the level before, which are
  // already on its next frontier (the early list becomes the next list).
  std::uint64_t preset[bfs_counter::count] = {};
  bool bottom_up = false;
  for (std::int32_t depth = 1; size > 0; ++depth) {
    const auto level_start = std::chrono::steady_clock::now();
    bfs_level level;
    level.frontier = size;
    if (by_lines) {
      level.top_down_units = top_down_units;
      level.bottom_up_units = bottom_up_units;
    }
    r.level_vertices.push_back(size);
    const bfs_units tables =
        by_lines ? bfs_units{units, unreached_starts.data(), next_ends.data(), early_ends.data()}
                 : bfs_units{units};
    const bfs_claim claim{.depths = depths.data(),
                          .next = next.data(),
                          .counters = counters.data(),
                          .offsets = offsets_d.data(),
                          .depth = depth,
                          .units = tables,
                          .early = early_claims ? early.data() : nullptr};
    using view = typename Edges::view_type;
    if (by_lines) {
      // Each level's direction is free (the depths do not depend on it): take the one that
      // loads fewer lines. Top-down's count is exact; bottom-up's is what it loads at least
      // (a vertex that finds no parent in its first line reads on).
      bottom_up = bottom_up_units < top_down_units;
      if (!bottom_up && use_hubs && top_down_units > hub_probe_min_units) {
        // Vertices whose hub is on the frontier read no list: count the units of the others.
        level.bottom_up_units = probe_hub_units(depth - 1);
        bottom_up = level.bottom_up_units < top_down_units;
      }
    } else if (r.algorithm == bfs_algorithm::direction_optimizing) {
      // Beamer's switch: bottom-up pays once the frontier's edges outweigh a fraction of what
      // is left (most of those edges would find vertices already reached), top-down again once
      // the frontier is small and shrinking (the unreached vertices are then mostly far away,
      // and each would read its whole list in vain).
      const std::uint64_t previous =
          r.level_vertices.size() > 1 ? r.level_vertices[r.level_vertices.size() - 2] : 0;
      if (!bottom_up) {
        bottom_up =
            static_cast<double>(frontier_edges) > static_cast<double>(unexplored) / options.alpha;
      } else if (size < previous &&
                 static_cast<double>(size) < static_cast<double>(n) / options.beta) {
        bottom_up = false;
      }
    }
    // A top-down launch over `slice`, then the pieces of the long lists it split (none can be
    // long when the frontier's lists hold fewer entries than a piece).
    auto top_down = [&](const edge_slice& slice, auto&& view_for, launch_shape shape,
                        const auto& kernel) {
      const bool split = piece_entries != 0 && frontier_edges > piece_entries;
      if (split) fill(exec, piece_count, std::uint64_t{0});
      exec.launch(shape, kernel);
      if (!split) return;
      const launch_shape spread =
          within(exec.shape_for(bfs_pieces::capacity_for(frontier_edges, piece_entries)),
                 edges.max_launch_threads());
      exec.launch(spread, bfs_pieces_kernel<view>{view_for(spread), slice, pieces, claim, n});
    };
    if (bottom_up) {
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape =
            within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
        exec.launch(shape, bfs_bottom_up_kernel<view>{view_for(shape), offsets_d.data(), slice,
                                                      claim, n, options.vertex_batches, hub_table});
      });
      ++r.bottom_up_levels;
      level.direction = bfs_direction::bottom_up;
    } else if (options.scan_divisor != 0 && size > n / options.scan_divisor) {
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape =
            within(exec.shape_for(slice.vertices()), edges.max_launch_threads());
        top_down(slice, view_for, shape,
                 bfs_scan_kernel<view>{view_for(shape), offsets_d.data(), slice, claim, pieces, n,
                                       options.vertex_batches});
      });
      ++r.scanned_levels;
      level.direction = bfs_direction::scanned;
      level.edges_read = frontier_edges;  // every list of the frontier, whole
    } else {
      const std::uint64_t listed = size;
      edges.sweep(exec, n, [&](const edge_slice& slice, auto&& view_for) {
        const launch_shape shape = within(exec.shape_for(listed), edges.max_launch_threads());
        top_down(slice, view_for, shape,
                 bfs_expand_kernel<view>{view_for(shape), offsets_d.data(), slice, frontier.data(),
                                         listed, claim, pieces, n});
      });
      level.edges_read = frontier_edges;
    }
    std::uint64_t found[bfs_counter::count];
    exec.download(counters, 0, std::span<std::uint64_t>(found));
    edges.check();
    check_bad_ids(found[bfs_counter::bad_ids], n, "bfs");
    size = found[bfs_counter::next_size];
    frontier_edges = found[bfs_counter::next_edges];
    unexplored -= frontier_edges;
    level.edges_read += found[bfs_counter::read];
    r.edges_read += level.edges_read;
    level.found = size;
    level.early = found[bfs_counter::early_size];
    level.hub_found = found[bfs_counter::hub_found];
    r.hub_found += level.hub_found;
    top_down_units = found[bfs_counter::next_inner_units] + found[bfs_counter::next_end_units];
    bottom_up_units -= found[bfs_counter::emptied_units];
    preset[bfs_counter::next_size] = found[bfs_counter::early_size];
    preset[bfs_counter::next_edges] = found[bfs_counter::early_edges];
    preset[bfs_counter::next_inner_units] = found[bfs_counter::early_inner_units];
    preset[bfs_counter::next_end_units] = found[bfs_counter::early_end_units];
    exec.upload(counters, 0, std::span<const std::uint64_t>(preset));
    std::swap(frontier, next);
    if (early_claims) {
      // The early list holds the next frontier's first vertices, and its bitmap their ends.
      std::swap(next, early);
      std::swap(next_ends, early_ends);
    }
    if (by_lines && size > 0) fill(exec, early_claims ? early_ends : next_ends, 0u);
    if (stats_at) {
      // One small copy per level (the cache's counter shards): the level's own I/O.
      const std::optional<cache_stats> now = edges.stats();
      level.loads = now->loads - stats_at->loads;
      level.bytes_moved = now->bytes_moved - stats_at->bytes_moved;
      stats_at = now;
    }
    level.seconds = seconds_since(level_start);
    r.levels.push_back(level);
    if (depth == std::numeric_limits<std::int32_t>::max() && size > 0) {
      throw input_error("bfs: more levels than a 32-bit depth holds");
    }
  }
  r.seconds = seconds_since(start);

  r.depths.resize(n);
  exec.download(depths, 0, std::span<std::int32_t>(r.depths));
  for (std::uint64_t v = 0; v < n; ++v) {
    if (r.depths[v] == unreached) continue;
    ++r.reached;
    r.edges_traversed += offsets[v + 1] - offsets[v];
  }
  return r;
}

}  // namespace bam::apps
