// The CPU build: no GPU is ever used.
#include <bam/runtime/gpu_info.hpp>

namespace bam {

bool gpu_available() { return false; }
std::string gpu_description() { return {}; }
std::string gpu_unavailable_reason() { return "bam was built without CUDA"; }

}  // namespace bam
