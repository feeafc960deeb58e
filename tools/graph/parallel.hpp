#pragma once
/// @file
/// Work split over std::threads in chunks, for the graph tools' passes over edges and vertices.

#include <cstdint>
#include <functional>

namespace bam::graph {

/// The number of hardware threads (at least 1).
[[nodiscard]] unsigned hardware_threads();

/// Runs body(chunk) for every chunk in [0, chunk_count) on `threads` threads, the caller being
/// one of them; chunks are handed out one at a time in increasing order, so uneven chunks
/// balance. After a body throws no new chunk starts; the first exception is rethrown once
/// every thread has stopped.
void parallel_chunks(unsigned threads, std::uint64_t chunk_count,
                     const std::function<void(std::uint64_t chunk)>& body);

}  // namespace bam::graph
