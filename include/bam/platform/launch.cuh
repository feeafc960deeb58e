#pragma once
/// @file
/// The app kernel model, GPU side: the same functors as launch.hpp, on a CUDA stream.

#include <cstdint>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/platform/launch.hpp>

namespace bam {

/// Blocks of 1,024 threads that a kernel asks ptxas to fit on one SM: a functor may declare
/// `static constexpr unsigned min_blocks_per_sm = 2;` to cap its registers at 32, so an SM holds
/// 2,048 of its threads. A kernel's register count is the largest of its call graph, so one
/// out-of-line miss path that wants 64 registers halves the hit path's occupancy; whether the
/// cap pays is a measurement (docs/results.md: on the H200 it did not for the graph apps or the
/// translation gathers, whose spills cost more than the extra warps gave). Default 0: no
/// minimum, ptxas chooses (an explicit 1 would let it take 64 registers where it now takes 32).
template <class Kernel>
inline constexpr unsigned min_blocks_per_sm = [] {
  if constexpr (requires { Kernel::min_blocks_per_sm; }) {
    return static_cast<unsigned>(Kernel::min_blocks_per_sm);
  } else {
    return 0u;
  }
}();

namespace detail {
// `dry` launches load and run the kernel function without calling the functor: the warm-up a
// kernel needs before a persistent controller starts (DESIGN 11), for any functor.
// __grid_constant__: out-of-line cold paths take the address of refs inside the functor, which
// would otherwise copy the whole functor to local memory in every thread.
template <class Kernel>
__global__ void __launch_bounds__(1024, min_blocks_per_sm<Kernel>)
    run_kernel(const __grid_constant__ Kernel kernel, bool dry) {
  if (dry) return;
  const std::uint64_t id = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t count = std::uint64_t{gridDim.x} * blockDim.x;
  kernel(thread_index{id, count});
}
}  // namespace detail

/// Launches `kernel` on a CUDA stream (asynchronous); a launch error throws bam::cuda_error.
template <class Kernel>
void launch(cudaStream_t stream, std::uint32_t grid, std::uint32_t block, Kernel kernel) {
  detail::run_kernel<<<grid, block, 0, stream>>>(kernel, false);
  BAM_CUDA_CHECK(cudaGetLastError());
}

/// Launches the kernel function of `Kernel` once without running the functor, so its first
/// real launch does not happen beside a running controller (DESIGN 11). `Kernel` must be
/// default constructible (kernel functors are aggregates of pointers and refs).
template <class Kernel>
void warm_up_launch(cudaStream_t stream) {
  detail::run_kernel<<<1, 32, 0, stream>>>(Kernel{}, true);
  BAM_CUDA_CHECK(cudaGetLastError());
}

/// The kernel function a launch of `Kernel` uses, to load it before persistent kernels start
/// (DESIGN 11: a first launch beside a running controller can deadlock).
template <class Kernel>
const void* kernel_function() {
  return reinterpret_cast<const void*>(&detail::run_kernel<Kernel>);
}

}  // namespace bam
