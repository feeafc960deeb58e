#include "apps/graph_cpu/bfs.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <string>
#include <utility>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>

namespace bam::apps::graph_cpu {

namespace {

constexpr std::int32_t unreached = -1;
constexpr unsigned word_bits = 64;

/// Appends one thread's vertices to a shared queue through a private buffer, so the shared
/// tail is bumped once per few thousand vertices rather than once per vertex.
template <class Id>
class queue_appender {
 public:
  queue_appender(Id* queue, std::uint64_t& tail) : queue_(queue), tail_(tail) {}
  queue_appender(const queue_appender&) = delete;
  queue_appender& operator=(const queue_appender&) = delete;
  ~queue_appender() { flush(); }

  void push(Id v) {
    if (count_ == capacity) flush();
    buffer_[count_++] = v;
  }
  void flush() {
    if (count_ == 0) return;
    // relaxed: reserves slots only; the queue is read after the parallel region ends.
    const std::uint64_t at =
        std::atomic_ref<std::uint64_t>(tail_).fetch_add(count_, std::memory_order_relaxed);
    std::copy_n(buffer_.data(), count_, queue_ + at);
    count_ = 0;
  }

 private:
  static constexpr std::size_t capacity = 4096;
  Id* queue_;
  std::uint64_t& tail_;
  std::array<Id, capacity> buffer_;
  std::size_t count_ = 0;
};

[[nodiscard]] bool test_bit(const std::uint64_t* bitmap, std::uint64_t v) {
  return ((bitmap[v / word_bits] >> (v % word_bits)) & 1u) != 0;
}

/// Expands `frontier` into `next` (appended at `next_size`); returns the out-degrees summed
/// over the vertices it found (the next step's frontier edges).
template <class Id>
std::uint64_t top_down_step(csr_view<Id> g, std::int32_t* depths, std::int32_t next_depth,
                            std::span<const Id> frontier, Id* next, std::uint64_t& next_size) {
  std::uint64_t scout = 0;
  const auto size = static_cast<std::int64_t>(frontier.size());
#pragma omp parallel reduction(+ : scout)
  {
    queue_appender<Id> out(next, next_size);
#pragma omp for schedule(dynamic, 64) nowait
    for (std::int64_t i = 0; i < size; ++i) {
      for (const Id v : g.neighbours_of(frontier[static_cast<std::uint64_t>(i)])) {
        // relaxed: a depth is only claimed here; the steps after this region read it.
        std::atomic_ref<std::int32_t> depth(depths[v]);
        if (depth.load(std::memory_order_relaxed) != unreached) continue;
        std::int32_t expected = unreached;
        if (depth.compare_exchange_strong(expected, next_depth, std::memory_order_relaxed)) {
          out.push(v);
          scout += g.degree(v);
        }
      }
    }
    out.flush();
  }
  return scout;
}

/// Every unvisited vertex looks for a neighbour in `front` and stops at the first; the found
/// ones go into `next`. Each thread writes whole words of `next` (64 vertices), so no word
/// is shared. Returns the vertices found.
template <class Id>
std::uint64_t bottom_up_step(csr_view<Id> g, std::int32_t* depths, std::int32_t next_depth,
                             const std::uint64_t* front, std::uint64_t* next,
                             std::span<const std::uint64_t> hubs) {
  const std::uint64_t n = g.vertex_count();
  const auto words = static_cast<std::int64_t>((n + word_bits - 1) / word_bits);
  const std::uint64_t k = hubs.size() / std::max<std::uint64_t>(n, 1);
  std::uint64_t awake = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : awake)
  for (std::int64_t w = 0; w < words; ++w) {
    const std::uint64_t begin = static_cast<std::uint64_t>(w) * word_bits;
    const std::uint64_t end = std::min(begin + word_bits, n);
    std::uint64_t bits = 0;
    for (std::uint64_t v = begin; v < end; ++v) {
      if (depths[v] != unreached) continue;
      // The hubs first; a list of at most k entries holds its hubs alone.
      bool found = false;
      for (std::uint64_t j = 0; j < k && !found; ++j) found = test_bit(front, hubs[v * k + j]);
      if (!found && (k == 0 || g.degree(v) > k)) {
        for (const Id u : g.neighbours_of(v)) {
          if (test_bit(front, u)) {
            found = true;
            break;
          }
        }
      }
      if (found) {
        depths[v] = next_depth;
        bits |= std::uint64_t{1} << (v - begin);
        ++awake;
      }
    }
    next[w] = bits;
  }
  return awake;
}

template <class Id>
void queue_to_bitmap(std::span<const Id> queue, std::span<std::uint64_t> bitmap) {
  const auto words = static_cast<std::int64_t>(bitmap.size());
  const auto size = static_cast<std::int64_t>(queue.size());
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < words; ++w) bitmap[static_cast<std::uint64_t>(w)] = 0;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < size; ++i) {
      const Id v = queue[static_cast<std::uint64_t>(i)];
      // relaxed: words are read after the parallel region ends.
      std::atomic_ref<std::uint64_t>(bitmap[v / word_bits])
          .fetch_or(std::uint64_t{1} << (v % word_bits), std::memory_order_relaxed);
    }
  }
}

