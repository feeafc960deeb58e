#pragma once
/// @file
/// The apps on the GPU executor, compiled once per neighbour source in units of their own
/// (gpu_apps_*.cu, the bam_gpu_apps library), so including this instantiates no kernel: the
/// command line and the tenant study call these drivers without compiling the apps' device
/// code again, and a parallel build compiles the four sources side by side.
///
/// Per source: run_bfs, run_cc and run_pagerank, and gpu_executor::warm_up for the source's
/// view type (every kernel the drivers launch with it, loaded before controllers start).

#include <cstdint>
#include <span>

#include "apps/bfs.hpp"
#include "apps/cc.hpp"
#include "apps/edges.hpp"
#include "apps/gpu_executor.cuh"
#include "apps/pagerank.hpp"
#include "apps/tiled_edges.hpp"

namespace bam::apps {

extern template void gpu_executor::warm_up<array_ref<const std::uint32_t>>();
extern template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                                   const array_edges<std::uint32_t>&, const bfs_options&);
extern template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                                 const array_edges<std::uint32_t>&, const cc_options&);
extern template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                             const array_edges<std::uint32_t>&,
                                             const pagerank_options&);

extern template void gpu_executor::warm_up<array_ref<const std::uint64_t>>();
extern template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                                   const array_edges<std::uint64_t>&, const bfs_options&);
extern template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                                 const array_edges<std::uint64_t>&, const cc_options&);
extern template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                             const array_edges<std::uint64_t>&,
                                             const pagerank_options&);

extern template void gpu_executor::warm_up<window_ref<std::uint32_t>>();
extern template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                                   const tiled_edges<std::uint32_t, gpu_executor>&,
                                   const bfs_options&);
extern template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                                 const tiled_edges<std::uint32_t, gpu_executor>&,
                                 const cc_options&);
extern template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                             const tiled_edges<std::uint32_t, gpu_executor>&,
                                             const pagerank_options&);

extern template void gpu_executor::warm_up<window_ref<std::uint64_t>>();
extern template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                                   const tiled_edges<std::uint64_t, gpu_executor>&,
                                   const bfs_options&);
extern template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                                 const tiled_edges<std::uint64_t, gpu_executor>&,
                                 const cc_options&);
extern template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                             const tiled_edges<std::uint64_t, gpu_executor>&,
                                             const pagerank_options&);

}  // namespace bam::apps
