#pragma once
/// @file
/// Writing an app's per-vertex result as text: one value per line, in vertex order, so files
/// compare with diff and load with any tool. "-" writes to standard output.

#include <cstdint>
#include <span>
#include <string>

namespace bam::apps {

/// BFS depths: -1 for unreached vertices.
void write_depths(const std::string& path, std::span<const std::int32_t> depths);
/// CC labels: the smallest vertex id of each vertex's component.
void write_labels(const std::string& path, std::span<const std::uint64_t> labels);
/// PageRank ranks, with 17 significant digits (they read back as the same doubles).
void write_ranks(const std::string& path, std::span<const double> ranks);

}  // namespace bam::apps
