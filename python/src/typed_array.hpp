#pragma once
/// @file
/// any_array for one element type: a bam::array<T> (or array<const T>, read-only) and the
/// row gather and scatter kernels (row_kernels.hpp), launched on the source's CPU stream. Included
/// by the units that instantiate it (typed_array_*.cpp), so each type compiles in its own unit.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.hpp>

#include "any_array.hpp"
#include "row_kernels.hpp"

namespace bam::python {

template <class E>
class typed_array final : public any_array {
 public:
  using value_type = std::remove_const_t<E>;
  static constexpr bool writable = !std::is_const_v<E>;

  typed_array(data_source& source, array_shape shape, const std::string& name)
      : source_(source), shape_(shape), array_(open_rows<E>(source, shape, name)) {}

  void gather(const std::int64_t* rows, std::uint64_t n, void* out,
              row_failures& failures) override {
    const std::uint64_t total = n * shape_.row_len;
    if (total == 0) return;
    std::vector<std::uint64_t> failed(n, 0);
    detail::call_report report;
    const std::uint32_t grid = detail::grid_for(total);
    detail::with_gather_kernel(
        array_.ref_for_launch(grid, detail::block_threads), rows, static_cast<value_type*>(out),
        {nullptr, &report, failed.data()}, n, shape_.row_len, false,
        [&](const auto& kernel) { launch(source_.stream(), grid, detail::block_threads, kernel); });
    source_.stream().synchronize();
    collect(failed, failures);
  }

  void scatter(const std::int64_t* rows, std::uint64_t n, const void* values,
               row_failures& failures) override {
    if constexpr (writable) {
      const std::uint64_t total = n * shape_.row_len;
      if (total == 0) return;
      std::vector<std::uint64_t> failed(n, 0);
      detail::call_report report;
      const std::uint32_t grid = detail::grid_for(total);
      launch(source_.stream(), grid, detail::block_threads,
             detail::scatter_rows<E>{array_.ref_for_launch(grid, detail::block_threads),
                                     rows,
                                     static_cast<const value_type*>(values),
                                     {nullptr, &report, failed.data()},
                                     shape_.row_len,
                                     total});
      source_.stream().synchronize();
      collect(failed, failures);
    } else {
      (void)rows, (void)n, (void)values, (void)failures;
      throw input_error("array '" + array_.name() + "' was opened read-only (writable=False)");
    }
  }

  void flush() override {
    if constexpr (writable) {
      array_.flush();
      array_.check();
    }
  }

  [[nodiscard]] cache_stats stats() const override { return array_.stats(); }

 private:
  // The failed rows, each once, and the error the array recorded (clearing it, and the failed
  // lines, so the next gather tries their I/O again). An error with no failed row (a
  // write-back of an evicted line) is thrown.
  void collect(std::vector<std::uint64_t>& failed, row_failures& failures) {
    detail::take_failed_rows(failed.data(), failed.size(), failures.rows);
    failures.asked = failed.size();
    settle_failures(array_, failures);
  }

  data_source& source_;
  array_shape shape_;
  array<E> array_;
};

/// The array of T (writable or not) over `source`.
template <class T>
std::unique_ptr<any_array> make_typed(bool writable, data_source& source, array_shape shape,
                                      const std::string& name) {
  if (writable) return std::make_unique<typed_array<T>>(source, shape, name);
  return std::make_unique<typed_array<const T>>(source, shape, name);
}

}  // namespace bam::python
