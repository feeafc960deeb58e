#pragma once
// What the dense-cache GPU tests share: their emulated storage, and the checks on a two_level
// cache's frame table once their accesses have finished.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "gpu_test.cuh"

namespace bam::gpu_test {

/// Storage with no latency model for a controller placed at `p`: on the GPU 2 devices of 32
/// queues of 256 entries, on a host thread 1 of 8 of 64; a stuck command fails its access.
inline storage_config dense_test_storage(controller_placement p) {
  storage_config c;
  const bool on_gpu = p == controller_placement::gpu_kernel;
  c.devices = on_gpu ? 2 : 1;
  c.queues_per_device = on_gpu ? 32 : 8;
  c.queue_depth = on_gpu ? 256 : 64;
  c.model = device_model::unlimited();
  c.placement = p;
  c.timeout_ns = 10'000'000'000ull;  // a stuck command fails its access, with its reason
  return c;
}

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
