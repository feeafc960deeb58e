#include "opened_array.hpp"

#include <stdexcept>

#include <bam/error.hpp>

namespace bam::python {

namespace {

std::string joined(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ",") + p;
  return out;
}

// The shape after filling in the row count, checked against the data's bytes.
array_shape fitted(const open_request& r, std::uint64_t data_bytes, const std::string& name) {
  array_shape s = r.shape;
  const std::uint64_t row_bytes = s.row_len * element_bytes(r.type);
  if (s.row_len == 0) throw input_error("a row of 0 elements");
  if (s.rows == 0) {
    s.rows = data_bytes / row_bytes;
    if (s.rows == 0) {
      throw input_error("'" + name + "' holds " + std::to_string(data_bytes) +
                        " bytes, less than one row of " + std::to_string(row_bytes));
    }
  } else if (s.rows > data_bytes / row_bytes) {
    throw input_error("shape needs " + std::to_string(s.rows) + " rows of " +
                      std::to_string(row_bytes) + " bytes, but '" + name + "' holds " +
                      std::to_string(data_bytes) + " bytes (" +
                      std::to_string(data_bytes / row_bytes) + " rows)");
  }
  return s;
}

}  // namespace

opened_array::opened_array(const open_request& r)
    : type_(r.type),
      writable_(r.source.writable),
      gpu_device_(r.source.gpu_device),
      name_(joined(r.source.paths)) {
  const std::shared_ptr<void> keep = r.source.gpu_device >= 0 ? keep_current_device() : nullptr;
  source_ = std::make_unique<data_source>(r.source);
  shape_ = fitted(r, source_->data_bytes(), name_);
  array_ = make_array(type_, writable_, *source_, shape_, name_);
  description_ = source_->describe();
  gathers_always_wait_ = source_->gathers_wait();
}

opened_array::~opened_array() {
  // The array's destructor writes back what a writable array still holds (errors go
  // unreported there: close() reports them).
  array_.reset();
  source_.reset();
}

void opened_array::require_open() const {
  if (!array_) throw std::invalid_argument("the bam array of '" + name_ + "' is closed");
}

void opened_array::check_rows(const std::int64_t* rows, std::uint64_t n) const {
  for (std::uint64_t k = 0; k < n; ++k) {
    if (rows[k] < 0 || static_cast<std::uint64_t>(rows[k]) >= shape_.rows) {
      throw std::out_of_range("index " + std::to_string(rows[k]) + " (position " +
                              std::to_string(k) + ") is out of range for '" + name_ +
                              "', which has " + std::to_string(shape_.rows) + " rows" +
                              (rows[k] < 0 ? " (negative indices are not wrapped)" : ""));
    }
  }
}

void opened_array::gather(const std::int64_t* rows, std::uint64_t n, void* out,
                          row_failures& failures) {
  std::lock_guard g(lock_);
  require_open();
  check_rows(rows, n);
  array_->gather(rows, n, out, failures);
}

void opened_array::scatter(const std::int64_t* rows, std::uint64_t n, const void* values,
                           row_failures& failures) {
  std::lock_guard g(lock_);
  require_open();
  if (!writable_) throw input_error("'" + name_ + "' was opened read-only (writable=False)");
  check_rows(rows, n);
  array_->scatter(rows, n, values, failures);
}

void opened_array::gather_device(const std::int64_t* rows, std::uint64_t n, void* out,
                                 stream_handle stream, bool wait, row_failures& failures) {
  std::lock_guard g(lock_);
  require_open();
  array_->gather_device(rows, n, out, stream, wait, failures);
}

void opened_array::scatter_device(const std::int64_t* rows, std::uint64_t n, const void* values,
                                  stream_handle stream, row_failures& failures) {
  std::lock_guard g(lock_);
  require_open();
  if (!writable_) throw input_error("'" + name_ + "' was opened read-only (writable=False)");
  array_->scatter_device(rows, n, values, stream, failures);
}

void opened_array::synchronize(row_failures& failures) {
  std::lock_guard g(lock_);
  require_open();
  array_->synchronize(failures);
}

void opened_array::flush() {
  std::lock_guard g(lock_);
  require_open();
  if (!writable_) return;  // nothing to write
  array_->flush();
}

cache_stats opened_array::stats() {
  std::lock_guard g(lock_);
  require_open();
  return array_->stats();
}

void opened_array::close() {
  std::lock_guard g(lock_);
  if (!array_) return;
  std::exception_ptr failure;
  if (writable_) {
    try {
      array_->flush();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  array_.reset();
  source_.reset();
  if (failure) std::rethrow_exception(failure);
}

bool opened_array::closed() const {
  std::lock_guard g(lock_);
  return array_ == nullptr;
}

}  // namespace bam::python
