#pragma once
/// @file
/// Proactive tiling, the CPU-centric baseline (BaM paper section 5.5): the host copies the
/// neighbour array a partition at a time into GPU buffers and launches one kernel per
/// partition, over the vertices whose lists lie in it, for every BFS level, CC pass and
/// PageRank iteration. No page cache and no controller: what it costs is the copies.
///
///     apps::tiled_edges<std::uint32_t, apps::gpu_executor> edges(exec, offsets, ids, m, bytes);
///     apps::bfs_result r = apps::run_bfs(exec, offsets, edges, {.source = s});
///     edges.traffic().bytes_copied;   // what the passes moved
///
/// The buffer (`buffer_bytes`, the command line's --cache-bytes) is two halves: while a kernel
/// reads partition p from one, partition p + 1 is copied into the other (an executor's tiles,
/// executor.hpp: on a GPU cudaMemcpyAsync from pinned memory on a stream of its own, ordered
/// against the kernels by events; on the CPU a copy after the queued launches have finished).
/// A list that spans partitions is read a piece per launch (edge_slice clips it), which every
/// app's kernels allow: a BFS claim, a union and a push add are per edge. A partition still in
/// its half is not copied again, so an array that fits in two partitions is copied once.
///
/// Thread safety: one host thread drives it (like the executor under it).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <bam/cache/stats.hpp>
#include <bam/error.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/config.hpp>

#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

/// What a kernel holds to read one partition: entries [first, first + count) of the neighbour
/// array, copied to `data`. Reads outside it fail (index_out_of_range), which the kernels
/// never do: they read within their slice.
template <class Id>
class window_ref {
 public:
  using value_type = Id;

  window_ref() = default;
  BAM_HD window_ref(const Id* data, std::uint64_t first, std::uint64_t count)
      : data_(data), first_(first), count_(count) {}

  [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, Id& out) const {
    if (i < first_ || i - first_ >= count_) {
      return io_status::host(status_source::index_out_of_range);
    }
    out = data_[i - first_];
    return {};
  }

  /// The per-thread reader of the view interface; a window pins nothing.
  class cursor {
   public:
    BAM_HD explicit cursor(const window_ref& w) : w_(&w) {}
    [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, Id& out) {
      return w_->try_read(i, out);
    }
    BAM_HD void drop() {}

   private:
    const window_ref* w_;
  };
  [[nodiscard]] BAM_HD cursor reader() const { return cursor(*this); }

 private:
  const Id* data_ = nullptr;
  std::uint64_t first_ = 0;
  std::uint64_t count_ = 0;
};

/// Entries per partition for a buffer of `buffer_bytes` split in two halves: a whole number
/// of aligned 128-byte segments (so partitions start where the kernels' aligned reads do),
/// at least one.
template <class Id>
[[nodiscard]] std::uint64_t partition_entries(std::uint64_t buffer_bytes) {
  constexpr std::uint64_t segment = aligned_read_bytes / sizeof(Id);
  const std::uint64_t half = buffer_bytes / 2 / sizeof(Id);
  return std::max(segment, half / segment * segment);
}

/// Cuts entries [0, edges) into partitions of `entries` (the last may be shorter) and names
/// the vertices whose lists meet each: those with offsets[u] < last and offsets[u + 1] > first
/// (vertices without edges between them come along and read nothing). `offsets` are the n + 1
/// offsets of the graph, offsets[n] == edges.
[[nodiscard]] inline std::vector<edge_slice> plan_partitions(std::span<const std::uint64_t> offsets,
                                                             std::uint64_t edges,
                                                             std::uint64_t entries) {
  if (entries == 0) throw input_error("tiling: a partition must hold at least one entry");
  if (offsets.empty() || offsets.back() != edges) {
    throw input_error("tiling: the offsets do not describe " + std::to_string(edges) + " edges");
  }
  const std::uint64_t n = offsets.size() - 1;
  std::vector<edge_slice> parts;
  for (std::uint64_t first = 0; first < edges; first += entries) {
    const std::uint64_t last = std::min(edges, first + entries);
    // The first vertex whose list ends past `first`, and the first that starts at or past `last`.
    const auto begin = std::upper_bound(offsets.begin() + 1, offsets.end(), first);
    const auto end =
        std::lower_bound(offsets.begin(), offsets.begin() + static_cast<std::ptrdiff_t>(n), last);
    parts.push_back({first, last, static_cast<std::uint64_t>(begin - (offsets.begin() + 1)),
                     static_cast<std::uint64_t>(end - offsets.begin())});
  }
  return parts;
}

