#include "graph/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace bam::graph {

namespace {

constexpr std::chrono::milliseconds terminal_period{250};
constexpr std::chrono::milliseconds log_period{10'000};

std::string format_seconds(double seconds) {
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else {
    const auto whole = static_cast<long>(seconds);
    std::snprintf(text, sizeof text, "%ld min %02ld s", whole / 60, whole % 60);
  }
  return text;
}

}  // namespace

progress_meter::progress_meter(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {
  if (!enabled_) return;
  terminal_ = ::isatty(STDERR_FILENO) != 0;
  reporter_ = std::thread([this] { report_until_stopped(); });
}

progress_meter::~progress_meter() { finish(); }

std::string progress_meter::status_line(double seconds) const {
  const std::uint64_t done = done_.load(std::memory_order_relaxed);
  const double fraction =
      total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  std::string line = label_;
  char text[64];
  std::snprintf(text, sizeof text, "  %5.1f%%", 100.0 * fraction);
  line += text;
  if (fraction > 0.01 && fraction < 1.0) {
    line += "  ETA " + format_seconds(seconds * (1.0 - fraction) / fraction);
  } else {
    line += "  " + format_seconds(seconds) + " so far";
  }
  return line;
}

void progress_meter::report_until_stopped() {
  const std::chrono::milliseconds period = terminal_ ? terminal_period : log_period;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string line = status_line(seconds);
    // \033[K clears what a longer earlier line left on the right.
    std::fprintf(stderr, terminal_ ? "\r%s\033[K" : "%s\n", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
}

double progress_meter::finish() {
  if (finished_) return seconds_;
  finished_ = true;
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!enabled_) return seconds_;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  reporter_.join();
  // On a terminal every phase leaves one line with its time; in a log only phases that were
  // long enough to report do.
  if (terminal_ || shown_) {
    std::fprintf(stderr, terminal_ ? "\r%s  done in %s\033[K\n" : "%s  done in %s\n",
                 label_.c_str(), format_seconds(seconds_).c_str());
    std::fflush(stderr);
  }
  return seconds_;
}

}  // namespace bam::graph
