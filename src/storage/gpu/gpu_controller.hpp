#pragma once
// The emulated NVMe controller as a persistent GPU kernel (DESIGN 6 and 7).
//
// It runs in the controllers' green context of a gpu_runtime, serves N devices x Q queue
// pairs whose queues live in GPU memory, and moves data between the backing image (pinned host
// memory by default, so the bytes cross PCIe as an SSD's DMA would; or GPU memory) and the
// PRP addresses. Readable by a plain C++ compiler; the kernel is in gpu_controller.cu, and the
// CPU build links gpu_controller_none.cpp, whose constructor throws.
//
// Work split: queue q belongs to warp q mod W for the kernel's whole life. A warp scans up to
// 32 of its queues at once (a lane per queue), then serves each queue that has work with all
// 32 lanes: it fetches up to 32 entries at once (a lane per entry), validates them, draws
// their latencies and faults, reserves the device's pipeline time with one compare-exchange
// per batch, and files them as pending records; later passes complete every record whose due
// time (%globaltimer) has come, in any order, moving the data with the whole warp in 16-byte
// accesses and posting the completions as the ordering table says. Statistics are per queue,
// written by the owner warp alone: no per-command global atomics.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/runtime/runtime.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "storage/cpu/cpu_controller.hpp"

namespace bam::emulated {

class gpu_controller {
 public:
  /// Allocates the controller's state in GPU and mapped memory and launches its kernel once
  /// with no work (the first launch must not happen beside another running kernel). The
  /// queues named by `devices` must be in GPU memory. `image` receives FLUSH write-backs.
  gpu_controller(gpu_runtime& rt, std::vector<controller_device> devices, backing_store* image,
                 const gpu_controller_options& options);
  /// Stops the kernel if it runs (errors are logged).
  ~gpu_controller();
  gpu_controller(const gpu_controller&) = delete;
  gpu_controller& operator=(const gpu_controller&) = delete;

  /// Launches the kernel on the runtime's controller stream and waits (bounded) until every
  /// block has checked in.
  void start();
  /// Raises the stop flag and waits (bounded) for the kernel to end; commands in flight stay
  /// unanswered. Moves the kernel's dirty-chunk bits into the image's, so image().flush()
  /// after stop writes back everything.
  void stop();
  [[nodiscard]] bool running() const;

  /// Forgets the controller-side state of one queue (stopped controller only) and gives back
  /// the holds of its abandoned commands, which none of can run any more; returns how many.
  std::uint32_t reset_queue(std::uint32_t device, std::uint32_t queue);

  /// Counters per device (a snapshot while running).
  [[nodiscard]] std::vector<device_stats> stats() const;
  /// Queues whose oldest outstanding command is older than `age_ns`, and queues whose warp
  /// has not reported for that long.
  [[nodiscard]] std::vector<std::string> stuck_queues(std::uint64_t age_ns) const;
  /// "" while the kernel runs (or is stopped on purpose), else what went wrong.
  [[nodiscard]] std::string health() const;
  /// "grid 16 x 256 (128 warps, 2 per SM) on 8 SMs, 64 queues".
  [[nodiscard]] std::string describe() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace bam::emulated
