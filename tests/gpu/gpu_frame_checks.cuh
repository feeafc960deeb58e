#pragma once
// Checks on a two_level cache's frame table after a GPU test's accesses have finished.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/mosaic/large_entry.hpp>

#include "gpu_test.cuh"

namespace bam::gpu_test {

/// Nothing may be left protecting or holding a frame once every access has finished, and the
/// tenant's frame count (`frames_held`, in GPU memory) must match the frames that name `a`.
inline void expect_frames_at_rest(checker& c, gpu_runtime& rt, const page_cache& cache,
                                  const array<std::uint64_t>& a, const std::uint32_t* frames_held,
                                  const std::string& what) {
  const cache::mosaic::frame_pool_view p = cache.ref().frames();  // ref() is a temporary
  const std::vector<std::uint64_t> states = download(rt, p.state, p.geometry.frames);
  std::uint64_t pins = 0, held = 0;
  for (const std::uint64_t s : states) {
    pins += cache::mosaic::frame_pins(s);
    held += (s & cache::mosaic::frame_bits::held) != 0;
  }
  c.equal(pins, std::uint64_t{0}, what + ": frame pins left");
  c.equal(held, std::uint64_t{0}, what + ": frames left held");
  if (p.epoch_slot_count != 0) {
    const std::vector<std::uint64_t> slots = download(rt, p.epoch_slots, p.epoch_slot_count);
    const auto announced = static_cast<std::uint64_t>(
        std::count_if(slots.begin(), slots.end(), [](std::uint64_t v) { return v != 0; }));
    c.equal(announced, std::uint64_t{0}, what + ": epoch reader slots left announced");
  }
  const std::uint32_t counted = download(rt, frames_held, 1)[0];
  c.equal(std::uint64_t{counted}, a.frame_stats().frames_held(),
          what + ": the tenant's frame count vs the frames that name it");
}

}  // namespace bam::gpu_test
