// Hand-made graphs, their input-format files, generated graphs and temporary folders.

#include "app_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

#include "graph/convert.hpp"
#include "graph/generate.hpp"

namespace bam::apps::testing {

graph::csr edge_graph::to_csr() const {
  graph::csr g;
  g.offsets.assign(n + 1, 0);
  for (const auto& [u, v] : edges) ++g.offsets[u + 1];
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  g.neighbors.resize(edges.size());
  std::vector<std::uint64_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (const auto& [u, v] : edges) g.neighbors[fill[u]++] = v;
  return g;
}

namespace {

void both_ways(edge_graph& g, std::uint64_t u, std::uint64_t v) {
  g.edges.emplace_back(u, v);
  g.edges.emplace_back(v, u);
}

std::vector<std::uint64_t> shuffled_ids(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

}  // namespace

edge_graph mixed_graph() {
  edge_graph g{"mixed", 14, {}};
  // 3, 7 and 12 are isolated; 13 (the largest id, so text formats keep n) has a self loop only.
  both_ways(g, 0, 2);
  both_ways(g, 0, 2);  // a duplicate
  both_ways(g, 2, 4);
  g.edges.emplace_back(1, 1);  // self loops
  g.edges.emplace_back(5, 5);
  g.edges.emplace_back(13, 13);
  g.edges.emplace_back(4, 6);  // one way only
  both_ways(g, 8, 9);          // a triangle
  both_ways(g, 9, 10);
  both_ways(g, 10, 8);
  both_ways(g, 6, 11);
  g.edges.emplace_back(11, 5);
  return g;
}

edge_graph long_path(std::uint64_t n, std::uint64_t seed) {
  edge_graph g{"long_path", n, {}};
  const std::vector<std::uint64_t> order = shuffled_ids(n, seed);
  for (std::uint64_t i = 0; i + 1 < n; ++i) both_ways(g, order[i], order[i + 1]);
  return g;
}

edge_graph giant_with_oddities(std::uint64_t n, std::uint64_t seed) {
  edge_graph g{"giant_with_oddities", n, {}};
  const std::vector<std::uint64_t> ids = shuffled_ids(n, seed);
  std::mt19937_64 rng(seed + 2);
  // The giant component: 80% of the vertices, a random tree plus as many random chords.
  const std::uint64_t giant = n * 4 / 5;
  for (std::uint64_t i = 1; i < giant; ++i) both_ways(g, ids[i], ids[rng() % i]);
  for (std::uint64_t i = 0; i < giant; ++i) both_ways(g, ids[rng() % giant], ids[rng() % giant]);
  // Duplicates (both ways, so the graph stays symmetric) and self loops inside it.
  for (std::uint64_t i = 0; i < giant / 10; ++i) {
    const auto [u, v] = g.edges[rng() % g.edges.size()];
    both_ways(g, u, v);
    const std::uint64_t w = ids[rng() % giant];
    g.edges.emplace_back(w, w);
  }
  // Pairs, then isolated vertices (the last tenth).
  const std::uint64_t paired_end = giant + (n - giant) / 2 / 2 * 2;
  for (std::uint64_t i = giant; i + 1 < paired_end; i += 2) both_ways(g, ids[i], ids[i + 1]);
  std::shuffle(g.edges.begin(), g.edges.end(), rng);
  return g;
}
edge_graph many_tiny(std::uint64_t n, std::uint64_t seed) {
  edge_graph g{"many_tiny", n, {}};
  const std::vector<std::uint64_t> ids = shuffled_ids(n, seed);
  std::mt19937_64 rng(seed + 1);
  std::uint64_t i = 0;
  while (i < n) {
    const std::uint64_t size = std::min<std::uint64_t>(1 + rng() % 4, n - i);
    for (std::uint64_t k = 1; k < size; ++k) both_ways(g, ids[i], ids[i + k]);  // a star
    if (size == 4) both_ways(g, ids[i + 1], ids[i + 2]);                        // and a cycle
    i += size;
  }
  // Keep the largest id in an edge so the edge-list format (n = largest id + 1) keeps n.
  if (n >= 2) g.edges.emplace_back(n - 1, n - 1);
  return g;
}

edge_graph directed_forward(std::uint64_t n, std::uint64_t edges, std::uint64_t seed) {
  edge_graph g{"directed_forward", n, {}};
  std::mt19937_64 rng(seed);
  for (std::uint64_t k = 0; k < edges; ++k) {
    const std::uint64_t u = rng() % (n - 1);
    const std::uint64_t v = u + 1 + rng() % std::min<std::uint64_t>(n - 1 - u, 50);
    g.edges.emplace_back(u, v);
  }
  g.edges.emplace_back(n - 2, n - 1);
  return g;
}

edge_graph star(std::uint64_t n) {
  edge_graph g{"star", n, {}};
  for (std::uint64_t v = 1; v < n; ++v) both_ways(g, 0, v);
  return g;
}

const char* to_string(input_format f) {
  switch (f) {
    case input_format::bcsr:
      return "bcsr";
    case input_format::el:
      return "el";
    case input_format::mtx:
      return "mtx";
    case input_format::bel:
      return "bel";
  }
  return "?";
}

namespace {

void write_u64s(std::ofstream& out, const std::vector<std::uint64_t>& values) {
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(std::uint64_t)));
}

// EMOGI's binary CSR: [count, 0] then the values, for the offsets (.col) and ids (.dst).
void write_bel(const edge_graph& g, const std::filesystem::path& base) {
  const graph::csr c = g.to_csr();
  std::ofstream col(base.string() + ".col", std::ios::binary);
  write_u64s(col, {c.offsets.size(), 0});
  write_u64s(col, c.offsets);
  std::ofstream dst(base.string() + ".dst", std::ios::binary);
  write_u64s(dst, {c.neighbors.size(), 0});
  write_u64s(dst, c.neighbors);
  if (!col || !dst) throw std::runtime_error("cannot write " + base.string());
}

}  // namespace

