#pragma once
/// @file
/// A monotonic nanosecond clock and deadlines for bounded waits.

#include <cstdint>

#include <bam/platform/config.hpp>

#if !BAM_DEVICE_PASS
#include <chrono>
#endif

namespace bam {

/// Nanoseconds from an arbitrary origin. On the GPU, %globaltimer (shared by all SMs; it ticks
/// coarsely, about 1 us on some parts, so it bounds waits but does not time single commands);
/// on the host, steady_clock. The two origins differ: never compare across sides.
BAM_HD BAM_INLINE std::uint64_t now_ns() {
#if BAM_DEVICE_PASS
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
#endif
}

/// A point in time past which a wait gives up and reports what it waited on.
class deadline {
 public:
  /// Already past: a placeholder for a deadline set later (a wait on it gives up at once).
  BAM_HD constexpr deadline() : end_ns_(0) {}
  BAM_HD static deadline after_ns(std::uint64_t ns) { return deadline{now_ns() + ns}; }
  BAM_HD bool expired() const { return now_ns() >= end_ns_; }
  BAM_HD std::uint64_t end_ns() const { return end_ns_; }

 private:
  BAM_HD explicit deadline(std::uint64_t end) : end_ns_(end) {}
  std::uint64_t end_ns_;
};

}  // namespace bam
