#pragma once
/// @file
/// The 64-byte submission queue entry (NVMe 1.4, figure 105) and builders for the commands bam
/// issues. The layout is the wire format: sizes and offsets are pinned below.

#include <cstddef>
#include <cstdint>

#include <bam/nvme/opcodes.hpp>
#include <bam/platform/config.hpp>

namespace bam::nvme {

inline constexpr std::uint32_t submission_entry_bytes = 64;

/// A submission queue entry. Dword 0: opcode (7:0), fused (9:8), PSDT (15:14), command id
/// (31:16).
struct alignas(64) submission_entry {
  std::uint8_t opcode;
  std::uint8_t flags;  ///< fused operation (bits 1:0) and PRP/SGL selector (bits 7:6); 0 = PRP
  std::uint16_t command_id;
  std::uint32_t nsid;
  std::uint32_t cdw2;
  std::uint32_t cdw3;
  std::uint64_t metadata;
  std::uint64_t prp1;
  std::uint64_t prp2;
  std::uint32_t cdw10;
  std::uint32_t cdw11;
  std::uint32_t cdw12;
  std::uint32_t cdw13;
  std::uint32_t cdw14;
  std::uint32_t cdw15;

  /// Starting LBA of a read or write (cdw10 low, cdw11 high).
  BAM_HD std::uint64_t slba() const { return (std::uint64_t{cdw11} << 32) | cdw10; }
  /// Number of logical blocks of a read or write (cdw12 bits 15:0 hold it minus one).
  BAM_HD std::uint32_t block_count() const { return (cdw12 & 0xffffu) + 1u; }
};

static_assert(sizeof(submission_entry) == submission_entry_bytes);
static_assert(offsetof(submission_entry, opcode) == 0);
static_assert(offsetof(submission_entry, flags) == 1);
static_assert(offsetof(submission_entry, command_id) == 2);
static_assert(offsetof(submission_entry, nsid) == 4);
static_assert(offsetof(submission_entry, metadata) == 16);
static_assert(offsetof(submission_entry, prp1) == 24);
static_assert(offsetof(submission_entry, prp2) == 32);
static_assert(offsetof(submission_entry, cdw10) == 40);
static_assert(offsetof(submission_entry, cdw12) == 48);
static_assert(offsetof(submission_entry, cdw15) == 60);

/// Most blocks one read or write can name (NLB is a 16-bit count minus one).
inline constexpr std::uint32_t max_blocks_per_command = 65536;

/// A read or write of `blocks` logical blocks at `slba` into the PRP-described buffer.
BAM_HD inline submission_entry make_rw(io_opcode op, std::uint32_t nsid, std::uint64_t slba,
                                       std::uint32_t blocks, std::uint64_t prp1,
                                       std::uint64_t prp2) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(op);
  e.nsid = nsid;
  e.prp1 = prp1;
  e.prp2 = prp2;
  e.cdw10 = static_cast<std::uint32_t>(slba);
  e.cdw11 = static_cast<std::uint32_t>(slba >> 32);
  e.cdw12 = (blocks - 1u) & 0xffffu;
  return e;
}

/// FLUSH: commit volatile write data of namespace `nsid` to the media.
BAM_HD inline submission_entry make_flush(std::uint32_t nsid) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(io_opcode::flush);
  e.nsid = nsid;
  return e;
}

/// Identify (admin): a 4096-byte data structure chosen by `cns` into `prp1`.
inline submission_entry make_identify(identify_cns cns, std::uint32_t nsid, std::uint64_t prp1) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(admin_opcode::identify);
  e.nsid = nsid;
  e.prp1 = prp1;
  e.cdw10 = static_cast<std::uint32_t>(cns);
  return e;
}

/// Create I/O completion queue (admin): physically contiguous, interrupts off.
inline submission_entry make_create_io_cq(std::uint16_t qid, std::uint32_t entries,
                                          std::uint64_t prp1) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(admin_opcode::create_io_cq);
  e.prp1 = prp1;
  e.cdw10 = ((entries - 1u) << 16) | qid;
  e.cdw11 = 0x1u;  // PC: physically contiguous; IEN = 0
  return e;
}

/// Create I/O submission queue (admin) bound to completion queue `cqid`.
inline submission_entry make_create_io_sq(std::uint16_t qid, std::uint32_t entries,
                                          std::uint16_t cqid, std::uint64_t prp1) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(admin_opcode::create_io_sq);
  e.prp1 = prp1;
  e.cdw10 = ((entries - 1u) << 16) | qid;
  e.cdw11 = (std::uint32_t{cqid} << 16) | 0x1u;  // PC = 1, priority 0
  return e;
}

/// Delete I/O submission or completion queue (admin).
inline submission_entry make_delete_io_queue(admin_opcode op, std::uint16_t qid) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(op);
  e.cdw10 = qid;
  return e;
}

/// Set Features: Number of Queues (0-based counts of SQs and CQs wanted).
inline submission_entry make_set_queue_count(std::uint16_t sqs, std::uint16_t cqs) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(admin_opcode::set_features);
  e.cdw10 = static_cast<std::uint32_t>(feature_id::number_of_queues);
  e.cdw11 = (std::uint32_t(cqs - 1u) << 16) | std::uint32_t(sqs - 1u);
  return e;
}

/// Get Features for `fid`.
inline submission_entry make_get_features(feature_id fid) {
  submission_entry e{};
  e.opcode = static_cast<std::uint8_t>(admin_opcode::get_features);
  e.cdw10 = static_cast<std::uint32_t>(fid);
  return e;
}

}  // namespace bam::nvme
