// `bam bench graph-cpu`: loads the graph, times each app's trials, prints the table and
// writes the JSON. The algorithms are apps/graph_cpu.
#include "graph_cpu_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>

#include "apps/graph_cpu/bfs.hpp"
#include "apps/graph_cpu/cc.hpp"
#include "apps/graph_cpu/graph.hpp"
#include "apps/graph_cpu/pagerank.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::bench {

namespace {

namespace gc = apps::graph_cpu;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

/// One app's timed runs and what they read.
struct app_figures {
  std::string app;
  std::vector<double> seconds;  ///< every timed run
  double edges = 0;             ///< adjacency entries read, summed over the runs

  [[nodiscard]] double average() const {
    return std::accumulate(seconds.begin(), seconds.end(), 0.0) /
           static_cast<double>(seconds.size());
  }
  [[nodiscard]] double fastest() const { return *std::min_element(seconds.begin(), seconds.end()); }
  [[nodiscard]] double edges_per_second() const {
    return edges / std::accumulate(seconds.begin(), seconds.end(), 0.0);
  }
};

void write_times(tools::json_writer& j, const app_figures& f) {
  j.key("seconds").begin_array();
  for (const double s : f.seconds) j.value(s);
  j.end_array();
  j.field("average_seconds", f.average())
      .field("min_seconds", f.fastest())
      .field("edges_per_second", f.edges_per_second());
}

/// `count` sources of nonzero out-degree, drawn uniformly by `seed` (a vertex may be drawn
/// twice, as in GAP's source picker). Throws for a graph without edges.
template <class Id>
std::vector<std::uint64_t> pick_sources(gc::csr_view<Id> g, unsigned count, std::uint64_t seed) {
  if (g.edge_count() == 0) throw input_error("bench graph-cpu: BFS needs a graph with edges");
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, g.vertex_count() - 1);
  std::vector<std::uint64_t> sources;
  while (sources.size() < count) {
    const std::uint64_t v = pick(random);
    if (g.degree(v) > 0) sources.push_back(v);
  }
  return sources;
}

template <class Id>
app_figures bench_bfs(gc::csr_view<Id> g, bool symmetric, const graph::hub_table& hubs,
                      const graph_cpu_bench_options& o, tools::json_writer& j) {
  app_figures f;
  f.app = "bfs";
  const std::vector<std::uint64_t> sources = pick_sources(g, o.sources, o.seed);
  std::vector<std::uint64_t> reached(sources.size(), 0);
  std::vector<std::uint64_t> traversed(sources.size(), 0);
  j.key("bfs").begin_object().field("direction_optimizing", symmetric);
  j.field("alpha", gc::bfs_options{}.alpha).field("beta", gc::bfs_options{}.beta);
  j.field("hubs", !hubs.empty()).field("hubs_per_vertex", hubs.per_vertex);
  j.key("runs").begin_array();
  for (unsigned trial = 0; trial < o.trials; ++trial) {
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const auto start = steady::now();
      const gc::bfs_result r =
          gc::bfs(g, {.source = sources[i], .direction_optimizing = symmetric, .hubs = hubs.ids});
      f.seconds.push_back(seconds_since(start));
      if (trial == 0) {
        reached[i] = r.reached;
        for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
          if (r.depths[v] >= 0) traversed[i] += g.degree(v);
        }
      } else if (r.reached != reached[i]) {
        throw error("bench graph-cpu: BFS from " + std::to_string(sources[i]) + " reached " +
                    std::to_string(reached[i]) + " vertices, then " + std::to_string(r.reached));
      }
      f.edges += static_cast<double>(traversed[i]);
      j.begin_object()
          .field("trial", trial)
          .field("source", sources[i])
          .field("seconds", f.seconds.back())
          .field("top_down_steps", r.top_down_steps)
          .field("bottom_up_steps", r.bottom_up_steps)
          .end_object();
    }
  }
  j.end_array();
  j.key("sources").begin_array();
  for (const std::uint64_t s : sources) j.value(s);
  j.end_array().key("reached").begin_array();
  for (const std::uint64_t r : reached) j.value(r);
  j.end_array().key("edges_traversed").begin_array();
  for (const std::uint64_t t : traversed) j.value(t);
  j.end_array();
  write_times(j, f);
  j.end_object();
  return f;
}

template <class Id>
app_figures bench_cc(gc::csr_view<Id> g, bool symmetric, const graph_cpu_bench_options& o,
                     tools::json_writer& j) {
  app_figures f;
  f.app = "cc";
  gc::component_summary summary;
  for (unsigned trial = 0; trial < o.trials; ++trial) {
    const auto start = steady::now();
    const gc::cc_result<Id> r = gc::afforest(g, {.symmetric = symmetric, .seed = o.seed});
    f.seconds.push_back(seconds_since(start));
    f.edges += static_cast<double>(g.edge_count());
    const gc::component_summary s = gc::summarize_components<Id>(r.labels.span());
    if (trial > 0 && (s.components != summary.components || s.largest != summary.largest)) {
      throw error("bench graph-cpu: CC found " + std::to_string(summary.components) +
                  " components, then " + std::to_string(s.components));
    }
    summary = s;
  }
  j.key("cc").begin_object().field("skips_largest_component", symmetric);
  j.field("components", summary.components).field("largest", summary.largest);
  write_times(j, f);
  j.end_object();
  return f;
}

