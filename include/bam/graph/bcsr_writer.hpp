#pragma once
/// @file
/// Writing a .bcsr file in place, through a memory map, so graphs larger than memory can be
/// built section by section (the generator scatters edges straight into the file).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include <bam/graph/bcsr.hpp>

namespace bam::graph {

class staged_file;

/// A .bcsr file under construction. The bytes go to a temporary file in the destination's
/// folder, sized and mapped up front; commit() writes the header and renames the file into
/// place, and the destructor removes it if commit() never ran (so a failure leaves nothing).
///
/// Thread safety: the spans may be filled by many threads at once (disjoint elements); the
/// member functions themselves are for one thread.
class bcsr_writer {
 public:
  /// Creates the temporary file for `shape` and maps it. Throws bam::input_error if the
  /// destination's folder cannot be written, bam::error if the space cannot be reserved.
  bcsr_writer(const std::filesystem::path& destination, const bcsr_shape& shape);
  ~bcsr_writer();
  bcsr_writer(const bcsr_writer&) = delete;
  bcsr_writer& operator=(const bcsr_writer&) = delete;

  [[nodiscard]] const bcsr_header& header() const { return header_; }

  /// The n+1 vertex offsets (u64).
  [[nodiscard]] std::span<std::uint64_t> offsets();
  /// The neighbour ids; use the one matching header().id_bytes (the other throws).
  [[nodiscard]] std::span<std::uint64_t> neighbors64();
  [[nodiscard]] std::span<std::uint32_t> neighbors32();
  /// The weights (empty when unweighted).
  [[nodiscard]] std::span<float> weights();
  /// The hubs (bcsr_flags::hubs; the shape asked for them), k per vertex (vertex v's at
  /// [v * k, v * k + k)): the one matching header().id_bytes.
  /// They depend on the final lists, so writers fill them last (fill_hubs, tools/graph/hubs.hpp);
  /// shrink_edges moves them down with the weights all the same.
  [[nodiscard]] std::span<std::uint64_t> hubs64();
  [[nodiscard]] std::span<std::uint32_t> hubs32();

  /// Keeps only the first `edge_count` edges (after duplicates were removed in place): the
  /// header shrinks, the weights and hubs sections move down, the file is cut at commit().
  void shrink_edges(std::uint64_t edge_count);

  /// Sets flag bits (symmetric, sorted, simple) to store in the header.
  void add_flags(std::uint32_t flags) { header_.flags |= flags; }

  /// Stores the header, unmaps the file and renames it to the destination.
  void commit();

 private:
  std::unique_ptr<staged_file> file_;
  bcsr_header header_{};
  std::byte* map_ = nullptr;
  std::uint64_t mapped_bytes_ = 0;
};

}  // namespace bam::graph
