#pragma once
/// @file
/// The gather kernels of `bam bench translation --side gpu`, one per scheme, at two
/// occupancies: Blocks 0 leaves the registers to ptxas (up to the build's cap of 64), Blocks 2
/// asks for two blocks of 1,024 threads per SM (32 registers, `--occupancy full`). Each
/// occupancy is compiled in a unit of its own (translation_gathers_0.cu, _2.cu): with
/// relocatable device code the register cap of a kernel's out-of-line callees is the unit's
/// (-maxrregcount), so the 32-register unit caps only the kernels that need it.

#include <cstdint>

#include <cuda_runtime.h>

#include "translation_kernels.hpp"

namespace bam::bench::translation {

inline constexpr std::uint32_t gather_block_threads = 256;

/// One resident wave per scheme (indexed by scheme) at occupancy `Blocks`.
template <unsigned Blocks>
void gather_grids(const cudaDeviceProp& prop, std::uint32_t (&grids)[8]);

/// Launches `gathers` gathers of `bytes` through scheme `sc` at occupancy `Blocks`, one
/// resident wave (`grids` from gather_grids) on `stream`.
template <unsigned Blocks>
void launch_gathers(cudaStream_t stream, const std::uint32_t (&grids)[8], scheme sc,
                    const fixture& f, std::uint64_t gathers, std::uint32_t bytes,
                    std::uint32_t seed, std::uint64_t* sink, std::uint64_t* wrong);

extern template void gather_grids<0>(const cudaDeviceProp&, std::uint32_t (&)[8]);
extern template void gather_grids<2>(const cudaDeviceProp&, std::uint32_t (&)[8]);
extern template void launch_gathers<0>(cudaStream_t, const std::uint32_t (&)[8], scheme,
                                       const fixture&, std::uint64_t, std::uint32_t, std::uint32_t,
                                       std::uint64_t*, std::uint64_t*);
extern template void launch_gathers<2>(cudaStream_t, const std::uint32_t (&)[8], scheme,
                                       const fixture&, std::uint64_t, std::uint32_t, std::uint32_t,
                                       std::uint64_t*, std::uint64_t*);

}  // namespace bam::bench::translation
