#pragma once
/// @file
/// The app kernel model, GPU side: the same functors as launch.hpp, on a CUDA stream.

#include <cstdint>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/platform/launch.hpp>

namespace bam {

namespace detail {
// `dry` launches load and run the kernel function without calling the functor: the warm-up a
// kernel needs before a persistent controller starts (DESIGN 11), for any functor.
// __grid_constant__: out-of-line cold paths take the address of refs inside the functor, which
// would otherwise copy the whole functor to local memory in every thread.
template <class Kernel>
__global__ void __launch_bounds__(1024)
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
