#pragma once
/// @file
/// Backoff for spin-waits: waiters must not starve the thread they wait for (on the GPU the
/// controller's SMs; on the CPU the controller thread on an oversubscribed core).

#include <cstdint>

#include <bam/platform/config.hpp>

#if !BAM_DEVICE_PASS
#include <thread>
#endif

namespace bam {

class backoff {
 public:
  /// max_ns 0: never sleep on the GPU (a spin: the caller's own poll is the only delay).
  BAM_HD explicit backoff(std::uint32_t min_ns = 64, std::uint32_t max_ns = 4096)
      : ns_(min_ns < max_ns ? min_ns : max_ns),
        min_ns_(min_ns < max_ns ? min_ns : max_ns),
        max_ns_(max_ns) {}

  /// Waits a little longer each call: nanosleep doubling up to max_ns on the GPU, a yield on
  /// the CPU (the core is shared by many more threads than it has).
  BAM_HD BAM_INLINE void pause() {
#if BAM_DEVICE_PASS
    if (max_ns_ == 0) return;
    __nanosleep(ns_);
    ns_ = ns_ * 2 > max_ns_ ? max_ns_ : ns_ * 2;
#else
    std::this_thread::yield();
#endif
  }

  BAM_HD void reset() { ns_ = min_ns_; }

 private:
  std::uint32_t ns_;
  std::uint32_t min_ns_;
  std::uint32_t max_ns_;
};

}  // namespace bam
