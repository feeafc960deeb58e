#pragma once
// The side-specific half of `bam bench translation`: builds the fixture (data and every
// scheme's metadata) in the side's memory and times one launch of a gather kernel.

#include <cstdint>
#include <memory>
#include <string>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/mosaic/epochs.hpp>
#include <bam/cache/mosaic/frame_geometry.hpp>

#include "translation_bench.hpp"
#include "translation_kernels.hpp"

namespace bam::bench::translation {

/// One data size and base page size: what each scheme's metadata costs.
struct shape {
  std::uint32_t line_bytes = 0;
  std::uint64_t data_bytes = 0;
  std::uint64_t frame_bytes = 0;
  [[nodiscard]] std::uint64_t pages() const { return data_bytes / line_bytes; }
  [[nodiscard]] std::uint64_t frames() const { return data_bytes / frame_bytes; }
  [[nodiscard]] cache::mosaic::frame_geometry geometry() const {
    cache::mosaic::frame_geometry g;
    g.frame_bytes = frame_bytes;
    g.lines_per_frame = static_cast<std::uint32_t>(frame_bytes / line_bytes);
    g.frames = static_cast<std::uint32_t>(frames());
    g.words_per_frame = (g.lines_per_frame + 63) / 64;
    while ((1ull << g.frame_shift) < g.lines_per_frame) ++g.frame_shift;
    g.frame_lines = pages();
    return g;
  }
  /// Bytes of translation metadata a hit may touch, for the whole data set.
  [[nodiscard]] std::uint64_t metadata_bytes(scheme s) const {
    const cache::mosaic::frame_geometry g = geometry();
    const std::uint64_t frame_table = frames() * (8 + 8 + 4 + 4 + 3 * 8ull * g.words_per_frame);
    switch (s) {
      case scheme::bam:
        return pages() * (4 + 8 + 4);  // page entry, line state, CLOCK reference
      case scheme::lean:
      case scheme::lean_l2:
        return pages() * 8;
      case scheme::two_level_pins:
      case scheme::two_level_epochs:
      case scheme::two_level_epochs_warp:
        return frames() * 8 + frame_table;
      case scheme::large_only:
        return frames() * 8;
      case scheme::ideal:
        return 0;
    }
    return 0;
  }
};

class runner {
 public:
  virtual ~runner() = default;
  /// Builds the data and the metadata of every scheme for `s` (frees the previous shape's).
  virtual void prepare(const shape& s) = 0;
  /// Runs `gathers` gathers of `gather_bytes` through `sc`; returns seconds. Throws
  /// bam::error if any gather read wrong bytes.
  virtual double time(scheme sc, std::uint64_t gathers, std::uint32_t gather_bytes,
                      std::uint32_t seed) = 0;
  [[nodiscard]] virtual std::string device() const = 0;
  [[nodiscard]] virtual std::uint64_t l2_bytes() const = 0;
  [[nodiscard]] virtual std::uint64_t threads() const = 0;
  /// Whether this side can run `sc` (lean_l2 needs the GPU's L2 controls).
  [[nodiscard]] virtual bool supports(scheme sc) const = 0;
};

std::unique_ptr<runner> make_cpu_runner(const translation_bench_options& o);
/// Throws bam::input_error in a build without CUDA or without a GPU.
std::unique_ptr<runner> make_gpu_runner(const translation_bench_options& o);
bool gpu_runner_available();

/// Builds a fixture over memory from `alloc(bytes)` (zeroed) and fills it with `run(kernel)`.
template <class Alloc, class Run>
fixture build_fixture(const shape& s, std::uint32_t epoch_slots, Alloc&& alloc, Run&& run) {
  fixture f;
  const std::uint64_t pages = s.pages();
  f.data = static_cast<std::uint8_t*>(alloc(s.data_bytes));
  f.data_bytes = s.data_bytes;
  while ((1ull << f.line_shift) < s.line_bytes) ++f.line_shift;
  while ((1ull << f.frame_shift) < s.frame_bytes) ++f.frame_shift;
  run(fill_data{reinterpret_cast<std::uint64_t*>(f.data), s.data_bytes / 8});

  auto* page_table = static_cast<std::uint32_t*>(alloc(pages * 4));
  auto* state = static_cast<std::uint64_t*>(alloc(pages * 8));
  auto* referenced = static_cast<std::uint32_t*>(alloc(pages * 4));
  f.lean = static_cast<std::uint64_t*>(alloc(pages * 8));
  run(fill_base{page_table, state, referenced, f.lean, pages});

  cache_config cfg;
  cfg.line_bytes = s.line_bytes;
  cfg.capacity_bytes = s.data_bytes;
  page_cache_ref::memory m{};
  m.data = f.data;
  m.state = state;
  m.referenced = referenced;
  m.hand = static_cast<std::uint64_t*>(alloc(hot_line_bytes));
  f.bam_cache = page_cache_ref(m, cfg, static_cast<std::uint32_t>(pages));

  cache::mosaic::frame_pool_view p;
  p.geometry = s.geometry();
  const std::uint64_t frames = p.geometry.frames, words = frames * p.geometry.words_per_frame;
  p.state = static_cast<std::uint64_t*>(alloc(frames * 8));
  p.resident = static_cast<std::uint64_t*>(alloc(words * 8));
  p.busy = static_cast<std::uint64_t*>(alloc(words * 8));
  p.dirty = static_cast<std::uint64_t*>(alloc(words * 8));
  p.abandoned = static_cast<std::uint64_t*>(alloc(words * 8));
  p.owner = static_cast<std::uint64_t*>(alloc(frames * 8));
  p.referenced = static_cast<std::uint32_t*>(alloc(frames * 4));
  p.resident_count = static_cast<std::uint32_t*>(alloc(frames * 4));
  p.hand = static_cast<std::uint64_t*>(alloc(hot_line_bytes));
  p.epoch = static_cast<std::uint64_t*>(alloc(hot_line_bytes));
  p.epoch_slots = static_cast<std::uint64_t*>(alloc(std::uint64_t{epoch_slots} * 8));
  p.epoch_slot_count = epoch_slots;
  auto* large = static_cast<std::uint64_t*>(alloc(frames * 8));
  run(fill_frames{large, p});
  run(set_word{p.epoch, cache::mosaic::first_epoch});  // slots holding 0 are idle readers

  m.frames = p;
  m.frames.pinning = pinning_kind::frame_pins;
  f.pins_cache = page_cache_ref(m, cfg, static_cast<std::uint32_t>(pages));
  m.frames.pinning = pinning_kind::epochs;
  f.epochs_cache = page_cache_ref(m, cfg, static_cast<std::uint32_t>(pages));

  f.base_slot.pages = pages;
  f.base_slot.page_table = page_table;
  f.dense_slot.pages = pages;
  f.dense_slot.large_table = large;
  f.dense_slot.tenant = 1;
  return f;
}

}  // namespace bam::bench::translation
