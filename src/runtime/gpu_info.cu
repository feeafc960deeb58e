// The CUDA build: a GPU is used when the runtime finds one.
#include <bam/runtime/gpu_info.hpp>

#include <cstdio>

#include <cuda_runtime.h>

namespace bam {

namespace {
int device_count(cudaError_t* why) {
  int n = 0;
  *why = cudaGetDeviceCount(&n);
  return *why == cudaSuccess ? n : 0;
}
}  // namespace

bool gpu_available() {
  cudaError_t why;
  return device_count(&why) > 0;
}

std::string gpu_unavailable_reason() {
  cudaError_t why;
  if (device_count(&why) > 0) return {};
  if (why != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(why);
  return "no CUDA device present";
}

std::string gpu_description() {
  if (!gpu_available()) return {};
  cudaDeviceProp p{};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    return {};
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char text[512];  // the name alone may take 256
  std::snprintf(text, sizeof text, "%s, %d SMs, %.1f GiB, L2 %d MiB, driver %d.%d, runtime %d.%d",
                p.name, p.multiProcessorCount, static_cast<double>(p.totalGlobalMem) / (1ull << 30),
                p.l2CacheSize >> 20, driver / 1000, driver % 1000 / 10, runtime / 1000,
                runtime % 1000 / 10);
  return text;
}

}  // namespace bam
