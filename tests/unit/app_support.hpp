#pragma once
// Support for the app tests: sequential reference implementations (written without looking at
// the kernels), hand-made graphs written in every input format, and a harness that runs an app
// on a .bcsr file through emulated storage and a page cache of a given shape.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/stats.hpp>
#include <bam/graph/csr.hpp>

#include "apps/bfs.hpp"
#include "apps/cc.hpp"
#include "apps/pagerank.hpp"
#include "graph/generate.hpp"

namespace bam::apps::testing {

// ---- references -----------------------------------------------------------------------------

/// Depths by a plain queue BFS over out-edges; -1 where unreached.
std::vector<std::int32_t> reference_bfs(const graph::csr& g, std::uint64_t source);

/// Component labels of the graph taken as undirected: vertices in increasing order, each
/// unlabelled one starts a search over in- and out-edges labelling its component with its id.
std::vector<std::uint64_t> reference_cc(const graph::csr& g);

/// Power iteration in the textbook form: r' = (1-d)/n + d (sum over in-edges r[u]/deg(u) +
/// dangling/n), ranks from 1/n.
std::vector<double> reference_pagerank(const graph::csr& g, unsigned iterations, double damping);

/// Adjacency entries a BFS that takes every level bottom-up reads on a CPU thread (a warp of
/// one lane), given the true depths: at level d every vertex not reached before it reads its
/// list up to and including the first neighbour at depth d - 1, or all of it. Without early
/// claims that is exact; with them it is the most, and `every_early_claim` gives the least:
/// every vertex at depth d >= 2 claimed at level d - 1 (which read its whole list) and not read
/// at level d.
std::uint64_t reference_bottom_up_reads(const graph::csr& g,
                                        const std::vector<std::int32_t>& depths,
                                        bool every_early_claim = false);

/// What a level of BFS would load either way, in units of `entries_per_unit` entries (a unit
/// boundary at entry 0): top-down, the units the lists of the vertices at the previous depth
/// span; bottom-up, the units holding the first entry of a non-empty list not reached before
/// the level, and the least that can be with early claims (less the lists of the vertices at
/// the level's depth, which the level before may have claimed). One per level, as run_bfs
/// expands them (the last finds nothing).
struct level_units {
  std::uint64_t top_down = 0;
  std::uint64_t bottom_up = 0;
  std::uint64_t bottom_up_least = 0;
};
std::vector<level_units> reference_level_units(const graph::csr& g,
                                               const std::vector<std::int32_t>& depths,
                                               std::uint64_t entries_per_unit);

/// Adjacency entries Afforest reads with `rounds` sampled neighbours when the sample voted for
/// `giant` (a vertex): the first `rounds` entries of every list that lie in the unit of its
/// first (`units`: cc_result::sample_units), and the rest of every list of a vertex outside the
/// component of `giant` in the graph of the sampled edges alone.
std::uint64_t reference_afforest_reads(const graph::csr& g, std::uint64_t rounds,
                                       std::uint64_t giant, const entry_units& units);

/// L1 distance and largest absolute difference.
struct rank_error {
  double l1 = 0;
  double max_abs = 0;
};
rank_error compare_ranks(const std::vector<double>& a, const std::vector<double>& b);

/// PageRank agreement the tests demand: the kernels' atomic adds sum in a different order
/// than the reference, so results differ by rounding only.
inline constexpr double rank_l1_tolerance = 1e-9;
inline constexpr double rank_max_tolerance = 1e-12;

// ---- graphs -----------------------------------------------------------------------------------

/// A hand-made graph: n vertices and directed edges in input order.
struct edge_graph {
  std::string name;
  std::uint64_t n = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> edges;

