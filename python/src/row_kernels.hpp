#pragma once
/// @file
/// The row gather and scatter kernels of the Python module, one source for the CPU stream
/// (typed_array.hpp) and the GPU (gpu_typed_array.cuh).

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <bam/array_ref.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>

namespace bam::python {

namespace detail {

/// What a range check leaves for the kernels after it (gpu_call::start): the first position
/// out of range, or this when every row is in range.
inline constexpr std::uint64_t rows_in_range = ~std::uint64_t{0};

/// What one call's kernel leaves in pinned memory for the host, which reads it once the kernel
/// ended: the range check's verdict and the row there, and whether a row's I/O failed.
struct call_report {
  std::uint64_t first_bad = rows_in_range;
  std::int64_t bad_row = 0;
  std::uint32_t any_failed = 0;
  std::uint32_t unused = 0;
};

// Where the kernel of one call looks before any I/O, and marks the rows that failed by their
// ids, so the host names them without reading the index again (a call that returned before
// its kernel ended may find the index freed).
struct call_marks {
  const std::uint64_t* verdict;  // of the range check before it; nullptr: checked on the host
  call_report* report;           // pinned (GPU) or host memory
  std::uint64_t* failed;         // failed[k] = rows[k] + 1 when row k's I/O failed, else 0

  // Whether the kernel may run: no verdict, or one that every row is in range. A kernel that
  // may not returns before any I/O, so a bad index costs no wait between the check and the
  // kernel. Thread 0 copies the verdict for the host.
  BAM_HD bool may_run(thread_index t, const std::int64_t* rows) const {
    if (verdict == nullptr) return true;
    const std::uint64_t first_bad = *verdict;
    if (t.id == 0) {
      report->first_bad = first_bad;
      if (first_bad != rows_in_range) report->bad_row = rows[first_bad];
    }
    return first_bad == rows_in_range;
  }

  // Relaxed: the host reads the marks once the stream passed the kernel (an event or a
  // synchronize), which orders every store of the kernel before its loads.
  BAM_HD void mark_failed(std::uint64_t k, std::int64_t row) const {
    atomic_ref<std::uint64_t>(failed[k]).store(static_cast<std::uint64_t>(row) + 1, order::relaxed);
    atomic_ref<std::uint32_t>(report->any_failed).store(1, order::relaxed);
  }
};

// The rows that call_marks::mark_failed marked among n, sorted and each once, into `rows`;
// clears the marks.
inline void take_failed_rows(std::uint64_t* failed, std::uint64_t n,
                             std::vector<std::int64_t>& rows) {
  for (std::uint64_t k = 0; k < n; ++k) {
    if (failed[k] == 0) continue;
    rows.push_back(static_cast<std::int64_t>(failed[k] - 1));
    failed[k] = 0;
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
}

// out[k] = a[rows[k / row_len] * row_len + k % row_len]. A warp takes tiles of `tile`
// consecutive output elements (a multiple of 32), lane l the elements l, l + w, ... of a tile
// (w the warp's width), so the lanes read a row's lines side by side (a row may span lines) and
// a lane's reads of one row stay in one line: a cursor per lane keeps that line pinned between
// them, one probe per line instead of one per element. The warp drops its cursors together at
// the end of each tile (one unpin per line, one statistics add), after lanes whose last tile is
// short left the inner loop. Tiles of 32 spread a row over several warps, which then wait for
// one load together (gather_tile says when that is better). On a CPU thread (a warp of one
// lane) a logical thread reads its tile's elements in order through one cursor: with 32 lanes
// there, 32 logical threads probed each line of a row, one after another on one worker (a
// warm gather of float32 rows 5x slower than from host memory, CPU VM).
template <class E>
struct gather_rows {
  using value_type = std::remove_const_t<E>;
  array_ref<E> a;
  const std::int64_t* rows;
  value_type* out;
  call_marks marks;
  std::uint64_t row_len;
  std::uint64_t total;
  std::uint64_t tile;
  BAM_HD void operator()(thread_index t) const {
    if (!marks.may_run(t, rows)) return;
    // The lanes of this warp (all of it on a GPU; one on a CPU thread): they take the same
    // tiles, so each meets the others at the end of every tile.
    const std::uint32_t warp_lanes = warp::active_mask();
    const std::uint64_t lanes = warp::width();
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
          marks.mark_failed(r, rows[r]);
        }
        out[k] = v;
      }
      c.drop_among(warp_lanes);
    }
  }
};

// a[rows[k / row_len] * row_len + k % row_len] = values[k]: on the GPU a logical thread per
// element; on a CPU thread (a warp of one lane) a logical thread stores runs of consecutive
// elements through one cursor, one probe per line of a row, where a probe per element made a
// scatter of float32 rows 6x slower than numpy.memmap's (CPU VM). warp::width() is the
// constant 32 in the device pass, so the GPU's code has no trace of the CPU's path.
template <class T>
struct scatter_rows {
  static constexpr std::uint64_t cpu_tile = 256;
  array_ref<T> a;
  const std::int64_t* rows;
  const T* values;
  call_marks marks;
  std::uint64_t row_len;
  std::uint64_t total;
  BAM_HD void operator()(thread_index t) const {
    if (!marks.may_run(t, rows)) return;
    if (warp::width() == 1) {
      for (std::uint64_t first = t.id * cpu_tile; first < total; first += t.count * cpu_tile) {
        typename array_ref<T>::cursor c(a);
        const std::uint64_t end = first + cpu_tile < total ? first + cpu_tile : total;
        for (std::uint64_t k = first; k < end; ++k) store(c, k);
      }
      return;
    }
    for (std::uint64_t k = t.id; k < total; k += t.count) store(a, k);
  }

 private:
  // Through the array or a cursor of it: both have try_store.
  template <class Writer>
  BAM_HD void store(Writer& w, std::uint64_t k) const {
    const std::uint64_t r = k / row_len;
    const std::uint64_t e = static_cast<std::uint64_t>(rows[r]) * row_len + (k - r * row_len);
    if (!w.try_store(e, values[k]).ok()) marks.mark_failed(r, rows[r]);
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
                        std::remove_const_t<E>* out, const call_marks& marks, std::uint64_t n,
                        std::uint64_t row_len, bool polls_host_queues, Run&& run) {
  if (gather_by_words(a, row_len, out, polls_host_queues)) {
    const std::uint64_t words = row_len * sizeof(E) / sizeof(row_word);
    constexpr std::uint64_t tile = 1024 / sizeof(row_word);  // 1 KiB, as 256 floats
    run(gather_rows<const row_word>{a.template view_as<const row_word>(), rows,
                                    reinterpret_cast<row_word*>(out), marks, words, n * words,
                                    tile});
    return;
  }
  run(gather_rows<E>{a, rows, out, marks, row_len, n * row_len, gather_tile(polls_host_queues)});
}

}  // namespace detail

}  // namespace bam::python
