#pragma once
/// @file
/// Host-side pieces the app drivers share: checking a graph's shape, uploading its offsets,
/// timing, and turning what a launch recorded into exceptions.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include <bam/error.hpp>

#include "apps/executor.hpp"

namespace bam::apps {

/// Vertices of a graph given its n + 1 offsets; throws bam::input_error unless the offsets
/// describe `edge_count` edges.
inline std::uint64_t checked_vertex_count(std::span<const std::uint64_t> offsets,
                                          std::uint64_t edge_count, const char* app) {
  if (offsets.size() < 2) {
    throw input_error(std::string(app) + ": the graph has no vertices");
  }
  if (offsets.front() != 0 || offsets.back() != edge_count) {
    throw input_error(std::string(app) + ": the offsets describe edges [" +
                      std::to_string(offsets.front()) + ", " + std::to_string(offsets.back()) +
                      ") but the neighbour array holds " + std::to_string(edge_count));
  }
  return offsets.size() - 1;
}

/// Copies the offsets into executor memory (the kernels' copy; as BaM and EMOGI keep them in
/// GPU memory).
template <class Exec>
auto upload_offsets(Exec& exec, std::span<const std::uint64_t> offsets) {
  auto buffer = exec.template allocate<std::uint64_t>(offsets.size());
  exec.upload(buffer, 0, offsets);
  return buffer;
}

/// `shape` with fewer blocks where the neighbour source serves at most `max_threads` threads
/// in one launch (0: no limit); the kernels' grid-stride loops take up the rest.
inline launch_shape within(launch_shape shape, std::uint64_t max_threads) {
  if (max_threads == 0 || shape.threads() <= max_threads) return shape;
  const std::uint64_t grid = max_threads / shape.block;
  shape.grid = grid > 0 ? static_cast<std::uint32_t>(grid) : 1u;
  return shape;
}

/// Throws bam::input_error when kernels read neighbour ids >= n (checked after the
/// neighbour array's own check, so an I/O error's poison value is reported as I/O error).
inline void check_bad_ids(std::uint64_t bad_ids, std::uint64_t n, const char* app) {
  if (bad_ids == 0) return;
  throw input_error(std::string(app) + ": " + std::to_string(bad_ids) +
                    " neighbour ids are not below the vertex count " + std::to_string(n) +
                    " (a corrupt graph file?)");
}

/// Seconds since a steady-clock time point.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace bam::apps
