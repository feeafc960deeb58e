// The GPU staging copier: the copies of a serve pass are queued here and issued at wait() as
// one cudaMemcpyBatchAsync (one cudaMemcpyAsync each where the runtime refuses batches), on a
// non-blocking stream (never waits on kernels), waited for with the runtime's bounded
// synchronize. One API call per pass rather than per command: each costs microseconds of CPU.
#include <vector>

#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

#include "runtime/memory.hpp"
#include "storage/file/staging.hpp"

namespace bam::file_io {

namespace {

class gpu_copier final : public staging_copier {
 public:
  explicit gpu_copier(gpu_runtime& rt) : rt_(rt), stream_(owned_stream::create_non_blocking()) {
    word_ =
        static_cast<std::uint64_t*>(runtime::allocate(sizeof(std::uint64_t), memory_kind::pinned));
  }
  ~gpu_copier() override { runtime::release(word_, memory_kind::pinned); }
  gpu_copier(const gpu_copier&) = delete;
  gpu_copier& operator=(const gpu_copier&) = delete;

  void copy(void* dst, const void* src, std::uint64_t bytes) override {
    if (bytes == 0) return;
    dsts_.push_back(dst);
    srcs_.push_back(src);
    sizes_.push_back(bytes);
  }
  void wait() override {
    issue();
    rt_.synchronize(stream_.get(), 10'000'000'000ull, "file staging copies");
  }
  std::uint64_t read_u64(std::uint64_t address) override {
    // A PRP list in pinned memory (cache_config::prp_lists_in_host_memory) is read in place:
    // the GPU wrote it before the doorbell that the server acquired.
    const auto* p = reinterpret_cast<const std::uint64_t*>(address);
    if (runtime::host_readable(p)) return *p;
    issue();  // in call order with the copies queued before
    copy_async(word_, reinterpret_cast<const void*>(address), sizeof(std::uint64_t), stream_.get());
    wait();
    return *word_;
  }
  void* allocate(std::uint64_t bytes) override {
    return runtime::allocate(bytes, memory_kind::pinned);
  }
  void release(void* p) noexcept override { runtime::release(p, memory_kind::pinned); }

 private:
  void issue() {
    if (dsts_.empty()) return;
    try {
      runtime::detail::cuda_copy_batch_async(dsts_.data(), srcs_.data(), sizes_.data(),
                                             dsts_.size(), stream_.get());
    } catch (...) {
      clear();  // a copy that failed is reported once, never issued again
      throw;
    }
    clear();
  }
  void clear() noexcept {
    dsts_.clear();
    srcs_.clear();
    sizes_.clear();
  }

  gpu_runtime& rt_;
  owned_stream stream_;
  std::uint64_t* word_ = nullptr;
  std::vector<void*> dsts_;  // the copies queued since the last issue()
  std::vector<const void*> srcs_;
  std::vector<std::size_t> sizes_;
};

}  // namespace

std::unique_ptr<staging_copier> make_gpu_copier(gpu_runtime& runtime) {
  return std::make_unique<gpu_copier>(runtime);
}

}  // namespace bam::file_io
