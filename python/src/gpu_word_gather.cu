// The gather by 16-byte words, shared by the GPU arrays of every element type.
#include "gpu_support.hpp"
#include "row_kernels.hpp"

#include <bam/platform/launch.cuh>

namespace bam::python {

void launch_word_gather(stream_handle stream, std::uint32_t grid,
                        const detail::gather_rows<const detail::row_word>& kernel) {
  launch(stream, grid, detail::block_threads, kernel);
}

}  // namespace bam::python