  /// The CSR of exactly these edges (lists in input order).
  [[nodiscard]] graph::csr to_csr() const;
};

/// Isolated vertices, self loops, duplicate edges, a one-way edge, a triangle and a path.
edge_graph mixed_graph();
/// One long path through a shuffled vertex order, stored both ways: one component, deep BFS.
edge_graph long_path(std::uint64_t n, std::uint64_t seed);
/// A giant component (80% of the vertices) with duplicate edges and self loops, pairs, and
/// isolated vertices, stored both ways (symmetric), lists in shuffled order.
edge_graph giant_with_oddities(std::uint64_t n, std::uint64_t seed);
/// Many components of 1 to 4 vertices with shuffled ids, stored both ways.
edge_graph many_tiny(std::uint64_t n, std::uint64_t seed);
/// A directed graph (edges only from lower to higher ids) with sinks: not symmetric.
edge_graph directed_forward(std::uint64_t n, std::uint64_t edges, std::uint64_t seed);
/// A hub joined both ways to every other vertex: one list spanning many lines.
edge_graph star(std::uint64_t n);

enum class input_format { bcsr, el, mtx, bel };
const char* to_string(input_format f);

/// Writes `g` in `format` under `dir` and turns it into a .bcsr file with the graph tools'
/// converter (bcsr: written directly); returns the .bcsr path. `transpose`: the converter
/// reverses every edge (bcsr: the reversed edges are written).
std::filesystem::path make_bcsr(const edge_graph& g, input_format format,
                                const std::filesystem::path& dir, std::uint32_t id_bytes,
                                bool transpose = false);

/// A GAP-style generated graph (the graph tools' generator) under `dir`; returns its path.
std::filesystem::path make_generated(const std::filesystem::path& dir, graph::graph_kind kind,
                                     unsigned scale, std::uint64_t degree, std::uint64_t seed,
                                     std::uint32_t id_bytes);

/// A fresh folder for one test's files, removed when the object goes away.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// ---- running an app ---------------------------------------------------------------------------

/// Where an app reads its neighbours from in a test.
struct storage_shape {
  cache_mode mode = cache_mode::optimized;
  std::uint32_t line_bytes = 4096;
  std::uint64_t cache_lines = 64;
  std::uint32_t devices = 1;
  unsigned workers = 8;             ///< CPU pool threads
  bool host_memory = false;         ///< ids read in place, no cache
  std::uint64_t tile_bytes = 0;     ///< > 0: proactive tiling through a buffer of this size
  bool clock_chunk_one = false;     ///< cache_config::clock_chunk = 1
  double latency_us = 0;            ///< modelled device latency
  std::uint64_t bad_lba_begin = 0;  ///< injected unreadable LBAs [begin, end) (device 0)
  std::uint64_t bad_lba_end = 0;
};
std::string to_string(const storage_shape& s);

/// Which app and how.
struct app_request {
  enum class kind { bfs, cc, pagerank } app = kind::bfs;
  std::uint64_t source = 0;
  std::uint64_t bfs_scan_divisor = bfs_options{}.scan_divisor;
  bfs_algorithm bfs = bfs_options{}.algorithm;
  bfs_switch_rule bfs_rule = bfs_options{}.switch_rule;
  bool bfs_early_claims = bfs_options{}.early_claims;
  bool bfs_vertex_batches = bfs_options{}.vertex_batches;
  double bfs_alpha = bfs_options{}.alpha;
  double bfs_beta = bfs_options{}.beta;
  std::uint64_t bfs_piece_entries = bfs_options{}.piece_entries;
  /// Bottom-up steps look up hubs: the file's hubs section, or hubs found from its lists when it
  /// has none; `bfs_hub_table` instead when given (any neighbour of each vertex will do).
  bool bfs_hubs = false;
  std::span<const std::uint64_t> bfs_hub_table;
  cc_algorithm cc = cc_options{}.algorithm;
  unsigned iterations = 20;
  double tolerance = 0;
  pagerank_algorithm pagerank = pagerank_algorithm::push;
  std::span<const std::uint64_t> pagerank_out_offsets;  ///< pull over a transpose: the graph's
  unsigned software_warp_width = 0;  ///< > 1: run the kernels on software warps of this width
  unsigned software_warps = 4;
};

/// BFS as each algorithm runs it: direction-optimizing with its default switch (the line rule
/// through a cache, the edge rule over memory), with each switch rule named, with every level
/// bottom-up (the edge rule forced both ways), and top-down; early claims as by default (on).
struct bfs_variant {
  const char* name;
  bfs_algorithm algorithm;
  double alpha;
  double beta;
  bfs_switch_rule rule = bfs_options{}.switch_rule;
  bool early_claims = bfs_options{}.early_claims;
  bool vertex_batches = bfs_options{}.vertex_batches;
  bool hubs = false;  ///< bfs_options::hubs from the graph (app_request::bfs_hubs)

