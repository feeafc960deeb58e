#pragma once
/// @file
/// Whether a GPU serves this process, and what it is.

#include <string>

namespace bam {

/// True when bam was built with CUDA and a CUDA device is present and usable.
bool gpu_available();

/// "NVIDIA H200, 132 SMs, 139.8 GiB, driver 13.0, runtime 13.0", or "" without a GPU.
std::string gpu_description();

/// Why no GPU is used ("built without CUDA", "no CUDA device: ..."), or "" when one is.
std::string gpu_unavailable_reason();

}  // namespace bam
