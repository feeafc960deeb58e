#pragma once
/// @file
/// NVMe status codes (NVMe 1.4, section 4.6.1) and bam's I/O status, which also carries the
/// failures a host sees without a completion (timeout, lost command, rejected request).

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::nvme {

/// Status code type (status field bits 10:8).
enum class status_type : std::uint8_t {
  generic = 0,
  command_specific = 1,
  media = 2,
  path = 3,
  vendor = 7,
};

/// Generic command status codes (SCT 0) used by bam's controllers.
enum class generic_status : std::uint8_t {
  success = 0x00,
  invalid_opcode = 0x01,
  invalid_field = 0x02,
  command_id_conflict = 0x03,
  data_transfer_error = 0x04,
  internal_error = 0x06,
  abort_requested = 0x07,
  invalid_namespace = 0x0b,
  namespace_write_protected = 0x20,
  prp_offset_invalid = 0x13,
  lba_out_of_range = 0x80,
  capacity_exceeded = 0x81,
  namespace_not_ready = 0x82,
};

/// Command specific status codes (SCT 1) for queue management.
enum class command_status : std::uint8_t {
  invalid_completion_queue = 0x00,
  invalid_queue_identifier = 0x01,
  invalid_queue_size = 0x02,
};

/// Media and data integrity errors (SCT 2).
enum class media_status : std::uint8_t {
  write_fault = 0x80,
  unrecovered_read_error = 0x81,
  guard_check_error = 0x82,
  compare_failure = 0x85,
  access_denied = 0x86,
};

/// Builds a 15-bit status field.
BAM_HD constexpr std::uint16_t make_status_field(status_type sct, std::uint8_t sc,
                                                 bool dnr = false) {
  return static_cast<std::uint16_t>(sc | (static_cast<unsigned>(sct) << 8) | (dnr ? 1u << 14 : 0u));
}
BAM_HD constexpr std::uint16_t make_status_field(generic_status sc, bool dnr = false) {
  return make_status_field(status_type::generic, static_cast<std::uint8_t>(sc), dnr);
}
BAM_HD constexpr std::uint16_t make_status_field(media_status sc, bool dnr = false) {
  return make_status_field(status_type::media, static_cast<std::uint8_t>(sc), dnr);
}
BAM_HD constexpr std::uint16_t make_status_field(command_status sc, bool dnr = false) {
  return make_status_field(status_type::command_specific, static_cast<std::uint8_t>(sc), dnr);
}

/// A readable name for a status code type and code ("generic: LBA out of range").
BAM_HD constexpr const char* status_name(std::uint8_t sct, std::uint8_t sc) {
  if (sct == 0) {
    switch (sc) {
      case 0x00:
        return "generic: success";
      case 0x01:
        return "generic: invalid command opcode";
      case 0x02:
        return "generic: invalid field in command";
      case 0x03:
        return "generic: command id conflict";
      case 0x04:
        return "generic: data transfer error";
      case 0x06:
        return "generic: internal error";
      case 0x07:
        return "generic: command abort requested";
      case 0x0b:
        return "generic: invalid namespace or format";
      case 0x13:
        return "generic: PRP offset invalid";
      case 0x20:
        return "generic: namespace is write protected";
      case 0x80:
        return "generic: LBA out of range";
      case 0x81:
        return "generic: capacity exceeded";
      case 0x82:
        return "generic: namespace not ready";
      default:
        return "generic: unknown status code";
    }
  }
  if (sct == 1) {
    switch (sc) {
      case 0x00:
        return "command specific: completion queue invalid";
      case 0x01:
        return "command specific: invalid queue identifier";
      case 0x02:
        return "command specific: invalid queue size";
      default:
        return "command specific: unknown status code";
    }
  }
  if (sct == 2) {
    switch (sc) {
      case 0x80:
        return "media: write fault";
      case 0x81:
        return "media: unrecovered read error";
      case 0x82:
        return "media: end-to-end guard check error";
      case 0x85:
        return "media: compare failure";
      case 0x86:
        return "media: access denied";
      default:
        return "media: unknown status code";
    }
  }
  if (sct == 3) return "path related status";
  if (sct == 7) return "vendor specific status";
  return "reserved status code type";
}

}  // namespace bam::nvme

namespace bam {

/// Where an I/O status came from.
enum class status_source : std::uint8_t {
  device = 0,              ///< a completion entry; the NVMe status field says the rest
  timeout = 1,             ///< no completion before the deadline (the command may still run)
  command_lost = 2,        ///< the slot is held by an earlier command that never completed
  invalid_request = 3,     ///< rejected before submission (too large, outside the extent)
  cache_exhausted = 4,     ///< no evictable cache line within the deadline
  index_out_of_range = 5,  ///< an element index past the end of an array
  queue_halted = 6,        ///< the queue stopped after a lost command; the host must reset it
  submit_timeout = 7,      ///< the command did not enter the queue (slot and tail) in time
};

/// The outcome of one I/O as bam reports it: the NVMe status field (bits 14:0) and the
/// source (bits 23:16). Zero is success.
class io_status {
 public:
  BAM_HD constexpr io_status() = default;
  BAM_HD static constexpr io_status from_bits(std::uint32_t bits) { return io_status{bits}; }
  BAM_HD static constexpr io_status from_device(std::uint16_t status_field) {
    return io_status{status_field & 0x7fffu};
  }
  BAM_HD static constexpr io_status host(status_source s) {
    return io_status{static_cast<std::uint32_t>(s) << 16};
  }

  [[nodiscard]] BAM_HD constexpr bool ok() const { return bits_ == 0; }
  [[nodiscard]] BAM_HD constexpr std::uint32_t bits() const { return bits_; }
  [[nodiscard]] BAM_HD constexpr status_source source() const {
    return static_cast<status_source>((bits_ >> 16) & 0xffu);
  }
  [[nodiscard]] BAM_HD constexpr std::uint16_t status_field() const { return bits_ & 0x7fffu; }
  [[nodiscard]] BAM_HD constexpr std::uint8_t sct() const { return (bits_ >> 8) & 0x7u; }
  [[nodiscard]] BAM_HD constexpr std::uint8_t sc() const { return bits_ & 0xffu; }
  [[nodiscard]] BAM_HD constexpr bool do_not_retry() const { return (bits_ >> 14) & 1u; }

  /// A readable description ("generic: LBA out of range", "timeout waiting for completion").
  [[nodiscard]] BAM_HD constexpr const char* name() const {
    switch (source()) {
      case status_source::device:
        return nvme::status_name(sct(), sc());
      case status_source::timeout:
        return "timeout waiting for a completion";
      case status_source::command_lost:
        return "command slot held by an earlier command that never completed";
      case status_source::invalid_request:
        return "request rejected before submission";
      case status_source::cache_exhausted:
        return "no evictable cache line (cache too small)";
      case status_source::index_out_of_range:
        return "index out of range";
      case status_source::queue_halted:
        return "queue halted after a lost command (reset the queue)";
      case status_source::submit_timeout:
        return "timeout waiting to enter the queue";
    }
    return "unknown status";
  }

  BAM_HD constexpr bool operator==(const io_status&) const = default;

 private:
  BAM_HD constexpr explicit io_status(std::uint32_t bits) : bits_(bits) {}
  std::uint32_t bits_ = 0;
};

}  // namespace bam
