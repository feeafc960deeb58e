#pragma once
/// @file
/// Checks of a mapped .bcsr file beyond its header, shared by the tools that walk its lists.

#include <bam/graph/bcsr.hpp>

#include "graph/mapped_file.hpp"

namespace bam::graph {

/// Checks that the n+1 offsets of `file`, whose header `h` passed read_header (so offsets[0]
/// is 0 and offsets[n] is m), never decrease: every offset then lies in [0, m] and every
/// adjacency list inside the neighbours section. One sequential pass over the offsets. Throws
/// bam::input_error naming the file, the byte and the values of the first offset that drops.
void check_offsets(const mapped_file& file, const bcsr_header& h);

}  // namespace bam::graph
