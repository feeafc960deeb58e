#pragma once
/// @file
/// Controller registers in BAR0 (NVMe 1.4, section 3.1) and doorbell placement.

#include <cstdint>

namespace bam::nvme {

enum class reg : std::uint32_t {
  cap = 0x00,   ///< capabilities (64 bit)
  vs = 0x08,    ///< version
  cc = 0x14,    ///< controller configuration
  csts = 0x1c,  ///< controller status
  aqa = 0x24,   ///< admin queue attributes
  asq = 0x28,   ///< admin SQ base (64 bit)
  acq = 0x30,   ///< admin CQ base (64 bit)
};

inline constexpr std::uint32_t doorbell_base = 0x1000;

/// CAP fields.
constexpr std::uint32_t cap_max_queue_entries(std::uint64_t cap) { return (cap & 0xffffu) + 1u; }
constexpr std::uint32_t cap_doorbell_stride(std::uint64_t cap) { return (cap >> 32) & 0xfu; }
constexpr std::uint32_t cap_timeout_ms(std::uint64_t cap) { return ((cap >> 24) & 0xffu) * 500u; }
constexpr std::uint32_t cap_min_page_bytes(std::uint64_t cap) {
  return 1u << (12u + ((cap >> 48) & 0xfu));
}

/// Byte offset in BAR0 of the submission queue `qid` tail doorbell.
constexpr std::uint32_t sq_tail_doorbell(std::uint16_t qid, std::uint32_t dstrd) {
  return doorbell_base + (2u * qid) * (4u << dstrd);
}
/// Byte offset in BAR0 of the completion queue `qid` head doorbell.
constexpr std::uint32_t cq_head_doorbell(std::uint16_t qid, std::uint32_t dstrd) {
  return doorbell_base + (2u * qid + 1u) * (4u << dstrd);
}

static_assert(sq_tail_doorbell(0, 0) == 0x1000);
static_assert(cq_head_doorbell(0, 0) == 0x1004);
static_assert(sq_tail_doorbell(3, 0) == 0x1018);
static_assert(cq_head_doorbell(1, 2) == 0x1000 + 3 * 16);

}  // namespace bam::nvme
