#pragma once
/// @file
/// Sleeping for a while, for agents that poll for work: a background loop that found nothing
/// to do must give its core (CPU) or its issue slots (GPU, where a spinning warp slows the SM's
/// other warps, the controller's included) back until it looks again.

#include <cstdint>

#include <bam/platform/config.hpp>

#if !BAM_DEVICE_PASS
#include <chrono>
#include <thread>
#endif

namespace bam {

/// Longest single __nanosleep (its documented maximum; a longer request is cut to it).
inline constexpr std::uint32_t max_nanosleep_ns = 1'000'000;

/// Sleeps about `ns` nanoseconds: __nanosleep in steps of at most max_nanosleep_ns on the GPU
/// (each step lasts anywhere up to twice what it asks, as the hardware decides), the OS
/// scheduler on the CPU. Never a spin.
BAM_HD inline void sleep_ns(std::uint32_t ns) {
#if BAM_DEVICE_PASS
  while (ns != 0) {
    const std::uint32_t step = ns < max_nanosleep_ns ? ns : max_nanosleep_ns;
    __nanosleep(step);
    ns -= step;
  }
#else
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
#endif
}

}  // namespace bam
