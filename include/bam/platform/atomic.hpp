#pragma once
/// @file
/// Atomics with explicit scope and order, one spelling for host and device code.
///
/// Backed by cuda::atomic_ref where libcu++ (CCCL) is found, std::atomic_ref otherwise; the
/// choice is made by the build for every translation unit alike, so a type never has two
/// definitions. Words are plain storage (cuco's pattern): any suitably aligned T can be
/// operated on atomically through a ref.

#include <cstdint>
#include <type_traits>

#include <bam/platform/config.hpp>

#if defined(BAM_HAVE_CCCL)
#include <cuda/atomic>
#else
#include <atomic>
#endif

namespace bam {

/// Who must observe an atomic operation. block: threads of one CUDA block (one CPU thread
/// pool worker's software warp); device: every thread of the GPU; system: the GPU, host CPU
/// threads and devices doing DMA (needed for anything a real SSD or a CPU thread reads).
enum class scope { block, device, system };

/// Memory orders; every use in bam carries a comment saying what it publishes or waits for.
enum class order { relaxed, acquire, release, acq_rel, seq_cst };

namespace detail {

#if defined(BAM_HAVE_CCCL)
BAM_HD constexpr cuda::std::memory_order to_native(order o) {
  switch (o) {
    case order::relaxed:
      return cuda::std::memory_order_relaxed;
    case order::acquire:
      return cuda::std::memory_order_acquire;
    case order::release:
      return cuda::std::memory_order_release;
    case order::acq_rel:
      return cuda::std::memory_order_acq_rel;
    default:
      return cuda::std::memory_order_seq_cst;
  }
}
template <scope S>
inline constexpr cuda::thread_scope native_scope = S == scope::block    ? cuda::thread_scope_block
                                                   : S == scope::device ? cuda::thread_scope_device
                                                                        : cuda::thread_scope_system;
template <class T, scope S>
using native_ref = cuda::atomic_ref<T, native_scope<S>>;
#else
constexpr std::memory_order to_native(order o) {
  switch (o) {
    case order::relaxed:
      return std::memory_order_relaxed;
    case order::acquire:
      return std::memory_order_acquire;
    case order::release:
      return std::memory_order_release;
    case order::acq_rel:
      return std::memory_order_acq_rel;
    default:
      return std::memory_order_seq_cst;
  }
}
template <class T, scope>
using native_ref = std::atomic_ref<T>;
#endif

/// The failure order of a compare-exchange may not be release or acq_rel.
BAM_HD constexpr order failure_order(order success) {
  return success == order::acq_rel || success == order::acquire ? order::acquire
         : success == order::seq_cst                            ? order::seq_cst
                                                                : order::relaxed;
}

}  // namespace detail

/// An atomic view of a plain object. Cheap to construct; construct one per use.
template <class T, scope S = scope::device>
class atomic_ref {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(sizeof(T) <= 8, "no atomic wider than 64 bits");

 public:
  BAM_HD explicit atomic_ref(T& object) : ref_(object) {}

  BAM_HD T load(order o) const { return ref_.load(detail::to_native(o)); }
  BAM_HD void store(T v, order o) const { ref_.store(v, detail::to_native(o)); }
  BAM_HD T exchange(T v, order o) const { return ref_.exchange(v, detail::to_native(o)); }
  BAM_HD T fetch_add(T v, order o) const { return ref_.fetch_add(v, detail::to_native(o)); }
  BAM_HD T fetch_sub(T v, order o) const { return ref_.fetch_sub(v, detail::to_native(o)); }
  BAM_HD T fetch_or(T v, order o) const { return ref_.fetch_or(v, detail::to_native(o)); }
  BAM_HD T fetch_and(T v, order o) const { return ref_.fetch_and(v, detail::to_native(o)); }

  /// Strong compare-exchange; on failure `expected` receives the current value.
  BAM_HD bool compare_exchange(T& expected, T desired, order o) const {
    return ref_.compare_exchange_strong(expected, desired, detail::to_native(o),
                                        detail::to_native(detail::failure_order(o)));
  }

 private:
  detail::native_ref<T, S> ref_;
};

/// A standalone fence, device code only. On the host it does nothing: host code publishes with
/// a release store and observes with an acquire load on the flag word itself (ThreadSanitizer
/// does not model standalone fences, and every host edge in bam is written that way).
template <scope S>
BAM_HD BAM_INLINE void device_fence() {
#if BAM_DEVICE_PASS
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, detail::native_scope<S>);
#endif
}

}  // namespace bam
