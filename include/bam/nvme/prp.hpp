#pragma once
/// @file
/// Physical Region Page rules (NVMe 1.4, section 4.3).
///
/// PRP1 names the first memory page and may carry an offset (dword aligned). A transfer that
/// ends in the first page has no PRP2; one that ends in the second page has PRP2 = that page;
/// a longer one has PRP2 = a pointer to a PRP list of page addresses, and when a list fills
/// its memory page the last entry points to the next list page.

#include <cstdint>

#include <bam/nvme/status.hpp>
#include <bam/platform/config.hpp>

namespace bam::nvme {

struct prp_pair {
  std::uint64_t prp1 = 0;
  std::uint64_t prp2 = 0;
};

/// Memory pages a transfer of `bytes` starting at `addr` touches.
BAM_HD constexpr std::uint64_t prp_pages(std::uint64_t addr, std::uint64_t bytes,
                                         std::uint32_t page_bytes) {
  const std::uint64_t offset = addr & (page_bytes - 1u);
  return (offset + bytes + page_bytes - 1u) / page_bytes;
}

/// PRP list entries a transfer needs (0 when PRP1 and PRP2 suffice), counting the chain
/// pointers of lists longer than one memory page.
BAM_HD constexpr std::uint64_t prp_list_entries(std::uint64_t addr, std::uint64_t bytes,
                                                std::uint32_t page_bytes) {
  const std::uint64_t pages = prp_pages(addr, bytes, page_bytes);
  if (pages <= 2) return 0;
  const std::uint64_t data_entries = pages - 1u;
  const std::uint64_t per_page = page_bytes / 8u;
  // Each full list page gives up its last slot to the chain pointer, except the last page.
  std::uint64_t entries = data_entries;
  if (data_entries > per_page) entries += (data_entries - 2u) / (per_page - 1u);
  return entries;
}

/// Describes the buffer at `addr` (a DMA address) of `bytes` with PRPs. Where a list is
/// needed, its entries are written to `list` (capacity `list_capacity` entries), whose DMA
/// address is `list_dma` (page aligned when the list spans more than one page). Returns false
/// if `addr` is not dword aligned or the list does not fit.
BAM_HD inline bool build_prps(std::uint64_t addr, std::uint64_t bytes, std::uint32_t page_bytes,
                              std::uint64_t* list, std::uint64_t list_dma,
                              std::uint64_t list_capacity, prp_pair& out) {
  if ((addr & 3u) != 0 || bytes == 0) return false;
  const std::uint64_t pages = prp_pages(addr, bytes, page_bytes);
  const std::uint64_t first_page = addr & ~std::uint64_t(page_bytes - 1u);
  out.prp1 = addr;
  out.prp2 = 0;
  if (pages == 1) return true;
  if (pages == 2) {
    out.prp2 = first_page + page_bytes;
    return true;
  }
  if ((list_dma & 7u) != 0) return false;
  const std::uint64_t mask = page_bytes - 1u;
  std::uint64_t slot = 0;
  for (std::uint64_t p = 1; p < pages; ++p) {
    // The walker treats the last entry of a list page as a chain pointer when more than one
    // page of data remains; mirror that test on the entry's address.
    const bool last_in_list_page = ((list_dma + slot * 8u + 8u) & mask) == 0;
    if (last_in_list_page && p != pages - 1u) {
      if (slot >= list_capacity) return false;
      list[slot] = list_dma + (slot + 1u) * 8u;  // chain to the next list page
      ++slot;
    }
    if (slot >= list_capacity) return false;
    list[slot++] = first_page + p * page_bytes;
  }
  out.prp2 = list_dma;
  return true;
}

/// Walks the PRPs of a command the way a controller does: calls `segment(dma, length)` for
/// each contiguous piece in order, fetching list entries with `read_u64(dma)`. Returns the
/// status a controller posts: success, or PRP offset invalid / invalid field.
template <class ReadU64, class Segment>
BAM_HD generic_status walk_prps(std::uint64_t prp1, std::uint64_t prp2, std::uint64_t bytes,
                                std::uint32_t page_bytes, ReadU64&& read_u64, Segment&& segment) {
  const std::uint64_t mask = page_bytes - 1u;
  if ((prp1 & 3u) != 0) return generic_status::prp_offset_invalid;
  std::uint64_t first = page_bytes - (prp1 & mask);
  if (first > bytes) first = bytes;
  if (!segment(prp1, first)) return generic_status::data_transfer_error;
  std::uint64_t left = bytes - first;
  if (left == 0) return generic_status::success;
  if (left <= page_bytes) {
    if ((prp2 & mask) != 0) return generic_status::prp_offset_invalid;
    return segment(prp2, left) ? generic_status::success : generic_status::data_transfer_error;
  }
  if ((prp2 & 7u) != 0) return generic_status::prp_offset_invalid;
  std::uint64_t entry_dma = prp2;
  while (left > 0) {
    std::uint64_t page = read_u64(entry_dma);
    const bool at_list_page_end = ((entry_dma + 8u) & mask) == 0;
    if (at_list_page_end && left > page_bytes) {
      entry_dma = page;  // chain pointer to the next list page
      if ((entry_dma & 7u) != 0) return generic_status::prp_offset_invalid;
      continue;
    }
    if ((page & mask) != 0) return generic_status::prp_offset_invalid;
    const std::uint64_t len = left < page_bytes ? left : page_bytes;
    if (!segment(page, len)) return generic_status::data_transfer_error;
    left -= len;
    entry_dma += 8u;
  }
  return generic_status::success;
}

}  // namespace bam::nvme
