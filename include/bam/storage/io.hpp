#pragma once
/// @file
/// One read or write of a contiguous range of a device set's address space into or out of a
/// buffer, through the set's queue pairs. Used by the cache for line loads and write-backs and
/// by read-through accesses.
///
/// Two deadlines bound a command, each the queue's timeout: entering the queue (its slot and
/// the tail; status_source::submit_timeout past it) and, from then on, its completion
/// (status_source::timeout). A command given up on while the device may still run it is
/// *abandoned* (io_where::abandoned): its buffer may still be written or read by the device, so
/// the buffer's owner must not reuse it. The request names what the owner holds for the
/// buffer (io_request::hold); the queue keeps that record and whoever drains the late
/// completion gives it back (queue_pair_ref::wait).

#include <cstdint>

#include <bam/nvme/command.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/config.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/memory_copy.hpp>

namespace bam {

/// Where a failed command went, for the error record.
struct io_where {
  std::uint32_t device = 0;
  std::uint32_t queue = 0;
  std::uint32_t command_id = 0;
  std::uint64_t lba = 0;
  /// The command was given up on while the device may still run it: the queue keeps the
  /// request's hold and gives it back when the late completion is drained. The caller must
  /// leave what the hold names alone (it may be given back at any moment).
  bool abandoned = false;
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
  /// What the buffer's owner holds while the command may run; given back by the queue if
  /// the command is abandoned (command_hold). Nothing: the buffer needs no protection.
  command_hold hold;
};

/// A command device_io_submit issued and nobody has waited for yet. While `queue` is set the
/// device may still move data into or out of the request's buffer (and read its PRP list):
/// both must stay put until device_io_wait returns.
struct io_issued {
  const queue_pair_ref* queue = nullptr;  ///< null: nothing in flight
  queue_ticket ticket;
  io_where where;  ///< the command, for the error record
  deadline until;  ///< the completion's deadline, counted from the command's entry
  command_hold hold;  ///< kept by the queue if the wait abandons the command
};

namespace detail {

/// Submits the request's command for copy `replica` to its device's queue hint % Q.
[[nodiscard]] BAM_HD inline io_status submit_copy(const device_set_ref& set, const io_request& r,
                                                  const nvme::prp_pair& prps, std::uint32_t replica,
                                                  io_issued& out) {
  const device_location at = set.locate(r.set_byte, replica);
  const queue_pair_ref& q = set.queue(at.device, r.queue_hint % set.queues_per_device);
  const std::uint64_t lba = at.byte / set.block_bytes;
  const auto cmd = nvme::make_rw(r.op, 1, lba, r.bytes / set.block_bytes, prps.prp1, prps.prp2);
  out.ticket = {};
  out.hold = r.hold;
  const io_status s = q.submit(cmd, deadline::after_ns(q.timeout_ns()), out.ticket, r.hold);
  out.where = {at.device, q.id(), out.ticket.slot, lba, out.ticket.abandoned};
  out.queue = s.ok() ? &q : nullptr;
  // The completion gets the whole timeout however long the command waited to enter.
  out.until = deadline::after_ns(q.timeout_ns());
  return s;
}

}  // namespace detail

/// Waits for a command device_io_submit issued (at once if nothing is in flight) and returns
/// its status; on failure issued.where names it, and issued.where.abandoned says the command
/// may still run (the queue keeps its hold). Call it once per successful submission.
[[nodiscard]] BAM_HD inline io_status device_io_wait(io_issued& issued) {
  if (issued.queue == nullptr) return {};
  const io_status s = issued.queue->wait(issued.ticket, issued.until, issued.hold);
  // wait() returns timeout exactly when it abandoned the command.
  if (s.source() == status_source::timeout) issued.where.abandoned = true;
  return s;
}

/// Issues the request without waiting for its completion. On success the command is in flight
/// (out.queue set) until device_io_wait(out), except on a memory set, where it is done at once; on
/// failure out.where names the command, and nothing is in flight unless out.where.abandoned (then
/// the queue keeps r.hold). A write to a replicated set is carried out whole here, one device after
/// another (each copy waited for before the next is issued), so nothing of it is left in flight.
///
/// A thread must not hold two commands in flight that may take the same slot of one queue:
/// the second submission waits for the first's completion to be taken, which that thread
/// would only do later. Commands that go to different queues (queue_hint % Q or device
/// differ) never share a slot. Threads that hold several must submit them in increasing
/// queue index (queue_hint % Q, whatever the device): a submitter then only waits on holders
/// of lower positions of its own queue or on threads already past it to a higher index, so no
/// two threads wait on each other's slots in a cycle.
[[nodiscard]] BAM_HD inline io_status device_io_submit(const device_set_ref& set,
                                                       const io_request& r, io_issued& out) {
  out.queue = nullptr;
  out.where = {};
  if (r.bytes == 0 || r.bytes % set.block_bytes != 0 || r.set_byte % set.block_bytes != 0 ||
      r.bytes > set.max_transfer_bytes ||
      r.set_byte + r.bytes > set.capacity_bytes + set.block_bytes - 1) {
    return io_status::host(status_source::invalid_request);
  }
  if (set.memory != nullptr) {
    // A memory set: the command is this thread's copy, done when it returns.
    std::uint8_t* at = set.memory + r.set_byte;
    if (r.op == nvme::io_opcode::read) {
      detail::copy_alone(r.buffer, at, r.bytes);
    } else if (r.op == nvme::io_opcode::write) {
      detail::copy_alone(at, r.buffer, r.bytes);
    } else {
      return io_status::host(status_source::invalid_request);
    }
    return {};
  }
  const auto dma = reinterpret_cast<std::uint64_t>(r.buffer);  // emulated: identity mapping
  nvme::prp_pair prps;
  if (!nvme::build_prps(dma, r.bytes, set.page_bytes, r.prp_list, r.prp_list_dma, r.prp_capacity,
                        prps)) {
    return io_status::host(status_source::invalid_request);
  }
  if (!(set.replicated && r.op == nvme::io_opcode::write)) {
    return detail::submit_copy(set, r, prps, r.queue_hint, out);
  }
  for (std::uint32_t c = 0; c < set.devices; ++c) {
    io_status s = detail::submit_copy(set, r, prps, c, out);
    if (s.ok()) s = device_io_wait(out);
    out.queue = nullptr;
    if (!s.ok()) return s;  // an abandoned copy keeps the hold; no other copy is issued
  }
  return {};
}

/// Issues the request and waits for it. A write to a replicated set goes to every device; the
/// first failure is returned. On failure `where` names the command (and says whether it was
/// abandoned with r.hold kept by the queue).
[[nodiscard]] BAM_HD inline io_status device_io(const device_set_ref& set, const io_request& r,
                                                io_where& where) {
  io_issued issued;
  io_status s = device_io_submit(set, r, issued);
  if (s.ok()) s = device_io_wait(issued);
  if (!s.ok()) where = issued.where;
  return s;
}

/// Drains every queue of the set that has completions waiting, without waiting for any: the
/// late completions of abandoned commands give back what their buffers held. Any thread that
/// can reach the queues may call it (the host, on the CPU path). Threads that share the work
/// pass `first` and `step`: each drains queues first, first + step, ... of the set.
BAM_HD inline void device_drain(const device_set_ref& set, std::uint32_t first = 0,
                                std::uint32_t step = 1) {
  const std::uint32_t queues = set.devices * set.queues_per_device;
  for (std::uint32_t i = first; i < queues; i += step) set.queues[i].drain();
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
