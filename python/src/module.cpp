// bam._bam: the compiled half of the Python package. It takes arrays that are already
// contiguous int64 indices and output buffers of the right type (the Python half, bam/_array.py,
// makes them in the caller's framework), checks them, and runs the gathers with the GIL released.
// C++ errors become Python ones: bam::input_error ValueError, bam::nvme_error bam.IOError,
// std::out_of_range IndexError, any other bam::error RuntimeError.

#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <bam/error.hpp>

#include "common/sizes.hpp"
#include "opened_array.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace bam::python {

namespace {

// Host arrays of any type, C-contiguous (the Python half guarantees it; a strided view is
// refused rather than copied, since a copy of `out` would lose the results).
using host_indices = nb::ndarray<const std::int64_t, nb::c_contig, nb::device::cpu>;
using host_buffer = nb::ndarray<nb::c_contig, nb::device::cpu>;
using host_values = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

PyObject* io_error_type = nullptr;  // bam.IOError, made at import

nb::dlpack::dtype dlpack_type(element_type t) {
  switch (t) {
    case element_type::u8:
      return nb::dtype<std::uint8_t>();
    case element_type::u16:
      return nb::dtype<std::uint16_t>();
    case element_type::u32:
      return nb::dtype<std::uint32_t>();
    case element_type::u64:
      return nb::dtype<std::uint64_t>();
    case element_type::i32:
      return nb::dtype<std::int32_t>();
    case element_type::i64:
      return nb::dtype<std::int64_t>();
    case element_type::f32:
      return nb::dtype<float>();
    default:
      return nb::dtype<double>();
  }
}

// Checks that `buffer` holds n rows of the array's type; `what` names it in the message.
template <class Buffer>
void check_buffer(const opened_array& a, const Buffer& buffer, std::uint64_t n, const char* what) {
  if (buffer.dtype() != dlpack_type(a.type())) {
    throw std::invalid_argument(std::string(what) + " has the wrong dtype for this array");
  }
  const std::uint64_t want = n * a.shape().row_len;
  if (buffer.size() != want) {
    throw std::invalid_argument(std::string(what) + " holds " + std::to_string(buffer.size()) +
                                " elements; " + std::to_string(n) + " rows of " +
                                std::to_string(a.shape().row_len) + " need " +
                                std::to_string(want));
  }
}

// (failed rows, message, rows the call asked, whether it was an earlier gather that did not
// wait), or None when every row was moved.
nb::object failures_to_python(const row_failures& f) {
  if (f.rows.empty()) return nb::none();
  return nb::make_tuple(f.rows, f.first_error, f.asked, f.earlier);
}

nb::dict stats_to_python(const cache_stats& s) {
  nb::dict d;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["accesses"] = s.accesses;
  d["loads"] = s.loads;
  d["write_backs"] = s.write_backs;
  d["read_through"] = s.read_through;
  d["evictions"] = s.evictions;
  d["io_commands"] = s.io_commands();
  d["errors"] = s.errors;
  d["bytes_requested"] = s.bytes_requested;
  d["bytes_moved"] = s.bytes_moved;
  d["bytes_fetched"] = s.bytes_fetched;
  d["prefetched"] = s.prefetched;
  d["zero_filled"] = s.zero_filled;
  d["hit_rate"] = s.hit_rate();
  d["amplification"] = s.amplification();
  return d;
}

std::unique_ptr<opened_array> open_array(std::vector<std::string> paths, const std::string& type,
                                         std::uint64_t rows, std::uint64_t row_len,
                                         const std::string& backend, std::uint64_t cache_bytes,
                                         std::uint64_t line_bytes, std::uint32_t devices,
                                         bool writable, const std::string& faults,
                                         std::uint32_t controller_threads,
                                         std::uint32_t copy_batches, int gpu_device) {
  open_request r;
  r.source = {.paths = std::move(paths),
              .backend = backend,
              .cache_bytes = cache_bytes,
              .line_bytes = line_bytes,
              .devices = devices,
              .writable = writable,
              .faults = faults,
              .controller_threads = controller_threads,
              .copy_batches = copy_batches,
              .gpu_device = gpu_device};
  r.type = parse_element_type(type);
  r.shape = {.rows = rows, .row_len = row_len};
  nb::gil_scoped_release unlocked;  // opening reads a whole image for emulated-ssd
  return std::make_unique<opened_array>(r);
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const nvme_error& e) {
    PyErr_SetString(io_error_type, e.message().c_str());
  } catch (const input_error& e) {
    PyErr_SetString(PyExc_ValueError, e.message().c_str());
  } catch (const error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.message().c_str());
  }
}

}  // namespace

}  // namespace bam::python

