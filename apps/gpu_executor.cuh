#pragma once
/// @file
/// The GPU executor: app kernels on the runtime's application stream, working arrays in GPU
/// memory carved from an arena reserved before the controllers start (cudaMalloc waits for
/// running kernels, and a persistent controller never ends: DESIGN section 6).
///
///     apps::gpu_executor exec(rt, 4ull << 30);      // before rt.start()
///     exec.warm_up<array_ref<const std::uint64_t>>();
///     rt.start();
///     auto r = apps::run_bfs(exec, offsets, apps::array_edges(ids), {.source = s});
///
/// Thread safety: one host thread drives an executor.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

#include "apps/executor.hpp"
#include "apps/kernel_types.hpp"

namespace bam::apps {

class gpu_executor {
  /// A bump allocator over one device allocation; it rewinds when every buffer is gone.
  struct arena {
    device_memory memory;
    std::uint64_t used = 0;
    std::uint64_t live = 0;

    void* take(std::uint64_t bytes) {
      const std::uint64_t at = (used + 255) / 256 * 256;
      if (at + bytes > memory.bytes()) {
        throw input_error("the GPU executor's arena of " + std::to_string(memory.bytes()) +
                          " bytes cannot hold " + std::to_string(bytes) +
                          " more (raise --work-bytes)");
      }
      used = at + bytes;
      ++live;
      return static_cast<std::uint8_t*>(memory.data()) + at;
    }
    void give_back() {
      if (--live == 0) used = 0;
    }
  };

 public:
  template <class T>
  class buffer {
    static_assert(std::is_trivially_copyable_v<T>);

   public:
    buffer() = default;
    buffer(arena* a, std::uint64_t n)
        : arena_(a), data_(n ? static_cast<T*>(a->take(n * sizeof(T))) : nullptr), size_(n) {}
    ~buffer() {
      if (data_) arena_->give_back();
    }
    buffer(buffer&& o) noexcept
        : arena_(o.arena_), data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
    buffer& operator=(buffer&& o) noexcept {
      std::swap(arena_, o.arena_);
      std::swap(data_, o.data_);
      std::swap(size_, o.size_);
      return *this;
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;

    [[nodiscard]] T* data() const { return data_; }
    [[nodiscard]] std::uint64_t size() const { return size_; }

   private:
    arena* arena_ = nullptr;
    T* data_ = nullptr;
    std::uint64_t size_ = 0;
  };

  /// Reserves `work_bytes` of GPU memory for working arrays. Before rt.start().
  gpu_executor(gpu_runtime& rt, std::uint64_t work_bytes) : rt_(&rt) {
    if (!rt.gpu()) throw error("the GPU executor needs a GPU: " + rt.message());
    arena_.memory = device_memory(work_bytes);
    int device = 0;
    cudaDeviceProp p{};
    BAM_CUDA_CHECK(cudaGetDevice(&device));
    BAM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    const std::uint32_t sms = rt.app_sms() ? rt.app_sms() : static_cast<std::uint32_t>(p.multiProcessorCount);
    max_threads_ = std::uint64_t{sms} * static_cast<std::uint64_t>(p.maxThreadsPerMultiProcessor);
  }

  gpu_executor(const gpu_executor&) = delete;  // buffers point at the arena inside
  gpu_executor& operator=(const gpu_executor&) = delete;

  /// Loads and launches (without work) every kernel the drivers launch for neighbour view
  /// `View`. Before rt.start().
  template <class View>
  void warm_up() {
    rt_->warm_up([](stream_handle s) {
      std::apply([&](auto... k) { (warm_up_launch<decltype(k)>(s), ...); }, app_kernel_types<View>{});
    });
  }

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::uint64_t n) {
    return buffer<T>(&arena_, n);
  }

  template <class T>
  void upload(buffer<T>& dst, std::uint64_t first, std::span<const T> src) {
    check_range(dst.size(), first, src.size());
    if (!src.empty()) copy_async(dst.data() + first, src.data(), src.size_bytes(), rt_->stream());
    synchronize();  // the source may be a temporary of the caller
  }

  template <class T>
  void download(const buffer<T>& src, std::uint64_t first, std::span<T> dst) {
    check_range(src.size(), first, dst.size());
    if (!dst.empty()) copy_async(dst.data(), src.data() + first, dst.size_bytes(), rt_->stream());
    synchronize();
  }

  template <class Kernel>
  void launch(launch_shape shape, const Kernel& kernel) {
    static_assert(std::is_trivially_copyable_v<Kernel>, "kernels hold pointers and refs only");
    bam::launch(rt_->stream(), shape.grid, shape.block, kernel);
  }

  void synchronize() { rt_->synchronize(rt_->stream(), 0, "an app kernel"); }

  /// A warp per item, in blocks of 256 threads, up to every thread the app SMs hold; the
  /// kernels' grid-stride loops cover the rest.
  [[nodiscard]] launch_shape shape_for(std::uint64_t items) const {
    const std::uint64_t threads = std::clamp<std::uint64_t>(items * 32, 256, max_threads_);
    return {static_cast<std::uint32_t>((threads + block_threads - 1) / block_threads), block_threads};
  }

  static constexpr std::uint32_t block_threads = 256;

 private:
  static void check_range(std::uint64_t size, std::uint64_t first, std::uint64_t count) {
    if (first > size || count > size - first) {
      throw error("gpu_executor: a copy of " + std::to_string(count) + " elements at " + std::to_string(first) +
                  " runs past a buffer of " + std::to_string(size));
    }
  }

  gpu_runtime* rt_;
  arena arena_;
  std::uint64_t max_threads_ = 0;
};

static_assert(app_executor<gpu_executor>);

}  // namespace bam::apps
