#pragma once
/// @file
/// The row gather and scatter kernels of the Python module, one source for the CPU stream
/// (typed_array.hpp) and the GPU (gpu_typed_array.cuh).

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <bam/array_ref.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>

namespace bam::python {

namespace detail {

// Marks row `k` as failed. Relaxed: the flags are read after the stream's synchronize(),
// which orders every kernel store before the host's loads.
BAM_HD inline void mark_failed(std::uint32_t* failed, std::uint64_t k) {
  atomic_ref<std::uint32_t>(failed[k]).store(1, order::relaxed);
}

// out[k] = a[rows[k / row_len] * row_len + k % row_len]: one logical thread per element, so
// the threads of a row read its lines side by side (a row may span lines).
template <class E>
struct gather_rows {
  using value_type = std::remove_const_t<E>;
  array_ref<E> a;
  const std::int64_t* rows;
  value_type* out;
  std::uint32_t* failed;
  std::uint64_t row_len;
  std::uint64_t total;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t k = t.id; k < total; k += t.count) {
      const std::uint64_t r = k / row_len;
      const std::uint64_t e = static_cast<std::uint64_t>(rows[r]) * row_len + (k - r * row_len);
      value_type v{};
      if (!a.try_read(e, v).ok()) {
        v = array_ref<E>::poison();
        mark_failed(failed, r);
      }
      out[k] = v;
    }
  }
};

template <class T>
struct scatter_rows {
  array_ref<T> a;
  const std::int64_t* rows;
  const T* values;
  std::uint32_t* failed;
  std::uint64_t row_len;
  std::uint64_t total;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t k = t.id; k < total; k += t.count) {
      const std::uint64_t r = k / row_len;
      const std::uint64_t e = static_cast<std::uint64_t>(rows[r]) * row_len + (k - r * row_len);
      if (!a.try_store(e, values[k]).ok()) mark_failed(failed, r);
    }
  }
};

// A launch of at most 1,024 x 256 logical threads (as bam gather): the pool splits them
// over its workers, each walking its share.
constexpr std::uint32_t block_threads = 256;
inline std::uint32_t grid_for(std::uint64_t elements) {
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((elements + block_threads - 1) / block_threads, 1, 1024));
}

}  // namespace detail

}  // namespace bam::python
