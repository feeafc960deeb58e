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
#include <typeinfo>
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
  /// Whether warm_up() loaded kernel type K (in this process: what DESIGN 11 asks for).
  template <class K>
  static inline bool loaded = false;

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

  /// Reserves `work_bytes` of GPU memory for working arrays. Before rt.start(). Launches and
  /// copies go on `stream` (null: the runtime's application stream); several executors on
  /// streams of their own run apps side by side (`bam tenants`). A stream of its own must be
  /// in the runtime's context (plain streams: runtime_config::green_contexts = false), where
  /// warm_up() loaded the kernels, and outlive the executor.
  gpu_executor(gpu_runtime& rt, std::uint64_t work_bytes, stream_handle stream = nullptr)
      : rt_(&rt), stream_(stream != nullptr ? stream : rt.stream()) {
    if (!rt.gpu()) throw error("the GPU executor needs a GPU: " + rt.message());
    arena_.memory = device_memory(work_bytes);
    int device = 0;
    cudaDeviceProp p{};
    BAM_CUDA_CHECK(cudaGetDevice(&device));
    BAM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    const std::uint32_t sms =
        rt.app_sms() ? rt.app_sms() : static_cast<std::uint32_t>(p.multiProcessorCount);
    max_threads_ = std::uint64_t{sms} * static_cast<std::uint64_t>(p.maxThreadsPerMultiProcessor);
  }

  gpu_executor(const gpu_executor&) = delete;  // buffers point at the arena inside
  gpu_executor& operator=(const gpu_executor&) = delete;

  /// Loads and launches (without work) every kernel the drivers launch for neighbour view
  /// `View`. Before rt.start().
  template <class View>
  void warm_up() {
    rt_->warm_up([](stream_handle s) {
      std::apply([&](auto... k) { (warm_up_launch<decltype(k)>(s), ...); },
                 app_kernel_types<View>{});
    });
    std::apply([](auto... k) { ((loaded<decltype(k)> = true), ...); }, app_kernel_types<View>{});
  }
  /// The same for kernels outside the app drivers that go through launch() (tenants' gathers).
  template <class... Kernels>
  void warm_up_kernels() {
    rt_->warm_up([](stream_handle s) { (warm_up_launch<Kernels>(s), ...); });
    ((loaded<Kernels> = true), ...);
  }

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::uint64_t n) {
    return buffer<T>(&arena_, n);
  }

  template <class T>
  void upload(buffer<T>& dst, std::uint64_t first, std::span<const T> src) {
    check_copy_range("gpu_executor", dst.size(), first, src.size());
    if (!src.empty()) copy_async(dst.data() + first, src.data(), src.size_bytes(), stream_);
    synchronize();  // the source may be a temporary of the caller
  }

  template <class T>
  void download(const buffer<T>& src, std::uint64_t first, std::span<T> dst) {
    check_copy_range("gpu_executor", src.size(), first, dst.size());
    if (!dst.empty()) copy_async(dst.data(), src.data() + first, dst.size_bytes(), stream_);
    synchronize();
  }

  template <class Kernel>
  void launch(launch_shape shape, const Kernel& kernel) {
    static_assert(std::is_trivially_copyable_v<Kernel>, "kernels hold pointers and refs only");
    if (!loaded<Kernel> && rt_->started()) {
      // Its first launch beside the running controllers could hang (DESIGN 11): say which.
      throw error(std::string("an app kernel missing from app_kernel_types (apps/"
                              "kernel_types.hpp) was launched beside running controllers: ") +
                  typeid(Kernel).name());
    }
    bam::launch(stream_, shape.grid, shape.block, kernel);
  }

  void synchronize() { rt_->synchronize(stream_, 0, "an app kernel"); }

  /// The stream its launches and copies go on.
  [[nodiscard]] stream_handle stream() const { return stream_; }

  /// Proactive tiling's two buffers (executor.hpp, tiled_edges.hpp) in GPU memory from the
  /// arena. A load is a cudaMemcpyAsync on a copy stream of their own, so it overlaps the
  /// launches reading the other buffer; events order each copy after the launches released
  /// from its buffer, and the launches acquired after it behind the copy. The source must be
  /// pinned host memory for the copy to be asynchronous (the image is, on a GPU). Events and
  /// the copy stream live in the primary context, so the runtime's stream must too: open the
  /// runtime with plain streams (runtime_config::green_contexts = false), as the tiled backend
  /// does (it runs no controller).
  template <class T>
  class tiles {
   public:
    tiles(gpu_executor& exec, std::uint64_t elements)
        : rt_(exec.rt_),
          stream_(exec.stream_),
          copy_(owned_stream::create_non_blocking()),
          slots_{exec.allocate<T>(elements), exec.allocate<T>(elements)} {
      for (unsigned slot = 0; slot < 2; ++slot) {
        BAM_CUDA_CHECK(cudaEventCreateWithFlags(&loaded_[slot], cudaEventDisableTiming));
        BAM_CUDA_CHECK(cudaEventCreateWithFlags(&freed_[slot], cudaEventDisableTiming));
      }
    }
    ~tiles() {
      // A copy may still be in flight when an app threw: let it land before the buffers go
      // back to the arena (bounded; destructors never throw).
      try {
        if (copy_.get() != nullptr) rt_->synchronize(copy_.get(), 0, "a tile copy");
      } catch (...) {
      }
      for (unsigned slot = 0; slot < 2; ++slot) {
        if (loaded_[slot] != nullptr) (void)cudaEventDestroy(loaded_[slot]);
        if (freed_[slot] != nullptr) (void)cudaEventDestroy(freed_[slot]);
      }
    }
    tiles(tiles&& o) noexcept
        : rt_(o.rt_),
          stream_(o.stream_),
          copy_(std::move(o.copy_)),
          slots_{std::move(o.slots_[0]), std::move(o.slots_[1])} {
      for (unsigned slot = 0; slot < 2; ++slot) {
        loaded_[slot] = std::exchange(o.loaded_[slot], nullptr);
        freed_[slot] = std::exchange(o.freed_[slot], nullptr);
      }
    }
    tiles& operator=(tiles&&) = delete;
    tiles(const tiles&) = delete;
    tiles& operator=(const tiles&) = delete;

    [[nodiscard]] T* data(unsigned slot) const { return slots_[slot].data(); }
    [[nodiscard]] std::uint64_t elements() const { return slots_[0].size(); }

    void load_async(unsigned slot, std::span<const T> src) {
      check_copy_range("gpu_executor", slots_[slot].size(), 0, src.size());
      // The copy waits for the launches released from this buffer (none yet: a no-op).
      BAM_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), freed_[slot], 0));
      if (!src.empty()) copy_async(slots_[slot].data(), src.data(), src.size_bytes(), copy_.get());
      BAM_CUDA_CHECK(cudaEventRecord(loaded_[slot], copy_.get()));
    }
    /// Launches queued on the app stream from now on wait for the slot's last copy.
    void acquire(unsigned slot) { BAM_CUDA_CHECK(cudaStreamWaitEvent(stream_, loaded_[slot], 0)); }
    /// The next copy into the slot waits for the launches queued on the app stream so far.
    void release(unsigned slot) { BAM_CUDA_CHECK(cudaEventRecord(freed_[slot], stream_)); }

   private:
    gpu_runtime* rt_;
    stream_handle stream_;  ///< the executor's
    owned_stream copy_;
    buffer<T> slots_[2];
    cudaEvent_t loaded_[2] = {nullptr, nullptr};
    cudaEvent_t freed_[2] = {nullptr, nullptr};
  };

  template <class T>
  [[nodiscard]] tiles<T> make_tiles(std::uint64_t elements) {
    return tiles<T>(*this, elements);
  }

  /// A warp per item, in blocks of 256 threads, up to every thread the app SMs hold; the
  /// kernels' grid-stride loops cover the rest.
  [[nodiscard]] launch_shape shape_for(std::uint64_t items) const {
    const std::uint64_t threads = std::clamp<std::uint64_t>(items * 32, 256, max_threads_);
    return {static_cast<std::uint32_t>((threads + block_threads - 1) / block_threads),
            block_threads};
  }

  static constexpr std::uint32_t block_threads = 256;

 private:
  gpu_runtime* rt_;
  stream_handle stream_;
  arena arena_;
  std::uint64_t max_threads_ = 0;
};

static_assert(app_executor<gpu_executor>);

}  // namespace bam::apps
