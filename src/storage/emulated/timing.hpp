#pragma once
// When a command completes on an emulated device: a latency drawn from the model, and a
// throughput cap that spaces command starts by max(1/iops, bytes/bandwidth).

#include <cmath>
#include <cstdint>

#include <bam/platform/config.hpp>
#include <bam/storage/device_model.hpp>

#include "storage/emulated/rng.hpp"

namespace bam::emulated {

/// The model in the units the controller uses (picoseconds keep fractional costs exact).
struct timing_model {
  std::uint64_t base_ns = 0;  ///< fixed part of the latency
  double exp_mean_ns = 0;     ///< mean of the exponential tail (0: fixed latency)
  double ps_per_command = 0;  ///< 1e12 / iops, 0 without caps
  double ps_per_byte = 0;     ///< 1e12 / bandwidth, 0 without caps

  static timing_model from(const device_model& m) {
    timing_model t;
    const double mean_ns = m.latency_us * 1e3;
    if (m.latency_p99_us > m.latency_us) {
      // X = a + Exp(mean b): mean = a + b, p99 = a + b ln 100.
      const double b = (m.latency_p99_us - m.latency_us) * 1e3 / (std::log(100.0) - 1.0);
      const double a = mean_ns - b;
      t.base_ns = a > 0 ? static_cast<std::uint64_t>(a) : 0;
      t.exp_mean_ns = a > 0 ? b : mean_ns;
    } else {
      t.base_ns = static_cast<std::uint64_t>(mean_ns);
    }
    if (m.caps) {
      t.ps_per_command = m.iops > 0 ? 1e12 / m.iops : 0;
      t.ps_per_byte = m.bandwidth_bytes_per_s > 0 ? 1e12 / m.bandwidth_bytes_per_s : 0;
    }
    return t;
  }

  /// The latency of the command with this (seed, device, sequence).
  BAM_HD std::uint64_t latency_ns(std::uint64_t seed, std::uint32_t device,
                                  std::uint64_t sequence) const {
    if (exp_mean_ns <= 0) return base_ns;
    const double u = uniform01(seed, 0x1a7e0000u + device, sequence);
    return base_ns + static_cast<std::uint64_t>(-exp_mean_ns * ::log(1.0 - u));
  }

  /// The service cost of a command moving `bytes`, in picoseconds.
  BAM_HD std::uint64_t cost_ps(std::uint64_t bytes) const {
    const double by_rate = ps_per_command;
    const double by_bytes = ps_per_byte * static_cast<double>(bytes);
    return static_cast<std::uint64_t>(by_rate > by_bytes ? by_rate : by_bytes);
  }
};

/// One device's throughput state: when its pipeline can start the next command.
struct device_clock {
  std::uint64_t next_free_ps = 0;

  /// The completion time of a command that arrives at `now_ns`: it starts when the pipeline is
  /// free, and completes after its latency but not before its start plus its cost.
  BAM_HD std::uint64_t schedule(std::uint64_t now_ns, std::uint64_t latency_ns,
                                std::uint64_t cost_ps) {
    const std::uint64_t now_ps = now_ns * 1000u;
    const std::uint64_t start = next_free_ps > now_ps ? next_free_ps : now_ps;
    next_free_ps = start + cost_ps;
    const std::uint64_t by_latency = now_ns + latency_ns;
    const std::uint64_t by_rate = next_free_ps / 1000u;
    return by_latency > by_rate ? by_latency : by_rate;
  }
};

}  // namespace bam::emulated
