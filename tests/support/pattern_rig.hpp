#pragma once
/// @file
/// A small base-page cache over an emulated SSD whose image holds a pattern: word i is
/// pattern_word(i), distinct for every index. For tests of one cache's commands (late, failed,
/// prefetched); arrays made on the rig must die before it.

#include <cstdint>
#include <memory>

#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam::testing {

/// The word at index `i` of a pattern_rig's image.
constexpr std::uint64_t pattern_word(std::uint64_t i) { return (i + 1) * 0x9e3779b97f4a7c15ull; }

/// The emulated SSD, a CPU stream of two workers and the cache. The controller stops before
/// the cache goes: a late command must not touch freed lines.
struct pattern_rig {
  pattern_rig(std::uint64_t words, const storage_config& s, const cache_config& c)
      : image(backing_store::in_memory(words * 8)) {
    auto* w = reinterpret_cast<std::uint64_t*>(image->data());
    for (std::uint64_t i = 0; i < words; ++i) w[i] = pattern_word(i);
    ssd = std::make_unique<emulated_storage>(s, image);
    stream = std::make_unique<host_stream>(2);
    cache = std::make_unique<page_cache>(c, *stream);
    ssd->start();
  }
  ~pattern_rig() {
    ssd->stop();
    cache.reset();
  }
  pattern_rig(const pattern_rig&) = delete;
  pattern_rig& operator=(const pattern_rig&) = delete;

  [[nodiscard]] device_set_ref set() const { return ssd->ref(); }
  [[nodiscard]] std::uint64_t image_word(std::uint64_t i) const {
    return reinterpret_cast<const std::uint64_t*>(image->data())[i];
  }

  std::shared_ptr<backing_store> image;
  std::unique_ptr<emulated_storage> ssd;
  std::unique_ptr<host_stream> stream;
  std::unique_ptr<page_cache> cache;
};

}  // namespace bam::testing
