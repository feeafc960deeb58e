#pragma once
/// @file
/// One read or write of a contiguous range of a device set's address space into or out of a
/// buffer, through the set's queue pairs. Used by the cache for line loads and write-backs and
/// by read-through accesses.

#include <cstdint>

#include <bam/nvme/command.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/config.hpp>
#include <bam/storage/device_set.hpp>

namespace bam {

/// Where a failed command went, for the error record.
struct io_where {
  std::uint32_t device = 0;
  std::uint32_t queue = 0;
  std::uint32_t command_id = 0;
  std::uint64_t lba = 0;
};

/// A transfer between set bytes [set_byte, set_byte + bytes) and `buffer`. The range must be
/// block aligned and lie in one stripe; `bytes` at most the set's max transfer. Buffers over
/// two memory pages need a PRP list area: `prp_list` (`prp_capacity` entries) with DMA
/// address `prp_list_dma`.
struct io_request {
  nvme::io_opcode op = nvme::io_opcode::read;
  std::uint64_t set_byte = 0;
  std::uint32_t bytes = 0;
  void* buffer = nullptr;
  std::uint64_t* prp_list = nullptr;
  std::uint64_t prp_list_dma = 0;
  std::uint32_t prp_capacity = 0;
  std::uint32_t queue_hint = 0;  ///< spreads commands over queues (and replicas for reads)
};

/// Issues the request and waits for it. A write to a replicated set goes to every device; the
/// first failure is returned. On failure `where` names the command.
[[nodiscard]] BAM_HD inline io_status device_io(const device_set_ref& set, const io_request& r,
                                                io_where& where) {
  if (r.bytes == 0 || r.bytes % set.block_bytes != 0 || r.set_byte % set.block_bytes != 0 ||
      r.bytes > set.max_transfer_bytes ||
      r.set_byte + r.bytes > set.capacity_bytes + set.block_bytes - 1) {
    return io_status::host(status_source::invalid_request);
  }
  const auto dma = reinterpret_cast<std::uint64_t>(r.buffer);  // emulated: identity mapping
  nvme::prp_pair prps;
  if (!nvme::build_prps(dma, r.bytes, set.page_bytes, r.prp_list, r.prp_list_dma, r.prp_capacity,
                        prps)) {
    return io_status::host(status_source::invalid_request);
  }
  const bool all_replicas = set.replicated && r.op == nvme::io_opcode::write;
  const std::uint32_t first = all_replicas ? 0u : r.queue_hint;
  const std::uint32_t copies = all_replicas ? set.devices : 1u;
  for (std::uint32_t c = 0; c < copies; ++c) {
    const device_location at = set.locate(r.set_byte, first + c);
    const std::uint32_t qi = r.queue_hint % set.queues_per_device;
    const queue_pair_ref& q = set.queue(at.device, qi);
    const std::uint64_t lba = at.byte / set.block_bytes;
    const auto cmd = nvme::make_rw(r.op, 1, lba, r.bytes / set.block_bytes, prps.prp1, prps.prp2);
    queue_ticket ticket;
    const io_status s = q.execute(cmd, ticket);
    if (!s.ok()) {
      where = {at.device, q.id(), ticket.slot, lba};
      return s;
    }
  }
  return {};
}

/// Issues a FLUSH to every device of the set and waits.
[[nodiscard]] BAM_HD inline io_status device_flush(const device_set_ref& set, io_where& where) {
  for (std::uint32_t d = 0; d < set.devices; ++d) {
    const queue_pair_ref& q = set.queue(d, 0);
    queue_ticket ticket;
    const io_status s = q.execute(nvme::make_flush(1), ticket);
    if (!s.ok()) {
      where = {d, q.id(), ticket.slot, 0};
      return s;
    }
  }
  return {};
}

}  // namespace bam
