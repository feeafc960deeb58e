#pragma once
/// @file
/// Where an app runs: the executor its host driver is templated on.
///
/// The drivers (bfs.hpp, cc.hpp, pagerank.hpp) are written once against this small interface;
/// cpu_executor.hpp runs them on a CPU thread pool, a GPU executor (a .cu file) on a CUDA
/// stream with device memory. An executor `E` provides:
///
///     E::buffer<T>                        working memory the kernels use (move-only owner):
///                                         data() -> T* for kernels, size() -> elements
///     e.allocate<T>(n)  -> buffer<T>      n elements, uninitialised (use fill() to set them)
///     e.upload(buf, first, span<const T>) waits for queued launches, then copies host -> buf
///     e.download(buf, first, span<T>)     waits for queued launches, then copies buf -> host
///     e.launch(shape, kernel)             queues a launch of a kernel functor (asynchronous)
///     e.synchronize()                     waits for every queued launch; rethrows its errors
///     e.shape_for(items) -> launch_shape  a launch with one warp per item (a grid-stride loop
///                                         covers items past the executor's largest launch)
///     e.make_tiles<T>(n) -> tiles         two buffers of n elements for proactive tiling
///                                         (tiled_edges.hpp; only that source needs it):
///       t.data(slot) -> T*                slot 0 or 1, for kernels
///       t.load_async(slot, span<const T>) copies into the slot once the launches released
///                                         from it have finished (may return before the copy)
///       t.acquire(slot)                   launches queued from now on wait for that copy
///       t.release(slot)                   the launches queued so far are the slot's last
///                                         readers before its next load
///
/// Kernel functors hold raw pointers into buffers and array refs only (trivially copyable);
/// no host-only type reaches a kernel. kernel_types.hpp lists every kernel type a driver
/// launches. On a GPU, allocate() must not wait for running kernels (a persistent controller
/// never ends, DESIGN section 6): a stream-ordered pool (cudaMallocAsync) or memory reserved
/// before the controllers start; and each kernel type is launched once before they start.

#include <concepts>
#include <cstdint>
#include <span>
#include <string>

#include <bam/error.hpp>

namespace bam::apps {

/// Throws bam::error naming `executor` when a copy of `count` elements at `first` runs past a
/// buffer of `size`: the check every executor's upload and download make.
inline void check_copy_range(const char* executor, std::uint64_t size, std::uint64_t first,
                             std::uint64_t count) {
  if (first > size || count > size - first) {
    throw error(std::string(executor) + ": a copy of " + std::to_string(count) + " elements at " +
                std::to_string(first) + " runs past a buffer of " + std::to_string(size));
  }
}

/// A launch: `grid` blocks of `block` logical threads. Executors keep `block` a multiple of
/// their warp width, so every warp of a launch is whole.
struct launch_shape {
  std::uint32_t grid = 1;
  std::uint32_t block = 1;

  [[nodiscard]] std::uint64_t threads() const { return std::uint64_t{grid} * block; }
};

/// The part of the executor interface a concept can state (launch takes any kernel functor).
template <class E>
concept app_executor = requires(E& e, const E& ce, std::uint64_t n,
                                typename E::template buffer<std::uint64_t>& b,
                                std::span<std::uint64_t> out, std::span<const std::uint64_t> in) {
  { ce.shape_for(n) } -> std::same_as<launch_shape>;
  {
    e.template allocate<std::uint64_t>(n)
    } -> std::same_as<typename E::template buffer<std::uint64_t>>;
  { b.data() } -> std::same_as<std::uint64_t*>;
  { b.size() } -> std::same_as<std::uint64_t>;
  e.upload(b, n, in);
  e.download(b, n, out);
  e.synchronize();
};

}  // namespace bam::apps
