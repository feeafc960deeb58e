#pragma once
/// @file
/// The neighbour ids of a graph as the app drivers take them: a *source* that hands kernels a
/// view for each launch and checks for errors after it. array_edges<Id> wraps a bam::array:
/// on storage, read through the page cache (the product), or over memory the kernels read
/// directly (array::over_memory: the host-memory and device-memory baselines).
///
/// A source offers sweep(exec, vertices, launch) (calls launch(slice, view_for) for each slice of
/// the array the kernels read in one pass, in order, where view_for(shape) is the view a launch
/// of that shape holds), check() (throws for an error a kernel recorded), size(), stats(),
/// max_launch_threads() and units() (entry_units: the units a read loads). A view offers what
/// kernels use of bam::array_ref: try_read(i, out) and reader(), a per-thread cursor with
/// try_read(i, out) and drop(); and value_type. tiled_edges.hpp is the other source: partitions
/// copied into GPU buffers.

#include <cstdint>
#include <optional>

#include <bam/array.hpp>
#include <bam/array_ref.hpp>
#include <bam/cache/stats.hpp>
#include <bam/platform/warp.hpp>

#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

/// Neighbour ids through a bam::array (which must outlive this object).
template <class Id>
class array_edges {
 public:
  using view_type = array_ref<const Id>;

  /// `cache_lines`: lines of the cache the array reads through (0: no cache, or mode none).
  explicit array_edges(const array<const Id>& ids, std::uint64_t cache_lines = 0)
      : ids_(&ids), cached_(!ids.ref().direct()), lines_(cache_lines) {}

  /// The most threads one launch may have for the cache to serve it: a cache of L lines
  /// serves L/2 warps at once (array::ref_for_launch; above that it reads through bounce
  /// buffers, a block-sized read per element), and a warp has at most warp::max_width threads.
  /// 0: no limit.
  [[nodiscard]] std::uint64_t max_launch_threads() const {
    if (lines_ == 0) return 0;
    const std::uint64_t warps = lines_ / 2 > 0 ? lines_ / 2 : 1;
    return warps * warp::max_width;
  }

  /// The view for one launch: the array's own check decides whether the cache can serve the
  /// launch or it reads through bounce buffers.
  [[nodiscard]] view_type view(launch_shape shape) const {
    return ids_->ref_for_launch(shape.grid, shape.block);
  }
  /// One pass over the neighbours of a graph of `vertices` vertices: a single slice, the whole
  /// array, read through the array's view.
  template <class Exec, class Launch>
  void sweep(Exec& /*exec*/, std::uint64_t vertices, Launch&& launch) const {
    launch(edge_slice::whole(size(), vertices), [this](launch_shape shape) { return view(shape); });
  }
  /// The units reads move: cache lines through a cache (the array's element 0 need not start
  /// one), 128-byte segments over memory.
  [[nodiscard]] entry_units units() const {
    if (!cached_) return {aligned_read_bytes / sizeof(Id), 0};
    const array_ref<const Id> r = ids_->ref();
    const std::uint64_t next = r.line_first(r.line_index(0) + 1);  // first entry of line 2
    const std::uint64_t per_line = r.line_first(r.line_index(0) + 2) - next;
    return {per_line, per_line - next};
  }
  /// Throws bam::nvme_error for an I/O error a kernel recorded.
  void check() const { ids_->check(); }
  [[nodiscard]] std::uint64_t size() const { return ids_->size(); }
  /// The array's cache statistics; none for an array over memory.
  [[nodiscard]] std::optional<cache_stats> stats() const {
    if (!cached_) return std::nullopt;
    return ids_->stats();
  }

 private:
  const array<const Id>* ids_;
  bool cached_;
  std::uint64_t lines_;
};

}  // namespace bam::apps
