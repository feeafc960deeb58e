// Instantiates the module's arrays of float and double (typed_array.hpp).

#include "typed_array.hpp"

namespace bam::python {

template std::unique_ptr<any_array> make_typed<float>(bool, data_source&, array_shape,
                                                      const std::string&);
template std::unique_ptr<any_array> make_typed<double>(bool, data_source&, array_shape,
                                                       const std::string&);

}  // namespace bam::python
