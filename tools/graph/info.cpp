#include "graph/info.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <bam/error.hpp>

#include "graph/bcsr_checks.hpp"
#include "graph/hubs.hpp"
#include "graph/mapped_file.hpp"
#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 1 << 14;
constexpr std::uint64_t no_vertex = std::numeric_limits<std::uint64_t>::max();

// SplitMix64's finalizer: a bijection of 64-bit words that spreads every input bit.
constexpr std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Two hashes of an ordered pair (u, v). The graph is symmetric exactly when the multiset of
// its edges equals that of its reversed edges; summing a hash over each multiset compares
// them in one pass without memory (two independent 64-bit sums: a false match is as likely
// as guessing 128 random bits).
constexpr std::uint64_t pair_hash_a(std::uint64_t u, std::uint64_t v) {
  return mix(mix(u ^ 0x5851f42d4c957f2dull) + v);
}
constexpr std::uint64_t pair_hash_b(std::uint64_t u, std::uint64_t v) {
  return mix(mix(v + 0x14057b7ef767814full) ^ (u * 0x9e3779b97f4a7c15ull));
}

// A hash of one vertex id, for the per-vertex comparison that finds an unmatched edge.
constexpr std::uint64_t vertex_hash(std::uint64_t v) { return mix(v + 0x2545f4914f6cdd1dull); }

struct partial_summary {
  std::uint64_t min_degree = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_degree = 0;
  std::uint64_t max_degree_vertex = 0;
  std::uint64_t self_loops = 0;
  std::uint64_t first_self_loop = no_vertex;  ///< smallest vertex with a self loop
  std::uint64_t first_unsorted = no_vertex;   ///< smallest vertex whose list descends
  std::uint64_t first_repeat = no_vertex;     ///< smallest vertex with a neighbour twice in a row
  std::uint64_t first_bad_hub = no_vertex;    ///< smallest vertex whose stored hubs are not hubs_of
  std::uint64_t forward_a = 0;                ///< sums of the pair hashes of (u, v) ...
  std::uint64_t forward_b = 0;
  std::uint64_t reverse_a = 0;  ///< ... and of (v, u), wrapping
  std::uint64_t reverse_b = 0;

  void merge(const partial_summary& other) {
    min_degree = std::min(min_degree, other.min_degree);
    if (other.max_degree > max_degree ||
        (other.max_degree == max_degree && other.max_degree_vertex < max_degree_vertex)) {
      max_degree = other.max_degree;
      max_degree_vertex = other.max_degree_vertex;
    }
    self_loops += other.self_loops;
    first_self_loop = std::min(first_self_loop, other.first_self_loop);
    first_unsorted = std::min(first_unsorted, other.first_unsorted);
    first_repeat = std::min(first_repeat, other.first_repeat);
    first_bad_hub = std::min(first_bad_hub, other.first_bad_hub);
    forward_a += other.forward_a;
    forward_b += other.forward_b;
    reverse_a += other.reverse_a;
    reverse_b += other.reverse_b;
  }
};

// Reads a mapped .bcsr file whose header and offsets were checked.
struct bcsr_view {
  const bcsr_header& h;
  const mapped_file& file;

  [[nodiscard]] std::uint64_t offset(std::uint64_t v) const {
    return file.load<std::uint64_t>(h.offsets.offset + v * 8);
  }
  [[nodiscard]] std::uint64_t neighbor(std::uint64_t e) const {
    const std::uint64_t at = h.neighbors.offset + e * h.id_bytes;
    return h.id_bytes == 8 ? file.load<std::uint64_t>(at) : file.load<std::uint32_t>(at);
  }
  [[nodiscard]] std::uint64_t hub(std::uint64_t v, std::uint32_t j) const {
    const std::uint64_t at = h.hubs.offset + (v * h.hubs_per_vertex() + j) * h.id_bytes;
    return h.id_bytes == 8 ? file.load<std::uint64_t>(at) : file.load<std::uint32_t>(at);
  }
  // The place of the first of u's stored hubs that differs from what the lists make them,
  // written to `expected`; k (hubs_per_vertex) when all agree.
  std::uint32_t first_wrong_hub(std::uint64_t u,
                                std::array<std::uint64_t, bcsr_max_hub_count>& expected) const {
    const std::uint32_t k = h.hubs_per_vertex();
    hubs_of(
        u, [&](std::uint64_t v) { return offset(v); }, [&](std::uint64_t e) { return neighbor(e); },
        std::span(expected).first(k));
    std::uint32_t j = 0;
    while (j < k && hub(u, j) == expected[j]) ++j;
    return j;
  }
};

