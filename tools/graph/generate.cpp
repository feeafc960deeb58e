#include "graph/generate.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr_writer.hpp>

#include "graph/generators.hpp"
#include "graph/hubs.hpp"
#include "graph/parallel.hpp"
#include "graph/progress.hpp"

namespace bam::graph {

graph_kind parse_graph_kind(std::string_view name) {
  if (name == "kron") return graph_kind::kron;
  if (name == "urand") return graph_kind::urand;
  throw input_error("unknown graph kind '" + std::string(name) + "' (expected kron or urand)");
}

namespace {

constexpr unsigned max_scale = 40;
constexpr std::uint64_t edges_per_chunk = std::uint64_t{1} << 16;
constexpr std::uint64_t vertices_per_chunk = std::uint64_t{1} << 12;
// Edges handled together in passes 1 and 2 (about 3x faster than one at a time, see
// generate_batch and scatter_edges).
constexpr std::size_t batch_edges = 32;

std::uint64_t chunks_for(std::uint64_t items, std::uint64_t per_chunk) {
  return (items + per_chunk - 1) / per_chunk;
}

std::uint64_t increment(std::vector<std::uint64_t>& counters, std::uint64_t index) {
  return std::atomic_ref<std::uint64_t>(counters[index]).fetch_add(1, std::memory_order_relaxed);
}

// The passes, for one edge generator and one stored id type.
template <class Generator, class Id>
class builder {
 public:
  builder(const Generator& generator, const generate_options& options, bcsr_writer& out,
          std::span<Id> neighbors, unsigned threads)
      : generator_(generator),
        options_(options),
        out_(out),
        offsets_(out.offsets()),
        neighbors_(neighbors),
        threads_(threads),
        vertex_count_(std::uint64_t{1} << options.scale),
        generated_edges_(options.degree << options.scale),
        per_vertex_(vertex_count_, 0) {}

  void run(generate_result& result) {
    result.count_seconds = count_degrees();
    make_offsets();
    result.scatter_seconds = scatter_edges();
    check_scatter();
    bool simple = false;
    result.sort_seconds = sort_lists(simple);
    if (options_.dedup) {
      result.compact_seconds = compact_lists();
      simple = true;
    }
    result.simple = simple;
    out_.add_flags(bcsr_flags::symmetric | bcsr_flags::sorted | (simple ? bcsr_flags::simple : 0));
    if (options_.hub_count != 0) result.hubs_seconds = find_hubs();
  }

 private:
  // Pass 1: per_vertex_[v] = degree of v.
  double count_degrees() {
    progress_meter meter("pass 1/3: count degrees", generated_edges_, options_.progress);
    parallel_chunks(threads_, chunks_for(generated_edges_, edges_per_chunk), [&](std::uint64_t c) {
      const std::uint64_t begin = c * edges_per_chunk;
      const std::uint64_t end = std::min(begin + edges_per_chunk, generated_edges_);
      std::array<edge_endpoints, batch_edges> batch;
      for (std::uint64_t e = begin; e < end; e += batch_edges) {
        const std::size_t count = generate_batch(e, end, batch);
        for (std::size_t i = 0; i < count; ++i) {
          increment(per_vertex_, batch[i].source);
          increment(per_vertex_, batch[i].target);
        }
      }
      meter.add(end - begin);
    });
    return meter.finish();
  }

  // Offsets into the file; per_vertex_[v] becomes v's next free slot.
  void make_offsets() {
    offsets_[0] = 0;
    for (std::uint64_t v = 0; v < vertex_count_; ++v) {
      offsets_[v + 1] = offsets_[v] + per_vertex_[v];
      per_vertex_[v] = offsets_[v];
    }
  }

