// Instantiates the module's arrays of std::int32_t and std::int64_t (typed_array.hpp).

#include "typed_array.hpp"

namespace bam::python {

template std::unique_ptr<any_array> make_typed<std::int32_t>(bool, data_source&, array_shape,
                                                             const std::string&);
template std::unique_ptr<any_array> make_typed<std::int64_t>(bool, data_source&, array_shape,
                                                             const std::string&);

}  // namespace bam::python