// Only when the symmetric flag is set and the sums disagree: names one edge without its
// reverse. Compares each vertex's out-neighbours with its in-neighbours by a per-vertex hash
// sum (8 bytes a vertex), then lists both for the first vertex that differs.
std::string unmatched_edge(const bcsr_view& g) {
  const std::uint64_t n = g.h.vertex_count;
  std::vector<std::uint64_t> in_hash;
  try {
    in_hash.assign(n, 0);
  } catch (const std::bad_alloc&) {
    return "the edges differ from their reverses";
  }
  for (std::uint64_t u = 0; u < n; ++u) {
    for (std::uint64_t e = g.offset(u); e < g.offset(u + 1); ++e) {
      in_hash[g.neighbor(e)] += vertex_hash(u);
    }
  }
  std::uint64_t w = 0;
  for (; w < n; ++w) {
    std::uint64_t out_hash = 0;
    for (std::uint64_t e = g.offset(w); e < g.offset(w + 1); ++e)
      out_hash += vertex_hash(g.neighbor(e));
    if (out_hash != in_hash[w]) break;
  }
  if (w == n) return "the edges differ from their reverses";
  std::vector<std::uint64_t> out;  // w -> x
  for (std::uint64_t e = g.offset(w); e < g.offset(w + 1); ++e) out.push_back(g.neighbor(e));
  std::vector<std::uint64_t> in;  // x -> w
  for (std::uint64_t u = 0; u < n; ++u) {
    for (std::uint64_t e = g.offset(u); e < g.offset(u + 1); ++e) {
      if (g.neighbor(e) == w) in.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());
  std::sort(in.begin(), in.end());
  auto count = [](const std::vector<std::uint64_t>& list, std::uint64_t x) {
    const auto [a, b] = std::equal_range(list.begin(), list.end(), x);
    return static_cast<std::uint64_t>(b - a);
  };
  auto describe = [&](std::uint64_t from, std::uint64_t to, std::uint64_t forward,
                      std::uint64_t backward) {
    const std::string edge = std::to_string(from) + " -> " + std::to_string(to);
    const std::string reverse = std::to_string(to) + " -> " + std::to_string(from);
    if (backward == 0) return "edge " + edge + " has no reverse " + reverse;
    return "edge " + edge + " is stored " + std::to_string(forward) + " times but " + reverse +
           " " + std::to_string(backward);
  };
  for (const std::uint64_t x : out) {
    const std::uint64_t forward = count(out, x);
    const std::uint64_t backward = count(in, x);
    if (forward != backward) return describe(w, x, forward, backward);
  }
  for (const std::uint64_t x : in) {
    const std::uint64_t forward = count(in, x);
    const std::uint64_t backward = count(out, x);
    if (forward != backward) return describe(x, w, forward, backward);
  }
  return "the edges differ from their reverses";  // a per-vertex hash collision
}

}  // namespace

