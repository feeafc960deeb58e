#include <algorithm>
#include <cstring>

#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/io.hpp>

#include "cache/gpu_executor.hpp"
#include "cache/host_op_kernels.hpp"

namespace bam::detail {

namespace {

/// Drains every queue of a set (the late completions of abandoned commands give back what
/// they held: between launches no other thread would drain them), then FLUSHes every device
/// from one GPU thread (the queues live in GPU memory).
struct flush_devices {
  device_set_ref set;
  error_record* errors;
  std::uint32_t* failure;
  BAM_HD void operator()(thread_index t) const {
    device_drain(set, static_cast<std::uint32_t>(t.id), static_cast<std::uint32_t>(t.count));
    if (t.id != 0 || set.devices == 0) return;
    io_where where;
    const io_status s = device_flush(set, where);
    if (!s.ok()) {
      errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id, 0, 0);
      note_failure(failure, s);
    }
  }
};

constexpr std::uint64_t staging_bytes = 16ull << 20;

class gpu_executor final : public cache_executor {
 public:
  explicit gpu_executor(gpu_runtime& rt)
      : rt_(rt), staging_(staging_bytes), failure_(sizeof(std::uint32_t)) {
    if (!rt.gpu()) throw error("a GPU page cache needs a GPU: " + rt.message());
    int device = 0;
    cudaDeviceProp p{};
    BAM_CUDA_CHECK(cudaGetDevice(&device));
    BAM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    const std::uint32_t sms =
        rt.app_sms() ? rt.app_sms() : static_cast<std::uint32_t>(p.multiProcessorCount);
    warps_ = std::uint64_t{sms} * (p.maxThreadsPerMultiProcessor / 32);
    // reader_slot() is (SM, warp slot, lane) over every SM of the device, the controller's too.
    reader_slots_ = static_cast<std::uint32_t>(p.multiProcessorCount) *
                    static_cast<std::uint32_t>(p.maxThreadsPerMultiProcessor);
    grid_ = sms * 4;
    // Load and launch each kernel once now: a first launch beside a running controller can
    // deadlock (DESIGN 11).
    rt.preload({kernel_function<copy_through_cache>(), kernel_function<flush_lines>(),
                kernel_function<flush_devices>()});
    rt.warm_up([](stream_handle s) {
      warm_up_launch<copy_through_cache>(s);
      warm_up_launch<flush_lines>(s);
      warm_up_launch<flush_devices>(s);
    });
  }

  [[nodiscard]] memory_kind memory() const override { return memory_kind::device; }
  [[nodiscard]] std::uint64_t concurrent_warps() const override { return warps_; }
  [[nodiscard]] std::uint32_t reader_slots() const override { return reader_slots_; }
  [[nodiscard]] std::uint32_t warp_width() const override { return 32; }

  void copy_to_cache(void* dst, const void* src, std::uint64_t bytes) override {
    copy_async(dst, src, bytes, rt_.stream());
    rt_.synchronize(rt_.stream(), 0, "a copy into cache memory");
  }
  void copy_from_cache(void* dst, const void* src, std::uint64_t bytes) override {
    copy_async(dst, src, bytes, rt_.stream());
    rt_.synchronize(rt_.stream(), 0, "a copy out of cache memory");
  }

  io_status read_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                       std::uint64_t bytes, void* out) override {
    return copy(cache, slot, set_byte, bytes, static_cast<std::uint8_t*>(out), false);
  }

  io_status write_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                        std::uint64_t bytes, const void* in) override {
    return copy(cache, slot, set_byte, bytes,
                const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), true);
  }

  io_status flush(const page_cache_ref& cache, const array_slot& slot) override {
    *failure() = 0;
    launch(rt_.stream(), grid_, 256, flush_lines{cache, slot, failure()});
    launch(rt_.stream(), 1, 32, flush_devices{slot.set, slot.errors, failure()});
    rt_.synchronize(rt_.stream(), 0, "flushing an array");
    return io_status::from_bits(*failure());
  }

  void synchronize() override { rt_.synchronize(rt_.stream()); }

 private:
  std::uint32_t* failure() { return failure_.as<std::uint32_t>(); }

  // Moves the range through the pinned staging buffer, which kernels reach by its host
  // address, in chunks of at most its size.
  io_status copy(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                 std::uint64_t bytes, std::uint8_t* host, bool to_cache) {
    auto* staging = staging_.as<std::uint8_t>();
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t n = std::min<std::uint64_t>(bytes - done, staging_bytes);
      if (to_cache) std::memcpy(staging, host + done, n);
      *failure() = 0;
      launch(rt_.stream(), grid_, 256,
             copy_through_cache{cache, slot, set_byte + done, n, staging, to_cache, failure()});
      rt_.synchronize(rt_.stream(), 0, "a host transfer through the cache");
      if (*failure() != 0) return io_status::from_bits(*failure());
      if (!to_cache) std::memcpy(host + done, staging, n);
      done += n;
    }
    return {};
  }

  gpu_runtime& rt_;
  pinned_memory staging_;
  pinned_memory failure_;
  std::uint64_t warps_ = 0;
  std::uint32_t reader_slots_ = 0;
  std::uint32_t grid_ = 0;
};

}  // namespace

std::unique_ptr<cache_executor> make_gpu_executor(gpu_runtime& rt) {
  return std::make_unique<gpu_executor>(rt);
}

}  // namespace bam::detail
