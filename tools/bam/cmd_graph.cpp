// `bam graph ...`: generate, convert, export and describe the graph files the apps read.

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <bam/graph/bcsr.hpp>

#include "bam/commands.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/output_paths.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"
#include "graph/convert.hpp"
#include "graph/formats.hpp"
#include "graph/generate.hpp"
#include "graph/info.hpp"
#include "graph/parallel.hpp"

namespace bam::tools {

namespace {

std::string describe_flags(std::uint32_t flags) {
  std::string text;
  auto add = [&](std::uint32_t bit, const char* name) {
    if ((flags & bit) == 0) return;
    if (!text.empty()) text += ", ";
    text += name;
  };
  add(graph::bcsr_flags::symmetric, "symmetric");
  add(graph::bcsr_flags::weighted, "weighted");
  add(graph::bcsr_flags::sorted, "sorted");
  add(graph::bcsr_flags::simple, "simple");
  add(graph::bcsr_flags::hubs, "hubs");
  return text.empty() ? "none" : text;
}

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// --- gen ------------------------------------------------------------------------------------

// gen's and convert's --hubs K and --no-hubs; `which` narrows the section they describe.
void add_hub_options(CLI::App& app, std::uint32_t& hub_count, bool& no_hubs, const char* which) {
  app.add_option("--hubs", hub_count,
                 std::string("Hubs per vertex in the hubs section") + which +
                     " (each vertex's neighbours of highest degree, which bottom-up BFS steps "
                     "look up before reading its list; n ids each), 0 for none")
      ->check(CLI::Range(0u, graph::bcsr_max_hub_count))
      ->capture_default_str();
  app.add_flag("--no-hubs", no_hubs, "Leave out the hubs section (--hubs 0)");
}

struct gen_command {
  std::string kind = "kron";
  graph::generate_options options;
  std::string out;
  std::string json;
  bool quiet = false;
  bool no_hubs = false;

