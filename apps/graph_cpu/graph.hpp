#pragma once
/// @file
/// A graph in host memory for the CPU reference algorithms (`bam bench graph-cpu`): the .bcsr
/// file's offsets and neighbour ids read whole into RAM, at the file's id width, so the
/// algorithms touch as few bytes as the GPU apps read from storage.
///
///     graph_cpu::loaded_graph g = graph_cpu::load_bcsr("kron20.bcsr");
///     std::visit([](const auto& a) { use(a.view()); }, g.edges);

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include <bam/graph/bcsr.hpp>

namespace bam::apps::graph_cpu {

/// An array of `T` left uninitialised on allocation, so that the parallel loop that fills it
/// first also places its pages (a std::vector would zero it on one thread first). Move-only.
template <class T>
class host_buffer {
 public:
  host_buffer() = default;
  explicit host_buffer(std::uint64_t size)
      : data_(std::make_unique_for_overwrite<T[]>(size)), size_(size) {}

  [[nodiscard]] T* data() { return data_.get(); }
  [[nodiscard]] const T* data() const { return data_.get(); }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] T& operator[](std::uint64_t i) { return data_[i]; }
  [[nodiscard]] const T& operator[](std::uint64_t i) const { return data_[i]; }
  [[nodiscard]] std::span<T> span() { return {data_.get(), size_}; }
  [[nodiscard]] std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<T[]> data_;
  std::uint64_t size_ = 0;
};

/// A read-only view of a graph in compressed sparse row form: vertex v's neighbours are
/// neighbours[offsets[v] .. offsets[v + 1]). Cheap to copy; the owner must outlive it.
template <class Id>
struct csr_view {
  std::span<const std::uint64_t> offsets;  ///< n + 1, offsets[n] == m
  std::span<const Id> neighbours;          ///< m ids, each below n

  [[nodiscard]] std::uint64_t vertex_count() const { return offsets.size() - 1; }
  [[nodiscard]] std::uint64_t edge_count() const { return neighbours.size(); }
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const { return offsets[v + 1] - offsets[v]; }
  [[nodiscard]] std::span<const Id> neighbours_of(std::uint64_t v) const {
    return neighbours.subspan(offsets[v], offsets[v + 1] - offsets[v]);
  }
};

/// Owns a graph's offsets and neighbour ids (Id: std::uint32_t or std::uint64_t). Move-only.
template <class Id>
class adjacency {
 public:
  adjacency() = default;
  /// Offsets as given; `offsets.back()` neighbour slots left to fill through neighbours().
  explicit adjacency(std::vector<std::uint64_t> offsets)
      : offsets_(std::move(offsets)), neighbours_(offsets_.empty() ? 0 : offsets_.back()) {}

  [[nodiscard]] csr_view<Id> view() const { return {offsets_, neighbours_.span()}; }
  [[nodiscard]] std::span<Id> neighbours() { return neighbours_.span(); }

 private:
  std::vector<std::uint64_t> offsets_{0};
  host_buffer<Id> neighbours_;
};

/// A whole .bcsr file in memory, its ids at the width the file stores them.
struct loaded_graph {
  graph::bcsr_header header{};
  std::variant<adjacency<std::uint32_t>, adjacency<std::uint64_t>> edges;
};

/// Reads `path`'s header, offsets and neighbour ids (the ids by all OpenMP threads, each
/// reading a part of the file) and checks every id is below n. Throws bam::input_error naming
/// the file for a damaged one.
[[nodiscard]] loaded_graph load_bcsr(const std::filesystem::path& path);

/// The transpose of `g`: vertex v's list holds every u with an edge u -> v, as many times as
/// the edge is stored, in ascending u. Runs on all OpenMP threads.
template <class Id>
[[nodiscard]] adjacency<Id> transpose(csr_view<Id> g);

extern template adjacency<std::uint32_t> transpose(csr_view<std::uint32_t>);
extern template adjacency<std::uint64_t> transpose(csr_view<std::uint64_t>);

/// Threads the algorithms run on: OpenMP's, or 1 in a build without OpenMP.
[[nodiscard]] unsigned max_threads();
/// Sets the threads later parallel loops use (0: every hardware thread).
void set_threads(unsigned threads);

}  // namespace bam::apps::graph_cpu
