// The GPU arrays by element type (device="cuda"); gpu_array_none.cpp stands in for it in a
// build without CUDA.

#include "any_array.hpp"

#include <bam/error.hpp>

namespace bam::python {

// Defined in gpu_typed_array.cuh and instantiated in the gpu_array_*.cu units.
template <class T>
std::unique_ptr<any_array> make_gpu_typed(bool writable, data_source& source, array_shape shape,
                                          const std::string& name);

std::unique_ptr<any_array> make_gpu_array(element_type type, bool writable, data_source& source,
                                          array_shape shape, const std::string& name) {
  switch (type) {
    case element_type::u8:
      return make_gpu_typed<std::uint8_t>(writable, source, shape, name);
    case element_type::u16:
      return make_gpu_typed<std::uint16_t>(writable, source, shape, name);
    case element_type::u32:
      return make_gpu_typed<std::uint32_t>(writable, source, shape, name);
    case element_type::u64:
      return make_gpu_typed<std::uint64_t>(writable, source, shape, name);
    case element_type::i32:
      return make_gpu_typed<std::int32_t>(writable, source, shape, name);
    case element_type::i64:
      return make_gpu_typed<std::int64_t>(writable, source, shape, name);
    case element_type::f32:
      return make_gpu_typed<float>(writable, source, shape, name);
    case element_type::f64:
      return make_gpu_typed<double>(writable, source, shape, name);
  }
  throw input_error("unknown element type");
}

}  // namespace bam::python
