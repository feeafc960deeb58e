// reader_slot() (SM, warp slot, lane) must be unique among the threads running at once, across
// the blocks of a grid and across kernels on different streams: epoch readers announce in it
// with a plain store (cache/mosaic/epochs.hpp), so two threads sharing a slot would erase each
// other's announcement. Every thread, many times over, claims its slot with a CAS from 0 to its
// own id, holds it a moment, and gives it back with a CAS from its id; a claim that finds the
// slot taken, or a give-back that finds another id, is a clash. Two kernels run side by side,
// each with more blocks than fit at once, so blocks of both share SMs.
#include <cstdint>
#include <cstdio>

#include <bam/cuda_check.hpp>
#include <bam/platform/reader_slot.hpp>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

constexpr std::uint32_t rounds = 64;
constexpr std::uint32_t hold_ns = 500;

__global__ void slot_bound(std::uint32_t* out) { *out = reader_slot_bound(); }

__global__ void claim_slots(unsigned long long* owner, std::uint32_t bound, unsigned kernel,
                            unsigned long long* clashes, unsigned long long* out_of_range) {
  const unsigned long long me =
      (static_cast<unsigned long long>(kernel) << 40) | (blockIdx.x * blockDim.x + threadIdx.x + 1);
  for (std::uint32_t r = 0; r < rounds; ++r) {
    const std::uint32_t s = reader_slot();
    if (s >= bound) {
      atomicAdd(out_of_range, 1ull);
      return;
    }
    if (atomicCAS(&owner[s], 0ull, me) != 0ull) {
      atomicAdd(clashes, 1ull);
      continue;
    }
    __nanosleep(hold_ns);
    if (atomicCAS(&owner[s], me, 0ull) != me) atomicAdd(clashes, 1ull);
  }
}

}  // namespace
}  // namespace bam::gpu_test

int main() {
  using namespace bam::gpu_test;
  checker c("gpu_reader_slots");
  try {
    int sms = 0;
    BAM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::uint32_t* bound_d = nullptr;
    BAM_CUDA_CHECK(cudaMalloc(&bound_d, sizeof(std::uint32_t)));
    slot_bound<<<1, 1>>>(bound_d);
    BAM_CUDA_CHECK(cudaGetLastError());
    std::uint32_t bound = 0;
    BAM_CUDA_CHECK(cudaMemcpy(&bound, bound_d, sizeof bound, cudaMemcpyDeviceToHost));
    unsigned long long* owner = nullptr;
    unsigned long long* counts = nullptr;  // clashes, out of range
    BAM_CUDA_CHECK(cudaMalloc(&owner, std::uint64_t{bound} * sizeof(unsigned long long)));
    BAM_CUDA_CHECK(cudaMemset(owner, 0, std::uint64_t{bound} * sizeof(unsigned long long)));
    BAM_CUDA_CHECK(cudaMalloc(&counts, 2 * sizeof(unsigned long long)));
    BAM_CUDA_CHECK(cudaMemset(counts, 0, 2 * sizeof(unsigned long long)));
    cudaStream_t streams[2];
    for (cudaStream_t& s : streams)
      BAM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const unsigned blocks = static_cast<unsigned>(sms) * 16;  // more than fit: blocks mix on SMs
    for (unsigned k = 0; k < 2; ++k) {
      claim_slots<<<blocks, 256, 0, streams[k]>>>(owner, bound, k, counts, counts + 1);
      BAM_CUDA_CHECK(cudaGetLastError());
    }
    BAM_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long host[2] = {};
    BAM_CUDA_CHECK(cudaMemcpy(host, counts, sizeof host, cudaMemcpyDeviceToHost));
    c.note(std::to_string(sms) + " SMs, " + std::to_string(bound) + " reader slots, 2 kernels of " +
           std::to_string(blocks) + " x 256 threads, " + std::to_string(rounds) + " claims each");
    c.equal(host[1], 0ull, "threads whose reader slot is past reader_slot_bound()");
    c.equal(host[0], 0ull, "claims that found their reader slot held by another running thread");
    for (cudaStream_t s : streams) BAM_CUDA_CHECK(cudaStreamDestroy(s));
    BAM_CUDA_CHECK(cudaFree(counts));
    BAM_CUDA_CHECK(cudaFree(owner));
    BAM_CUDA_CHECK(cudaFree(bound_d));
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}
