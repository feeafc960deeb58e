#include "any_array.hpp"

#include <bam/error.hpp>

namespace bam::python {

// Defined in typed_array.hpp and instantiated in the typed_array_*.cpp units, one unit per
// few types so a parallel build compiles them side by side.
template <class T>
std::unique_ptr<any_array> make_typed(bool writable, data_source& source, array_shape shape,
                                      const std::string& name);

// The GPU arrays (gpu_typed_array.cuh, instantiated in gpu_array_*.cu); in a build without
// CUDA, gpu_array_none.cpp throws.
std::unique_ptr<any_array> make_gpu_array(element_type type, bool writable, data_source& source,
                                          array_shape shape, const std::string& name);

void any_array::gather_device(const std::int64_t*, std::uint64_t, void*, stream_handle, bool,
                              row_failures&) {
  throw input_error("this bam array was opened with device='cpu': pass a CPU index");
}

void any_array::scatter_device(const std::int64_t*, std::uint64_t, const void*, stream_handle,
                               row_failures&) {
  throw input_error("this bam array was opened with device='cpu': pass CPU indices and values");
}

element_type parse_element_type(const std::string& name) {
  static constexpr struct {
    const char* name;
    element_type type;
  } names[] = {{"u8", element_type::u8},   {"u16", element_type::u16}, {"u32", element_type::u32},
               {"u64", element_type::u64}, {"i32", element_type::i32}, {"i64", element_type::i64},
               {"f32", element_type::f32}, {"f64", element_type::f64}};
  for (const auto& n : names) {
    if (name == n.name) return n.type;
  }
  throw input_error("element type '" + name + "' is not one of u8 u16 u32 u64 i32 i64 f32 f64");
}

std::uint32_t element_bytes(element_type t) {
  switch (t) {
    case element_type::u8:
      return 1;
    case element_type::u16:
      return 2;
    case element_type::u32:
    case element_type::i32:
    case element_type::f32:
      return 4;
    default:
      return 8;
  }
}

std::unique_ptr<any_array> make_array(element_type type, bool writable, data_source& source,
                                      array_shape shape, const std::string& name) {
  if (source.gpu()) return make_gpu_array(type, writable, source, shape, name);
  switch (type) {
    case element_type::u8:
      return make_typed<std::uint8_t>(writable, source, shape, name);
    case element_type::u16:
      return make_typed<std::uint16_t>(writable, source, shape, name);
    case element_type::u32:
      return make_typed<std::uint32_t>(writable, source, shape, name);
    case element_type::u64:
      return make_typed<std::uint64_t>(writable, source, shape, name);
    case element_type::i32:
      return make_typed<std::int32_t>(writable, source, shape, name);
    case element_type::i64:
      return make_typed<std::int64_t>(writable, source, shape, name);
    case element_type::f32:
      return make_typed<float>(writable, source, shape, name);
    case element_type::f64:
      return make_typed<double>(writable, source, shape, name);
  }
  throw input_error("unknown element type");
}

}  // namespace bam::python
