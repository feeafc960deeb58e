// The GPU staging copier: cudaMemcpyAsync on a non-blocking stream (never waits on kernels),
// waited for with the runtime's bounded synchronize.
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
    copy_async(dst, src, bytes, stream_.get());
  }
  void wait() override { rt_.synchronize(stream_.get(), 10'000'000'000ull, "file staging copies"); }
  std::uint64_t read_u64(std::uint64_t address) override {
    copy_async(word_, reinterpret_cast<const void*>(address), sizeof(std::uint64_t), stream_.get());
    wait();
    return *word_;
  }
  void* allocate(std::uint64_t bytes) override {
    return runtime::allocate(bytes, memory_kind::pinned);
  }
  void release(void* p) noexcept override { runtime::release(p, memory_kind::pinned); }

 private:
  gpu_runtime& rt_;
  owned_stream stream_;
  std::uint64_t* word_ = nullptr;
};

}  // namespace

std::unique_ptr<staging_copier> make_gpu_copier(gpu_runtime& runtime) {
  return std::make_unique<gpu_copier>(runtime);
}

}  // namespace bam::file_io
