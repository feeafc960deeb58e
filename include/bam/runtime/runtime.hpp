#pragma once
/// @file
/// The runtime: the GPU, the stream applications launch on, and the controllers that serve
/// their I/O beside them.
///
/// CUDA makes many host calls wait for running kernels, and a controller kernel never ends,
/// so a program follows one lifecycle (DESIGN 6):
///
///     bam::gpu_runtime rt;                                // device, green contexts, streams
///     bam::emulated_storage ssd(cfg, image, &rt);         // allocate everything; attaches
///     rt.preload({bam::kernel_function<my_kernel>()});    // load every app kernel...
///     rt.warm_up([&](bam::stream_handle s) {              // ...and launch each once
///       bam::launch(s, 1, 32, my_kernel{/* no work */});
///     });
///     rt.start();                                         // controllers run from here on
///     bam::launch(rt.stream(), grid, block, my_kernel{ssd.ref(), ...});
///     rt.synchronize(rt.stream());                        // bounded wait
///     rt.stop();                                          // controllers end, in order
///
/// While controllers run: launch only on stream(), wait only with synchronize(), allocate and
/// free nothing, and never touch the legacy NULL stream or call a device-wide synchronizing
/// function.
///
/// Without a GPU (a CPU build, or no device present) the runtime still exists: gpu() is false,
/// message() says why, and controllers that run on host threads are started and stopped as
/// usual.
///
/// Thread safety: set-up and lifecycle calls from one thread; stream(), gpu() and the
/// accessors from any thread.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <bam/runtime/resources.hpp>

namespace bam {

struct runtime_config {
  int device = 0;                    ///< CUDA device ordinal
  std::uint32_t controller_sms = 8;  ///< SMs in the controllers' green context (rounded up
                                     ///< to the device's granularity, 8 on Hopper)
  bool green_contexts = true;        ///< false: plain non-blocking streams that share SMs
  bool watchdog = true;              ///< a host thread that names stuck queues while started
  std::uint64_t watchdog_period_ns = 1'000'000'000;
  std::uint64_t stuck_after_ns = 10'000'000'000;    ///< age at which a command counts as stuck
  std::uint64_t start_timeout_ns = 20'000'000'000;  ///< controller check-in deadline
  std::uint64_t stop_timeout_ns = 20'000'000'000;   ///< controller exit deadline
  std::uint64_t wait_timeout_ns = 300'000'000'000;  ///< default deadline of synchronize()
  std::size_t stack_bytes = 0;        ///< per-thread stack reserved before start; 0: the
                                      ///< largest local memory preload() saw, at least 1 KiB
  std::size_t printf_fifo_bytes = 0;  ///< 0: leave the default
  bool quiet = false;                 ///< no log lines on stderr
};

/// Something the runtime starts after set-up and stops before tear-down: a controller.
/// Implemented by bam::emulated_storage for its GPU placements.
class controller_service {
 public:
  virtual ~controller_service() = default;
  /// Starts the controller; returns once it serves commands (bounded: throws bam::error).
  virtual void start() = 0;
  /// Stops it; returns once it has stopped (bounded: throws bam::error).
  virtual void stop() = 0;
  [[nodiscard]] virtual bool running() const = 0;
  /// Lines naming queues whose oldest command is older than `age_ns`; empty when all is well.
  [[nodiscard]] virtual std::vector<std::string> stuck_queues(std::uint64_t age_ns) const = 0;
  /// "" while healthy, else what failed (a controller kernel that faulted, say).
  [[nodiscard]] virtual std::string health() const = 0;
  /// A short name for log lines ("emulated-ssd 4x8x256 gpu_kernel").
  [[nodiscard]] virtual std::string name() const = 0;
};

/// Named gpu_runtime because `bam::runtime` is the namespace of the internal allocation
/// helpers (src/runtime/memory.hpp); it also serves the CPU path.
class gpu_runtime {
 public:
  explicit gpu_runtime(const runtime_config& config = {});
  /// Stops what is running (errors are logged, never thrown).
  ~gpu_runtime();
  gpu_runtime(const gpu_runtime&) = delete;
  gpu_runtime& operator=(const gpu_runtime&) = delete;

  /// True when a GPU serves this runtime.
  [[nodiscard]] bool gpu() const;
  /// Without a GPU: why not. With one: what it is and how it was split.
  [[nodiscard]] const std::string& message() const;
  /// True when controllers and apps run in separate green contexts.
  [[nodiscard]] bool green_contexts() const;
  /// SMs of the controllers' partition and of the apps' (0 without a GPU).
  [[nodiscard]] std::uint32_t controller_sms() const;
  [[nodiscard]] std::uint32_t app_sms() const;

  /// The stream applications launch on: non-blocking, in the apps' green context.
  [[nodiscard]] stream_handle stream() const;
  /// The stream controllers launch on (the controllers' green context).
  [[nodiscard]] stream_handle controller_stream() const;

  /// Loads each kernel function (cudaFuncGetAttributes) and reserves the largest local memory
  /// any of them needs, so that no later launch resizes it while a controller runs. Before
  /// start() only. Pass bam::kernel_function<K>() for functor kernels.
  void preload(std::span<const void* const> kernels);
  void preload(std::initializer_list<const void*> kernels);

  /// Runs `launches` (which launch kernels on the stream it is given, with no work) and waits
  /// for them: the first launch of a kernel beside a running controller can deadlock
  /// (DESIGN 11). Before start() only.
  void warm_up(const std::function<void(stream_handle)>& launches);

  /// Starts every attached controller, in attach order, then the watchdog.
  void start();
  /// Stops the watchdog, then the controllers in reverse order. Throws the first error after
  /// trying them all.
  void stop();
  [[nodiscard]] bool started() const;

  /// Waits for `stream` with a deadline (0: config().wait_timeout_ns), polling instead of
  /// blocking in CUDA so a hang becomes an error that names `what`. Throws bam::cuda_error
  /// when the work failed.
  void synchronize(stream_handle stream, std::uint64_t timeout_ns = 0,
                   const std::string& what = "work on the stream") const;
  /// The same for the work of a stream before `event`'s point (owned_event::record).
  void synchronize(event_handle event, std::uint64_t timeout_ns = 0,
                   const std::string& what = "work on the stream") const;

  /// Throws bam::error if an attached controller reports a failure.
  void check() const;

  /// Lines the watchdog logged so far (stuck queues, unhealthy controllers).
  [[nodiscard]] std::vector<std::string> watchdog_reports() const;

  /// Registers a controller that start()/stop() drive; attach before start(). A service
  /// detaches itself before it is destroyed.
  void attach(controller_service& service);
  void detach(controller_service& service) noexcept;

  /// Writes "bam: <line>" to stderr unless quiet.
  void log(const std::string& line) const;

  [[nodiscard]] const runtime_config& config() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Stops a runtime when it leaves scope, by return or by exception, logging a failure instead
/// of throwing. Declare it after the GPU memory it must outlive: a free waits for every running
/// kernel, and a started controller never ends.
class stop_guard {
 public:
  explicit stop_guard(gpu_runtime& rt) : rt_(rt) {}
  ~stop_guard() {
    try {
      rt_.stop();
    } catch (const std::exception& e) {
      rt_.log(std::string("stopping the runtime: ") + e.what());
    }
  }
  stop_guard(const stop_guard&) = delete;
  stop_guard& operator=(const stop_guard&) = delete;

 private:
  gpu_runtime& rt_;
};

}  // namespace bam