template <class Id>
app_figures bench_pagerank(gc::csr_view<Id> g, bool symmetric, const graph_cpu_bench_options& o,
                           tools::json_writer& j) {
  app_figures f;
  f.app = "pagerank";
  // A symmetric graph's out-lists are its in-lists; a directed one pulls over its transpose.
  gc::adjacency<Id> transposed;
  double transpose_seconds = 0;
  gc::csr_view<Id> in_edges = g;
  if (!symmetric) {
    const auto start = steady::now();
    transposed = gc::transpose(g);
    transpose_seconds = seconds_since(start);
    in_edges = transposed.view();
    std::cout << "pagerank: the graph is directed; its transpose took "
              << fixed(transpose_seconds, 3) << " s (not in the timed runs)\n";
  }
  const gc::pagerank_options p{.iterations = o.iterations};
  double rank_sum = 0;
  double last_change = 0;
  for (unsigned trial = 0; trial < o.trials; ++trial) {
    const auto start = steady::now();
    const gc::pagerank_result r = gc::pagerank(in_edges, g.offsets, p);
    f.seconds.push_back(seconds_since(start));
    f.edges += static_cast<double>(g.edge_count()) * p.iterations;
    rank_sum = 0;
    for (const double x : r.ranks.span()) rank_sum += x;
    last_change = r.last_change;
  }
  j.key("pagerank").begin_object();
  j.field("iterations", p.iterations).field("damping", p.damping);
  j.field("in_edges", symmetric ? "out-lists (symmetric graph)" : "transpose");
  j.field("transpose_seconds", transpose_seconds);
  j.field("rank_sum", rank_sum).field("last_change", last_change);
  write_times(j, f);
  j.end_object();
  return f;
}

std::string command_line(const graph_cpu_bench_options& o, unsigned threads) {
  return "bam bench graph-cpu --graph " + o.graph + " --app " + o.app + " --threads " +
         std::to_string(threads) + " --sources " + std::to_string(o.sources) + " --seed " +
         std::to_string(o.seed) + " --trials " + std::to_string(o.trials) + " --iterations " +
         std::to_string(o.iterations) + (o.hubs ? " --hubs on" : "");
}

}  // namespace

void run_graph_cpu_bench(const graph_cpu_bench_options& o) {
  if (o.trials == 0) throw input_error("bench graph-cpu: --trials must be at least 1");
  if (o.sources == 0) throw input_error("bench graph-cpu: --sources must be at least 1");
  if (o.iterations == 0) throw input_error("bench graph-cpu: --iterations must be at least 1");
  gc::set_threads(o.threads);
  const unsigned threads = gc::max_threads();

  const auto load_start = steady::now();
  const gc::loaded_graph graph = gc::load_bcsr(o.graph);
  const double load_seconds = seconds_since(load_start);
  const bool symmetric = graph.header.symmetric();
  const std::uint64_t n = graph.header.vertex_count;
  const std::uint64_t m = graph.header.edge_count;
  std::cout << "graph " << o.graph << ": " << n << " vertices, " << m << " edges ("
            << (symmetric ? "symmetric" : "directed") << ", " << graph.header.id_bytes
            << "-byte ids), loaded in " << fixed(load_seconds, 3) << " s\n";
  if (!symmetric && (o.app == "bfs" || o.app == "all")) {
    std::cout << "bfs: the graph is directed, so BFS runs top-down only (bottom-up steps need "
                 "in-edges)\n";
  }
  // Loaded apart from the graph, untimed, as bam bfs loads them beside the offsets.
  graph::hub_table hubs;
  if (o.hubs) {
    if (!graph.header.has_hubs()) {
      throw input_error("bench graph-cpu: --hubs on, but " + o.graph +
                        " has no hubs section (bam graph gen and convert write one)");
    }
    // A directed graph's BFS is top-down only: the hubs would go unread.
    if (symmetric) hubs = graph::load_hubs(o.graph);
  }

  tools::json_writer j;
  j.begin_object().field("benchmark", "graph-cpu").field("command", command_line(o, threads));
  j.key("machine");
  tools::write_json(j, tools::read_machine_info());
  j.field("graph", o.graph)
      .field("vertices", n)
      .field("edges", m)
      .field("symmetric", symmetric)
      .field("id_bytes", graph.header.id_bytes)
      .field("threads", threads)
      .field("trials", o.trials)
      .field("load_seconds", load_seconds);

  std::vector<app_figures> figures;
  std::visit(
      [&](const auto& edges) {
        const auto g = edges.view();
        if (o.app == "bfs" || o.app == "all")
          figures.push_back(bench_bfs(g, symmetric, hubs, o, j));
        if (o.app == "cc" || o.app == "all") figures.push_back(bench_cc(g, symmetric, o, j));
        if (o.app == "pagerank" || o.app == "all") {
          figures.push_back(bench_pagerank(g, symmetric, o, j));
        }
      },
      graph.edges);
  j.end_object();

  tools::table t({"app", "threads", "runs", "average s", "min s", "edges/s"});
  for (const app_figures& f : figures) {
    t.add_row({f.app, std::to_string(threads), std::to_string(f.seconds.size()),
               fixed(f.average(), 4), fixed(f.fastest(), 4),
               tools::format_count(f.edges_per_second())});
  }
  t.print(std::cout);
  if (!o.json.empty()) j.save(o.json);
}

}  // namespace bam::bench
