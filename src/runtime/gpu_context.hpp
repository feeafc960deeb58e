#pragma once
// The CUDA half of gpu_runtime: the device, the green-context split and the two streams.
// gpu_context.cu implements it; gpu_context_none.cpp (CPU build) only says why there is none.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <bam/runtime/runtime.hpp>

namespace bam::detail {

using log_function = std::function<void(const std::string&)>;

class gpu_context {
 public:
  /// Null (and `why` filled) when there is no usable GPU; throws bam::cuda_error when one is
  /// present but set-up fails.
  static std::unique_ptr<gpu_context> create(const runtime_config& config, const log_function& log,
                                             std::string& why);
  ~gpu_context();
  gpu_context(const gpu_context&) = delete;
  gpu_context& operator=(const gpu_context&) = delete;

  [[nodiscard]] stream_handle app_stream() const { return app_.get(); }
  [[nodiscard]] stream_handle controller_stream() const { return controller_.get(); }
  [[nodiscard]] bool green() const { return green_app_ != nullptr; }
  [[nodiscard]] std::uint32_t app_sms() const { return app_sms_; }
  [[nodiscard]] std::uint32_t controller_sms() const { return controller_sms_; }
  [[nodiscard]] const std::string& description() const { return description_; }

  /// Loads the functions and returns the largest local memory per thread among them.
  std::size_t load(const void* const* kernels, std::size_t count);
  /// Reserves per-thread stack (and the printf FIFO) before controllers start.
  void reserve_limits(std::size_t stack_bytes, std::size_t printf_fifo_bytes);
  /// Polls `stream` until its work is done or the deadline passes (then throws bam::error
  /// naming `what`); throws bam::cuda_error if the work failed.
  void synchronize(stream_handle stream, std::uint64_t timeout_ns, const std::string& what) const;
  /// The same for the work before `event`'s point of its stream.
  void synchronize(event_handle event, std::uint64_t timeout_ns, const std::string& what) const;

 private:
  gpu_context() = default;
  void make_green(const runtime_config& config);
  void make_plain(const runtime_config& config);
  bool probe(stream_handle stream, std::string& why);

  int device_ = 0;
  std::uint32_t total_sms_ = 0;
  std::uint32_t app_sms_ = 0;
  std::uint32_t controller_sms_ = 0;
  void* green_app_ = nullptr;         // CUgreenCtx
  void* green_controller_ = nullptr;  // CUgreenCtx
  owned_stream app_;
  owned_stream controller_;
  std::string description_;
};

}  // namespace bam::detail