graph_summary summarize_graph(const std::filesystem::path& path, unsigned threads) {
  graph_summary s;
  s.header = read_header(path);
  const bcsr_header& h = s.header;
  const mapped_file file(path);
  file.advise_sequential();
  s.file_bytes = file.size();
  // Before any list is walked: an offset that drops (or jumps past m) would send a walk
  // outside the neighbours section.
  check_offsets(file, h);
  const bcsr_view g{h, file};
  const std::uint64_t n = h.vertex_count;
  // In a directed graph a vertex with no out-edges may still have in-edges.
  std::vector<std::uint8_t> has_in_edge(h.symmetric() ? 0 : n, 0);

  partial_summary total;
  std::mutex total_mutex;
  parallel_chunks(
      threads == 0 ? hardware_threads() : threads,
      (n + vertices_per_chunk - 1) / vertices_per_chunk, [&](std::uint64_t c) {
        partial_summary part;
        std::array<std::uint64_t, bcsr_max_hub_count> expected_hubs;
        const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
        for (std::uint64_t u = c * vertices_per_chunk; u < end; ++u) {
          const std::uint64_t begin_edge = g.offset(u);
          const std::uint64_t end_edge = g.offset(u + 1);
          const std::uint64_t degree = end_edge - begin_edge;
          part.min_degree = std::min(part.min_degree, degree);
          if (degree > part.max_degree) {
            part.max_degree = degree;
            part.max_degree_vertex = u;
          }
          std::uint64_t previous = 0;
          for (std::uint64_t e = begin_edge; e < end_edge; ++e) {
            const std::uint64_t v = g.neighbor(e);
            if (v >= n) {
              throw input_error(file.name() + ": byte " +
                                std::to_string(h.neighbors.offset + e * h.id_bytes) +
                                ": neighbour id " + std::to_string(v) +
                                " is not below the vertex count " + std::to_string(n));
            }
            if (v == u) {
              ++part.self_loops;
              part.first_self_loop = std::min(part.first_self_loop, u);
            }
            if (e > begin_edge) {
              if (v < previous) part.first_unsorted = std::min(part.first_unsorted, u);
              if (v == previous) part.first_repeat = std::min(part.first_repeat, u);
            }
            previous = v;
            part.forward_a += pair_hash_a(u, v);
            part.forward_b += pair_hash_b(u, v);
            part.reverse_a += pair_hash_a(v, u);
            part.reverse_b += pair_hash_b(v, u);
            if (!has_in_edge.empty()) {
              std::atomic_ref<std::uint8_t>(has_in_edge[v]).store(1, std::memory_order_relaxed);
            }
          }
          // After the walk above checked every neighbour id is below n.
          if (h.has_hubs() && part.first_bad_hub == no_vertex &&
              g.first_wrong_hub(u, expected_hubs) < h.hubs_per_vertex()) {
            part.first_bad_hub = u;
          }
        }
        const std::lock_guard lock(total_mutex);
        total.merge(part);
      });

  if (n > 0) {
    s.min_degree = total.min_degree;
    s.max_degree = total.max_degree;
    s.max_degree_vertex = total.max_degree_vertex;
    s.mean_degree = static_cast<double>(h.edge_count) / static_cast<double>(n);
  }
  s.self_loops = total.self_loops;
  s.edges_symmetric = total.forward_a == total.reverse_a && total.forward_b == total.reverse_b;
  s.lists_sorted = total.first_unsorted == no_vertex;

  // The flags are promises the apps rely on (bam cc reads a symmetric graph one way only).
  auto broken = [&](const char* flag, const std::string& why) {
    return input_error(file.name() + ": the header's " + flag + " flag is set, but " + why +
                       " (the file is damaged or was made by hand; convert it again)");
  };
  if (h.symmetric() && !s.edges_symmetric) throw broken("symmetric", unmatched_edge(g));
  if (h.sorted() && !s.lists_sorted) {
    throw broken("sorted", "the list of vertex " + std::to_string(total.first_unsorted) +
                               " is not in ascending order");
  }
  if (h.simple() && total.first_self_loop != no_vertex) {
    throw broken("simple", "vertex " + std::to_string(total.first_self_loop) + " has a self loop");
  }
  if (h.simple() && s.lists_sorted && total.first_repeat != no_vertex) {
    throw broken("simple", "the list of vertex " + std::to_string(total.first_repeat) +
                               " holds a neighbour twice");
  }

  if (total.first_bad_hub != no_vertex) {
    const std::uint64_t u = total.first_bad_hub;
    std::array<std::uint64_t, bcsr_max_hub_count> expected;
    const std::uint32_t j = g.first_wrong_hub(u, expected);
    throw broken("hubs", "hub " + std::to_string(j) + " stored for vertex " + std::to_string(u) +
                             " is " + std::to_string(g.hub(u, j)) + ", not " +
                             std::to_string(expected[j]) +
                             " (a vertex's hubs are its neighbours of highest degree, highest "
                             "first)");
  }

  for (std::uint64_t v = 0; v < n; ++v) {
    if (g.offset(v + 1) == g.offset(v) && (has_in_edge.empty() || has_in_edge[v] == 0)) {
      ++s.isolated_vertices;
    }
  }
  return s;
}

}  // namespace bam::graph