  // Pass 2: the same edges again, each stored in both endpoints' lists.
  double scatter_edges() {
    progress_meter meter("pass 2/3: scatter edges", generated_edges_, options_.progress);
    parallel_chunks(threads_, chunks_for(generated_edges_, edges_per_chunk), [&](std::uint64_t c) {
      const std::uint64_t begin = c * edges_per_chunk;
      const std::uint64_t end = std::min(begin + edges_per_chunk, generated_edges_);
      std::array<edge_endpoints, batch_edges> batch;
      std::array<std::uint64_t, 2 * batch_edges> slots;
      for (std::uint64_t e = begin; e < end; e += batch_edges) {
        const std::size_t count = generate_batch(e, end, batch);
        // All slots of the batch first, then all stores: a locked add waits for every
        // earlier store, so interleaving them would serialise the stores' cache misses.
        for (std::size_t i = 0; i < count; ++i) {
          slots[2 * i] = increment(per_vertex_, batch[i].source);
          slots[2 * i + 1] = increment(per_vertex_, batch[i].target);
        }
        for (std::size_t i = 0; i < count; ++i) {
          neighbors_[slots[2 * i]] = static_cast<Id>(batch[i].target);
          neighbors_[slots[2 * i + 1]] = static_cast<Id>(batch[i].source);
        }
      }
      meter.add(end - begin);
    });
    return meter.finish();
  }

  // Generates edges [first, min(first + batch_edges, end)) and prefetches their counters, so
  // the counters' cache misses overlap instead of each locked add waiting for its own.
  std::size_t generate_batch(std::uint64_t first, std::uint64_t end,
                             std::array<edge_endpoints, batch_edges>& batch) const {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(batch_edges, end - first));
    for (std::size_t i = 0; i < count; ++i) batch[i] = generator_(first + i);
    for (std::size_t i = 0; i < count; ++i) {
      __builtin_prefetch(&per_vertex_[batch[i].source], 1);
      __builtin_prefetch(&per_vertex_[batch[i].target], 1);
    }
    return count;
  }

  // Every slot filled exactly once, or pass 2 did not regenerate pass 1's edges.
  void check_scatter() const {
    for (std::uint64_t v = 0; v < vertex_count_; ++v) {
      if (per_vertex_[v] != offsets_[v + 1]) {
        throw error("graph generator: pass 2 filled vertex " + std::to_string(v) + "'s list to " +
                    std::to_string(per_vertex_[v] - offsets_[v]) + " of " +
                    std::to_string(offsets_[v + 1] - offsets_[v]) +
                    " (generator not deterministic)");
      }
    }
  }

  // Pass 3: sort each list (and, with dedup, keep each neighbour once and no self loop, at
  // the front of the list, recording the kept count in per_vertex_).
  double sort_lists(bool& simple) {
    progress_meter meter("pass 3/3: sort lists", offsets_[vertex_count_], options_.progress);
    std::atomic<bool> found_loop_or_duplicate{false};
    parallel_chunks(threads_, chunks_for(vertex_count_, vertices_per_chunk), [&](std::uint64_t c) {
      const std::uint64_t begin = c * vertices_per_chunk;
      const std::uint64_t end = std::min(begin + vertices_per_chunk, vertex_count_);
      bool not_simple = false;
      for (std::uint64_t v = begin; v < end; ++v) {
        Id* first = neighbors_.data() + offsets_[v];
        Id* last = neighbors_.data() + offsets_[v + 1];
        std::sort(first, last);
        const Id self = static_cast<Id>(v);
        not_simple = not_simple || std::adjacent_find(first, last) != last ||
                     std::binary_search(first, last, self);
        if (options_.dedup) {
          Id* kept = std::unique(first, last);
          kept = std::remove(first, kept, self);
          per_vertex_[v] = static_cast<std::uint64_t>(kept - first);
        }
      }
      if (not_simple) found_loop_or_duplicate.store(true, std::memory_order_relaxed);
      meter.add(offsets_[end] - offsets_[begin]);
    });
    simple = !found_loop_or_duplicate.load(std::memory_order_relaxed);
    return meter.finish();
  }

