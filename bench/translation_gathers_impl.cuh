#pragma once
/// @file
/// Definitions for translation_gathers.cuh; included only by the units that instantiate them.

#include <algorithm>

#include <bam/cuda_check.hpp>
#include <bam/platform/launch.cuh>

#include "translation_gathers.cuh"

namespace bam::bench::translation {

namespace detail {

template <class Kernel>
std::uint32_t resident_grid(const cudaDeviceProp& prop) {
  int per_sm = 0;
  BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_function<Kernel>(),
                                                               gather_block_threads, 0));
  return static_cast<std::uint32_t>(std::max(per_sm, 1) * prop.multiProcessorCount);
}

template <scheme S, unsigned Blocks>
void launch_one(cudaStream_t stream, const std::uint32_t (&grids)[8], const fixture& f,
                std::uint64_t gathers, std::uint32_t bytes, std::uint32_t seed, std::uint64_t* sink,
                std::uint64_t* wrong) {
  launch(stream, grids[static_cast<int>(S)], gather_block_threads,
         gather_kernel<S, Blocks>{f, gathers, bytes, seed, sink, wrong});
}

}  // namespace detail

template <unsigned Blocks>
void gather_grids(const cudaDeviceProp& prop, std::uint32_t (&grids)[8]) {
  using detail::resident_grid;
  grids[static_cast<int>(scheme::bam)] = resident_grid<gather_kernel<scheme::bam, Blocks>>(prop);
  grids[static_cast<int>(scheme::lean)] = resident_grid<gather_kernel<scheme::lean, Blocks>>(prop);
  grids[static_cast<int>(scheme::two_level_pins)] =
      resident_grid<gather_kernel<scheme::two_level_pins, Blocks>>(prop);
  grids[static_cast<int>(scheme::two_level_epochs)] =
      resident_grid<gather_kernel<scheme::two_level_epochs, Blocks>>(prop);
  grids[static_cast<int>(scheme::large_only)] =
      resident_grid<gather_kernel<scheme::large_only, Blocks>>(prop);
  grids[static_cast<int>(scheme::ideal)] =
      resident_grid<gather_kernel<scheme::ideal, Blocks>>(prop);
  grids[static_cast<int>(scheme::lean_l2)] =
      resident_grid<gather_kernel<scheme::lean_l2, Blocks>>(prop);
  grids[static_cast<int>(scheme::two_level_epochs_warp)] =
      resident_grid<gather_kernel<scheme::two_level_epochs_warp, Blocks>>(prop);
}

template <unsigned Blocks>
void launch_gathers(cudaStream_t stream, const std::uint32_t (&grids)[8], scheme sc,
                    const fixture& f, std::uint64_t gathers, std::uint32_t bytes,
                    std::uint32_t seed, std::uint64_t* sink, std::uint64_t* wrong) {
  switch (sc) {
    case scheme::bam:
      return detail::launch_one<scheme::bam, Blocks>(stream, grids, f, gathers, bytes, seed, sink,
                                                     wrong);
    case scheme::lean:
      return detail::launch_one<scheme::lean, Blocks>(stream, grids, f, gathers, bytes, seed, sink,
                                                      wrong);
    case scheme::two_level_pins:
      return detail::launch_one<scheme::two_level_pins, Blocks>(stream, grids, f, gathers, bytes,
                                                                seed, sink, wrong);
    case scheme::two_level_epochs:
      return detail::launch_one<scheme::two_level_epochs, Blocks>(stream, grids, f, gathers, bytes,
                                                                  seed, sink, wrong);
    case scheme::large_only:
      return detail::launch_one<scheme::large_only, Blocks>(stream, grids, f, gathers, bytes, seed,
                                                            sink, wrong);
    case scheme::ideal:
      return detail::launch_one<scheme::ideal, Blocks>(stream, grids, f, gathers, bytes, seed, sink,
                                                       wrong);
    case scheme::lean_l2:
      return detail::launch_one<scheme::lean_l2, Blocks>(stream, grids, f, gathers, bytes, seed,
                                                         sink, wrong);
    case scheme::two_level_epochs_warp:
      return detail::launch_one<scheme::two_level_epochs_warp, Blocks>(stream, grids, f, gathers,
                                                                       bytes, seed, sink, wrong);
  }
}

}  // namespace bam::bench::translation