  void apply(app_request& r) const {
    r.bfs = algorithm;
    r.bfs_alpha = alpha;
    r.bfs_beta = beta;
    r.bfs_rule = rule;
    r.bfs_early_claims = early_claims;
    r.bfs_vertex_batches = vertex_batches;
    r.bfs_hubs = hubs;
  }
};
inline constexpr double always = std::numeric_limits<double>::infinity();
inline constexpr bfs_variant bfs_default{"do", bfs_algorithm::direction_optimizing,
                                         bfs_options{}.alpha, bfs_options{}.beta};
inline constexpr bfs_variant bfs_lines_rule{"do-lines", bfs_algorithm::direction_optimizing,
                                            bfs_options{}.alpha, bfs_options{}.beta,
                                            bfs_switch_rule::lines};
inline constexpr bfs_variant bfs_edges_rule{"do-edges", bfs_algorithm::direction_optimizing,
                                            bfs_options{}.alpha, bfs_options{}.beta,
                                            bfs_switch_rule::edges};
inline constexpr bfs_variant bfs_bottom_up{"bottom-up", bfs_algorithm::direction_optimizing, always,
                                           always, bfs_switch_rule::edges};
inline constexpr bfs_variant bfs_top_down{"top-down", bfs_algorithm::top_down, bfs_options{}.alpha,
                                          bfs_options{}.beta};
/// Every level bottom-up with a warp per vertex (bfs_options::vertex_batches off): the same as
/// bfs_bottom_up on a CPU thread (a warp of one lane), so only software warps tell them apart.
inline constexpr bfs_variant bfs_bottom_up_unbatched{
    "bottom-up-unbatched",  bfs_algorithm::direction_optimizing, always, always,
    bfs_switch_rule::edges, bfs_options{}.early_claims,          false};
/// With hubs: as by default, and every level bottom-up.
inline constexpr bfs_variant bfs_hubs{"do-hubs",
                                      bfs_algorithm::direction_optimizing,
                                      bfs_options{}.alpha,
                                      bfs_options{}.beta,
                                      bfs_options{}.switch_rule,
                                      bfs_options{}.early_claims,
                                      bfs_options{}.vertex_batches,
                                      true};
inline constexpr bfs_variant bfs_bottom_up_hubs{"bottom-up-hubs",
                                                bfs_algorithm::direction_optimizing,
                                                always,
                                                always,
                                                bfs_switch_rule::edges,
                                                bfs_options{}.early_claims,
                                                bfs_options{}.vertex_batches,
                                                true};
inline constexpr bfs_variant bfs_variants[] = {bfs_default,       bfs_lines_rule, bfs_edges_rule,
                                               bfs_bottom_up,     bfs_top_down,   bfs_hubs,
                                               bfs_bottom_up_hubs};
inline constexpr cc_algorithm cc_algorithms[] = {cc_algorithm::afforest, cc_algorithm::union_find};

struct app_outcome {
  bfs_result bfs;
  cc_result cc;
  pagerank_result pagerank;
  cache_stats stats;               ///< zero for host memory and tiling
  std::uint64_t partitions = 0;    ///< tiling: partitions of the neighbour array
  std::uint64_t tile_copies = 0;   ///< tiling: partition copies
  std::uint64_t bytes_copied = 0;  ///< tiling: bytes those copies moved
};

/// Opens `bcsr` on emulated storage of `shape` and runs `request`.
app_outcome run_app(const std::filesystem::path& bcsr, const storage_shape& shape,
                    const app_request& request);

/// BFS from `source` as `variant` runs it; a non-empty `hub_table` is looked up as the hubs
/// (app_request::bfs_hub_table).
app_outcome run_bfs_as(const std::filesystem::path& bcsr, std::uint64_t source,
                       const bfs_variant& variant, const storage_shape& shape = {},
                       std::span<const std::uint64_t> hub_table = {});

}  // namespace bam::apps::testing