template <class Id>
std::uint64_t bitmap_to_queue(std::span<const std::uint64_t> bitmap, Id* queue) {
  std::uint64_t tail = 0;
  const auto words = static_cast<std::int64_t>(bitmap.size());
#pragma omp parallel
  {
    queue_appender<Id> out(queue, tail);
#pragma omp for schedule(dynamic, 256) nowait
    for (std::int64_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = bitmap[static_cast<std::uint64_t>(w)]; bits != 0;
           bits &= bits - 1) {
        out.push(static_cast<Id>(static_cast<std::uint64_t>(w) * word_bits +
                                 static_cast<unsigned>(std::countr_zero(bits))));
      }
    }
    out.flush();
  }
  return tail;
}

}  // namespace

template <class Id>
bfs_result bfs(csr_view<Id> g, const bfs_options& options) {
  const std::uint64_t n = g.vertex_count();
  if (options.source >= n) {
    throw input_error("bfs: source vertex " + std::to_string(options.source) +
                      " is not below the vertex count " + std::to_string(n));
  }
  if (!options.hubs.empty() && (n == 0 || options.hubs.size() % n != 0 ||
                                options.hubs.size() / n > graph::bcsr_max_hub_count)) {
    throw input_error("bfs: " + std::to_string(options.hubs.size()) + " hubs for " +
                      std::to_string(n) + " vertices (1 to " +
                      std::to_string(graph::bcsr_max_hub_count) + " per vertex)");
  }
  bfs_result r;
  r.depths = host_buffer<std::int32_t>(n);
  std::int32_t* depths = r.depths.data();
  const auto vertices = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < vertices; ++v) depths[v] = unreached;

  host_buffer<Id> queue(n);
  host_buffer<Id> next_queue(n);
  const std::uint64_t words = (n + word_bits - 1) / word_bits;
  host_buffer<std::uint64_t> front;
  host_buffer<std::uint64_t> next;
  if (options.direction_optimizing) {
    front = host_buffer<std::uint64_t>(words);
    next = host_buffer<std::uint64_t>(words);
  }

  depths[options.source] = 0;
  queue[0] = static_cast<Id>(options.source);
  std::uint64_t size = 1;
  r.reached = 1;
  std::int32_t depth = 0;
  // Out-edges of the frontier, and of the vertices not yet reached (Beamer's m_f and m_u).
  std::uint64_t scout = g.degree(options.source);
  std::uint64_t unexplored = g.edge_count();
  while (size > 0) {
    if (options.direction_optimizing &&
        static_cast<double>(scout) > static_cast<double>(unexplored) / options.alpha) {
      queue_to_bitmap<Id>({queue.data(), size}, front.span());
      std::uint64_t awake = size;
      std::uint64_t previous = 0;
      do {
        previous = awake;
        awake = bottom_up_step(g, depths, ++depth, front.data(), next.data(), options.hubs);
        ++r.bottom_up_steps;
        r.reached += awake;
        std::swap(front, next);
      } while (awake >= previous ||
               static_cast<double>(awake) > static_cast<double>(n) / options.beta);
      size = bitmap_to_queue<Id>(front.span(), queue.data());
      scout = 1;
    } else {
      unexplored -= std::min(unexplored, scout);
      std::uint64_t next_size = 0;
      scout =
          top_down_step<Id>(g, depths, ++depth, {queue.data(), size}, next_queue.data(), next_size);
      ++r.top_down_steps;
      r.reached += next_size;
      size = next_size;
      std::swap(queue, next_queue);
    }
  }
  return r;
}

template bfs_result bfs(csr_view<std::uint32_t>, const bfs_options&);
template bfs_result bfs(csr_view<std::uint64_t>, const bfs_options&);

}  // namespace bam::apps::graph_cpu
