#pragma once
// The part of an emulated NVMe controller that does not care where it runs: fetching entries
// from a submission queue, validating them, moving data between the backing image and the PRP
// addresses, and posting completions. Written once for the CPU controller thread and the GPU
// controller kernel.
//
// Addresses: an emulated controller sees the same virtual address space as the host (CPU) or
// the GPU (unified addressing), so a PRP entry is used as a pointer.

#include <cstdint>
#include <cstring>

#include <bam/nvme/command.hpp>
#include <bam/nvme/completion.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/queue/queue_pair.hpp>
#include <bam/storage/device_model.hpp>

#include "storage/emulated/rng.hpp"

namespace bam::emulated {

/// One device's namespace over the set's backing image.
struct namespace_view {
  std::uint8_t* image = nullptr;   ///< the set's bytes
  std::uint64_t image_bytes = 0;   ///< size of the set's address space
  std::uint32_t* dirty = nullptr;  ///< one bit per 2^chunk_shift image bytes written
  std::uint32_t chunk_shift = 16;
  std::uint32_t devices = 1;
  std::uint32_t index = 0;  ///< this device's index in the set
  std::uint64_t stripe_bytes = 0;
  bool replicated = false;
  std::uint32_t block_bytes = 512;
  std::uint64_t capacity_blocks = 0;
  std::uint32_t max_transfer_bytes = 1u << 20;
  std::uint32_t page_bytes = 4096;
  /// A host controller serving GPU kernels (placement host_thread) copies with this, since the
  /// PRP addresses may be GPU memory that a plain memcpy cannot reach; null: memcpy. `src` null
  /// means zeroes. Host-only. It may only queue the copy: then host_fence is set, and the
  /// controller calls it before a completion says the data moved.
  void (*host_copy)(void* dst, const void* src, std::uint64_t bytes) = nullptr;
  /// Waits for the copies host_copy queued (null: host_copy waits itself).
  void (*host_fence)() = nullptr;
  /// Marks the copies queued so far, and tells without waiting whether a mark's copies are
  /// done (both set with host_fence): a controller keeps several batches in flight.
  std::uint64_t (*host_mark)() = nullptr;
  bool (*host_reached)(std::uint64_t mark) = nullptr;
  /// Whether the host loads from an address in place (pinned memory; set with host_copy): a
  /// PRP list there (cache_config::prp_lists_in_host_memory) is read without a copy and wait.
  bool (*host_readable)(const void* p) = nullptr;

  /// The image byte of device byte `b`, and how many bytes from there stay contiguous.
  BAM_HD std::uint64_t image_byte(std::uint64_t b, std::uint64_t& contiguous) const {
    if (replicated || devices == 1) {
      contiguous = ~std::uint64_t{0};
      return b;
    }
    const std::uint64_t stripe = b / stripe_bytes;
    const std::uint64_t within = b % stripe_bytes;
    contiguous = stripe_bytes - within;
    return (stripe * devices + index) * stripe_bytes + within;
  }

