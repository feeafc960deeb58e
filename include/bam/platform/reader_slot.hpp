#pragma once
/// @file
/// A small index that no two running threads share at once: where an epoch-based reader
/// announces itself (cache/mosaic/epochs.hpp) with a plain store instead of an atomic
/// read-modify-write on a shared word.
///
/// GPU: (SM, warp slot on the SM, lane), unique among resident threads; below
/// reader_slot_bound(). A warp moved by compute preemption could find its slot taken by
/// another warp; bam's readers keep the slot they entered with and leave through it, and
/// preemption of compute kernels does not happen on the machines bam targets (no debugger, no
/// MPS time-slicing), which is the assumption this index rests on.
/// CPU: a process-wide registry hands each thread the lowest free index at its first call and
/// takes it back when the thread ends, so indices stay below the number of live threads.

#include <cstdint>

#include <bam/platform/config.hpp>

#if !BAM_DEVICE_PASS
#include <mutex>
#include <vector>
#endif

namespace bam {

namespace detail {
#if !BAM_DEVICE_PASS
/// Hands out the lowest index no live thread holds.
class reader_slot_registry {
 public:
  std::uint32_t take() {
    std::lock_guard lock(mutex_);
    for (std::uint32_t i = 0; i < used_.size(); ++i) {
      if (!used_[i]) {
        used_[i] = true;
        return i;
      }
    }
    used_.push_back(true);
    return static_cast<std::uint32_t>(used_.size() - 1);
  }
  void give_back(std::uint32_t i) {
    std::lock_guard lock(mutex_);
    used_[i] = false;
  }
  static reader_slot_registry& instance() {
    static reader_slot_registry r;  // lives until exit; threads end before it
    return r;
  }

 private:
  std::mutex mutex_;
  std::vector<bool> used_;
};

/// The calling thread's index, returned to the registry when the thread ends.
struct reader_slot_holder {
  reader_slot_holder() : index(reader_slot_registry::instance().take()) {}
  ~reader_slot_holder() { reader_slot_registry::instance().give_back(index); }
  reader_slot_holder(const reader_slot_holder&) = delete;
  reader_slot_holder& operator=(const reader_slot_holder&) = delete;
  std::uint32_t index;
};
inline thread_local reader_slot_holder this_reader_slot;
#endif
}  // namespace detail

/// This thread's reader slot (see the file comment).
BAM_HD BAM_INLINE std::uint32_t reader_slot() {
#if BAM_DEVICE_PASS
  std::uint32_t sm, warp, warps, lane;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm("mov.u32 %0, %%nwarpid;" : "=r"(warps));
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return (sm * warps + warp) * 32u + lane;
#else
  return detail::this_reader_slot.index;
#endif
}

/// One more than the largest reader_slot() this device can return (GPU: from %nsmid and
/// %nwarpid, call it in a kernel); on the CPU a bound the caller picks, so 0.
BAM_HD BAM_INLINE std::uint32_t reader_slot_bound() {
#if BAM_DEVICE_PASS
  std::uint32_t sms, warps;
  asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
  asm("mov.u32 %0, %%nwarpid;" : "=r"(warps));
  return sms * warps * 32u;
#else
  return 0;
#endif
}

}  // namespace bam
