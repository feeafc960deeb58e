// The GPU instantiations of the app drivers over 8-byte neighbour ids read through a bam::array
// (declared extern in gpu_apps.cuh).
#include "apps/gpu_apps.cuh"

namespace bam::apps {

template void gpu_executor::warm_up<array_ref<const std::uint64_t>>();
template bfs_result run_bfs(gpu_executor&, std::span<const std::uint64_t>,
                            const array_edges<std::uint64_t>&, const bfs_options&);
template cc_result run_cc(gpu_executor&, std::span<const std::uint64_t>,
                          const array_edges<std::uint64_t>&, const cc_options&);
template pagerank_result run_pagerank(gpu_executor&, std::span<const std::uint64_t>,
                                      const array_edges<std::uint64_t>&, const pagerank_options&);

}  // namespace bam::apps
