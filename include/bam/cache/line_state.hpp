#pragma once
/// @file
/// The packed words of the cache: a line's state and a page's translation.
///
/// Line state (64 bits), one atomic word per line so that a pin and the check of what the line
/// holds are one operation:
///
///     63            24 23  22   21    20 19        0
///     | owner tag    | -  BUSY DIRTY VALID | pins   |
///
/// owner tag: the global page id + 1 of the page the line holds (0: none). BUSY: one thread owns
/// the line exclusively (loading, evicting, writing back); pins are not taken while it is set.
/// A pin attempt is a fetch_add of one pin that is undone when the returned word shows BUSY, not
/// VALID or another owner, so every transition of a BUSY line is a CAS that keeps the pin bits.
///
/// Page entry (32 bits), one per base page of each array: 0 unmapped; line + 1; loading;
/// failed with the status of the failed load; or blocked: the page of a dense array whose
/// piece has left base pages (base_first, docs/mosaic.md), to be found through its large entry.

#include <cstdint>

#include <bam/nvme/status.hpp>
#include <bam/platform/config.hpp>

namespace bam::cache {

namespace line_bits {
inline constexpr std::uint64_t pin_one = 1;
inline constexpr std::uint64_t pin_mask = (1ull << 20) - 1;
inline constexpr std::uint64_t valid = 1ull << 20;
inline constexpr std::uint64_t dirty = 1ull << 21;
inline constexpr std::uint64_t busy = 1ull << 22;
inline constexpr unsigned tag_shift = 24;
inline constexpr std::uint64_t max_tag = (1ull << 40) - 1;
}  // namespace line_bits

BAM_HD constexpr std::uint64_t line_pins(std::uint64_t s) { return s & line_bits::pin_mask; }
BAM_HD constexpr std::uint64_t line_tag(std::uint64_t s) { return s >> line_bits::tag_shift; }
BAM_HD constexpr std::uint64_t with_tag(std::uint64_t s, std::uint64_t tag) {
  return (s & ((1ull << line_bits::tag_shift) - 1)) | (tag << line_bits::tag_shift);
}
/// True when a pin taken on a line in state `s` is a usable pin on page `tag`.
BAM_HD constexpr bool pin_usable(std::uint64_t s, std::uint64_t tag) {
  return (s & (line_bits::busy | line_bits::valid)) == line_bits::valid && line_tag(s) == tag;
}

static_assert(line_pins(with_tag(line_bits::valid | 7, 12345)) == 7);
static_assert(line_tag(with_tag(line_bits::valid | 7, 12345)) == 12345);
static_assert(pin_usable(with_tag(line_bits::valid | 3, 9), 9));
static_assert(!pin_usable(with_tag(line_bits::valid | line_bits::busy, 9), 9));
static_assert(!pin_usable(with_tag(line_bits::valid, 8), 9));

namespace page_bits {
inline constexpr std::uint32_t unmapped = 0;
inline constexpr std::uint32_t loading = 0xffffffffu;
inline constexpr std::uint32_t blocked = 0xfffffffeu;
inline constexpr std::uint32_t failed_base = 0xfffe0000u;  ///< failed | encoded status (16 bits)
/// Lines a cache may have: line + 1 must stay below failed_base.
inline constexpr std::uint64_t max_lines = failed_base - 1u;
}  // namespace page_bits

BAM_HD constexpr bool page_mapped(std::uint32_t e) {
  return e != page_bits::unmapped && e < page_bits::failed_base;
}
BAM_HD constexpr std::uint32_t page_line(std::uint32_t e) { return e - 1u; }
BAM_HD constexpr std::uint32_t page_entry_for_line(std::uint32_t line) { return line + 1u; }
BAM_HD constexpr bool page_failed(std::uint32_t e) {
  return e >= page_bits::failed_base && e < page_bits::blocked;
}
/// A failed entry keeps the failure's status: a device status field, or a host source.
BAM_HD constexpr std::uint32_t page_failure(io_status s) {
  const std::uint32_t code = s.source() == status_source::device
                                 ? s.status_field()
                                 : 0x8000u | static_cast<std::uint32_t>(s.source());
  return page_bits::failed_base | code;
}
BAM_HD constexpr io_status page_failure_status(std::uint32_t e) {
  const std::uint32_t code = e & 0xffffu;
  return (code & 0x8000u) ? io_status::host(static_cast<status_source>(code & 0xffu))
                          : io_status::from_device(static_cast<std::uint16_t>(code));
}

static_assert(page_failed(page_failure(io_status::host(status_source::timeout))));
static_assert(page_failure_status(page_failure(io_status::host(status_source::timeout))) ==
              io_status::host(status_source::timeout));
static_assert(page_failure_status(page_failure(io_status::from_device(0x281))) ==
              io_status::from_device(0x281));
static_assert(!page_mapped(page_bits::loading) && !page_failed(page_bits::loading));
static_assert(!page_mapped(page_bits::blocked) && !page_failed(page_bits::blocked));
static_assert(page_failed(page_failure(io_status::from_device(0xffff))));

}  // namespace bam::cache
