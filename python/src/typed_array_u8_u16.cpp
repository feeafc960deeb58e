// Instantiates the module's arrays of std::uint8_t and std::uint16_t (typed_array.hpp).

#include "typed_array.hpp"

namespace bam::python {

template std::unique_ptr<any_array> make_typed<std::uint8_t>(bool, data_source&, array_shape,
                                                             const std::string&);
template std::unique_ptr<any_array> make_typed<std::uint16_t>(bool, data_source&, array_shape,
                                                              const std::string&);

}  // namespace bam::python
