// A build without CUDA: no GPU compaction agent (a cache in host memory takes compactor).
#include <bam/cache/mosaic/gpu_compaction_agent.hpp>

#include <bam/error.hpp>

namespace bam::cache::mosaic {

struct gpu_compaction_agent::impl {};

gpu_compaction_agent::gpu_compaction_agent(gpu_runtime&, const page_cache&,
                                           const compaction_agent_options&, std::uint64_t) {
  throw error("a GPU compaction agent needs a CUDA build of bam");
}
gpu_compaction_agent::~gpu_compaction_agent() = default;
void gpu_compaction_agent::start() {}
compaction_counts gpu_compaction_agent::stop() { return {}; }
bool gpu_compaction_agent::running() const { return false; }
compaction_counts gpu_compaction_agent::counts() const { return {}; }
compaction_counts gpu_compaction_agent::counts_now() const { return {}; }
stream_handle gpu_compaction_agent::stream() const { return nullptr; }

}  // namespace bam::cache::mosaic
