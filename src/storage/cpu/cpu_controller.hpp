#pragma once
// An emulated NVMe controller on a host thread: it polls the tail doorbells of its queues,
// fetches entries in order, validates them, schedules each completion by the device model
// (so completions come out of order when latencies differ), moves the data when the command
// completes, and posts the completion per the ordering contract.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "storage/emulated/command_engine.hpp"
#include "storage/emulated/timing.hpp"

namespace bam::emulated {

struct controller_device {
  namespace_view ns;
  timing_model timing;
  fault_plan faults;
  std::uint64_t seed = 1;
  std::vector<queue_pair_ref> queues;
};

class cpu_controller {
 public:
  /// `image` receives FLUSH commands (may be null: FLUSH then only succeeds). Where the
  /// devices' copies are queued (namespace_view::host_mark), up to `batches_in_flight`
  /// batches of them run while the thread fetches and moves more.
  cpu_controller(std::vector<controller_device> devices, backing_store* image,
                 std::uint32_t batches_in_flight = 1);
  ~cpu_controller();
  cpu_controller(const cpu_controller&) = delete;
  cpu_controller& operator=(const cpu_controller&) = delete;

  void start();
  void stop();
  [[nodiscard]] bool running() const { return thread_.joinable(); }

  /// Forgets the controller-side state of one queue (stopped controller only).
  void reset_queue(std::uint32_t device, std::uint32_t queue);

  [[nodiscard]] std::vector<device_stats> stats() const;
  [[nodiscard]] std::vector<std::string> stuck_queues(std::uint64_t age_ns) const;

 private:
  struct pending;
  struct queue_state;
  struct device_state;

  void run();
  bool poll_submissions(std::uint64_t now);
  bool complete_due(std::uint64_t now);
  /// Posts the completions of the batches whose copies have landed, oldest first; `wait`:
  /// waits for all of them.
  bool post_landed(bool wait);
  void post(const pending& p, std::uint16_t status);
  bool retry_full_queues();
  std::uint16_t finish(const pending& p);
  /// Waits for the data copies finish() queued (host_thread placement); nothing otherwise.
  void fence();

  std::vector<std::unique_ptr<device_state>> devices_;
  backing_store* image_;
  void (*host_fence_)() = nullptr;  ///< the devices' namespace_view::host_fence, if any
  std::uint64_t (*host_mark_)() = nullptr;
  bool (*host_reached_)(std::uint64_t) = nullptr;
  std::uint32_t batches_in_flight_;
  std::uint64_t origin_ns_;  ///< device clocks count from here
  std::atomic<bool> stop_{false};
  std::thread thread_;
  struct schedule;
  std::unique_ptr<schedule> schedule_;
};

}  // namespace bam::emulated