NB_MODULE(_bam, m) {
  using namespace bam::python;
  m.doc() = "bam's compiled module (use the bam package, not this)";
  io_error_type = PyErr_NewExceptionWithDoc(
      "bam.IOError",
      "A read or write through bam failed (an NVMe error status, a timeout). For a gather, "
      "`rows` lists the rows that could not be read.",
      PyExc_OSError, nullptr);
  m.attr("IOError") = nb::handle(io_error_type);
  nb::register_exception_translator(translate);

#if defined(BAM_HAVE_CUDA)
  m.attr("cuda_build") = true;
#else
  m.attr("cuda_build") = false;
#endif

  nb::class_<opened_array>(m, "_Array")
      .def_prop_ro("rows", [](const opened_array& a) { return a.shape().rows; })
      .def_prop_ro("row_len", [](const opened_array& a) { return a.shape().row_len; })
      .def_prop_ro("writable", &opened_array::writable)
      .def_prop_ro("closed", &opened_array::closed)
      .def_prop_ro("description", &opened_array::description)
      .def(
          "gather",
          [](opened_array& a, const host_indices& rows, host_buffer& out) {
            check_buffer(a, out, rows.size(), "out");
            row_failures f;
            {
              nb::gil_scoped_release unlocked;
              a.gather(rows.data(), rows.size(), out.data(), f);
            }
            return failures_to_python(f);
          },
          "rows"_a.noconvert(), "out"_a.noconvert(),
          "Reads the rows named by a contiguous int64 array into `out`; returns None, or "
          "(failed rows, first device error).")
      .def(
          "scatter",
          [](opened_array& a, const host_indices& rows, const host_values& values) {
            check_buffer(a, values, rows.size(), "values");
            row_failures f;
            {
              nb::gil_scoped_release unlocked;
              a.scatter(rows.data(), rows.size(), values.data(), f);
            }
            return failures_to_python(f);
          },
          "rows"_a.noconvert(), "values"_a.noconvert())
      .def_prop_ro("gpu_device", &opened_array::gpu_device)
      .def_prop_ro("gathers_always_wait", &opened_array::gathers_always_wait)
      .def(
          "gather_device",
          [](opened_array& a, std::uintptr_t rows, std::uint64_t n, std::uintptr_t out,
             std::uintptr_t stream, bool wait) {
            row_failures f;
            {
              nb::gil_scoped_release unlocked;
              a.gather_device(reinterpret_cast<const std::int64_t*>(rows), n,
                              reinterpret_cast<void*>(out),
                              reinterpret_cast<bam::stream_handle>(stream), wait, f);
            }
            return failures_to_python(f);
          },
          "rows"_a, "n"_a, "out"_a, "stream"_a, "wait"_a,
          "device='cuda': reads n rows named by contiguous int64 GPU memory at address `rows` "
          "into contiguous GPU memory at `out`, on the CUDA stream `stream` (an address; 0 the "
          "legacy default stream). With `wait`, waits for it; without, returns once it is "
          "queued, and a later call (or synchronize) reports its failures. The Python half "
          "checks the buffers' dtypes, sizes and device. Returns None, or a failure tuple "
          "(failed rows, first device error, rows asked, from an earlier gather).")
      .def(
          "synchronize",
          [](opened_array& a) {
            row_failures f;
            {
              nb::gil_scoped_release unlocked;
              a.synchronize(f);
            }
            return failures_to_python(f);
          },
          "Waits for the gathers that did not wait; None, or the first one's failure tuple.")
      .def(
          "scatter_device",
          [](opened_array& a, std::uintptr_t rows, std::uint64_t n, std::uintptr_t values,
             std::uintptr_t stream) {
            row_failures f;
            {
              nb::gil_scoped_release unlocked;
              a.scatter_device(reinterpret_cast<const std::int64_t*>(rows), n,
                               reinterpret_cast<const void*>(values),
                               reinterpret_cast<bam::stream_handle>(stream), f);
            }
            return failures_to_python(f);
          },
          "rows"_a, "n"_a, "values"_a, "stream"_a)
      .def("flush", &opened_array::flush, nb::call_guard<nb::gil_scoped_release>())
      .def("stats", [](opened_array& a) { return stats_to_python(a.stats()); })
      .def("close", &opened_array::close, nb::call_guard<nb::gil_scoped_release>());

  m.def("open", &open_array, "paths"_a, "dtype"_a, "rows"_a, "row_len"_a, "backend"_a,
        "cache_bytes"_a, "line_bytes"_a, "devices"_a, "writable"_a, "faults"_a,
        "controller_threads"_a = 0, "copy_batches"_a = 0, "gpu_device"_a = -1);
  m.def(
      "parse_size", [](const std::string& text) { return bam::tools::parse_size(text, "size"); },
      "Reads a size like 4096, 64K or 8G (binary units), as the command line does.");
}
