#pragma once
/// @file
/// Doorbell stores. A real SSD's doorbell is a register in its BAR mapped into the GPU: the
/// store must be an MMIO store that is neither merged nor cached. An emulated controller
/// watches an ordinary word with acquire loads, so the store is a release.

#include <cstdint>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>

namespace bam {

/// Rings a doorbell: every store this thread has made or acquired before is visible to the
/// controller before the controller sees `value`.
BAM_HD BAM_INLINE void ring_doorbell(std::uint32_t* doorbell, std::uint32_t value, bool mmio) {
  if (mmio) {
#if BAM_DEVICE_PASS
    // A system-scope fence makes the queue entries visible to the SSD's DMA reads first.
    device_fence<scope::system>();
    asm volatile("st.mmio.relaxed.sys.global.u32 [%0], %1;" ::"l"(doorbell), "r"(value) : "memory");
#else
    // Host MMIO: the mapping is uncached; a volatile store is not reordered by the compiler
    // and the release store beside it orders earlier writes.
    atomic_ref<std::uint32_t, scope::system>(*doorbell).store(value, order::release);
#endif
  } else {
    device_fence<scope::system>();  // device: entries visible system-wide (host controller)
    // release: the queue entries written or acquired before this store reach the controller's
    // acquire load of the doorbell.
    atomic_ref<std::uint32_t, scope::system>(*doorbell).store(value, order::release);
  }
}

}  // namespace bam
