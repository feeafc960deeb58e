#pragma once
/// @file
/// What the Mosaic (two-level translation) tests share: a pattern image whose every 64-bit word
/// names its index, a rig of emulated devices, a CPU stream and a two_level cache, and views
/// of the cache's frame pool and of a dense array's large table.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam::testing::mosaic {

/// Names the cases of a test suite parameterized by pinning kind (INSTANTIATE_TEST_SUITE_P).
inline std::string kind_name(const ::testing::TestParamInfo<pinning_kind>& info) {
  return to_string(info.param);
}

/// The word at index `i` of a pattern image: distinct for every index and byte position.
constexpr std::uint64_t word_at(std::uint64_t i) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  return x ^ (i << 7) ^ 0x5bd1e995ull;
}

/// The value a writer stores at index `i` (never equal to the pattern).
constexpr std::uint64_t written_at(std::uint64_t i) { return ~word_at(i) ^ 0x3c3cu; }

inline std::shared_ptr<backing_store> pattern_image(std::uint64_t words) {
  auto image = backing_store::in_memory(words * 8);
  auto* w = reinterpret_cast<std::uint64_t*>(image->data());
  for (std::uint64_t i = 0; i < words; ++i) w[i] = word_at(i);
  return image;
}

/// A tiny deterministic generator (the same sequence on every run).
struct lcg {
  std::uint64_t x;
  std::uint64_t below(std::uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  }
};

/// A two_level cache of `lines` lines of `line_bytes`, frames of `frame_lines` lines over
/// `percent` of them.
inline cache_config two_level(pinning_kind p, std::uint32_t line_bytes = 512,
                              std::uint64_t lines = 256, std::uint32_t frame_lines = 8,
                              std::uint32_t percent = 50) {
  cache_config c;
  c.line_bytes = line_bytes;
  c.capacity_bytes = lines * line_bytes;
  c.translation = translation_kind::two_level;
  c.pinning = p;
  c.frame_bytes = std::uint64_t{frame_lines} * line_bytes;
  c.frame_percent = percent;
  return c;
}

/// The geometry of the adaptive-policy tests: 512 B pages, 64 of them (32 KiB) per piece.
struct adaptive_geometry {
  static constexpr std::uint64_t words_per_page = 512 / 8;
  static constexpr std::uint64_t pages_per_piece = 64;
  static constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;
};

/// 1024 lines of 512 B, half of them in 8 frames of 64 lines, owner checks on: a piece
/// splinters at 3 pages or fewer and is promoted past 32.
inline cache_config adaptive(pinning_kind p) {
  cache_config c = two_level(p, 512, 1024, adaptive_geometry::pages_per_piece);
  c.check_frame_owners = true;
  return c;
}

inline storage_config fast_storage() {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = 4;
  s.queue_depth = 64;
  s.model = device_model::unlimited();
  s.timeout_ns = 60'000'000'000ull;
  return s;
}

/// Emulated devices over an image, a CPU stream and a cache. Arrays made on it must die first.
struct rig {
  rig(std::shared_ptr<backing_store> image, const cache_config& config, unsigned workers = 4,
      const storage_config& storage = fast_storage())
      : ssd(std::make_unique<emulated_storage>(storage, std::move(image))),
        stream(std::make_unique<host_stream>(workers)),
        cache(std::make_unique<page_cache>(config, *stream)),
        cache_ref(cache->ref()) {
    ssd->start();
  }
  ~rig() {
    cache.reset();
    ssd->stop();
  }
  rig(const rig&) = delete;
  rig& operator=(const rig&) = delete;

  [[nodiscard]] cache::mosaic::dense_cache_ref dense() const {
    return cache::mosaic::dense_cache_ref(cache_ref);
  }
  [[nodiscard]] cache::mosaic::frame_pool_view pool() const { return cache->ref().frames(); }

  std::unique_ptr<emulated_storage> ssd;
  std::unique_ptr<host_stream> stream;
  std::unique_ptr<page_cache> cache;
  page_cache_ref cache_ref;  ///< what dense() views (a dense_cache_ref keeps a reference)
};

/// The large entry of piece `piece` of a dense array.
template <class T>
std::uint64_t entry_of(const array<T>& a, std::uint64_t piece) {
  return atomic_ref<std::uint64_t>(a.ref().slot().large_table[piece]).load(order::acquire);
}

/// Pins held on every frame (all zero once every access has finished).
inline std::uint64_t frame_pins_left(const cache::mosaic::frame_pool_view& p) {
  std::uint64_t pins = 0;
  for (std::uint32_t f = 0; f < p.geometry.frames; ++f) {
    pins += cache::mosaic::frame_pins(atomic_ref<std::uint64_t>(p.state[f]).load(order::acquire));
  }
  return pins;
}

/// Epoch reader slots still announced (all zero once every access has finished).
inline std::uint64_t epoch_readers_left(const cache::mosaic::frame_pool_view& p) {
  std::uint64_t n = 0;
  for (std::uint32_t s = 0; s < p.epoch_slot_count; ++s) {
    n += atomic_ref<std::uint64_t>(p.epoch_slots[s]).load(order::acquire) != 0;
  }
  return n;
}

}  // namespace bam::testing::mosaic
