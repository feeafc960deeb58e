// The in-memory graph: flags by inspection, and whole-file reads and writes of .bcsr.

#include <bam/graph/csr.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include <bam/error.hpp>
#include <bam/graph/bcsr_writer.hpp>

#include "graph/hubs.hpp"
#include "graph/mapped_file.hpp"
#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 4096;

void check_shape(const csr& g) {
  auto bad = [](const std::string& what) { return input_error("in-memory graph: " + what); };
  if (g.offsets.empty() || g.offsets.front() != 0) throw bad("offsets must start with 0");
  if (g.offsets.back() != g.neighbors.size()) {
    throw bad("offsets end at " + std::to_string(g.offsets.back()) + " but there are " +
              std::to_string(g.neighbors.size()) + " neighbours");
  }
  if (!std::is_sorted(g.offsets.begin(), g.offsets.end())) throw bad("offsets decrease");
  if (g.weighted ? g.weights.size() != g.neighbors.size() : !g.weights.empty()) {
    throw bad("weights must be one per neighbour when weighted, none otherwise");
  }
  const std::uint64_t n = g.vertex_count();
  for (const std::uint64_t v : g.neighbors) {
    if (v >= n)
      throw bad("neighbour " + std::to_string(v) + " is not below n = " + std::to_string(n));
  }
}

std::uint64_t count_in(const std::uint64_t* list_begin, const std::uint64_t* list_end,
                       std::uint64_t value) {
  const auto [first, last] = std::equal_range(list_begin, list_end, value);
  return static_cast<std::uint64_t>(last - first);
}

}  // namespace

