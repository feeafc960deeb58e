#include "gpu_support.hpp"

#include "any_array.hpp"
#include "row_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

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
      // Relaxed: read by the kernels queued after this one and by the host after a synchronize.
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

gpu_scratch::gpu_scratch(int device) : device_(device) {
  const device_guard on = use_device();
  first_bad_ = device_memory(sizeof(std::uint64_t));
  word_ = pinned_memory(2 * sizeof(std::uint64_t));
}

const std::uint64_t* gpu_scratch::start_check(const std::int64_t* rows, std::uint64_t n,
                                              std::uint64_t limit, stream_handle stream) {
  BAM_CUDA_CHECK(cudaMemsetAsync(first_bad_.data(), 0xff, sizeof(std::uint64_t), stream));
  const auto grid = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((n + check_block - 1) / check_block, 1, 4096));
  launch(stream, grid, check_block,
         find_out_of_range{rows, n, limit, first_bad_.as<std::uint64_t>()});
  copy_async(word_.data(), first_bad_.data(), sizeof(std::uint64_t), stream);
  return first_bad_.as<std::uint64_t>();
}

void gpu_scratch::finish_check(gpu_runtime& rt, const std::int64_t* rows, std::uint64_t limit,
                               stream_handle stream, const std::string& name) {
  auto* word = word_.as<std::uint64_t>();
  const std::uint64_t k = word[0];
  if (k == detail::rows_in_range) return;
  copy_async(word + 1, rows + k, sizeof(std::int64_t), stream);
  rt.synchronize(stream, 0, "reading an out-of-range row of '" + name + "'");
  std::int64_t row = 0;
  std::memcpy(&row, word + 1, sizeof row);
  throw std::out_of_range("index " + std::to_string(row) + " (position " + std::to_string(k) +
                          ") is out of range for '" + name + "', which has " +
                          std::to_string(limit) + " rows" +
                          (row < 0 ? " (negative indices are not wrapped)" : ""));
}

std::uint32_t* gpu_scratch::failed_flags(std::uint64_t n) {
  const std::uint64_t bytes = std::max<std::uint64_t>(n, 1) * sizeof(std::uint32_t);
  // A call that threw between failed_flags() and failed_rows() may have left flags set.
  if (handed_ != 0) std::fill_n(flags_.as<std::uint32_t>(), handed_, 0u);
  handed_ = 0;
  if (flags_.bytes() < bytes) {
    flags_ = pinned_memory();  // free first: the new one may be large
    flags_ = pinned_memory(std::max<std::uint64_t>(bytes, 1 << 16));  // zero-filled
  }
  handed_ = n;
  return flags_.as<std::uint32_t>();
}

std::vector<std::int64_t> gpu_scratch::failed_rows(gpu_runtime& rt, const std::int64_t* rows,
                                                   std::uint64_t n, stream_handle stream) {
  std::uint32_t* flags = flags_.as<std::uint32_t>();
  std::vector<std::int64_t> out;
  if (n == 0 || std::none_of(flags, flags + n, [](std::uint32_t f) { return f != 0; })) {
    handed_ = 0;
    return out;
  }
  std::vector<std::int64_t> all(n);
  copy_async(all.data(), rows, n * sizeof(std::int64_t), stream);
  rt.synchronize(stream, 0, "reading the rows of a failed gather");
  for (std::uint64_t k = 0; k < n; ++k) {
    if (flags[k] != 0) out.push_back(all[k]);
  }
  std::fill(flags, flags + n, 0u);
  handed_ = 0;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace bam::python
