#pragma once
/// @file
/// The copy a thread carries out for a command to a memory set (device_set_ref::memory).

#include <cstdint>
#include <cstring>

#include <bam/platform/config.hpp>

namespace bam::detail {

/// Lane `rank` of `lanes` copying their shares of `bytes` (a multiple of 16, both ends 16-byte
/// aligned) from `from` to `to`: the 16-byte words rank, rank + lanes, ... Together the lanes
/// copy every word once; a lone thread passes (0, 1).
BAM_HD inline void copy_among(void* to, const void* from, std::uint64_t bytes, std::uint32_t rank,
                              std::uint32_t lanes) {
  const std::uint64_t words = bytes / 16;
#ifdef __CUDA_ARCH__
  // From pinned host memory each load is a PCIe round trip: eight 16-byte loads go out before
  // their stores, so a thread keeps 128 bytes in flight instead of 16 (a warp's lanes side by
  // side make each of the eight one 512-byte read). L2 only (.cg): lines are touched once,
  // and an L1 copy of the host bytes could outlive a write to them.
  auto* d = static_cast<uint4*>(to);
  const auto* s = static_cast<const uint4*>(from);
  constexpr std::uint64_t batch = 8;
  const std::uint64_t step = lanes;
  std::uint64_t i = rank;
  for (; i + (batch - 1) * step < words; i += batch * step) {
    uint4 v[batch];
#pragma unroll
    for (std::uint64_t k = 0; k < batch; ++k) v[k] = __ldcg(s + i + k * step);
#pragma unroll
    for (std::uint64_t k = 0; k < batch; ++k) __stcg(d + i + k * step, v[k]);
  }
  for (; i < words; i += step) __stcg(d + i, __ldcg(s + i));
#else
  auto* d = static_cast<unsigned char*>(to);
  const auto* s = static_cast<const unsigned char*>(from);
  if (lanes == 1) {
    std::memcpy(d, s, bytes);
    return;
  }
  for (std::uint64_t i = rank; i < words; i += lanes) std::memcpy(d + i * 16, s + i * 16, 16);
#endif
}

/// Copies `bytes` (as copy_among) on the calling thread alone.
BAM_HD inline void copy_alone(void* to, const void* from, std::uint64_t bytes) {
  copy_among(to, from, bytes, 0, 1);
}

}  // namespace bam::detail
