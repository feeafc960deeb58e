#pragma once
/// @file
/// Warp primitives with a CPU fallback.
///
/// On the GPU these are the hardware warp intrinsics. On the CPU a thread is a warp of one
/// lane, unless a test has attached it to a software warp (tests/support/software_warp.hpp):
/// several std::threads whose collectives meet at a barrier, so ThreadSanitizer sees the
/// leader/follower logic of warp-cooperative code.
///
/// Rule for callers: no lane enters a collective while it holds or waits for a lock.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::warp {

inline constexpr unsigned max_width = 32;

namespace detail {

/// What a software warp provides to the lanes attached to it. Host only; the GPU never pays
/// for this indirection.
class lane_hooks {
 public:
  virtual unsigned lane() const = 0;
  virtual unsigned width() const = 0;
  virtual std::uint32_t active_mask() = 0;
  virtual std::uint32_t match_any(std::uint32_t mask, std::uint64_t key) = 0;
  virtual std::uint64_t shfl(std::uint32_t mask, std::uint64_t value, unsigned src_lane) = 0;
  virtual std::uint32_t ballot(std::uint32_t mask, bool predicate) = 0;

 protected:
  ~lane_hooks() = default;
};

#if !BAM_DEVICE_PASS
inline thread_local lane_hooks* current_lane = nullptr;
#endif

}  // namespace detail

/// This thread's lane within its warp.
BAM_HD BAM_INLINE unsigned lane() {
#if BAM_DEVICE_PASS
  unsigned l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
#else
  return detail::current_lane ? detail::current_lane->lane() : 0u;
#endif
}

/// Lanes in a warp: 32 on the GPU, 1 on a plain CPU thread.
BAM_HD BAM_INLINE unsigned width() {
#if BAM_DEVICE_PASS
  return 32u;
#else
  return detail::current_lane ? detail::current_lane->width() : 1u;
#endif
}

/// Lanes executing this call together.
BAM_HD BAM_INLINE std::uint32_t active_mask() {
#if BAM_DEVICE_PASS
  return __activemask();
#else
  return detail::current_lane ? detail::current_lane->active_mask() : 1u;
#endif
}

/// Lanes that are executing this call together right now, without waiting for others: on the
/// GPU the converged lanes; on a CPU thread (plain or in a software warp) the calling lane
/// alone, which is always a valid answer since no lane is promised company.
BAM_HD BAM_INLINE std::uint32_t coalesced_mask() {
#if BAM_DEVICE_PASS
  return __activemask();
#else
  return detail::current_lane ? 1u << detail::current_lane->lane() : 1u;
#endif
}

/// Lanes of `mask` whose key equals this lane's key.
BAM_HD BAM_INLINE std::uint32_t match_any(std::uint32_t mask, std::uint64_t key) {
#if BAM_DEVICE_PASS
  return __match_any_sync(mask, static_cast<unsigned long long>(key));
#else
  return detail::current_lane ? detail::current_lane->match_any(mask, key) : 1u;
#endif
}

/// `value` as held by `src_lane`.
BAM_HD BAM_INLINE std::uint64_t shfl(std::uint32_t mask, std::uint64_t value, unsigned src_lane) {
#if BAM_DEVICE_PASS
  return __shfl_sync(mask, static_cast<unsigned long long>(value), static_cast<int>(src_lane));
#else
  return detail::current_lane ? detail::current_lane->shfl(mask, value, src_lane) : value;
#endif
}

/// Lanes of `mask` whose predicate is true.
BAM_HD BAM_INLINE std::uint32_t ballot(std::uint32_t mask, bool predicate) {
#if BAM_DEVICE_PASS
  return __ballot_sync(mask, predicate);
#else
  return detail::current_lane ? detail::current_lane->ballot(mask, predicate)
                              : (predicate ? 1u : 0u);
#endif
}

/// Index of the lowest set bit (mask != 0).
BAM_HD BAM_INLINE unsigned lowest_lane(std::uint32_t mask) {
#if BAM_DEVICE_PASS
  return static_cast<unsigned>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<unsigned>(__builtin_ctz(mask));
#endif
}

/// Index of the highest set bit (mask != 0).
BAM_HD BAM_INLINE unsigned highest_lane(std::uint32_t mask) {
#if BAM_DEVICE_PASS
  return 31u - static_cast<unsigned>(__clz(static_cast<int>(mask)));
#else
  return 31u - static_cast<unsigned>(__builtin_clz(mask));
#endif
}

/// Number of set bits.
BAM_HD BAM_INLINE unsigned popcount(std::uint32_t mask) {
#if BAM_DEVICE_PASS
  return static_cast<unsigned>(__popc(mask));
#else
  return static_cast<unsigned>(__builtin_popcount(mask));
#endif
}

/// The sum of `value` over the lanes of `mask` (each calls it), for every one of them. The sum
/// must fit in 32 bits.
BAM_HD BAM_INLINE std::uint32_t sum(std::uint32_t mask, std::uint32_t value) {
#if BAM_DEVICE_PASS && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(mask, value);
#else
  // Every lane of `mask` takes each lane's value in turn, in the same order (a plain CPU
  // thread, a warp of one, takes its own).
  std::uint32_t total = 0;
  for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
    total += static_cast<std::uint32_t>(shfl(mask, value, lowest_lane(rest)));
  }
  return total;
#endif
}

}  // namespace bam::warp
