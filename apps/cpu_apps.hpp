#pragma once
/// @file
/// The apps on the CPU executor, compiled once in bam_apps (cpu_apps.cpp) for every
/// neighbour id width (4 and 8 bytes) and source (a bam::array, or tiled partitions), so
/// including this instantiates nothing.

#include <cstdint>
#include <span>

#include "apps/bfs.hpp"
#include "apps/cc.hpp"
#include "apps/cpu_executor.hpp"
#include "apps/edges.hpp"
#include "apps/pagerank.hpp"
#include "apps/tiled_edges.hpp"

namespace bam::apps {

extern template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                                   const array_edges<std::uint32_t>&, const bfs_options&);
extern template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                                 const array_edges<std::uint32_t>&, const cc_options&);
extern template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                             const array_edges<std::uint32_t>&,
                                             const pagerank_options&);
extern template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                                   const array_edges<std::uint64_t>&, const bfs_options&);
extern template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                                 const array_edges<std::uint64_t>&, const cc_options&);
extern template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                             const array_edges<std::uint64_t>&,
                                             const pagerank_options&);
extern template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                                   const tiled_edges<std::uint32_t, cpu_executor>&,
                                   const bfs_options&);
extern template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                                 const tiled_edges<std::uint32_t, cpu_executor>&,
                                 const cc_options&);
extern template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                             const tiled_edges<std::uint32_t, cpu_executor>&,
                                             const pagerank_options&);
extern template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                                   const tiled_edges<std::uint64_t, cpu_executor>&,
                                   const bfs_options&);
extern template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                                 const tiled_edges<std::uint64_t, cpu_executor>&,
                                 const cc_options&);
extern template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                             const tiled_edges<std::uint64_t, cpu_executor>&,
                                             const pagerank_options&);

}  // namespace bam::apps
