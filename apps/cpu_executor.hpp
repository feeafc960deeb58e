#pragma once
/// @file
/// The CPU executor: app kernels on a host_stream's thread pool, working arrays in host
/// memory. A CPU thread is a warp of one lane (bam::warp::width() == 1), so "a warp per item"
/// is a logical thread per item.
///
/// Thread safety: one host thread drives an executor (like the stream under it).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include <bam/error.hpp>
#include <bam/platform/launch.hpp>

#include "apps/executor.hpp"

namespace bam::apps {

/// Proactive tiling's two buffers (executor.hpp, tiled_edges.hpp) in host memory: a load
/// waits for every launch queued on `stream` (the pool may still be reading the buffer), then
/// copies, so nothing overlaps; acquire and release have nothing to order. Null `stream`: an
/// executor whose launches finish before they return.
template <class T>
class host_tiles {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  host_tiles(host_stream* stream, std::uint64_t elements)
      : stream_(stream),
        slots_{std::make_unique<T[]>(elements), std::make_unique<T[]>(elements)},
        elements_(elements) {}

  [[nodiscard]] T* data(unsigned slot) const { return slots_[slot].get(); }
  [[nodiscard]] std::uint64_t elements() const { return elements_; }

  void load_async(unsigned slot, std::span<const T> src) {
    if (src.size() > elements_) {
      throw error("host_tiles: a partition of " + std::to_string(src.size()) +
                  " elements does not fit a buffer of " + std::to_string(elements_));
    }
    if (stream_ != nullptr) stream_->synchronize();  // queued launches may read this buffer
    if (!src.empty()) std::memcpy(slots_[slot].get(), src.data(), src.size_bytes());
  }
  void acquire(unsigned /*slot*/) {}
  void release(unsigned /*slot*/) {}

 private:
  host_stream* stream_;
  std::unique_ptr<T[]> slots_[2];
  std::uint64_t elements_;
};

class cpu_executor {
 public:
  /// Working memory: host memory the pool's threads read and write.
  template <class T>
  class buffer {
    static_assert(std::is_trivially_copyable_v<T>);

   public:
    buffer() = default;
    explicit buffer(std::uint64_t n) : data_(n ? new T[n] : nullptr), size_(n) {}
    [[nodiscard]] T* data() const { return data_.get(); }
    [[nodiscard]] std::uint64_t size() const { return size_; }

   private:
    std::unique_ptr<T[]> data_;
    std::uint64_t size_ = 0;
  };

  /// Launches run on `stream`, which must outlive the executor.
  explicit cpu_executor(host_stream& stream) : stream_(&stream) {}

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::uint64_t n) {
    return buffer<T>(n);
  }

  template <class T>
  void upload(buffer<T>& dst, std::uint64_t first, std::span<const T> src) {
    check_copy_range("cpu_executor", dst.size(), first, src.size());
    synchronize();  // queued kernels may still read or write the buffer
    if (!src.empty()) std::memcpy(dst.data() + first, src.data(), src.size_bytes());
  }

  template <class T>
  void download(const buffer<T>& src, std::uint64_t first, std::span<T> dst) {
    check_copy_range("cpu_executor", src.size(), first, dst.size());
    synchronize();  // the values are those of every launch queued so far
    if (!dst.empty()) std::memcpy(dst.data(), src.data() + first, dst.size_bytes());
  }

  template <class Kernel>
  void launch(launch_shape shape, const Kernel& kernel) {
    static_assert(std::is_trivially_copyable_v<Kernel>, "kernels hold pointers and refs only");
    bam::launch(*stream_, shape.grid, shape.block, kernel);
  }

  void synchronize() { stream_->synchronize(); }

  /// Two buffers of `elements` for proactive tiling.
  template <class T>
  [[nodiscard]] host_tiles<T> make_tiles(std::uint64_t elements) {
    return host_tiles<T>(stream_, elements);
  }

  /// One logical thread per item, in blocks of `block_threads`; past `max_threads` items the
  /// kernels' grid-stride loops take several items per thread.
  [[nodiscard]] launch_shape shape_for(std::uint64_t items) const {
    const std::uint64_t threads = std::clamp<std::uint64_t>(items, 1, max_threads);
    return {static_cast<std::uint32_t>((threads + block_threads - 1) / block_threads),
            block_threads};
  }

  static constexpr std::uint32_t block_threads = 64;
  static constexpr std::uint64_t max_threads = std::uint64_t{1} << 24;

 private:
  host_stream* stream_;
};

static_assert(app_executor<cpu_executor>);

}  // namespace bam::apps
