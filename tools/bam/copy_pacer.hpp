#pragma once
/// @file
/// The storage under the CPU-centric baselines (--backend tiled, column-copy). Their data sits
/// in host memory, so unpaced they copy at the PCIe link's rate; the paper's baselines read the
/// same SSDs as BaM first. With a device model whose caps apply (--model optane|nand, or
/// --caps) a copy_pacer makes each copy wait until the device set could have read it: the
/// host reads with large commands, so the set moves bytes at devices x the model's bandwidth
/// for 128 KiB commands, after one device latency. Reads and writes share that rate, as they
/// share an emulated device's.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "bam/storage_options.hpp"

namespace bam::tools {

class copy_pacer {
 public:
  using clock = std::chrono::steady_clock;

  /// Unpaced: the data is already in host memory.
  copy_pacer() = default;
  copy_pacer(double bytes_per_s, double latency_s) : rate_(bytes_per_s), latency_s_(latency_s) {}

  /// The pacer the options ask for: paced only when the model's caps apply.
  static copy_pacer for_options(const storage_options& o) {
    const device_model m = o.model();
    if (!m.caps) return {};
    constexpr std::uint64_t command_bytes = 128 << 10;
    const double per_device = m.peak_commands_per_s(command_bytes) * command_bytes;
    if (per_device <= 0) return {};
    return {per_device * o.devices, m.latency_us * 1e-6};
  }

  [[nodiscard]] bool paced() const { return rate_ > 0; }
  [[nodiscard]] double bytes_per_s() const { return rate_; }

  /// Reserves the devices for `bytes` after what was reserved before (or from now, when they
  /// are idle); returns when those bytes are through.
  clock::time_point reserve(std::uint64_t bytes) {
    if (!paced()) return clock::now();
    const clock::time_point now = clock::now();
    const clock::time_point begin = std::max(now, busy_until_);
    busy_until_ = begin + to_duration(static_cast<double>(bytes) / rate_);
    return busy_until_ + to_duration(latency_s_);
  }

  /// Reserves `bytes` and waits until they are through (a read the copy needs first).
  void read(std::uint64_t bytes) { std::this_thread::sleep_until(reserve(bytes)); }

  /// Waits for everything reserved (the writes still in the devices).
  void drain() const {
    if (paced()) std::this_thread::sleep_until(busy_until_ + to_duration(latency_s_));
  }

  /// "4 device(s) of optane at 24.6 GB/s" or "host memory (unpaced)", for reports.
  [[nodiscard]] std::string describe(const storage_options& o) const {
    if (!paced()) return "host memory (unpaced: no device model caps)";
    char text[96];
    std::snprintf(text, sizeof text, "%u device(s) of %s at %.1f GB/s", o.devices,
                  o.model_label().c_str(), rate_ / 1e9);
    return text;
  }

 private:
  static clock::duration to_duration(double seconds) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  }

  double rate_ = 0;
  double latency_s_ = 0;
  clock::time_point busy_until_{};
};

}  // namespace bam::tools
