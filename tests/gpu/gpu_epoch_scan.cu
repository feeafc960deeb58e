// What one epoch grace period costs on this GPU, what the scanning thread's warp-mates do to
// it, and what helpers buy. One lane runs grace periods over a pool with one reader slot per
// resident thread of the device (as page_cache sizes it) and no reader announced, while the
// other 31 lanes of its warp have left, spin on a flag, or wait with the library's backoff
// (nanosleep up to 4 us), as lanes waiting for a frame or a load do; or while the other
// threads of one block, or of one block per SM, help the scans (epoch_help), as threads that
// wait unprotected in the cache do. Every grace period must end, the epoch must advance once
// per grace period, and in the helper cases helpers must have scanned chunks; the times are
// printed, not checked.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

#include <bam/cache/mosaic/epochs.hpp>
#include <bam/cuda_check.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/reader_slot.hpp>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

using cache::mosaic::frame_pool_view;

constexpr std::uint32_t rounds = 20;
constexpr std::uint64_t give_up_ns = 10'000'000'000ull;

enum class mates : unsigned { gone, spin, backoff, help_block, help_device };

const char* mates_name(mates m) {
  switch (m) {
    case mates::gone:
      return "warp-mates gone";
    case mates::spin:
      return "warp-mates spin";
    case mates::backoff:
      return "warp-mates back off";
    case mates::help_block:
      return "one block helps";
    case mates::help_device:
      return "a block per SM helps";
  }
  return "?";
}

struct scan_result {
  unsigned long long ended;  ///< grace periods that returned true
  unsigned long long ns;     ///< lane 0's time for all of them
};

__global__ void slot_bound(std::uint32_t* out) { *out = reader_slot_bound(); }

__global__ void scan_with_mates(frame_pool_view p, mates m, unsigned* done, scan_result* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const std::uint64_t t0 = now_ns();
    unsigned long long ended = 0;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      ended += cache::mosaic::epoch_grace_period(p, now_ns() + give_up_ns) ? 1 : 0;
    }
    out->ns = now_ns() - t0;
    out->ended = ended;
    // release: nothing to publish but the end; the mates only stop.
    atomic_ref<unsigned>(*done).store(1u, order::release);
    return;
  }
  if (m == mates::gone) return;
  const bool help = m == mates::help_block || m == mates::help_device;
  backoff pause;
  // acquire: pairs with lane 0's store.
  while (atomic_ref<unsigned>(*done).load(order::acquire) == 0) {
    if (help && cache::mosaic::epoch_help(p)) continue;
    if (m != mates::spin) pause.pause();
  }
}

}  // namespace
}  // namespace bam::gpu_test

int main() {
  using namespace bam::gpu_test;
  checker c("gpu_epoch_scan");
  try {
    std::uint32_t* bound_d = nullptr;
    BAM_CUDA_CHECK(cudaMalloc(&bound_d, sizeof(std::uint32_t)));
    slot_bound<<<1, 1>>>(bound_d);
    BAM_CUDA_CHECK(cudaGetLastError());
    std::uint32_t slots = 0;
    BAM_CUDA_CHECK(cudaMemcpy(&slots, bound_d, sizeof slots, cudaMemcpyDeviceToHost));

    frame_pool_view p;
    p.pinning = bam::pinning_kind::epochs;
    p.epoch_slot_count = slots;
    BAM_CUDA_CHECK(cudaMalloc(&p.epoch, bam::hot_line_bytes));
    BAM_CUDA_CHECK(cudaMalloc(&p.epoch_slots, std::uint64_t{slots} * 8));
    BAM_CUDA_CHECK(cudaMalloc(&p.epoch_scan, bam::cache::mosaic::epoch_scan_bytes));
    BAM_CUDA_CHECK(cudaMemset(p.epoch_slots, 0, std::uint64_t{slots} * 8));
    BAM_CUDA_CHECK(cudaMemset(p.epoch_scan, 0, bam::cache::mosaic::epoch_scan_bytes));
    const std::uint64_t first = bam::cache::mosaic::first_epoch;
    BAM_CUDA_CHECK(cudaMemcpy(p.epoch, &first, sizeof first, cudaMemcpyHostToDevice));
    unsigned* done = nullptr;
    scan_result* out = nullptr;
    BAM_CUDA_CHECK(cudaMalloc(&done, sizeof(unsigned)));
    BAM_CUDA_CHECK(cudaMalloc(&out, sizeof(scan_result)));

    c.note(std::to_string(slots) + " reader slots, none announced; " + std::to_string(rounds) +
           " grace periods by lane 0 of one warp");
    int sms = 0;
    BAM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::printf("%-22s %14s %14s %14s\n", "case", "us per grace", "ns per slot", "helped chunks");
    std::uint64_t grace_periods = 0, helped_before = 0;
    for (const mates m : {mates::gone, mates::spin, mates::backoff, mates::gone, mates::help_block,
                          mates::help_device}) {
      BAM_CUDA_CHECK(cudaMemset(done, 0, sizeof(unsigned)));
      const unsigned blocks = m == mates::help_device ? static_cast<unsigned>(sms) : 1u;
      const unsigned threads = m == mates::help_block || m == mates::help_device ? 256u : 32u;
      scan_with_mates<<<blocks, threads>>>(p, m, done, out);
      BAM_CUDA_CHECK(cudaGetLastError());
      BAM_CUDA_CHECK(cudaDeviceSynchronize());
      scan_result r{};
      BAM_CUDA_CHECK(cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost));
      c.equal(r.ended, static_cast<unsigned long long>(rounds),
              std::string(mates_name(m)) + ": grace periods that ended");
      grace_periods += rounds;
      std::uint64_t words[bam::cache::mosaic::epoch_scan_words] = {};
      BAM_CUDA_CHECK(cudaMemcpy(words, p.epoch_scan, sizeof words, cudaMemcpyDeviceToHost));
      const std::uint64_t helped = words[bam::cache::mosaic::epoch_helped_word] - helped_before;
      helped_before = words[bam::cache::mosaic::epoch_helped_word];
      if (m == mates::help_block || m == mates::help_device) {
        c.expect(helped > 0, std::string(mates_name(m)) + ": helpers scanned chunks");
      } else {
        c.equal(helped, std::uint64_t{0}, std::string(mates_name(m)) + ": nobody helped");
      }
      const double per = static_cast<double>(r.ns) / rounds;
      std::printf("%-22s %14.1f %14.2f %14" PRIu64 "\n", mates_name(m), per / 1e3, per / slots,
                  helped);
    }
    std::uint64_t epoch = 0;
    BAM_CUDA_CHECK(cudaMemcpy(&epoch, p.epoch, sizeof epoch, cudaMemcpyDeviceToHost));
    c.equal(epoch - first, grace_periods, "epoch increments (one per grace period)");
    for (void* q : {static_cast<void*>(p.epoch), static_cast<void*>(p.epoch_slots),
                    static_cast<void*>(p.epoch_scan), static_cast<void*>(done),
                    static_cast<void*>(out), static_cast<void*>(bound_d)}) {
      BAM_CUDA_CHECK(cudaFree(q));
    }
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
