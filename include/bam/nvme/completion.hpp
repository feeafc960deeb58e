#pragma once
/// @file
/// The 16-byte completion queue entry (NVMe 1.4, figure 121), kept as four dwords: a controller
/// posts dwords 0-2 first and dword 3 (phase, command id, status) last with release, because a
/// 16-byte vector store is not single-copy atomic; the reader acquires dword 3 first.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::nvme {

inline constexpr std::uint32_t completion_entry_bytes = 16;

struct alignas(16) completion_entry {
  std::uint32_t dw0;  ///< command specific
  std::uint32_t dw1;  ///< reserved
  std::uint32_t dw2;  ///< SQ head pointer (15:0), SQ identifier (31:16)
  std::uint32_t dw3;  ///< command id (15:0), phase tag (16), status field (31:17)

  BAM_HD static constexpr std::uint32_t make_dw2(std::uint16_t sq_head, std::uint16_t sq_id) {
    return std::uint32_t{sq_head} | (std::uint32_t{sq_id} << 16);
  }
  BAM_HD static constexpr std::uint32_t make_dw3(std::uint16_t command_id, bool phase,
                                                 std::uint16_t status_field) {
    return std::uint32_t{command_id} | (phase ? 1u << 16 : 0u) |
           (std::uint32_t{status_field} & 0x7fffu) << 17;
  }
  BAM_HD static constexpr std::uint16_t sq_head(std::uint32_t dw2) {
    return static_cast<std::uint16_t>(dw2 & 0xffffu);
  }
  BAM_HD static constexpr std::uint16_t sq_id(std::uint32_t dw2) {
    return static_cast<std::uint16_t>(dw2 >> 16);
  }
  BAM_HD static constexpr std::uint16_t command_id(std::uint32_t dw3) {
    return static_cast<std::uint16_t>(dw3 & 0xffffu);
  }
  BAM_HD static constexpr bool phase(std::uint32_t dw3) { return (dw3 >> 16) & 1u; }
  /// The 15-bit status field: SC (7:0), SCT (10:8), CRD (12:11), M (13), DNR (14).
  BAM_HD static constexpr std::uint16_t status_field(std::uint32_t dw3) {
    return static_cast<std::uint16_t>(dw3 >> 17);
  }
};

static_assert(sizeof(completion_entry) == completion_entry_bytes);
static_assert(completion_entry::make_dw3(0xabcd, true, 0x4281) == 0x8503abcdu);
static_assert(completion_entry::status_field(0x8503abcdu) == 0x4281);
static_assert(completion_entry::command_id(0x8503abcdu) == 0xabcd);
static_assert(completion_entry::phase(0x8503abcdu));

}  // namespace bam::nvme
