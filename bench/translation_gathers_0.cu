// The translation gather kernels at occupancy 0 (translation_gathers.cuh).
#include "translation_gathers_impl.cuh"

namespace bam::bench::translation {

template void gather_grids<0>(const cudaDeviceProp&, std::uint32_t (&)[8]);
template void launch_gathers<0>(cudaStream_t, const std::uint32_t (&)[8], scheme, const fixture&,
                                std::uint64_t, std::uint32_t, std::uint32_t, std::uint64_t*,
                                std::uint64_t*);

}  // namespace bam::bench::translation
