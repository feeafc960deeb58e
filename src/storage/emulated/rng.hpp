#pragma once
// Counter-based randomness for the device models: a value is a pure function of its inputs,
// so faults and latencies are reproducible and need no shared generator state.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::emulated {

BAM_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform double in [0, 1) for (seed, stream, counter).
BAM_HD constexpr double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  const std::uint64_t bits = mix64(mix64(seed ^ (stream * 0xd1b54a32d192ed03ull)) ^ counter);
  return static_cast<double>(bits >> 11) * 0x1p-53;
}

}  // namespace bam::emulated
