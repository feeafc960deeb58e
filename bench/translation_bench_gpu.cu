// `bam bench translation --side gpu`: the fixture in HBM, one resident wave of a gather
// kernel per timed run, timed with CUDA events. No controller runs: every page is resident
// before timing, so the hit path is all that is measured (DESIGN 11's traps do not apply).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/platform/reader_slot.hpp>
#include <bam/runtime/gpu_info.hpp>
#include <bam/runtime/resources.hpp>

#include "cuda_event.cuh"
#include "translation_gathers.cuh"
#include "translation_runner.hpp"

namespace bam::bench::translation {

namespace {

constexpr std::uint32_t block_threads = gather_block_threads;

/// Writes reader_slot_bound() (from %nsmid and %nwarpid) for the epoch slot count.
struct slot_bound {
  std::uint32_t* out;
  BAM_DEVICE void operator()(thread_index t) const {
    if (t.id == 0) *out = reader_slot_bound();
  }
};

class gpu_runner final : public runner {
 public:
  explicit gpu_runner(const translation_bench_options& o)
      : stream_(owned_stream::create_non_blocking()) {
    int device = 0;
    BAM_CUDA_CHECK(cudaGetDevice(&device));
    BAM_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    gather_grids<0>(prop_, grids_[0]);
    gather_grids<2>(prop_, grids_[1]);
    full_ = o.occupancy == "full";
    // The L2 set-aside for persisting accesses is a limit of this process's context: it is
    // raised only around lean_l2 runs, so the other schemes have the whole L2.
    BAM_CUDA_CHECK(cudaDeviceGetLimit(&saved_persisting_, cudaLimitPersistingL2CacheSize));
    max_grid_ = std::max(*std::max_element(std::begin(grids_[0]), std::end(grids_[0])),
                         *std::max_element(std::begin(grids_[1]), std::end(grids_[1])));
    sink_ = device_memory(std::uint64_t{max_grid_} * block_threads * 8);
    wrong_ = device_memory(8);
    device_memory bound(4);
    launch(stream_.get(), 1, 32, slot_bound{bound.as<std::uint32_t>()});
    BAM_CUDA_CHECK(
        cudaMemcpyAsync(&epoch_slots_, bound.data(), 4, cudaMemcpyDeviceToHost, stream_.get()));
    BAM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  ~gpu_runner() override = default;
  gpu_runner(const gpu_runner&) = delete;
  gpu_runner& operator=(const gpu_runner&) = delete;

  void prepare(const shape& s) override {
    blocks_.clear();
    f_ = build_fixture(
        s, epoch_slots_,
        [&](std::uint64_t bytes) {
          blocks_.emplace_back(std::max<std::uint64_t>(bytes, 8));
          zero_async(blocks_.back().data(), blocks_.back().bytes(), stream_.get());
          return blocks_.back().data();
        },
        [&](auto kernel) {
          launch(stream_.get(), static_cast<std::uint32_t>(prop_.multiProcessorCount) * 4,
                 block_threads, kernel);
        });
    BAM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  double time(scheme sc, std::uint64_t gathers, std::uint32_t bytes, std::uint32_t seed) override {
    zero_async(wrong_.data(), 8, stream_.get());
    if (sc == scheme::lean_l2) set_lean_window(true);
    BAM_CUDA_CHECK(cudaEventRecord(begin_.get(), stream_.get()));
    auto* sink = sink_.as<std::uint64_t>();
    auto* wrong_count = wrong_.as<std::uint64_t>();
    if (full_) {
      launch_gathers<2>(stream_.get(), grids_[1], sc, f_, gathers, bytes, seed, sink, wrong_count);
    } else {
      launch_gathers<0>(stream_.get(), grids_[0], sc, f_, gathers, bytes, seed, sink, wrong_count);
    }
    BAM_CUDA_CHECK(cudaEventRecord(end_.get(), stream_.get()));
    std::uint64_t wrong = 0;
    BAM_CUDA_CHECK(
        cudaMemcpyAsync(&wrong, wrong_.data(), 8, cudaMemcpyDeviceToHost, stream_.get()));
    // Bounded by the kernel: every gather is a hit (no waits), so it ends.
    BAM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    // After the kernel: the reset of persisting lines takes effect at once, for everyone.
    if (sc == scheme::lean_l2) set_lean_window(false);
    float ms = 0;
    BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_.get(), end_.get()));
    if (wrong != 0) {
      throw error(std::string("bench translation: ") + to_string(sc) + " read " +
                  std::to_string(wrong) + " wrong gathers");
    }
    return ms / 1e3;
  }

  [[nodiscard]] bool supports(scheme sc) const override {
    return sc != scheme::lean_l2 ||
           (prop_.persistingL2CacheMaxSize > 0 && prop_.accessPolicyMaxWindowSize > 0);
  }

  [[nodiscard]] std::string device() const override {
    return gpu_description() + ", " + std::to_string(epoch_slots_) + " epoch slots, L2 " +
           std::to_string(prop_.persistingL2CacheMaxSize >> 20) + " MiB persisting at most, " +
           "window " + std::to_string(prop_.accessPolicyMaxWindowSize >> 20) + " MiB at most";
  }
  [[nodiscard]] std::uint64_t l2_bytes() const override {
    return static_cast<std::uint64_t>(prop_.l2CacheSize);
  }
  [[nodiscard]] std::uint64_t threads() const override {
    return std::uint64_t{max_grid_} * block_threads;
  }

 private:
  /// Puts the lean table in a persisting window of the stream (as much of it as the window
  /// covers, with the share of it the set-aside holds), or takes the window away and sends
  /// the persisting lines back to normal.
  void set_lean_window(bool on) {
    cudaStreamAttrValue v{};
    if (on) {
      BAM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize,
                                        static_cast<std::size_t>(prop_.persistingL2CacheMaxSize)));
      const std::uint64_t table = (f_.data_bytes >> f_.line_shift) * 8;
      const std::uint64_t bytes = std::min<std::uint64_t>(
          table, static_cast<std::uint64_t>(prop_.accessPolicyMaxWindowSize));
      v.accessPolicyWindow.base_ptr = f_.lean;
      v.accessPolicyWindow.num_bytes = bytes;
      v.accessPolicyWindow.hitRatio = static_cast<float>(std::min(
          1.0, static_cast<double>(prop_.persistingL2CacheMaxSize) / static_cast<double>(bytes)));
      v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
      v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    }
    BAM_CUDA_CHECK(
        cudaStreamSetAttribute(stream_.get(), cudaStreamAttributeAccessPolicyWindow, &v));
    if (!on) {
      BAM_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
      BAM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, saved_persisting_));
    }
  }

  owned_stream stream_;
  cudaDeviceProp prop_{};
  std::size_t saved_persisting_ = 0;
  bool full_ = false;               ///< kernels capped at 32 registers (2 blocks of 1,024)
  std::uint32_t grids_[2][8] = {};  ///< [min blocks per SM / 2][scheme]
  std::uint32_t max_grid_ = 0;
  std::uint32_t epoch_slots_ = 0;
  device_memory sink_, wrong_;
  std::vector<device_memory> blocks_;
  fixture f_;
  cuda_event begin_, end_;
};

}  // namespace

bool gpu_runner_available() { return gpu_available(); }

std::unique_ptr<runner> make_gpu_runner(const translation_bench_options& o) {
  if (!gpu_available()) {
    throw input_error("bam bench translation --side gpu needs a GPU: " + gpu_unavailable_reason());
  }
  return std::make_unique<gpu_runner>(o);
}

}  // namespace bam::bench::translation
