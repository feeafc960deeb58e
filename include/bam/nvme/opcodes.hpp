#pragma once
/// @file
/// NVMe opcodes (NVM Express Base Specification 1.4, figures 139 and 346).

#include <cstdint>

namespace bam::nvme {

/// I/O command set (NVM) opcodes.
enum class io_opcode : std::uint8_t {
  flush = 0x00,
  write = 0x01,
  read = 0x02,
  write_uncorrectable = 0x04,
  compare = 0x05,
  write_zeroes = 0x08,
  dataset_management = 0x09,
};

/// Admin command set opcodes a host driver needs to bring up I/O queues.
enum class admin_opcode : std::uint8_t {
  delete_io_sq = 0x00,
  create_io_sq = 0x01,
  get_log_page = 0x02,
  delete_io_cq = 0x04,
  create_io_cq = 0x05,
  identify = 0x06,
  abort = 0x08,
  set_features = 0x09,
  get_features = 0x0a,
};

/// Identify CNS values (figure 244).
enum class identify_cns : std::uint8_t {
  namespace_data = 0x00,
  controller = 0x01,
  active_namespaces = 0x02,
};

/// Feature identifiers used by drivers (figure 271).
enum class feature_id : std::uint8_t {
  arbitration = 0x01,
  power_management = 0x02,
  number_of_queues = 0x07,
  interrupt_coalescing = 0x08,
};

}  // namespace bam::nvme
