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
#include <bam/platform/warp.hpp>

namespace bam::python {

namespace detail {

/// What a range check leaves for the kernels after it (gpu_scratch::start_check): the first
/// position out of range, or this when every row is in range.
inline constexpr std::uint64_t rows_in_range = ~std::uint64_t{0};

// Whether the kernel may run: no verdict (the CPU checks before it launches), or a verdict
// that every row is in range. A kernel that may not returns before any I/O, so a bad index
// costs no wait between the check and the kernel.
BAM_HD inline bool may_run(const std::uint64_t* verdict) {
  return verdict == nullptr || *verdict == rows_in_range;
}

// Marks row `k` as failed. Relaxed: the flags are read after the stream's synchronize(),
// which orders every kernel store before the host's loads.
BAM_HD inline void mark_failed(std::uint32_t* failed, std::uint64_t k) {
  atomic_ref<std::uint32_t>(failed[k]).store(1, order::relaxed);
}

// out[k] = a[rows[k / row_len] * row_len + k % row_len]. A warp takes tiles of `tile`
// consecutive output elements (a multiple of 32), lane l the elements l, l + 32, ... of a tile,
// so the lanes read a row's lines side by side (a row may span lines) and a lane's reads of one
// row stay in one line: a cursor per lane keeps that line pinned between them, one probe per
// line instead of one per element. The warp drops its cursors together at the end of each
// tile (one unpin per line, one statistics add), after lanes whose last tile is short left the
// inner loop. Tiles of 32 spread a row over several warps, which then wait for one load
// together (gather_tile says when that is better).
template <class E>
struct gather_rows {
  using value_type = std::remove_const_t<E>;
  static constexpr std::uint64_t lanes = 32;
  array_ref<E> a;
  const std::int64_t* rows;
  value_type* out;
  std::uint32_t* failed;
  std::uint64_t row_len;
  std::uint64_t total;
  std::uint64_t tile;
  const std::uint64_t* verdict;  // of the range check before it; nullptr: checked on the host
  BAM_HD void operator()(thread_index t) const {
    if (!may_run(verdict)) return;
    // The lanes of this warp (all of it on a GPU; one on a CPU thread): they take the same
    // tiles, so each meets the others at the end of every tile.
    const std::uint32_t warp_lanes = warp::active_mask();
    const std::uint64_t lane = t.id % lanes;
    const std::uint64_t stride = (t.count + lanes - 1) / lanes * tile;
    for (std::uint64_t first = t.id / lanes * tile; first < total; first += stride) {
      typename array_ref<E>::cursor c(a);
      const std::uint64_t end = first + tile < total ? first + tile : total;
      for (std::uint64_t k = first + lane; k < end; k += lanes) {
        const std::uint64_t r = k / row_len;
        const std::uint64_t e = static_cast<std::uint64_t>(rows[r]) * row_len + (k - r * row_len);
        value_type v{};
        // A read of the line the lane holds needs no vote of the warp; only a lane that moves
        // to another line probes (with the lanes that move with it).
        if (!c.read_if_pinned(e, v) && !c.try_read(e, v).ok()) {
          v = array_ref<E>::poison();
          mark_failed(failed, r);
        }
        out[k] = v;
      }
      c.drop_among(warp_lanes);
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
  const std::uint64_t* verdict;  // as gather_rows'
  BAM_HD void operator()(thread_index t) const {
    if (!may_run(verdict)) return;
    for (std::uint64_t k = t.id; k < total; k += t.count) {
      const std::uint64_t r = k / row_len;
      const std::uint64_t e = static_cast<std::uint64_t>(rows[r]) * row_len + (k - r * row_len);
      if (!a.try_store(e, values[k]).ok()) mark_failed(failed, r);
    }
  }
};

// Elements a warp of the gather takes at a time: whole rows of 1 KiB floats (256) with their
// lines read through cursors, except where the misses wait on queues in pinned host memory (a
// GPU over emulated-ssd or file): there every waiting warp polls its completion over PCIe, and
// one warp per row made GNN batches 1.6x slower warm and 5x cold on an H100 (the likely cause:
// 8x the polls of warps that share a row's load), so a warp takes 32 elements there.
inline std::uint64_t gather_tile(bool polls_host_queues) { return polls_host_queues ? 32 : 256; }

/// 16 bytes read and written as one vector load and store: the unit a gather copies rows by
/// where it can (gather_by_words).
struct alignas(16) row_word {
  std::uint32_t bits[4];
};

// Whether a gather moves rows as 16-byte words: rows of whole words, a row no smaller than a
// word, the array and `out` aligned for them, and misses that do not poll queues in host memory
// (there gather_tile keeps a row spread over warps, measured for 4-byte elements only). A lane
// then reads 16 bytes per access instead of one element: a quarter of the accesses for
// float32 rows.
template <class E>
bool gather_by_words(const array_ref<E>& a, std::uint64_t row_len, const void* out,
                     bool polls_host_queues) {
  const std::uint64_t row_bytes = row_len * sizeof(E);
  return !polls_host_queues && sizeof(E) < sizeof(row_word) && row_bytes % sizeof(row_word) == 0 &&
         a.template can_view_as<const row_word>() &&
         reinterpret_cast<std::uintptr_t>(out) % alignof(row_word) == 0;
}

// A launch of at most 1,024 x 256 logical threads (as bam gather): the pool splits them
// over its workers, each walking its share.
constexpr std::uint32_t block_threads = 256;
inline std::uint32_t grid_for(std::uint64_t elements) {
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((elements + block_threads - 1) / block_threads, 1, 1024));
}

// Hands `run` the gather kernel of n rows of row_len elements (run launches it, on the CPU
// pool's stream or a CUDA stream): by words where gather_by_words says so, else by elements.
template <class E, class Run>
void with_gather_kernel(const array_ref<E>& a, const std::int64_t* rows,
                        std::remove_const_t<E>* out, std::uint32_t* failed, std::uint64_t n,
                        std::uint64_t row_len, bool polls_host_queues, const std::uint64_t* verdict,
                        Run&& run) {
  if (gather_by_words(a, row_len, out, polls_host_queues)) {
    const std::uint64_t words = row_len * sizeof(E) / sizeof(row_word);
    constexpr std::uint64_t tile = 1024 / sizeof(row_word);  // 1 KiB, as 256 floats
    run(gather_rows<const row_word>{a.template view_as<const row_word>(), rows,
                                    reinterpret_cast<row_word*>(out), failed, words, n * words,
                                    tile, verdict});
    return;
  }
  run(gather_rows<E>{a, rows, out, failed, row_len, n * row_len, gather_tile(polls_host_queues),
                     verdict});
}

}  // namespace detail

}  // namespace bam::python
