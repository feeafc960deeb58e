#pragma once
/// @file
/// Progress of a long phase on stderr: on a terminal one line redrawn in place (\r) a few times
/// a second with percent done and an ETA; otherwise (a log file, a pipe) a plain line every
/// ten seconds, so logs stay short.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace bam::graph {

class progress_meter {
 public:
  /// Starts reporting `label` (e.g. "pass 2/3: scatter edges") out of `total` units.
  /// A disabled meter prints nothing and starts no thread.
  progress_meter(std::string label, std::uint64_t total, bool enabled);
  /// finish().
  ~progress_meter();
  progress_meter(const progress_meter&) = delete;
  progress_meter& operator=(const progress_meter&) = delete;

  /// Counts `units` more as done. Thread safe; one relaxed atomic add.
  void add(std::uint64_t units) { done_.fetch_add(units, std::memory_order_relaxed); }

  /// Stops reporting and, where anything was shown, prints the phase's time. Returns the
  /// seconds since the meter started.
  double finish();

 private:
  void report_until_stopped();
  [[nodiscard]] std::string status_line(double seconds) const;

  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool terminal_ = false;
  bool shown_ = false;
  bool finished_ = false;
  double seconds_ = 0;
  std::atomic<std::uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread reporter_;
};

}  // namespace bam::graph
