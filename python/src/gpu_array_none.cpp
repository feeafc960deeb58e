// A build without CUDA: no GPU arrays (data_source refuses device="cuda" before this).

#include "any_array.hpp"

#include <bam/error.hpp>

namespace bam::python {

std::unique_ptr<any_array> make_gpu_array(element_type, bool, data_source&, array_shape,
                                          const std::string&) {
  throw input_error("device='cuda' needs bam built with CUDA: BAM_PYTHON_CUDA=1 pip install .");
}

std::shared_ptr<void> keep_current_device() { return nullptr; }

}  // namespace bam::python
