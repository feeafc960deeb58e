// The CPU instantiations of the app drivers (declared extern in cpu_apps.hpp).
#include "apps/cpu_apps.hpp"
#include "apps/kernel_types.hpp"  // checks every kernel type is trivially copyable

namespace bam::apps {

template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                            const array_edges<std::uint32_t>&, const bfs_options&);
template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                          const array_edges<std::uint32_t>&, const cc_options&);
template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                      const array_edges<std::uint32_t>&, const pagerank_options&);
template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                            const array_edges<std::uint64_t>&, const bfs_options&);
template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                          const array_edges<std::uint64_t>&, const cc_options&);
template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                      const array_edges<std::uint64_t>&, const pagerank_options&);
template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                            const tiled_edges<std::uint32_t, cpu_executor>&, const bfs_options&);
template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                          const tiled_edges<std::uint32_t, cpu_executor>&, const cc_options&);
template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                      const tiled_edges<std::uint32_t, cpu_executor>&,
                                      const pagerank_options&);
template bfs_result run_bfs(cpu_executor&, std::span<const std::uint64_t>,
                            const tiled_edges<std::uint64_t, cpu_executor>&, const bfs_options&);
template cc_result run_cc(cpu_executor&, std::span<const std::uint64_t>,
                          const tiled_edges<std::uint64_t, cpu_executor>&, const cc_options&);
template pagerank_result run_pagerank(cpu_executor&, std::span<const std::uint64_t>,
                                      const tiled_edges<std::uint64_t, cpu_executor>&,
                                      const pagerank_options&);

}  // namespace bam::apps
