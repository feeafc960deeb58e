// The GPU instantiations of the app drivers over 8-byte neighbour ids in tiles (proactive tiling)
// (declared extern in gpu_apps.cuh).
#include "apps/gpu_apps.cuh"

namespace bam::apps {

template void gpu_executor::warm_up<window_ref<std::uint64_t>>();
template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                            const tiled_edges<std::uint64_t, gpu_executor>&, const bfs_options&);
template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                          const tiled_edges<std::uint64_t, gpu_executor>&, const cc_options&);
template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                      const tiled_edges<std::uint64_t, gpu_executor>&,
                                      const pagerank_options&);

}  // namespace bam::apps
