#pragma once
/// @file
/// Compiler annotations shared by host and device code. The only place, with the rest of
/// bam/platform, that knows whether code is compiled for a GPU.

// BAM_NOINLINE keeps a cold path (a miss, an error) out of line, so the kernels that inline the
// hot path around it are not compiled to the cold path's register needs.
#if defined(__CUDACC__)
#define BAM_HD __host__ __device__
#define BAM_DEVICE __device__
#define BAM_INLINE __forceinline__
#define BAM_NOINLINE __noinline__
#else
#define BAM_HD
#define BAM_DEVICE
#define BAM_INLINE inline __attribute__((always_inline))
#define BAM_NOINLINE __attribute__((noinline))
#endif

// True in the device pass of nvcc. Used only inside bam/platform.
#if defined(__CUDA_ARCH__)
#define BAM_DEVICE_PASS 1
#else
#define BAM_DEVICE_PASS 0
#endif

namespace bam {

/// Size of the unit the memory system moves between cores (GPU L2 sector group / CPU line).
/// Hot, independently written words are padded to this to keep them off each other's lines.
inline constexpr unsigned hot_line_bytes = 128;

}  // namespace bam
