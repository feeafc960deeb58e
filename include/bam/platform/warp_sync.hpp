#pragma once
/// @file
/// warp::sync: the lanes of `mask` meet, and what each wrote or read before is ordered before
/// what any of them does after (__syncwarp on the GPU). A warp leader that releases something
/// on behalf of its group (a pin, an epoch section) calls it first, so the group's reads of the
/// pinned data happen before the release.

#include <cstdint>

#include <bam/platform/config.hpp>
#include <bam/platform/warp.hpp>

namespace bam::warp {

BAM_HD BAM_INLINE void sync(std::uint32_t mask) {
#if BAM_DEVICE_PASS
  __syncwarp(mask);
#else
  // A software warp's collectives meet under its mutex, which orders the lanes' accesses; a
  // plain CPU thread is a warp of one and has nobody to wait for.
  (void)ballot(mask, true);
#endif
}

}  // namespace bam::warp
