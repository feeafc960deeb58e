#pragma once
/// @file
/// A device set as the cache sees it: N devices, each with Q queue pairs, one namespace each,
/// a stripe unit fixed at open (a multiple of the largest line size, so a line never spans
/// devices), and optional replication (every device holds the whole extent; reads round robin,
/// writes go to all).
///
/// Or a memory set: the set's bytes are memory every thread that issues I/O can reach (pinned
/// host memory mapped into the GPU, or plain host memory on the CPU path), and a command is a
/// copy carried out by the thread that issues it, with no queue, controller or device model.
/// A cache over pinned host memory serves its hits from GPU memory and each miss with one
/// copy over PCIe (the `host-cached` backend).

#include <cstdint>
#include <type_traits>

#include <bam/platform/config.hpp>
#include <bam/queue/queue_pair.hpp>

namespace bam {

/// Where a byte of the set's address space lives.
struct device_location {
  std::uint32_t device;
  std::uint64_t byte;  ///< byte offset within that device's namespace
};

/// A view of a device set, passed to kernels by value.
struct device_set_ref {
  queue_pair_ref* queues = nullptr;  ///< devices x queues_per_device, device major
  std::uint32_t devices = 0;
  std::uint32_t queues_per_device = 0;
  std::uint32_t block_bytes = 512;       ///< logical block size of every namespace
  std::uint32_t page_bytes = 4096;       ///< memory page size for PRPs
  std::uint64_t stripe_bytes = 0;        ///< striping unit (unused when replicated)
  std::uint64_t capacity_bytes = 0;      ///< bytes of the set's address space
  std::uint32_t max_transfer_bytes = 0;  ///< largest single command the devices accept
  bool replicated = false;
  /// A memory set's bytes (capacity_bytes of them); null for devices with queues.
  std::uint8_t* memory = nullptr;

  /// How long a command of the set may take before it is given up on: the queues' timeout,
  /// or for a memory set the bound on waits for another thread's copy.
  [[nodiscard]] BAM_HD std::uint64_t timeout_ns() const {
    return memory != nullptr ? memory_timeout_ns : queues[0].timeout_ns();
  }
  /// The longest sleep between polls of a command another thread waits for.
  [[nodiscard]] BAM_HD std::uint32_t wait_sleep_ns() const {
    return memory != nullptr ? memory_wait_sleep_ns : queues[0].wait_sleep_ns();
  }

  /// A memory set over `bytes` at `data` (a multiple of block_bytes; a pinned host
  /// allocation for GPU threads): no devices, no queues; block and page sizes as a device's.
  static device_set_ref over_memory(std::uint8_t* data, std::uint64_t bytes,
                                    std::uint32_t max_transfer_bytes) {
    device_set_ref s;
    s.queues_per_device = 1;  // a divisor where the cache spreads commands over queues
    s.capacity_bytes = bytes;
    s.max_transfer_bytes = max_transfer_bytes;
    s.memory = data;
    return s;
  }

  /// A copy of a few KiB takes microseconds: a second bounds a wait for one generously.
  static constexpr std::uint64_t memory_timeout_ns = 1'000'000'000;
  static constexpr std::uint32_t memory_wait_sleep_ns = 256;

  BAM_HD queue_pair_ref& queue(std::uint32_t device, std::uint32_t index) const {
    return queues[std::uint64_t{device} * queues_per_device + index];
  }

  /// The device and device byte holding set byte `byte`. For a replicated set `replica`
  /// picks the device; for a striped set it is ignored.
  BAM_HD device_location locate(std::uint64_t byte, std::uint32_t replica = 0) const {
    if (replicated || devices <= 1) return {replicated ? replica % devices : 0u, byte};
    const std::uint64_t stripe = byte / stripe_bytes;
    return {static_cast<std::uint32_t>(stripe % devices),
            (stripe / devices) * stripe_bytes + byte % stripe_bytes};
  }
};
static_assert(std::is_trivially_copyable_v<device_set_ref>);

}  // namespace bam
