#include "gpu_support.hpp"

#include "any_array.hpp"
#include "row_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <bam/cuda_check.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.cuh>

namespace bam::python {

namespace {

// first = min(first, k) over the positions k whose row is outside [0, limit).
struct find_out_of_range {
  const std::int64_t* rows;
  std::uint64_t n;
  std::uint64_t limit;
  std::uint64_t* first;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t k = t.id; k < n; k += t.count) {
      if (rows[k] >= 0 && static_cast<std::uint64_t>(rows[k]) < limit) continue;
      // Relaxed: read by the kernel queued after this one, which the stream orders after it.
      const atomic_ref<std::uint64_t> min(*first);
      std::uint64_t seen = min.load(order::relaxed);
      while (k < seen && !min.compare_exchange(seen, k, order::relaxed)) {
      }
      return;  // later positions of this thread are larger
    }
  }
};

constexpr std::uint32_t check_block = 256;

}  // namespace

device_guard::device_guard(int device) {
  BAM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == device) {
    previous_ = -1;  // nothing to restore
    return;
  }
  BAM_CUDA_CHECK(cudaSetDevice(device));
}

device_guard::~device_guard() {
  if (previous_ >= 0) cudaSetDevice(previous_);  // destructors never throw
}

std::shared_ptr<void> keep_current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // no GPU: nothing to restore
    return nullptr;
  }
  return std::shared_ptr<void>(nullptr, [device](void*) { cudaSetDevice(device); });
}

gpu_call::gpu_call()
    : first_bad_(sizeof(std::uint64_t)),
      marks_(std::uint64_t{1} << 16),  // zero-filled: no call_report yet, no marks
      end_(owned_event::create()) {}

detail::call_marks gpu_call::start(const std::int64_t* rows, std::uint64_t n, std::uint64_t limit,
                                   stream_handle stream, bool earlier) {
  stream_ = stream;  // first: end_quietly() records on it if this throws
  const std::uint64_t bytes = sizeof(detail::call_report) + n * sizeof(std::uint64_t);
  if (marks_.bytes() < bytes) {
    const std::uint64_t grown = std::max<std::uint64_t>(bytes, 2 * marks_.bytes());
    marks_ = pinned_memory();       // free first: the new one may be large
    marks_ = pinned_memory(grown);  // zero-filled
  }
  n_ = n;
  limit_ = limit;
  earlier_ = earlier;
  BAM_CUDA_CHECK(cudaMemsetAsync(first_bad_.data(), 0xff, sizeof(std::uint64_t), stream));
  const auto grid = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((n + check_block - 1) / check_block, 1, 4096));
  launch(stream, grid, check_block,
         find_out_of_range{rows, n, limit, first_bad_.as<std::uint64_t>()});
  auto* report = marks_.as<detail::call_report>();
  return {first_bad_.as<std::uint64_t>(), report, reinterpret_cast<std::uint64_t*>(report + 1)};
}

void gpu_call::end() { end_.record(stream_); }

void gpu_call::end_quietly() noexcept {
  if (cudaEventRecord(end_.get(), stream_) != cudaSuccess) cudaGetLastError();
}

bool gpu_call::ended() const {
  const cudaError_t e = cudaEventQuery(end_.get());
  if (e == cudaErrorNotReady) return false;
  BAM_CUDA_CHECK(e);
  return true;
}

void gpu_call::wait(const gpu_runtime& rt, const std::string& what) const {
  rt.synchronize(end_.get(), 0, what);
}

void gpu_call::read(const std::string& name, row_failures& failures) {
  auto* report = marks_.as<detail::call_report>();
  if (report->first_bad != detail::rows_in_range) {
    const std::string when =
        earlier_ ? "an earlier gather of '" + name + "' (wait=False): " : std::string();
    const std::uint64_t k = std::exchange(report->first_bad, detail::rows_in_range);
    const std::int64_t row = report->bad_row;
    throw std::out_of_range(when + "index " + std::to_string(row) + " (position " +
                            std::to_string(k) + ") is out of range for '" + name + "', which has " +
                            std::to_string(limit_) + " rows" +
                            (row < 0 ? " (negative indices are not wrapped)" : ""));
  }
  failures.asked = n_;
  failures.earlier = earlier_;
  if (report->any_failed == 0) return;
  report->any_failed = 0;
  detail::take_failed_rows(reinterpret_cast<std::uint64_t*>(report + 1), n_, failures.rows);
}

gpu_calls::gpu_calls(int device, std::string name, settle_function settle)
    : device_(device),
      name_(std::move(name)),
      waiting_for_("the gather or scatter kernel of '" + name_ + "'"),
      settle_(std::move(settle)),
      calls_([&] {
        const device_guard on(device);
        return std::array<gpu_call, depth>{};
      }()) {}

bool gpu_calls::settle(const gpu_runtime& rt, stream_handle stream, bool all,
                       row_failures& failures) {
  while (in_flight_ > 0) {
    gpu_call& c = calls_[oldest_];
    const bool must = all || in_flight_ == depth || c.stream() != stream;
    if (must) {
      c.wait(rt, waiting_for_);
    } else if (!c.ended()) {
      return false;
    }
    oldest_ = (oldest_ + 1) % depth;
    --in_flight_;
    failures = {};
    c.read(name_, failures);  // throws for a row out of range
    // With no failed row: throws what the array recorded (a write-back), if anything.
    settle_(failures);
    if (!failures.rows.empty()) return true;
  }
  return false;
}

gpu_call& gpu_calls::take() {
  if (in_flight_ == depth) throw std::logic_error("gpu_calls::take: every call is in flight");
  return calls_[(oldest_ + in_flight_++) % depth];
}

void gpu_calls::wait_all(const gpu_runtime& rt) const {
  for (std::size_t k = 0; k < in_flight_; ++k) {
    calls_[(oldest_ + k) % depth].wait(rt, waiting_for_);
  }
}

}  // namespace bam::python