/// What the copies of a tiled run moved.
struct tile_traffic {
  std::uint64_t buffer_bytes = 0;  ///< both halves
  std::uint64_t partitions = 0;
  std::uint64_t copies = 0;        ///< partition copies issued
  std::uint64_t bytes_copied = 0;  ///< host -> buffer bytes
};

/// Neighbour ids copied to an executor's buffers a partition at a time (a neighbour source,
/// edges.hpp). `ids` (the `edges` entries of the neighbour array) must stay readable by the
/// executor's copies while this object lives: pinned host memory for a GPU executor.
template <class Id, class Exec>
class tiled_edges {
 public:
  using view_type = window_ref<Id>;
  using tiles_type = decltype(std::declval<Exec&>().template make_tiles<Id>(std::uint64_t{1}));

  tiled_edges(Exec& exec, std::span<const std::uint64_t> offsets, const Id* ids,
              std::uint64_t edges, std::uint64_t buffer_bytes)
      : ids_(ids),
        edges_(edges),
        entries_(partition_entries<Id>(buffer_bytes)),
        parts_(plan_partitions(offsets, edges, entries_)),
        tiles_(
            exec.template make_tiles<Id>(std::min(entries_, std::max<std::uint64_t>(edges, 1)))) {}

  tiled_edges(const tiled_edges&) = delete;
  tiled_edges& operator=(const tiled_edges&) = delete;

  /// No limit: a launch reads a buffer in memory.
  [[nodiscard]] std::uint64_t max_launch_threads() const { return 0; }
  /// Copies fail on the host (and throw there); kernels record nothing.
  void check() const {}
  [[nodiscard]] std::uint64_t size() const { return edges_; }
  /// No cache.
  [[nodiscard]] std::optional<cache_stats> stats() const { return std::nullopt; }
  /// Kernels read 128-byte segments of the tile buffers (every partition is copied whole on
  /// each pass whatever they read).
  [[nodiscard]] entry_units units() const { return {aligned_read_bytes / sizeof(Id), 0}; }
  [[nodiscard]] const std::vector<edge_slice>& partitions() const { return parts_; }
  [[nodiscard]] tile_traffic traffic() const {
    return {2 * entries_ * sizeof(Id), parts_.size(), copies_, bytes_copied_};
  }

  /// One pass: for each partition in order, copy it in (the next one's copy overlapping this
  /// one's launch) and call `launch(slice, view_for)`, whose launches read it.
  template <class AnyExec, class Launch>
  void sweep(AnyExec& /*exec*/, std::uint64_t /*vertices*/, Launch&& launch) const {
    if (parts_.empty()) return;
    load(0);
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      if (p + 1 < parts_.size()) load(p + 1);
      const unsigned slot = p % 2;
      const edge_slice& part = parts_[p];
      tiles_.acquire(slot);
      const Id* data = tiles_.data(slot);
      launch(part,
             [&](launch_shape) { return view_type(data, part.first, part.last - part.first); });
      tiles_.release(slot);
    }
  }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  void load(std::size_t p) const {
    const unsigned slot = p % 2;
    if (held_[slot] == p) return;
    const edge_slice& part = parts_[p];
    tiles_.load_async(slot, std::span<const Id>(ids_ + part.first, part.last - part.first));
    held_[slot] = p;
    ++copies_;
    bytes_copied_ += (part.last - part.first) * sizeof(Id);
  }

  const Id* ids_;
  std::uint64_t edges_;
  std::uint64_t entries_;
  std::vector<edge_slice> parts_;
  // The drivers take sources by const reference; a sweep's copies are its own bookkeeping.
  mutable tiles_type tiles_;
  mutable std::size_t held_[2] = {none, none};
  mutable std::uint64_t copies_ = 0;
  mutable std::uint64_t bytes_copied_ = 0;
};

}  // namespace bam::apps