  // With dedup: slide the kept part of each list down so the lists are contiguous again.
  double compact_lists() {
    progress_meter meter("compacting lists", vertex_count_, options_.progress);
    std::uint64_t written = 0;
    for (std::uint64_t v = 0; v < vertex_count_; ++v) {
      const std::uint64_t old_begin = offsets_[v];  // read before it is overwritten
      std::copy_n(neighbors_.data() + old_begin, per_vertex_[v], neighbors_.data() + written);
      offsets_[v] = written;
      written += per_vertex_[v];
      if ((v & 0xffff) == 0xffff) meter.add(0x10000);
    }
    offsets_[vertex_count_] = written;
    out_.shrink_edges(written);
    return meter.finish();
  }

  // Last, on the final lists: each vertex's neighbour of highest degree.
  double find_hubs() {
    progress_meter meter("finding hubs", vertex_count_, options_.progress);
    std::span<Id> hubs;
    if constexpr (sizeof(Id) == 8) {
      hubs = out_.hubs64();
    } else {
      hubs = out_.hubs32();
    }
    const std::uint64_t m = out_.header().edge_count;
    fill_hubs(offsets_, std::span<const Id>(neighbors_.data(), m), hubs, threads_);
    meter.add(vertex_count_);
    return meter.finish();
  }

  const Generator& generator_;
  const generate_options& options_;
  bcsr_writer& out_;
  std::span<std::uint64_t> offsets_;
  std::span<Id> neighbors_;
  unsigned threads_;
  std::uint64_t vertex_count_;
  std::uint64_t generated_edges_;
  std::vector<std::uint64_t> per_vertex_;  // degree, then cursor, then kept count
};

void check_options(const generate_options& o) {
  if (o.scale < 1 || o.scale > max_scale) {
    throw input_error("--scale " + std::to_string(o.scale) + " is out of range (1.." +
                      std::to_string(max_scale) + ")");
  }
  if (o.degree < 1) throw input_error("--degree must be at least 1");
  // m = 2 * degree * 2^scale must stay within the format's edge limit (2^52).
  if (o.degree > (std::uint64_t{1} << (51 - std::min(o.scale, 51u)))) {
    throw input_error("--degree " + std::to_string(o.degree) + " at --scale " +
                      std::to_string(o.scale) + " makes too many edges");
  }
  if (o.id_bytes != 4 && o.id_bytes != 8) throw input_error("--id-bytes must be 4 or 8");
  if (o.id_bytes == 4 && o.scale > 32) {
    throw input_error("--scale " + std::to_string(o.scale) + " needs 8-byte vertex ids");
  }
}

template <class Generator>
void build_with(const Generator& generator, const generate_options& options, bcsr_writer& out,
                unsigned threads, generate_result& result) {
  if (options.id_bytes == 8) {
    builder<Generator, std::uint64_t>(generator, options, out, out.neighbors64(), threads)
        .run(result);
  } else {
    builder<Generator, std::uint32_t>(generator, options, out, out.neighbors32(), threads)
        .run(result);
  }
}

}  // namespace

generate_result generate_graph(const std::filesystem::path& path, const generate_options& options) {
  check_options(options);
  const auto start = std::chrono::steady_clock::now();
  generate_result result;
  result.threads = options.threads == 0 ? hardware_threads() : options.threads;
  result.vertex_count = std::uint64_t{1} << options.scale;
  result.generated_edges = options.degree << options.scale;
  bcsr_writer out(path, {.vertex_count = result.vertex_count,
                         .edge_count = 2 * result.generated_edges,
                         .id_bytes = options.id_bytes,
                         .hub_count = options.hub_count});
  try {
    if (options.kind == graph_kind::kron) {
      build_with(kron_generator(options.scale, options.seed), options, out, result.threads, result);
    } else {
      build_with(urand_generator(options.scale, options.seed), options, out, result.threads,
                 result);
    }
  } catch (const std::bad_alloc&) {
    throw error("not enough memory for the degree array of " + std::to_string(result.vertex_count) +
                " vertices (8 bytes each)");
  }
  result.edge_count = out.header().edge_count;
  result.file_bytes = bcsr_file_bytes(out.header());
  out.commit();
  result.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace bam::graph
