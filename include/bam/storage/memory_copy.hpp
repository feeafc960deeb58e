#pragma once
/// @file
/// The copy a thread carries out for a command to a memory set (device_set_ref::memory).

#include <cstdint>
#include <cstring>

#include <bam/platform/config.hpp>

namespace bam::detail {

/// Copies `bytes` (a multiple of 16, both ends 16-byte aligned) from `from` to `to` on the
/// calling thread alone.
BAM_HD inline void copy_alone(void* to, const void* from, std::uint64_t bytes) {
#ifdef __CUDA_ARCH__
  // From pinned host memory each load is a PCIe round trip: eight 16-byte loads go out before
  // their stores, so a lone thread keeps 128 bytes in flight instead of 16. L2 only (.cg):
  // lines are touched once, and an L1 copy of the host bytes could outlive a write to them.
  auto* d = static_cast<uint4*>(to);
  const auto* s = static_cast<const uint4*>(from);
  constexpr std::uint64_t batch = 8;
  const std::uint64_t words = bytes / 16;
  std::uint64_t i = 0;
  for (; i + batch <= words; i += batch) {
    uint4 v[batch];
#pragma unroll
    for (std::uint64_t k = 0; k < batch; ++k) v[k] = __ldcg(s + i + k);
#pragma unroll
    for (std::uint64_t k = 0; k < batch; ++k) __stcg(d + i + k, v[k]);
  }
  for (; i < words; ++i) __stcg(d + i, __ldcg(s + i));
#else
  std::memcpy(to, from, bytes);
#endif
}

}  // namespace bam::detail