std::uint32_t inspect_flags(const csr& g) {
  const std::uint64_t n = g.vertex_count();
  const unsigned threads = hardware_threads();
  const std::uint64_t chunks = (n + vertices_per_chunk - 1) / vertices_per_chunk;
  auto list_begin = [&](auto& ids, std::uint64_t v) {
    return ids.begin() + static_cast<std::ptrdiff_t>(g.offsets[v]);
  };
  std::atomic<bool> unsorted{false};
  parallel_chunks(threads, chunks, [&](std::uint64_t c) {
    const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
    for (std::uint64_t v = c * vertices_per_chunk; v < end; ++v) {
      if (!std::is_sorted(list_begin(g.neighbors, v), list_begin(g.neighbors, v + 1))) {
        unsorted.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  const bool sorted = !unsorted.load(std::memory_order_relaxed);
  // Simple and symmetric are judged on sorted lists; sort a copy when the graph is not.
  std::vector<std::uint64_t> sorted_copy;
  if (!sorted) {
    sorted_copy = g.neighbors;
    parallel_chunks(threads, chunks, [&](std::uint64_t c) {
      const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
      for (std::uint64_t v = c * vertices_per_chunk; v < end; ++v) {
        std::sort(list_begin(sorted_copy, v), list_begin(sorted_copy, v + 1));
      }
    });
  }
  const std::uint64_t* lists = sorted ? g.neighbors.data() : sorted_copy.data();

  // Symmetric: each pair u < v appears as often as v -> u (looked up from u's side only),
  // and there are as many edges going up (u < v) as going down, so none is left unmatched.
  std::atomic<bool> not_simple{false};
  std::atomic<bool> not_symmetric{false};
  std::atomic<std::uint64_t> up_minus_down{0};  // wraps; only equality with 0 matters
  parallel_chunks(threads, chunks, [&](std::uint64_t c) {
    const std::uint64_t end_vertex = std::min(n, (c + 1) * vertices_per_chunk);
    std::uint64_t up = 0;
    std::uint64_t down = 0;
    bool loop_or_duplicate = false;
    bool unmatched = false;
    for (std::uint64_t u = c * vertices_per_chunk; u < end_vertex; ++u) {
      const std::uint64_t* end = lists + g.offsets[u + 1];
      for (const std::uint64_t* p = lists + g.offsets[u]; p != end;) {
        const std::uint64_t v = *p;
        const std::uint64_t* run_end = std::upper_bound(p, end, v);
        const auto count = static_cast<std::uint64_t>(run_end - p);
        loop_or_duplicate = loop_or_duplicate || v == u || count > 1;
        if (v > u) {
          up += count;
          if (!unmatched && count_in(lists + g.offsets[v], lists + g.offsets[v + 1], u) != count) {
            unmatched = true;
          }
        } else if (v < u) {
          down += count;
        }
        p = run_end;
      }
    }
    if (loop_or_duplicate) not_simple.store(true, std::memory_order_relaxed);
    if (unmatched) not_symmetric.store(true, std::memory_order_relaxed);
    up_minus_down.fetch_add(up - down, std::memory_order_relaxed);
  });
  const bool symmetric = !not_symmetric.load(std::memory_order_relaxed) &&
                         up_minus_down.load(std::memory_order_relaxed) == 0;
  std::uint32_t flags = g.weighted ? bcsr_flags::weighted : 0;
  if (sorted) flags |= bcsr_flags::sorted;
  if (!not_simple.load(std::memory_order_relaxed)) flags |= bcsr_flags::simple;
  if (symmetric) flags |= bcsr_flags::symmetric;
  return flags;
}

bcsr_header write_csr(const std::filesystem::path& path, const csr& g,
                      const csr_write_options& options) {
  check_shape(g);
  const std::uint32_t flags = inspect_flags(g);
  const std::uint32_t hub_count = (flags & bcsr_flags::symmetric) != 0 ? options.hub_count : 0;
  const bool hubs = hub_count != 0;
  bcsr_writer out(path, {.vertex_count = g.vertex_count(),
                         .edge_count = g.edge_count(),
                         .id_bytes = options.id_bytes,
                         .weighted = g.weighted,
                         .hub_count = hub_count});
  std::copy(g.offsets.begin(), g.offsets.end(), out.offsets().begin());
  if (options.id_bytes == 8) {
    std::copy(g.neighbors.begin(), g.neighbors.end(), out.neighbors64().begin());
  } else {
    // make_bcsr_header refused n > 2^32, and every id is below n.
    std::transform(g.neighbors.begin(), g.neighbors.end(), out.neighbors32().begin(),
                   [](std::uint64_t v) { return static_cast<std::uint32_t>(v); });
  }
  std::copy(g.weights.begin(), g.weights.end(), out.weights().begin());
  out.add_flags(flags);
  if (hubs && options.id_bytes == 8) {
    fill_hubs(g.offsets, out.neighbors64(), out.hubs64(), options.threads);
  } else if (hubs) {
    fill_hubs(g.offsets, out.neighbors32(), out.hubs32(), options.threads);
  }
  out.commit();
  return out.header();
}

csr read_csr(const std::filesystem::path& path) {
  const bcsr_header h = read_header(path);
  const mapped_file file(path);
  const std::string& name = file.name();
  csr g;
  g.weighted = h.weighted();
  g.offsets.resize(h.vertex_count + 1);
  std::memcpy(g.offsets.data(), file.data() + h.offsets.offset, h.offsets.bytes);
  for (std::uint64_t v = 1; v <= h.vertex_count; ++v) {
    if (g.offsets[v] < g.offsets[v - 1]) {
      throw input_error(name + ": byte " + std::to_string(h.offsets.offset + v * 8) + ": offsets[" +
                        std::to_string(v) + "] is less than offsets[" + std::to_string(v - 1) +
                        "]");
    }
  }
  g.neighbors.resize(h.edge_count);
  for (std::uint64_t e = 0; e < h.edge_count; ++e) {
    const std::uint64_t at = h.neighbors.offset + e * h.id_bytes;
    const std::uint64_t v =
        h.id_bytes == 8 ? file.load<std::uint64_t>(at) : file.load<std::uint32_t>(at);
    if (v >= h.vertex_count) {
      throw input_error(name + ": byte " + std::to_string(at) + ": neighbour id " +
                        std::to_string(v) + " is not below the vertex count " +
                        std::to_string(h.vertex_count));
    }
    g.neighbors[e] = v;
  }
  if (g.weighted) {
    g.weights.resize(h.edge_count);
    // A weighted graph without edges: data() may be null, which memcpy must not get.
    if (h.edge_count > 0) {
      std::memcpy(g.weights.data(), file.data() + h.weights.offset, h.weights.bytes);
    }
  }
  return g;
}

}  // namespace bam::graph
