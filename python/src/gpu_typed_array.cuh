#pragma once
/// @file
/// any_array for one element type on a GPU (device="cuda"): a bam::array<T> (or
/// array<const T>, read-only) over the source's GPU cache or memory, and the row kernels
/// (row_kernels.hpp) launched on the caller's CUDA stream. Included by the units that
/// instantiate it (gpu_array_*.cu), one element type per unit, so each compiles on its own.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>

#include "any_array.hpp"
#include "gpu_support.hpp"
#include "row_kernels.hpp"

namespace bam::python {

template <class E>
class gpu_typed_array final : public any_array {
 public:
  using value_type = std::remove_const_t<E>;
  static constexpr bool writable = !std::is_const_v<E>;

  gpu_typed_array(data_source& source, array_shape shape, const std::string& name)
      : source_(source),
        shape_(shape),
        array_(open_rows<E>(source, shape, name)),
        calls_(source.gpu_device(), name, [this](row_failures& f) { settle_failures(array_, f); }) {
  }

  // The cache and the source go after this: no kernel may still read them.
  ~gpu_typed_array() override {
    try {
      const device_guard on = calls_.use_device();
      calls_.wait_all(source_.runtime());
    } catch (const std::exception& e) {
      source_.runtime().log(std::string("closing '") + array_.name() + "': " + e.what());
    }
  }

  void gather_device(const std::int64_t* rows, std::uint64_t n, void* out, stream_handle stream,
                     bool wait, row_failures& failures) override {
    const device_guard on = calls_.use_device();
    if (source_.gathers_wait()) wait = true;
    if (calls_.settle(source_.runtime(), stream, wait, failures)) return;
    const std::uint64_t total = n * shape_.row_len;
    if (total == 0) return;
    const std::uint32_t grid = grid_for(total);
    const auto a = array_.ref_for_launch(grid, detail::block_threads);
    calls_.queue(rows, n, shape_.rows, stream, !wait, [&](const detail::call_marks& marks) {
      detail::with_gather_kernel(a, rows, static_cast<value_type*>(out), marks, n, shape_.row_len,
                                 source_.polls_host_queues(), [&](const auto& kernel) {
                                   using kernel_type = std::decay_t<decltype(kernel)>;
                                   if constexpr (std::is_same_v<kernel_type, word_gather>) {
                                     launch_word_gather(stream, grid, kernel);
                                   } else {
                                     launch(stream, grid, detail::block_threads, kernel);
                                   }
                                 });
    });
    if (wait) calls_.settle(source_.runtime(), stream, true, failures);
  }

  void scatter_device(const std::int64_t* rows, std::uint64_t n, const void* values,
                      stream_handle stream, row_failures& failures) override {
    if constexpr (writable) {
      const device_guard on = calls_.use_device();
      if (calls_.settle(source_.runtime(), stream, true, failures)) return;
      const std::uint64_t total = n * shape_.row_len;
      if (total == 0) return;
      const std::uint32_t grid = grid_for(total);
      const auto a = array_.ref_for_launch(grid, detail::block_threads);
      calls_.queue(rows, n, shape_.rows, stream, false, [&](const detail::call_marks& marks) {
        launch(stream, grid, detail::block_threads,
               detail::scatter_rows<E>{a, rows, static_cast<const value_type*>(values), marks,
                                       shape_.row_len, total});
      });
      calls_.settle(source_.runtime(), stream, true, failures);
    } else {
      (void)rows, (void)n, (void)values, (void)stream, (void)failures;
      throw input_error("array '" + array_.name() + "' was opened read-only (writable=False)");
    }
  }

  void synchronize(row_failures& failures) override {
    const device_guard on = calls_.use_device();
    calls_.settle(source_.runtime(), nullptr, true, failures);
  }

  // Host rows and buffers (a NumPy index on a GPU array): staged through GPU memory, on the
  // runtime's stream.
  void gather(const std::int64_t* rows, std::uint64_t n, void* out,
              row_failures& failures) override {
    const device_guard on = calls_.use_device();
    const std::uint64_t bytes = n * shape_.row_len * sizeof(value_type);
    if (bytes == 0) return;
    const stream_handle s = source_.runtime().stream();
    device_memory rows_d(n * sizeof(std::int64_t));
    device_memory out_d(bytes);
    copy_async(rows_d.data(), rows, n * sizeof(std::int64_t), s);
    gather_device(rows_d.as<std::int64_t>(), n, out_d.data(), s, true, failures);
    copy_async(out, out_d.data(), bytes, s);
    source_.runtime().synchronize(s, 0, "copying a gather back to host memory");
  }

  void scatter(const std::int64_t* rows, std::uint64_t n, const void* values,
               row_failures& failures) override {
    const device_guard on = calls_.use_device();
    const std::uint64_t bytes = n * shape_.row_len * sizeof(value_type);
    if (bytes == 0) return;
    const stream_handle s = source_.runtime().stream();
    device_memory rows_d(n * sizeof(std::int64_t));
    device_memory values_d(bytes);
    copy_async(rows_d.data(), rows, n * sizeof(std::int64_t), s);
    copy_async(values_d.data(), values, bytes, s);
    scatter_device(rows_d.as<std::int64_t>(), n, values_d.data(), s, failures);
  }

  void flush() override {
    if constexpr (writable) {
      const device_guard on = calls_.use_device();
      calls_.wait_all(source_.runtime());
      array_.flush();
      array_.check();
    }
  }

  // After the kernels in flight, so that their accesses count.
  [[nodiscard]] cache_stats stats() const override {
    const device_guard on = calls_.use_device();
    calls_.wait_all(source_.runtime());
    return array_.stats();
  }

 private:
  // Blocks of 256 threads, at most 8 per SM of an H100/H200 (132 SMs) and, over a cache, at
  // most half as many warps as the cache has lines: a writable array refuses a launch whose
  // warps could hold every line (array::ref_for_launch), and a read-only one reads through.
  [[nodiscard]] std::uint32_t grid_for(std::uint64_t elements) const {
    std::uint64_t grid = std::clamp<std::uint64_t>(
        (elements + detail::block_threads - 1) / detail::block_threads, 1, 132 * 8);
    if (source_.cached()) {
      const std::uint64_t warps_per_block = detail::block_threads / 32;
      const std::uint64_t fit = source_.cache().lines() / 2 / warps_per_block;
      grid = std::clamp<std::uint64_t>(fit, 1, grid);
    }
    return static_cast<std::uint32_t>(grid);
  }

  using word_gather = detail::gather_rows<const detail::row_word>;

  data_source& source_;
  array_shape shape_;
  array<E> array_;
  gpu_calls calls_;
};

/// The GPU array of T (writable or not) over `source`.
template <class T>
std::unique_ptr<any_array> make_gpu_typed(bool writable, data_source& source, array_shape shape,
                                          const std::string& name) {
  if (writable) return std::make_unique<gpu_typed_array<T>>(source, shape, name);
  return std::make_unique<gpu_typed_array<const T>>(source, shape, name);
}

}  // namespace bam::python