  void run() {
    const named_path outputs[] = {{"--out", out}, {"--json", json}};
    refuse_overlaps({}, outputs);
    options.kind = graph::parse_graph_kind(kind);
    if (no_hubs) options.hub_count = 0;
    options.progress = !quiet;
    const graph::generate_result r = graph::generate_graph(out, options);
    std::printf("wrote %s: %s scale %u degree %llu seed %llu: %llu vertices, %llu edges%s, %s\n",
                out.c_str(), kind.c_str(), options.scale,
                static_cast<unsigned long long>(options.degree),
                static_cast<unsigned long long>(options.seed),
                static_cast<unsigned long long>(r.vertex_count),
                static_cast<unsigned long long>(r.edge_count), r.simple ? " (simple)" : "",
                format_bytes(static_cast<double>(r.file_bytes)).c_str());
    std::string phases = "count " + fixed(r.count_seconds, 2) + " s, scatter " +
                         fixed(r.scatter_seconds, 2) + " s, sort " + fixed(r.sort_seconds, 2) +
                         " s";
    if (options.dedup) phases += ", compact " + fixed(r.compact_seconds, 2) + " s";
    if (options.hub_count != 0) phases += ", hubs " + fixed(r.hubs_seconds, 2) + " s";
    std::printf("%.2f s on %u threads: %s\n", r.total_seconds, r.threads, phases.c_str());
    if (json.empty()) return;
    json_writer j;
    j.begin_object().field("command", "graph gen").key("machine");
    write_json(j, read_machine_info());
    j.key("config")
        .begin_object()
        .field("kind", kind)
        .field("scale", options.scale)
        .field("degree", options.degree)
        .field("seed", options.seed)
        .field("threads", r.threads)
        .field("dedup", options.dedup)
        .field("id_bytes", options.id_bytes)
        .field("hubs", options.hub_count != 0)
        .field("hubs_per_vertex", options.hub_count)
        .end_object();
    j.key("result")
        .begin_object()
        .field("file", out)
        .field("vertices", r.vertex_count)
        .field("edges", r.edge_count)
        .field("file_bytes", r.file_bytes)
        .field("simple", r.simple)
        .field("seconds", r.total_seconds)
        .field("count_seconds", r.count_seconds)
        .field("scatter_seconds", r.scatter_seconds)
        .field("sort_seconds", r.sort_seconds)
        .field("compact_seconds", r.compact_seconds)
        .field("hubs_seconds", r.hubs_seconds)
        .end_object();
    j.end_object();
    j.save(json);
  }
};

void add_gen(CLI::App& graph) {
  auto c = std::make_shared<gen_command>();
  CLI::App* gen = graph.add_subcommand(
      "gen", "Generate a GAP-style Kronecker or uniform random graph as .bcsr, out of core");
  gen->add_option("--kind", c->kind, "kron (Graph500 R-MAT) or urand (uniform)")
      ->check(CLI::IsMember({"kron", "urand"}))
      ->capture_default_str();
  gen->add_option("--scale", c->options.scale, "n = 2^SCALE vertices")
      ->required()
      ->check(CLI::Range(1u, 40u));
  gen->add_option("--degree", c->options.degree,
                  "Undirected edges generated per vertex (each stored both ways: m = 2 x D x n)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  gen->add_option("--seed", c->options.seed, "Seed; the same seed gives the same bytes")
      ->transform(whole_number())
      ->capture_default_str();
  gen->add_option("--out", c->out, "Output .bcsr file")
      ->required()
      ->type_name("FILE")
      ->check(output_file({.renamed_into_place = true}));
  gen->add_option("--threads", c->options.threads,
                  "Threads (default: all " + std::to_string(graph::hardware_threads()) +
                      " hardware threads)")
      ->check(CLI::Range(1u, 4096u));
  gen->add_flag("--dedup", c->options.dedup, "Drop duplicate edges and self loops");
  gen->add_option("--id-bytes", c->options.id_bytes, "Bytes per stored vertex id: 8, or 4")
      ->check(CLI::IsMember({"4", "8"}))
      ->capture_default_str();
  add_hub_options(*gen, c->options.hub_count, c->no_hubs, "");
  gen->add_flag("--quiet", c->quiet, "No progress on stderr");
  add_json_option(*gen, c->json);
  gen->callback([c] { c->run(); });
}

// --- convert --------------------------------------------------------------------------------

struct convert_command {
  std::string in;
  std::string out;
  std::string format;
  std::string bel_values = "u32";
  graph::convert_options options;
  bool no_hubs = false;

  void run() {
    if (!format.empty()) options.format = graph::parse_graph_format(format);
    if (no_hubs) options.hub_count = 0;
    options.bel_values = graph::parse_bel_value_type(bel_values);
    const graph::convert_result r = graph::convert_graph(in, out, options);
    static constexpr const char* format_names[] = {"el", "mtx", "bel"};
    std::printf("wrote %s from %s (%s, %llu edges read): %llu vertices, %llu edges (%s), %.2f s\n",
                out.c_str(), in.c_str(), format_names[static_cast<int>(r.format)],
                static_cast<unsigned long long>(r.input_edges),
                static_cast<unsigned long long>(r.vertex_count),
                static_cast<unsigned long long>(r.edge_count), describe_flags(r.flags).c_str(),
                r.seconds);
  }
};

void add_convert(CLI::App& graph) {
  auto c = std::make_shared<convert_command>();
  CLI::App* convert = graph.add_subcommand(
      "convert",
      "Convert an edge list (.el), Matrix Market (.mtx) or EMOGI (.bel) graph to .bcsr "
      "(in memory)");
  convert->add_option("--in", c->in, "Input graph (for EMOGI: X.bel, naming X.bel.col/.dst/.val)")
      ->required()
      ->type_name("FILE");
  convert->add_option("--out", c->out, "Output .bcsr file (not the input: convert refuses that)")
      ->required()
      ->type_name("FILE")
      ->check(output_file({.renamed_into_place = true}));
  convert->add_option("--format", c->format, "Input format (default: from the extension)")
      ->check(CLI::IsMember({"el", "mtx", "bel"}));
  convert->add_flag("--undirected", c->options.undirected, "Add the reverse of every edge");
  convert->add_flag("--transpose", c->options.transpose,
                    "Reverse every edge: the in-lists `bam pagerank --in-edges` reads");
  convert->add_flag("--dedup", c->options.dedup, "Drop duplicate edges and self loops");
  convert->add_option("--id-bytes", c->options.id_bytes, "Bytes per stored vertex id: 8, or 4")
      ->check(CLI::IsMember({"4", "8"}))
      ->capture_default_str();
  add_hub_options(*convert, c->options.hub_count, c->no_hubs, " a symmetric result gets");
  convert
      ->add_option("--bel-values", c->bel_values,
                   "How X.bel.val stores weights: u32 (EMOGI SSSP) or f32")
      ->check(CLI::IsMember({"u32", "f32"}))
      ->capture_default_str();
  convert->add_option("--threads", c->options.threads, "Threads for sorting (default: all)")
      ->check(CLI::Range(1u, 4096u));
  convert->callback([c] { c->run(); });
}

// --- export ---------------------------------------------------------------------------------

struct export_command {
  std::string in;
  std::string out;
  std::string format;
  std::string bel_values = "u32";

  void run() {
    const graph::graph_format f =
        format.empty() ? graph::guess_graph_format(out) : graph::parse_graph_format(format);
    graph::export_graph(in, out, f, graph::parse_bel_value_type(bel_values));
    std::printf("wrote %s from %s\n", out.c_str(), in.c_str());
  }
};

void add_export(CLI::App& graph) {
  auto c = std::make_shared<export_command>();
  CLI::App* exp = graph.add_subcommand(
      "export", "Write a .bcsr graph as an edge list, Matrix Market or EMOGI .bel files");
  exp->add_option("--in", c->in, "Input .bcsr file")->required()->type_name("FILE");
  exp->add_option("--out", c->out, "Output file (for bel: X.bel, writing X.bel.col/.dst/.val)")
      ->required()
      ->type_name("FILE")
      ->check(output_file({.renamed_into_place = true}));
  exp->add_option("--format", c->format, "el, mtx or bel (default: from the extension)")
      ->check(CLI::IsMember({"el", "mtx", "bel"}));
  exp->add_option("--bel-values", c->bel_values,
                  "How X.bel.val stores weights: u32 (EMOGI SSSP) or f32")
      ->check(CLI::IsMember({"u32", "f32"}))
      ->capture_default_str();
  exp->callback([c] { c->run(); });
}

// --- info -----------------------------------------------------------------------------------

struct info_command {
  std::string path;
  std::string json;
  unsigned threads = 0;

  void run() const {
    const named_path inputs[] = {{"graph", path}};
    const named_path outputs[] = {{"--json", json}};
    refuse_overlaps(inputs, outputs);
    const graph::graph_summary s = graph::summarize_graph(path, threads);
    const graph::bcsr_header& h = s.header;
    auto count = [](std::uint64_t v) { return std::to_string(v); };
    auto section = [](const graph::bcsr_section& sec) {
      return "byte " + std::to_string(sec.offset) + ", " + std::to_string(sec.bytes) + " bytes";
    };
    table t({"property", "value"});
    t.add_row({"file", path});
    t.add_row({"file size",
               count(s.file_bytes) + " (" + format_bytes(static_cast<double>(s.file_bytes)) + ")"});
    t.add_row({"format version", count(h.version)});
    t.add_row({"vertices", count(h.vertex_count)});
    t.add_row({"edges", count(h.edge_count)});
    t.add_row({"flags", describe_flags(h.flags)});
    // The flag is checked against the edges (summarize_graph throws when it lies).
    t.add_row({"symmetric", h.symmetric()       ? "yes (flag checked against the edges)"
                            : s.edges_symmetric ? "no flag, but the edges are symmetric"
                                                : "no"});
    t.add_row({"weighted", h.weighted() ? "yes (f32)" : "no"});
    t.add_row({"vertex id bytes", count(h.id_bytes)});
    t.add_row({"degree min", count(s.min_degree)});
    t.add_row({"degree max", count(s.max_degree) + " (vertex " + count(s.max_degree_vertex) + ")"});
    t.add_row({"degree mean", fixed(s.mean_degree, 3)});
    t.add_row({"isolated vertices", count(s.isolated_vertices)});
    t.add_row({"self loops", count(s.self_loops)});
    t.add_row({"offsets section", section(h.offsets)});
    t.add_row({"neighbors section", section(h.neighbors)});
    if (h.weighted()) t.add_row({"weights section", section(h.weights)});
    if (h.has_hubs()) {
      t.add_row({"hubs section", section(h.hubs) + ", " + count(h.hubs_per_vertex()) +
                                     " per vertex (checked against the lists)"});
    }
    t.print(std::cout);
    if (json.empty()) return;
    json_writer j;
    auto section_json = [&](const char* name, const graph::bcsr_section& sec) {
      j.key(name).begin_object().field("offset", sec.offset).field("bytes", sec.bytes).end_object();
    };
    j.begin_object()
        .field("file", path)
        .field("file_bytes", s.file_bytes)
        .field("version", h.version)
        .field("vertices", h.vertex_count)
        .field("edges", h.edge_count)
        .field("symmetric", h.symmetric())
        .field("weighted", h.weighted())
        .field("sorted", h.sorted())
        .field("simple", h.simple())
        .field("hubs", h.has_hubs())
        .field("hubs_per_vertex", h.hubs_per_vertex())
        .field("edges_symmetric", s.edges_symmetric)
        .field("lists_sorted", s.lists_sorted)
        .field("id_bytes", h.id_bytes)
        .field("degree_min", s.min_degree)
        .field("degree_max", s.max_degree)
        .field("degree_max_vertex", s.max_degree_vertex)
        .field("degree_mean", s.mean_degree)
        .field("isolated_vertices", s.isolated_vertices)
        .field("self_loops", s.self_loops)
        .field("section_alignment", h.section_alignment);
    section_json("offsets", h.offsets);
    section_json("neighbors", h.neighbors);
    if (h.weighted()) section_json("weights", h.weights);
    if (h.has_hubs()) section_json("hubs", h.hubs);
    j.end_object();
    j.save(json);
  }
};

void add_info(CLI::App& graph) {
  auto c = std::make_shared<info_command>();
  CLI::App* info = graph.add_subcommand(
      "info",
      "Describe a .bcsr graph: counts, degrees, self loops, sections; checks every offset and "
      "id, and the symmetric, sorted and simple flags against the edges");
  info->add_option("graph", c->path, "The .bcsr file")->required()->type_name("FILE");
  info->add_option("--threads", c->threads, "Threads for the scan (default: all)")
      ->check(CLI::Range(1u, 4096u));
  add_json_option(*info, c->json);
  info->callback([c] { c->run(); });
}

}  // namespace

void add_graph_commands(CLI::App& app) {
  CLI::App* graph = app.add_subcommand(
      "graph", "Graph files for the apps: generate, convert, export, info (.bcsr format)");
  graph->require_subcommand(1);
  add_gen(*graph);
  add_convert(*graph);
  add_export(*graph);
  add_info(*graph);
}

}  // namespace bam::tools
