#pragma once
/// @file
/// Who is running: an index used to spread work (queue choice, statistics shards) so that
/// concurrent agents rarely touch the same words. Not an identity: two agents may share one.

#include <cstdint>

#include <bam/platform/config.hpp>

#if !BAM_DEVICE_PASS
#include <functional>
#include <thread>
#endif

namespace bam {

namespace detail {
#if !BAM_DEVICE_PASS
/// Set by the CPU launch pool for its workers; other threads hash their id.
inline thread_local std::uint32_t host_agent = ~0u;
#endif
}  // namespace detail

/// A spreading index: the SM on the GPU, the pool worker (or a hash of the thread id) on the CPU.
BAM_HD BAM_INLINE std::uint32_t agent_index() {
#if BAM_DEVICE_PASS
  std::uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
#else
  if (detail::host_agent == ~0u) {
    detail::host_agent =
        static_cast<std::uint32_t>(std::hash<std::thread::id>{}(std::this_thread::get_id()) >> 4);
  }
  return detail::host_agent;
#endif
}

}  // namespace bam
