#include "apps/graph_cpu/graph.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <bam/error.hpp>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bam::apps::graph_cpu {

namespace {

/// A file descriptor closed on scope exit.
class file_handle {
 public:
  explicit file_handle(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) {
      throw input_error("cannot open '" + path.string() + "': " + std::strerror(errno));
    }
  }
  file_handle(const file_handle&) = delete;
  file_handle& operator=(const file_handle&) = delete;
  ~file_handle() { ::close(fd_); }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_;
};

// Reads bytes [offset, offset + bytes) of the file into `out` with pread; false on an error
// or a short file (errno says which, 0 for a short file).
bool read_exactly(int fd, std::uint8_t* out, std::uint64_t bytes, std::uint64_t offset) {
  while (bytes > 0) {
    const ssize_t got =
        ::pread(fd, out, std::min<std::uint64_t>(bytes, 1ull << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = 0;
      return false;
    }
    out += got;
    bytes -= static_cast<std::uint64_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

template <class Id>
adjacency<Id> load_neighbours(const std::filesystem::path& path, const graph::bcsr_header& header,
                              std::vector<std::uint64_t> offsets) {
  adjacency<Id> a(std::move(offsets));
  const std::span<Id> ids = a.neighbours();
  const std::uint64_t m = ids.size();
  const std::uint64_t n = header.vertex_count;
  const file_handle file(path);
  // Parts of 64 MiB: every thread reads (and so first touches) the pages it checks.
  constexpr std::uint64_t part_ids = (64ull << 20) / sizeof(Id);
  const auto parts = static_cast<std::int64_t>((m + part_ids - 1) / part_ids);
  std::atomic<int> read_error{-1};  // errno of a failed read (0: file too short), -1: none
  std::atomic<std::uint64_t> bad_index{m};
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::uint64_t begin = static_cast<std::uint64_t>(p) * part_ids;
    const std::uint64_t count = std::min(part_ids, m - begin);
    auto* out = reinterpret_cast<std::uint8_t*>(ids.data() + begin);
    if (!read_exactly(file.fd(), out, count * sizeof(Id),
                      header.neighbors.offset + begin * sizeof(Id))) {
      // relaxed: read after the loop, whose end synchronises the threads.
      read_error.store(errno, std::memory_order_relaxed);
      continue;
    }
    for (std::uint64_t i = begin; i < begin + count; ++i) {
      if (ids[i] >= n) {
        // relaxed: read after the loop; the smallest bad index is reported.
        std::uint64_t seen = bad_index.load(std::memory_order_relaxed);
        while (i < seen && !bad_index.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
        }
        break;
      }
    }
  }
  if (const int e = read_error.load(std::memory_order_relaxed); e >= 0) {
    throw input_error("cannot read the neighbours of '" + path.string() + "': " +
                      (e == 0 ? std::string("the file is shorter than its header says")
                              : std::string(std::strerror(e))));
  }
  if (const std::uint64_t i = bad_index.load(std::memory_order_relaxed); i < m) {
    throw input_error("'" + path.string() + "': neighbour " + std::to_string(i) + " (byte " +
                      std::to_string(header.neighbors.offset + i * sizeof(Id)) + ") is " +
                      std::to_string(ids[i]) + ", not below the vertex count " + std::to_string(n));
  }
  return a;
}

}  // namespace

loaded_graph load_bcsr(const std::filesystem::path& path) {
  loaded_graph g;
  g.header = graph::read_header(path);
  std::vector<std::uint64_t> offsets = graph::load_offsets(path);
  if (g.header.id_bytes == 4) {
    g.edges = load_neighbours<std::uint32_t>(path, g.header, std::move(offsets));
  } else {
    g.edges = load_neighbours<std::uint64_t>(path, g.header, std::move(offsets));
  }
  return g;
}

template <class Id>
adjacency<Id> transpose(csr_view<Id> g) {
  const std::uint64_t n = g.vertex_count();
  const auto vertices = static_cast<std::int64_t>(n);
  // In-degrees, then their prefix sum: the transpose's offsets.
  std::vector<std::uint64_t> offsets(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t u = 0; u < vertices; ++u) {
    for (const Id v : g.neighbours_of(static_cast<std::uint64_t>(u))) {
      // relaxed: counts read after the loop.
      std::atomic_ref<std::uint64_t>(offsets[v + 1]).fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (std::uint64_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
  std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
  adjacency<Id> t(std::move(offsets));
  const std::span<Id> out = t.neighbours();
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t u = 0; u < vertices; ++u) {
    for (const Id v : g.neighbours_of(static_cast<std::uint64_t>(u))) {
      // relaxed: each slot is claimed by one thread; the lists are read after the loop.
      const std::uint64_t slot =
          std::atomic_ref<std::uint64_t>(cursor[v]).fetch_add(1, std::memory_order_relaxed);
      out[slot] = static_cast<Id>(u);
    }
  }
  // Threads filled each list in no particular order; sorted, sums over a list (PageRank) come
  // out the same on every run.
  const csr_view<Id> filled = t.view();
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < vertices; ++v) {
    const auto begin = static_cast<std::ptrdiff_t>(filled.offsets[static_cast<std::uint64_t>(v)]);
    const auto end = static_cast<std::ptrdiff_t>(filled.offsets[static_cast<std::uint64_t>(v) + 1]);
    std::sort(out.begin() + begin, out.begin() + end);
  }
  return t;
}

template adjacency<std::uint32_t> transpose(csr_view<std::uint32_t>);
template adjacency<std::uint64_t> transpose(csr_view<std::uint64_t>);

unsigned max_threads() {
#ifdef _OPENMP
  return static_cast<unsigned>(omp_get_max_threads());
#else
  return 1;
#endif
}

void set_threads(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
#ifdef _OPENMP
  omp_set_num_threads(static_cast<int>(threads));
#else
  (void)threads;
#endif
}

}  // namespace bam::apps::graph_cpu