std::filesystem::path make_bcsr(const edge_graph& g, input_format format,
                                const std::filesystem::path& dir, std::uint32_t id_bytes,
                                bool transpose) {
  const std::string stem =
      g.name + "-" + to_string(format) + "-" + std::to_string(id_bytes) + (transpose ? "-t" : "");
  const std::filesystem::path out = dir / (stem + ".bcsr");
  std::filesystem::path in;
  switch (format) {
    case input_format::bcsr: {
      edge_graph written = g;
      if (transpose) {
        for (auto& [u, v] : written.edges) std::swap(u, v);
      }
      graph::write_csr(out, written.to_csr(), {.id_bytes = id_bytes});
      return out;
    }
    case input_format::el: {
      in = dir / (stem + ".el");
      std::ofstream f(in);
      f << "# " << g.name << "\n";
      for (const auto& [u, v] : g.edges) f << u << ' ' << v << '\n';
      break;
    }
    case input_format::mtx: {
      in = dir / (stem + ".mtx");
      std::ofstream f(in);
      f << "%%MatrixMarket matrix coordinate pattern general\n% " << g.name << '\n'
        << g.n << ' ' << g.n << ' ' << g.edges.size() << '\n';
      for (const auto& [u, v] : g.edges) f << u + 1 << ' ' << v + 1 << '\n';
      break;
    }
    case input_format::bel:
      in = dir / (stem + ".bel");
      write_bel(g, in);
      break;
  }
  graph::convert_options options;
  options.id_bytes = id_bytes;
  options.threads = 1;
  options.transpose = transpose;
  graph::convert_graph(in, out, options);
  return out;
}

std::filesystem::path make_generated(const std::filesystem::path& dir, graph::graph_kind kind,
                                     unsigned scale, std::uint64_t degree, std::uint64_t seed,
                                     std::uint32_t id_bytes) {
  const std::filesystem::path out =
      dir / ((kind == graph::graph_kind::kron ? "kron-" : "urand-") + std::to_string(scale) + "-" +
             std::to_string(degree) + "-" + std::to_string(seed) + "-" + std::to_string(id_bytes) +
             ".bcsr");
  graph::generate_options o;
  o.kind = kind;
  o.scale = scale;
  o.degree = degree;
  o.seed = seed;
  o.id_bytes = id_bytes;
  o.threads = 1;
  graph::generate_graph(out, o);
  return out;
}

temp_dir::temp_dir() {
  static std::atomic<unsigned> serial{0};
  path_ = std::filesystem::temp_directory_path() /
          ("bam-app-test-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  std::filesystem::create_directories(path_);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace bam::apps::testing
