#pragma once
/// @file
/// A bam::array of any of the module's element types, seen through one interface, so the
/// bindings dispatch on the dtype once, at open. Rows: the array is `rows` x `row_len`
/// elements (row_len 1 for a 1-D array); gathers and scatters move whole rows.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/stats.hpp>
#include <bam/error.hpp>
#include <bam/runtime/resources.hpp>

#include "data_source.hpp"

namespace bam::python {

/// The element types, by the command line's names (u8 ... f64).
enum class element_type { u8, u16, u32, u64, i32, i64, f32, f64 };

/// "u32" -> element_type::u32; throws bam::input_error naming the choices otherwise.
[[nodiscard]] element_type parse_element_type(const std::string& name);
[[nodiscard]] std::uint32_t element_bytes(element_type t);

/// Rows whose I/O failed in one gather or scatter, and the device error behind the first.
struct row_failures {
  std::vector<std::int64_t> rows;  ///< sorted, each once
  std::string first_error;         ///< the NVMe error the array recorded ("" when none)
  std::uint64_t asked = 0;         ///< rows the failed call named
  /// The failed call is an earlier gather that returned before its kernel ended
  /// (gather_device with wait false), reported by a later call.
  bool earlier = false;
};

/// Ends a call whose failed rows are in `failures.rows`: with none, array.check() throws what
/// the array recorded (if anything); with some, the first recorded error goes with them and
/// the array's failed lines are cleared, so the next call tries their I/O again.
template <class Array>
void settle_failures(Array& array, row_failures& failures) {
  if (failures.rows.empty()) {
    array.check();
    return;
  }
  try {
    array.check();
  } catch (const nvme_error& e) {
    failures.first_error = e.message();
  }
  array.clear_failures();
}

class any_array {
 public:
  virtual ~any_array() = default;
  /// out[k * row_len + c] = element (rows[k] * row_len + c) for k < n, c < row_len. The rows
  /// must be in range (the caller checks, before any I/O). Rows that failed come back in
  /// `failures` (their elements hold the poison value, every bit set). Waits.
  virtual void gather(const std::int64_t* rows, std::uint64_t n, void* out,
                      row_failures& failures) = 0;
  /// Writes values[k * row_len + c] to element (rows[k] * row_len + c) through the cache
  /// (dirty lines; flush() writes them). A row named twice gets one of its values. Waits.
  virtual void scatter(const std::int64_t* rows, std::uint64_t n, const void* values,
                       row_failures& failures) = 0;
  /// Writes every dirty line back and flushes the devices; throws bam::nvme_error.
  virtual void flush() = 0;

  /// GPU arrays (device="cuda") only; the others throw bam::input_error. `rows` and `out` (or
  /// `values`) are GPU memory of the source's device. Runs on `stream` (the caller's: work
  /// already queued there comes first): a range check, then the kernel, which does no I/O
  /// unless every row is in range. First it reads what earlier gathers that did not wait
  /// left; if one failed, it reports that (failures.earlier, or std::out_of_range) and queues
  /// nothing. With `wait`, it then waits (bounded) for its kernel and throws
  /// std::out_of_range naming the first row outside [0, rows), or reports failed rows as
  /// gather() does; without, it returns once the kernel is queued, and a later call reports.
  virtual void gather_device(const std::int64_t* rows, std::uint64_t n, void* out,
                             stream_handle stream, bool wait, row_failures& failures);
  /// As gather_device with `wait`.
  virtual void scatter_device(const std::int64_t* rows, std::uint64_t n, const void* values,
                              stream_handle stream, row_failures& failures);
  /// Waits for the gathers that did not wait, and reports the first that failed, as
  /// gather_device does. Nothing to do on the CPU path.
  virtual void synchronize(row_failures& failures) { (void)failures; }
  [[nodiscard]] virtual cache_stats stats() const = 0;
};

struct array_shape {
  std::uint64_t rows = 0;
  std::uint64_t row_len = 1;
};

/// The bam::array of E over `source`: through its cache, or over its memory (host or GPU)
/// where it has none.
template <class E>
array<E> open_rows(data_source& source, array_shape shape, const std::string& name) {
  using value_type = std::remove_const_t<E>;
  const std::uint64_t count = shape.rows * shape.row_len;
  if (!source.cached()) {
    return array<E>::over_memory(reinterpret_cast<value_type*>(source.memory()), count,
                                 source.memory_on_host(), name);
  }
  return array<E>(source.cache(), source.devices(), {.count = count, .name = name});
}

/// Restores the calling thread's current CUDA device when the result goes (opening a GPU
/// source makes its device current); null in a build without CUDA.
[[nodiscard]] std::shared_ptr<void> keep_current_device();

/// The array of `type` over `source` (writable when `writable`), named `name` in errors:
/// a GPU array when the source is on a GPU (gpu_typed_array.cuh). `source` must outlive it.
[[nodiscard]] std::unique_ptr<any_array> make_array(element_type type, bool writable,
                                                    data_source& source, array_shape shape,
                                                    const std::string& name);

}  // namespace bam::python
