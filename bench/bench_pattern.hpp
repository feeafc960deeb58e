#pragma once
/// @file
/// The data pattern and counter-based random numbers the GPU benchmarks share, so a ceiling and
/// a bam figure measured in one run read the same bytes in the same way.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::bench {

// Every 8-byte word holds its own byte offset mixed with a constant: a read from the wrong
// place shows, and the data are neither zeros nor one repeated value.
inline constexpr std::uint64_t pattern_key = 0xa5c3'5a3c'9e37'79b9ull;
BAM_HD BAM_INLINE std::uint64_t pattern_word(std::uint64_t byte_offset) {
  return byte_offset ^ pattern_key;
}

// Counter-based random numbers (no generator state, no cuRAND): a 32-bit integer mixer
// ("lowbias32", C. Wellons' hash prospector) over the counter and a seed.
BAM_HD BAM_INLINE std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
BAM_HD BAM_INLINE std::uint32_t counter_hash(std::uint64_t counter, std::uint32_t seed) {
  return mix32(static_cast<std::uint32_t>(counter) ^
               mix32(static_cast<std::uint32_t>(counter >> 32) ^ seed));
}
// Maps a 32-bit hash onto [0, n) by a multiply instead of a division (n <= 2^32).
BAM_HD BAM_INLINE std::uint64_t pick(std::uint32_t hash, std::uint64_t n) {
  return (std::uint64_t{hash} * n) >> 32;
}
// [0, n) for n up to 2^64: two hashes, so footprints past 2^32 units stay uniform enough.
BAM_HD BAM_INLINE std::uint64_t pick64(std::uint64_t counter, std::uint32_t seed, std::uint64_t n) {
  const std::uint64_t r = (std::uint64_t{counter_hash(counter, seed)} << 32) |
                          counter_hash(counter, seed ^ 0x68e31da4u);
  return r % n;
}

}  // namespace bam::bench
