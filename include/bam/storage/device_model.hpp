#pragma once
/// @file
/// What an emulated SSD is like: latency, throughput caps, and injected faults.

#include <cstdint>

namespace bam {

/// Timing of one emulated device. Defaults model the paper's Intel Optane P5800X: about 11 us,
/// 5.1 M IOPS at 512 B and 1.5 M at 4 KiB (a command costs max(1/iops, bytes/bandwidth)).
struct device_model {
  double latency_us = 11.0;     ///< mean latency from fetch to completion
  double latency_p99_us = 0.0;  ///< 0: every command takes latency_us; else a shifted
                                ///< exponential with this 99th percentile
  double iops = 5.1e6;          ///< small-command rate cap
  double bandwidth_bytes_per_s = 1.5e6 * 4096;  ///< transfer cap
  bool caps = true;                             ///< false: no rate or bandwidth cap

  static device_model optane() { return {}; }
  /// A NAND flash SSD: about 100 us, 0.8 M IOPS at 4 KiB.
  static device_model nand() { return {100.0, 0.0, 0.8e6, 0.8e6 * 4096, true}; }
  /// No latency and no caps: the protocol alone.
  static device_model unlimited() { return {0.0, 0.0, 0.0, 0.0, false}; }
  /// Latency only: `latency_us` per command, Optane's rates kept for reference but not applied.
  static device_model latency_only(double latency_us) {
    device_model m;
    m.latency_us = latency_us;
    m.caps = false;
    return m;
  }

  /// The most commands of `bytes` one device completes per second by its rates (a command
  /// costs max(1/iops, bytes/bandwidth)), whether or not the caps apply; 0 without rates.
  [[nodiscard]] double peak_commands_per_s(std::uint64_t bytes) const {
    const double per_command = iops > 0 ? 1.0 / iops : 0.0;
    const double per_transfer =
        bandwidth_bytes_per_s > 0 ? static_cast<double>(bytes) / bandwidth_bytes_per_s : 0.0;
    const double cost = per_command > per_transfer ? per_command : per_transfer;
    return cost > 0 ? 1.0 / cost : 0.0;
  }
};

/// Faults an emulated device injects, decided per command by a seeded hash so a run is
/// reproducible for a given submission order.
struct fault_plan {
  double error_rate = 0.0;  ///< commands completed with a media error status (no data moved)
  double drop_rate = 0.0;   ///< commands whose completion is never posted
  double late_rate = 0.0;   ///< commands completed late_us after their normal time
  double late_us = 0.0;
  double write_error_rate = 0.0;  ///< writes completed with "write fault" (no data moved)
  double write_late_rate = 0.0;   ///< writes completed late_us after their normal time
  std::uint64_t bad_lba_begin = 0;  ///< reads touching [begin, end) of a device's LBAs fail
  std::uint64_t bad_lba_end = 0;    ///< with "unrecovered read error"
  std::uint64_t seed = 1;
  /// Writes touching [bad_lba_begin, bad_lba_end) fail too, with "write fault" (a bad block
  /// fails both ways; `bam --faults bad-lba=A-B` sets it). The emulated controllers do not
  /// read this yet: until they do, only reads of the range fail.
  bool bad_lba_writes = false;

  [[nodiscard]] bool any() const {
    return error_rate > 0 || drop_rate > 0 || late_rate > 0 || write_error_rate > 0 ||
           write_late_rate > 0 || bad_lba_end > bad_lba_begin;
  }
};

}  // namespace bam
