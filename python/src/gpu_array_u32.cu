// Instantiates the module's GPU arrays of std::uint32_t (gpu_typed_array.cuh): one element type per
// unit, so its gather and scatter kernels compile beside the others'.

#include "gpu_typed_array.cuh"

namespace bam::python {

template std::unique_ptr<any_array> make_gpu_typed<std::uint32_t>(bool, data_source&, array_shape,
                                                                  const std::string&);

}  // namespace bam::python