  /// Device blocks a striped or replicated set gives device `index` for `image_bytes`.
  BAM_HD static std::uint64_t blocks_for(std::uint64_t image_bytes, std::uint32_t devices,
                                         std::uint32_t index, std::uint64_t stripe_bytes,
                                         bool replicated, std::uint32_t block_bytes) {
    if (replicated || devices == 1) return (image_bytes + block_bytes - 1) / block_bytes;
    const std::uint64_t stripes = (image_bytes + stripe_bytes - 1) / stripe_bytes;
    const std::uint64_t mine = stripes / devices + (index < stripes % devices ? 1 : 0);
    return mine * (stripe_bytes / block_bytes);
  }
};

/// Checks a command the way a controller must before touching memory. Returns the status
/// field to post (0: valid).
BAM_HD inline std::uint16_t validate(const nvme::submission_entry& c, const namespace_view& ns) {
  using nvme::generic_status;
  const auto op = static_cast<nvme::io_opcode>(c.opcode);
  if (op != nvme::io_opcode::read && op != nvme::io_opcode::write && op != nvme::io_opcode::flush) {
    return nvme::make_status_field(generic_status::invalid_opcode, true);
  }
  if (op == nvme::io_opcode::flush) {
    return c.nsid == 1 || c.nsid == 0xffffffffu
               ? 0
               : nvme::make_status_field(generic_status::invalid_namespace, true);
  }
  if (c.nsid != 1) return nvme::make_status_field(generic_status::invalid_namespace, true);
  if ((c.flags & 0xc0u) != 0) {  // SGLs are not supported: PRPs only
    return nvme::make_status_field(generic_status::invalid_field, true);
  }
  const std::uint64_t blocks = c.block_count();
  if (c.slba() >= ns.capacity_blocks || blocks > ns.capacity_blocks - c.slba()) {
    return nvme::make_status_field(generic_status::lba_out_of_range, true);
  }
  if (blocks * ns.block_bytes > ns.max_transfer_bytes) {
    return nvme::make_status_field(generic_status::invalid_field, true);
  }
  if ((c.prp1 & 3u) != 0 || c.prp1 == 0) {
    return nvme::make_status_field(generic_status::prp_offset_invalid, true);
  }
  return 0;
}

/// Copies between device bytes [device_byte, +bytes) and `memory`, splitting at stripe
/// boundaries. Image bytes past the end read as zero and are not written.
template <bool ToMemory>
BAM_HD inline void move_bytes(const namespace_view& ns, std::uint64_t device_byte,
                              std::uint8_t* memory, std::uint64_t bytes) {
  while (bytes > 0) {
    std::uint64_t contiguous = 0;
    const std::uint64_t at = ns.image_byte(device_byte, contiguous);
    std::uint64_t n = bytes < contiguous ? bytes : contiguous;
    const std::uint64_t inside = at >= ns.image_bytes      ? 0
                                 : ns.image_bytes - at < n ? ns.image_bytes - at
                                                           : n;
    if constexpr (ToMemory) {
#if !BAM_DEVICE_PASS
      if (ns.host_copy != nullptr) {
        if (inside) ns.host_copy(memory, ns.image + at, inside);
        if (inside < n) ns.host_copy(memory + inside, nullptr, n - inside);
      } else
#endif
      {
        if (inside) std::memcpy(memory, ns.image + at, inside);
        if (inside < n) std::memset(memory + inside, 0, n - inside);
      }
    } else if (inside) {
#if !BAM_DEVICE_PASS
      if (ns.host_copy != nullptr) {
        ns.host_copy(ns.image + at, memory, inside);
      } else
#endif
      {
        std::memcpy(ns.image + at, memory, inside);
      }
      if (ns.dirty) {
        for (std::uint64_t chunk = at >> ns.chunk_shift;
             chunk <= (at + inside - 1) >> ns.chunk_shift; ++chunk) {
          // relaxed: the flusher runs after the FLUSH command's fetch, which the writes'
          // completions precede; the bit itself carries no data.
          atomic_ref<std::uint32_t, scope::system>(ns.dirty[chunk / 32])
              .fetch_or(1u << (chunk % 32), order::relaxed);
        }
      }
    }
    memory += n;
    device_byte += n;
    bytes -= n;
  }
}

/// Moves the data of a valid read or write. Returns the status field to post.
BAM_HD inline std::uint16_t transfer(const nvme::submission_entry& c, const namespace_view& ns) {
  const bool is_read = c.opcode == static_cast<std::uint8_t>(nvme::io_opcode::read);
  const std::uint64_t bytes = std::uint64_t{c.block_count()} * ns.block_bytes;
  std::uint64_t device_byte = c.slba() * ns.block_bytes;
  [[maybe_unused]] int list_in_place = -1;  // host_copy: whether the list is host readable
  const nvme::generic_status s = nvme::walk_prps(
      c.prp1, c.prp2, bytes, ns.page_bytes,
      [&](std::uint64_t dma) {
        std::uint64_t entry = 0;
#if !BAM_DEVICE_PASS
        if (ns.host_copy != nullptr) {  // the list may be in GPU memory
          if (list_in_place < 0) {      // one list, one allocation: asked once per command
            list_in_place =
                ns.host_readable != nullptr && ns.host_readable(reinterpret_cast<const void*>(dma));
          }
          // The submitter wrote the list before the doorbell the controller acquired.
          if (list_in_place) return *reinterpret_cast<const std::uint64_t*>(dma);
          ns.host_copy(&entry, reinterpret_cast<const void*>(dma), sizeof entry);
          if (ns.host_fence != nullptr) ns.host_fence();  // the entry is needed now
          return entry;
        }
#endif
        entry = *reinterpret_cast<const std::uint64_t*>(dma);
        return entry;
      },
      [&](std::uint64_t dma, std::uint64_t len) {
        auto* memory = reinterpret_cast<std::uint8_t*>(dma);
        if (is_read) {
          move_bytes<true>(ns, device_byte, memory, len);
        } else {
          move_bytes<false>(ns, device_byte, memory, len);
        }
        device_byte += len;
        return true;
      });
  return s == nvme::generic_status::success ? 0 : nvme::make_status_field(s, true);
}

/// What the fault plan does to one command.
struct fault_decision {
  std::uint16_t status = 0;    ///< error status to post instead of moving data (0: none)
  bool drop = false;           ///< never post a completion
  std::uint64_t extra_ns = 0;  ///< added latency
};

BAM_HD inline fault_decision decide_fault(const fault_plan& plan, const nvme::submission_entry& c,
                                          std::uint32_t device, std::uint64_t sequence) {
  fault_decision d;
  const bool is_read = c.opcode == static_cast<std::uint8_t>(nvme::io_opcode::read);
  const bool is_rw = is_read || c.opcode == static_cast<std::uint8_t>(nvme::io_opcode::write);
  if (is_read && plan.bad_lba_end > plan.bad_lba_begin) {
    const std::uint64_t first = c.slba();
    const std::uint64_t last = first + c.block_count();
    if (first < plan.bad_lba_end && last > plan.bad_lba_begin) {
      d.status = nvme::make_status_field(nvme::media_status::unrecovered_read_error);
    }
  }
  if (is_rw && plan.error_rate > 0 &&
      uniform01(plan.seed, 0xe770u + device, sequence) < plan.error_rate) {
    d.status = nvme::make_status_field(is_read ? nvme::media_status::unrecovered_read_error
                                               : nvme::media_status::write_fault);
  }
  const bool is_write = is_rw && !is_read;
  if (is_write && plan.write_error_rate > 0 &&
      uniform01(plan.seed, 0x3e77u + device, sequence) < plan.write_error_rate) {
    d.status = nvme::make_status_field(nvme::media_status::write_fault);
  }
  if (plan.drop_rate > 0 && uniform01(plan.seed, 0xd709u + device, sequence) < plan.drop_rate) {
    d.drop = true;
  }
  if ((plan.late_rate > 0 && uniform01(plan.seed, 0x1a7eu + device, sequence) < plan.late_rate) ||
      (is_write && plan.write_late_rate > 0 &&
       uniform01(plan.seed, 0x31a7u + device, sequence) < plan.write_late_rate)) {
    d.extra_ns = static_cast<std::uint64_t>(plan.late_us * 1e3);
  }
  return d;
}

/// A controller's private state for one queue pair: where it fetches and posts.
struct queue_service {
  std::uint32_t sq_head = 0;
  std::uint32_t cq_tail = 0;
  bool phase = true;  ///< phase tag of the next completion posted
  std::uint64_t bad_doorbells = 0;

  /// Entries the host has made available since the last fetch.
  BAM_HD std::uint32_t available(const queue_pair_ref& q) {
    // acquire: the entries the tail winner published before ringing the doorbell.
    const std::uint32_t tail =
        atomic_ref<std::uint32_t, scope::system>(*q.sq_doorbell()).load(order::acquire);
    if (tail >= q.depth()) {  // a real controller reports an asynchronous event and stops
      ++bad_doorbells;
      return 0;
    }
    return (tail + q.depth() - sq_head) % q.depth();
  }

  /// The next entry; call only when available() said there is one.
  BAM_HD nvme::submission_entry fetch(const queue_pair_ref& q) {
    const nvme::submission_entry e = q.sq()[sq_head];
    sq_head = (sq_head + 1u) % q.depth();
    return e;
  }

  /// Posts a completion unless the CQ is full (then returns false: try again later).
  BAM_HD bool post(const queue_pair_ref& q, std::uint16_t command_id, std::uint16_t status_field) {
    // acquire: the host has finished reading the entries its head doorbell hands back.
    const std::uint32_t head =
        atomic_ref<std::uint32_t, scope::system>(*q.cq_doorbell()).load(order::acquire);
    if ((cq_tail + 1u) % q.depth() == head) return false;
    nvme::completion_entry& e = q.cq()[cq_tail];
    // relaxed: dwords 0-2 are published by the release of dword 3 below.
    atomic_ref<std::uint32_t, scope::system>(e.dw0).store(0u, order::relaxed);
    atomic_ref<std::uint32_t, scope::system>(e.dw1).store(0u, order::relaxed);
    atomic_ref<std::uint32_t, scope::system>(e.dw2).store(
        nvme::completion_entry::make_dw2(static_cast<std::uint16_t>(sq_head), q.id()),
        order::relaxed);
    device_fence<scope::system>();  // device: the data and dwords 0-2 before the phase flips
    // release: dwords 0-2 and the command's data, for the drainer's acquire of dword 3.
    atomic_ref<std::uint32_t, scope::system>(e.dw3).store(
        nvme::completion_entry::make_dw3(command_id, phase, status_field), order::release);
    if (++cq_tail == q.depth()) {
      cq_tail = 0;
      phase = !phase;
    }
    return true;
  }
};

}  // namespace bam::emulated
