#pragma once
// The GPU controller kernel: device code only (included by gpu_controller.cu alone).
//
// A warp owns the queues q = w, w + W, w + 2W, ... (W warps in the grid). Each pass:
//   1. scan: a lane per owned queue peeks at the SQ tail doorbell and the queue's cursor;
//      a ballot names the queues with entries to fetch or records due;
//   2. serve each such queue with the whole warp:
//      fetch   - every lane acquires the doorbell; up to 32 lanes each load one 64-byte
//                entry, validate it, draw its fault and latency; one compare-exchange per
//                batch reserves the device pipeline (throughput caps); records are filed;
//      complete- records whose due time has come are taken, as many as the CQ has room for,
//                their data moved by the whole warp (16-byte accesses, several commands in
//                flight), their completions posted (fence, dwords 0-2, dword 3 with release);
//                the rest are compacted in order.
//   3. every watch period, per-queue ages for the host's watchdog; warp 0, every stop-poll
//      period, the mapped stop flag (the others a device word it sets: stop_watch).
// The cursor of a queue is warp-uniform: every lane computes the same updates from ballots and
// shuffles, and lane 0 stores it.

#include <cstdint>

#include <bam/nvme/opcodes.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/warp.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "storage/gpu/controller_state.hpp"

namespace bam::emulated::gpu {

inline constexpr unsigned controller_block_threads = 256;
inline constexpr unsigned all_lanes = 0xffffffffu;

namespace kernel {

__device__ __forceinline__ unsigned lanes_below() { return (1u << warp::lane()) - 1u; }

__device__ __forceinline__ std::uint64_t broadcast(std::uint64_t v, unsigned from) {
  return warp::shfl(all_lanes, v, from);
}

__device__ __forceinline__ std::uint64_t warp_min(std::uint64_t v) {
  for (unsigned o = 16; o > 0; o >>= 1) {
    const std::uint64_t other = __shfl_xor_sync(all_lanes, v, o);
    v = other < v ? other : v;
  }
  return v;
}

__device__ __forceinline__ std::uint64_t warp_max(std::uint64_t v) {
  for (unsigned o = 16; o > 0; o >>= 1) {
    const std::uint64_t other = __shfl_xor_sync(all_lanes, v, o);
    v = other > v ? other : v;
  }
  return v;
}

__device__ __forceinline__ std::uint64_t warp_sum(std::uint64_t v) {
  for (unsigned o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(all_lanes, v, o);
  return v;
}

__device__ __forceinline__ std::uint64_t warp_inclusive_sum(std::uint64_t v) {
  for (unsigned o = 1; o < warp_lanes; o <<= 1) {
    const std::uint64_t below = __shfl_up_sync(all_lanes, v, o);
    if (warp::lane() >= o) v += below;
  }
  return v;
}

__device__ __forceinline__ unsigned count(bool predicate) {
  return warp::popcount(warp::ballot(all_lanes, predicate));
}

// --- 16-byte moves -------------------------------------------------------------------------

__device__ __forceinline__ uint4 load16(const std::uint8_t* p) {
  return __ldcg(reinterpret_cast<const uint4*>(p));  // L2 only: the image and buffers are
}  // touched once; keep L1 for metadata
__device__ __forceinline__ void store16(std::uint8_t* p, uint4 v) {
  __stcg(reinterpret_cast<uint4*>(p), v);
}

// Records and entries move as four 16-byte vectors; the unions keep them in registers
// (a pointer cast would push the struct to local memory).
union record_words {
  pending_command record;
  uint4 v[4];
};
union entry_words {
  nvme::submission_entry entry;
  uint4 v[4];
};

__device__ __forceinline__ pending_command load_record(const pending_command* r) {
  const uint4* from = reinterpret_cast<const uint4*>(r);
  record_words u;
#pragma unroll
  for (int k = 0; k < 4; ++k) u.v[k] = from[k];
  return u.record;
}

__device__ __forceinline__ void store_record(pending_command* r, const pending_command& v) {
  record_words u;
  u.record = v;
  uint4* to = reinterpret_cast<uint4*>(r);
#pragma unroll
  for (int k = 0; k < 4; ++k) to[k] = u.v[k];
}

__device__ __forceinline__ nvme::submission_entry load_entry(const nvme::submission_entry* e) {
  const std::uint8_t* from = reinterpret_cast<const std::uint8_t*>(e);
  entry_words u;
#pragma unroll
  for (int k = 0; k < 4; ++k) u.v[k] = load16(from + 16 * k);
  return u.entry;
}

/// The whole warp copies `n` bytes; 16-byte accesses when everything is 16-byte aligned,
/// four per lane in flight; bytes otherwise (a PRP with an odd offset, an image's tail).
__device__ void warp_copy(std::uint8_t* dst, const std::uint8_t* src, std::uint64_t n) {
  const unsigned lane = warp::lane();
  if (((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | n) & 15u) ==
      0) {
    constexpr std::uint64_t step = 4 * warp_lanes * 16;
    for (std::uint64_t base = 0; base < n; base += step) {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::uint64_t off = base + (k * warp_lanes + lane) * 16;
        if (off < n) v[k] = load16(src + off);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::uint64_t off = base + (k * warp_lanes + lane) * 16;
        if (off < n) store16(dst + off, v[k]);
      }
    }
  } else {
    for (std::uint64_t off = lane; off < n; off += warp_lanes) dst[off] = src[off];
  }
}

__device__ void warp_zero(std::uint8_t* dst, std::uint64_t n) {
  const unsigned lane = warp::lane();
  if (((reinterpret_cast<std::uintptr_t>(dst) | n) & 15u) == 0) {
    for (std::uint64_t off = lane * 16; off < n; off += warp_lanes * 16)
      store16(dst + off, uint4{});
  } else {
    for (std::uint64_t off = lane; off < n; off += warp_lanes) dst[off] = 0;
  }
}

/// Sets the dirty bits of image bytes [at, at + n) in the kernel's own bitmap (device memory,
/// GPU-only read-modify-writes; the host never touches it while the kernel runs).
__device__ void mark_dirty(const controller_params& p, std::uint32_t chunk_shift, std::uint64_t at,
                           std::uint64_t n) {
  if (!p.dirty || n == 0) return;
  for (std::uint64_t chunk = at >> chunk_shift; chunk <= (at + n - 1) >> chunk_shift; ++chunk) {
    if (chunk / 32 >= p.dirty_words) break;
    // relaxed: the bit carries no data; a FLUSH harvests it after the write's completion
    // (which follows this) has reached the host and its FLUSH was fetched.
    atomic_ref<std::uint32_t>(p.dirty[chunk / 32]).fetch_or(1u << (chunk % 32), order::relaxed);
  }
}

/// move_bytes (command_engine.hpp) for a whole warp: device bytes <-> memory, split at stripe
/// boundaries; image bytes past the end read as zero and are not written.
__device__ void warp_move(const controller_params& p, const namespace_view& ns,
                          std::uint64_t device_byte, std::uint8_t* memory, std::uint64_t bytes,
                          bool to_memory) {
  while (bytes > 0) {
    std::uint64_t contiguous = 0;
    const std::uint64_t at = ns.image_byte(device_byte, contiguous);
    const std::uint64_t n = bytes < contiguous ? bytes : contiguous;
    const std::uint64_t inside = at >= ns.image_bytes      ? 0
                                 : ns.image_bytes - at < n ? ns.image_bytes - at
                                                           : n;
    if (to_memory) {
      if (inside) warp_copy(memory, ns.image + at, inside);
      if (inside < n) warp_zero(memory + inside, n - inside);
    } else if (inside) {
      warp_copy(ns.image + at, memory, inside);
      if (warp::lane() == 0) mark_dirty(p, ns.chunk_shift, at, inside);
    }
    memory += n;
    device_byte += n;
    bytes -= n;
  }
}

/// transfer() (command_engine.hpp) for a whole warp: every lane walks the same PRPs (the list
/// entries are broadcast loads) and the warp copies each piece together. Returns the status.
__device__ __noinline__ std::uint16_t warp_transfer(const controller_params& p,
                                                    const namespace_view& ns, std::uint64_t prp1,
                                                    std::uint64_t prp2, std::uint64_t slba,
                                                    std::uint32_t blocks, bool is_read) {
  const std::uint64_t bytes = std::uint64_t{blocks} * ns.block_bytes;
  std::uint64_t device_byte = slba * ns.block_bytes;
  const nvme::generic_status s = nvme::walk_prps(
      prp1, prp2, bytes, ns.page_bytes,
      [](std::uint64_t dma) {
        return static_cast<std::uint64_t>(__ldcg(reinterpret_cast<const unsigned long long*>(dma)));
      },
      [&](std::uint64_t dma, std::uint64_t len) {
        // A null PRP (a missing PRP2, an empty list entry) would fault the whole controller;
        // a real SSD's DMA would fail the command.
        if (dma == 0) return false;
        warp_move(p, ns, device_byte, reinterpret_cast<std::uint8_t*>(dma), len, is_read);
        device_byte += len;
        return true;
      });
  return s == nvme::generic_status::success ? 0 : nvme::make_status_field(s, true);
}

/// A piece of a command's transfer: `len` bytes from `from` to `to`, both 16-byte aligned.
struct piece {
  const std::uint8_t* from = nullptr;
  std::uint8_t* to = nullptr;
  std::uint64_t len = 0;
};

/// The common command: at most two memory pages (PRP1 and PRP2, no list), 16-byte aligned,
/// inside one stripe and inside the image. Lane-local; false sends it the general way.
__device__ bool plan_simple(const namespace_view& ns, const pending_command& r, piece& a,
                            piece& b) {
  const std::uint64_t bytes = std::uint64_t{r.blocks} * ns.block_bytes;
  const std::uint64_t mask = ns.page_bytes - 1u;
  if ((r.prp1 & 15u) != 0) return false;
  std::uint64_t first = ns.page_bytes - (r.prp1 & mask);
  if (first > bytes) first = bytes;
  const std::uint64_t rest = bytes - first;
  if (rest > ns.page_bytes) return false;                               // needs a PRP list
  if (rest > 0 && (r.prp2 == 0 || (r.prp2 & mask) != 0)) return false;  // the walk reports it
  if (r.prp1 == 0) return false;
  std::uint64_t contiguous = 0;
  const std::uint64_t at = ns.image_byte(r.slba * ns.block_bytes, contiguous);
  if (contiguous < bytes || at > ns.image_bytes || ns.image_bytes - at < bytes) return false;
  std::uint8_t* image = ns.image + at;
  auto* m1 = reinterpret_cast<std::uint8_t*>(r.prp1);
  auto* m2 = reinterpret_cast<std::uint8_t*>(r.prp2);
  if (r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::read)) {
    a = {image, m1, first};
    b = {image + first, m2, rest};
  } else {
    a = {m1, image, first};
    b = {m2, image + first, rest};
  }
  return true;
}

/// Copies the pieces of the simple commands (held by their lanes: `a` always, `b` when the
/// buffer crosses a page) four pieces at a time: each lane has four 16-byte loads in flight
/// before it stores, which is what hides a PCIe round trip to a pinned image.
__device__ void copy_simple(bool simple, const piece& a, const piece& b) {
  constexpr int batch = 4;
  const unsigned lane = warp::lane();
  unsigned first_pieces = warp::ballot(all_lanes, simple);
  unsigned second_pieces = warp::ballot(all_lanes, simple && b.len != 0);
  while ((first_pieces | second_pieces) != 0) {
    const std::uint8_t* from[batch];
    std::uint8_t* to[batch];
    std::uint32_t len[batch];
#pragma unroll
    for (int k = 0; k < batch; ++k) {
      // Selections by value, not by reference: a reference to one of two locals would put
      // both in local memory.
      const bool second = first_pieces == 0;  // warp-uniform
      const unsigned mask = second ? second_pieces : first_pieces;
      const bool present = mask != 0;
      const unsigned src = present ? warp::lowest_lane(mask) : 0;
      const unsigned rest = present ? mask & (mask - 1) : 0;
      if (second) {
        second_pieces = rest;
      } else {
        first_pieces = rest;
      }
      const std::uint64_t my_from = reinterpret_cast<std::uint64_t>(second ? b.from : a.from);
      const std::uint64_t my_to = reinterpret_cast<std::uint64_t>(second ? b.to : a.to);
      const std::uint64_t my_len = second ? b.len : a.len;
      from[k] = reinterpret_cast<const std::uint8_t*>(broadcast(my_from, src));
      to[k] = reinterpret_cast<std::uint8_t*>(broadcast(my_to, src));
      len[k] = present ? static_cast<std::uint32_t>(broadcast(my_len, src)) : 0u;
    }
    std::uint32_t longest = 0;
#pragma unroll
    for (int k = 0; k < batch; ++k) longest = len[k] > longest ? len[k] : longest;
    for (std::uint32_t base = 0; base < longest; base += warp_lanes * 16) {
      const std::uint32_t off = base + lane * 16;
      uint4 v[batch];
#pragma unroll
      for (int k = 0; k < batch; ++k) {
        if (off < len[k]) v[k] = load16(from[k] + off);
      }
#pragma unroll
      for (int k = 0; k < batch; ++k) {
        if (off < len[k]) store16(to[k] + off, v[k]);
      }
    }
  }
}

/// Moves the data of the taken records (a lane each). Updates a record's status when its
/// transfer fails. Warp-collective.
__device__ void move_data(const controller_params& p, const namespace_view& ns, bool take,
                          pending_command& r) {
  const bool is_read = r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::read);
  const bool is_write = r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::write);
  const bool moves = take && r.status == 0 && (is_read || is_write);
  piece a, b;
  const bool simple = moves && plan_simple(ns, r, a, b);

  // The general way, one command at a time with the whole warp.
  unsigned general = warp::ballot(all_lanes, moves && !simple);
  while (general != 0) {
    const unsigned src = warp::lowest_lane(general);
    general &= general - 1;
    const std::uint64_t prp1 = broadcast(r.prp1, src);
    const std::uint64_t prp2 = broadcast(r.prp2, src);
    const std::uint64_t slba = broadcast(r.slba, src);
    const auto blocks = static_cast<std::uint32_t>(broadcast(r.blocks, src));
    const bool read = broadcast(is_read ? 1u : 0u, src) != 0;
    const std::uint16_t status = warp_transfer(p, ns, prp1, prp2, slba, blocks, read);
    if (warp::lane() == src) r.status = status;
  }

  copy_simple(simple, a, b);
  if (simple && is_write) {
    mark_dirty(p, ns.chunk_shift, static_cast<std::uint64_t>(a.to - ns.image), a.len + b.len);
  }
}

/// Posts the completions of the taken records. `position` is this lane's place after the CQ
/// tail. Warp-collective (the barrier).
__device__ void post(const controller_params& p, const queue_slot& s, const queue_cursor& c,
                     bool take, const pending_command& r, std::uint32_t position) {
  std::uint64_t* const trace = p.trace;
  // Every lane's data stores (the warp copied each command together) come before any lane's
  // fence below.
  __syncwarp();
  if (!take) return;
  const std::uint32_t at = c.cq_tail + position;
  const std::uint32_t slot = at % s.depth;
  const bool phase = (c.phase != 0) != (at >= s.depth);
  nvme::completion_entry& e = s.cq[slot];
  std::uint64_t* stamps =
      trace != nullptr && r.cid < s.depth
          ? trace + controller_trace_words * (std::uint64_t{s.index} * s.depth + r.cid)
          : nullptr;
  if (stamps != nullptr) {
    // relaxed: a benchmark's timestamp, published by the release of dword 3 below.
    atomic_ref<std::uint64_t>(stamps[2]).store(now_ns(), order::relaxed);
  }
  // The command's data (written by this warp's lanes, ordered by the barrier above) before the
  // entry, for readers anywhere in the system (a CPU drainer reads host memory). With GPU-scope
  // edges the release of dword 3 below is enough (it is cumulative over what the barrier
  // ordered), and a fence.sc would cost about 130 us at times (docs/results.md).
  if (p.gpu_scope_edges == 0) device_fence<scope::system>();
  // relaxed: dwords 0-2 are published by the release of dword 3 below.
  atomic_ref<std::uint32_t, scope::system>(e.dw0).store(0u, order::relaxed);
  atomic_ref<std::uint32_t, scope::system>(e.dw1).store(0u, order::relaxed);
  atomic_ref<std::uint32_t, scope::system>(e.dw2).store(
      nvme::completion_entry::make_dw2(static_cast<std::uint16_t>(c.sq_head), s.queue_id),
      order::relaxed);
  // release: dwords 0-2 and the data, for the drainer's acquire of dword 3.
  const std::uint32_t dw3 = nvme::completion_entry::make_dw3(r.cid, phase, r.status);
  if (p.gpu_scope_edges != 0) {
    atomic_ref<std::uint32_t, scope::device>(e.dw3).store(dw3, order::release);
  } else {
    atomic_ref<std::uint32_t, scope::system>(e.dw3).store(dw3, order::release);
  }
  if (stamps != nullptr) {
    // relaxed: a benchmark's timestamp of when the fence and the release above let this lane
    // go on. Not published: a waiter may read it before it lands (it then sees an older
    // command's stamp, earlier than this post, and leaves the sample out of that stage).
    atomic_ref<std::uint64_t>(stamps[3]).store(now_ns(), order::relaxed);
  }
}

/// FLUSH with a file behind the image: the host writes dirty chunks back. Lanes whose taken
/// record is such a FLUSH either hand it to the host (one at a time: a lock), or keep waiting,
/// or finish. Returns whether the lane's record completes now. Warp-collective.
__device__ __noinline__ bool handle_flush(const controller_params& p, bool take, pending_command& r,
                                          bool& modified, std::uint64_t now_abs) {
  const bool is_flush =
      take && r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::flush) && r.status == 0;
  if (warp::ballot(all_lanes, is_flush) == 0) return take;
  if (p.flushes == flush_mode::immediate) return take;
  if (p.flushes == flush_mode::unsupported) {
    if (is_flush) r.status = nvme::make_status_field(nvme::generic_status::internal_error, true);
    return take;
  }
  std::uint32_t broken = 0;
  if (warp::lane() == 0) {
    // relaxed: a flag set once, by a warp that gave up on the host; no data goes with it.
    broken = atomic_ref<std::uint32_t>(*p.flush_broken).load(order::relaxed);
  }
  if (broadcast(broken, 0) != 0) {  // warp-uniform: no lane leaves before the collectives below
    if (is_flush) r.status = nvme::make_status_field(nvme::generic_status::internal_error, true);
    return take;
  }
  bool finish = take && !is_flush;
  if (is_flush && r.flush_ticket != 0) {
    // acquire (system): the host wrote the chunks back, then released `done` and the status.
    const std::uint64_t done =
        atomic_ref<std::uint64_t, scope::system>(p.mailbox->done).load(order::acquire);
    if (done == r.flush_ticket) {
      // relaxed: ordered after the acquire of `done` above.
      r.status = static_cast<std::uint16_t>(
          atomic_ref<std::uint32_t, scope::system>(p.mailbox->status).load(order::relaxed));
      // release: the next lock holder's harvest of the host's dirty words comes after the
      // host's write-back, which we acquired above.
      atomic_ref<std::uint32_t>(*p.flush_lock).store(0u, order::release);
      finish = true;
    } else if (now_abs - r.flush_since > p.flush_timeout_ns) {
      // The helper is gone or stuck: keep the lock forever (its dirty words may still be in
      // use) and fail this and every later FLUSH.
      // relaxed: see the load above.
      atomic_ref<std::uint32_t>(*p.flush_broken).store(1u, order::relaxed);
      r.status = nvme::make_status_field(nvme::generic_status::internal_error, true);
      finish = true;
    }
  }
  const unsigned ask = warp::ballot(all_lanes, is_flush && r.flush_ticket == 0);
  if (ask != 0) {
    std::uint32_t got = 0;
    if (warp::lane() == 0) {
      std::uint32_t expected = 0;
      // acquire: the previous holder's release, after the host's write-back of its FLUSH.
      got = atomic_ref<std::uint32_t>(*p.flush_lock).compare_exchange(expected, 1u, order::acquire)
                ? 1u
                : 0u;
    }
    if (broadcast(got, 0) != 0) {
      // Harvest: move the kernel's dirty bits into the image's own words, which the host reads
      // when it flushes. One writer at a time: the host touches them only between our request
      // and its `done`, and we hold the lock until then.
      for (std::uint64_t w = warp::lane(); w < p.dirty_words; w += warp_lanes) {
        // relaxed: the exchange takes the bits; the writes they mark completed earlier.
        const std::uint32_t bits =
            atomic_ref<std::uint32_t>(p.dirty[w]).exchange(0u, order::relaxed);
        if (bits != 0) {
          atomic_ref<std::uint32_t, scope::system> host(p.host_dirty[w]);
          // relaxed: published by the release of the request below.
          host.store(host.load(order::relaxed) | bits, order::relaxed);
        }
      }
      __syncwarp();
      std::uint64_t ticket = 0;
      if (warp::lane() == 0) {
        ticket = *p.flush_ticket + 1;  // lock holder only
        *p.flush_ticket = ticket;
        // The harvested words (written by every lane, ordered by the barrier above) and the
        // data of the writes before this FLUSH, for the host.
        device_fence<scope::system>();
        // release: as above, for the helper's acquire of the request.
        atomic_ref<std::uint64_t, scope::system>(p.mailbox->request).store(ticket, order::release);
      }
      ticket = broadcast(ticket, 0);
      if (warp::lane() == warp::lowest_lane(ask)) {
        r.flush_ticket = static_cast<std::uint32_t>(ticket);
        r.flush_since = now_abs;
        modified = true;
      }
    }
  }
  return finish;
}

/// Fetches up to 32 new entries of queue `q`. Returns whether any were fetched.
__device__ __noinline__ bool fetch(const controller_params& p, const queue_slot& s,
                                   const device_params& d, queue_cursor& c, queue_stats& stats,
                                   pending_command* records, std::uint64_t origin) {
  const unsigned lane = warp::lane();
  // A benchmark's stamp (warp-uniform condition): the fetch starts, before the acquire below.
  const std::uint64_t fetching = p.trace != nullptr ? broadcast(now_ns(), 0) : 0;
  // acquire (system): the entries the tail winner published before its doorbell store. Every
  // lane loads, so each lane's own loads of entries below are ordered after its own acquire.
  const std::uint32_t tail =
      atomic_ref<std::uint32_t, scope::system>(*s.sq_doorbell).load(order::acquire);
  if (warp::ballot(all_lanes, tail >= s.depth) != 0) {
    ++c.bad_doorbells;  // a real controller raises an asynchronous event and stops the queue
    return false;
  }
  // The smallest count any lane saw: each lane's acquire then covers every entry taken.
  std::uint32_t n = __reduce_min_sync(all_lanes, (tail + s.depth - c.sq_head) % s.depth);
  const std::uint32_t room = s.depth - c.active;
  n = n < room ? n : room;
  n = n < warp_lanes ? n : warp_lanes;
  if (n == 0) return false;

  const std::uint64_t now_abs = broadcast(now_ns(), 0);
  const std::uint64_t now = now_abs > origin ? now_abs - origin : 0;
  const bool mine = lane < n;
  nvme::submission_entry e{};
  if (mine) e = load_entry(s.sq + (c.sq_head + lane) % s.depth);

  const std::uint64_t draw = (std::uint64_t{s.index} << 40) + c.sequence + lane;
  std::uint16_t status = 0;
  fault_decision f{};
  if (mine) {
    status = validate(e, d.ns);
    if (status == 0) f = decide_fault(d.faults, e, s.device, draw);
  }
  const bool invalid = mine && status != 0;
  const bool dropped = mine && !invalid && f.drop;
  const bool scheduled = mine && !invalid && !dropped;
  const bool is_flush = e.opcode == static_cast<std::uint8_t>(nvme::io_opcode::flush);
  if (scheduled) status = f.status;

  // Throughput caps: one reservation of the device's pipeline for the whole batch, each
  // command starting where the one before it in the batch ends (device_clock::schedule).
  const std::uint64_t bytes =
      scheduled && !is_flush ? std::uint64_t{e.block_count()} * d.ns.block_bytes : 0;
  const std::uint64_t cost = scheduled ? d.timing.cost_ps(bytes) : 0;
  const std::uint64_t ends = warp_inclusive_sum(cost);
  const std::uint64_t total = broadcast(ends, warp_lanes - 1);
  std::uint64_t start_ps = now * 1000u;
  if (total != 0) {
    if (lane == 0) {
      atomic_ref<std::uint64_t> clock(p.next_free_ps[s.device]);
      // relaxed: the clock word carries no data; only its value orders the batches.
      std::uint64_t old = clock.load(order::relaxed);
      for (;;) {
        start_ps = old > now * 1000u ? old : now * 1000u;
        if (clock.compare_exchange(old, start_ps + total, order::relaxed)) break;
      }
    }
    start_ps = broadcast(start_ps, 0);
  }
  std::uint64_t due = now;  // invalid commands are answered at once
  if (scheduled) {
    const std::uint64_t by_latency = now + d.timing.latency_ns(d.seed, s.device, draw);
    const std::uint64_t by_rate = (start_ps + ends) / 1000u;
    due = (by_latency > by_rate ? by_latency : by_rate) + f.extra_ns;
  }

  const bool keep = mine && !dropped;
  const unsigned keep_mask = warp::ballot(all_lanes, keep);
  if (keep) {
    pending_command r{};
    r.due = due;
    r.fetched = now_abs;
    r.prp1 = e.prp1;
    r.prp2 = e.prp2;
    r.slba = e.slba();
    r.blocks = e.block_count();
    r.cid = e.command_id;
    r.status = status;
    r.opcode = e.opcode;
    store_record(records + c.active + warp::popcount(keep_mask & lanes_below()), r);
    if (p.trace != nullptr && r.cid < s.depth) {
      // relaxed: benchmark timestamps; the submitter reads them after its wait, whose
      // acquire chain (completion, mailbox) follows these stores.
      std::uint64_t* stamps =
          p.trace + controller_trace_words * (std::uint64_t{s.index} * s.depth + r.cid);
      atomic_ref<std::uint64_t>(stamps[0]).store(fetching, order::relaxed);
      atomic_ref<std::uint64_t>(stamps[1]).store(now_abs, order::relaxed);
    }
  }
  const unsigned drop_mask = warp::ballot(all_lanes, dropped);
  if (drop_mask != 0 && c.dropped_since == 0) {
    c.dropped_since = now_abs;
    c.dropped_cid =
        static_cast<std::uint32_t>(broadcast(e.command_id, warp::lowest_lane(drop_mask)));
  }

  const unsigned injected = count(scheduled && f.status != 0);
  const unsigned late = count(scheduled && f.extra_ns != 0);
  const unsigned flushes = count(scheduled && is_flush);
  const unsigned invalids = count(invalid);
  if (lane == 0) {
    stats.commands += n;
    stats.invalid += invalids;
    stats.dropped += warp::popcount(drop_mask);
    stats.injected_errors += injected;
    stats.late += late;
    stats.flushes += flushes;
  }
  const std::uint64_t earliest = warp_min(keep ? due : no_due);
  c.earliest_due = earliest < c.earliest_due ? earliest : c.earliest_due;
  c.active += warp::popcount(keep_mask);
  c.sq_head = (c.sq_head + n) % s.depth;
  c.sequence += n;
  return true;
}

/// Completes the records of queue `q` whose time has come. Returns whether any completed.
__device__ __noinline__ bool complete(const controller_params& p, const queue_slot& s,
                                      const device_params& d, queue_cursor& c, queue_stats& stats,
                                      pending_command* records, std::uint64_t origin) {
  const unsigned lane = warp::lane();
  const std::uint64_t now_abs = broadcast(now_ns(), 0);
  const std::uint64_t now = now_abs > origin ? now_abs - origin : 0;
  // acquire (system): the drainer has read the entries its head doorbell hands back; every
  // lane loads, so each lane's entry stores come after its own acquire.
  const std::uint32_t head =
      atomic_ref<std::uint32_t, scope::system>(*s.cq_doorbell).load(order::acquire);
  const std::uint32_t free_here = head < s.depth ? (head + s.depth - c.cq_tail - 1u) % s.depth : 0;
  const std::uint32_t budget = __reduce_min_sync(all_lanes, free_here);

  std::uint32_t posted = 0;
  std::uint32_t kept = 0;
  std::uint64_t earliest = no_due;
  std::uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
  const std::uint32_t active = c.active;
  for (std::uint32_t first = 0; first < active; first += warp_lanes) {
    const std::uint32_t i = first + lane;
    const bool valid = i < active;
    pending_command r{};
    bool loaded = false;
    bool modified = false;
    const std::uint64_t due = valid ? records[i].due : no_due;
    bool take = valid && due <= now;
    if (take) {
      r = load_record(records + i);
      loaded = true;
    }
    take = handle_flush(p, take, r, modified, now_abs);
    // As many as the CQ has room for, lowest lanes first; the rest wait for the next pass.
    const unsigned due_mask = warp::ballot(all_lanes, take);
    if (take && posted + warp::popcount(due_mask & lanes_below()) >= budget) take = false;
    const unsigned take_mask = warp::ballot(all_lanes, take);
    if (take_mask != 0) {
      move_data(p, d.ns, take, r);
      post(p, s, c, take, r, posted + warp::popcount(take_mask & lanes_below()));
      posted += warp::popcount(take_mask);
      const bool ok = take && r.status == 0;
      const std::uint64_t b = std::uint64_t{r.blocks} * d.ns.block_bytes;
      if (ok && r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::read)) {
        ++reads;
        bytes_read += b;
      } else if (ok && r.opcode == static_cast<std::uint8_t>(nvme::io_opcode::write)) {
        ++writes;
        bytes_written += b;
      }
    }
    // Keep the others, in order. Every load of this chunk happens before any store (the
    // barrier), and a record only moves down into a slot whose owner has read it.
    const bool survive = valid && !take;
    const unsigned survive_mask = warp::ballot(all_lanes, survive);
    const std::uint32_t to = kept + warp::popcount(survive_mask & lanes_below());
    const bool move = survive && (to != i || modified);
    if (move && !loaded) r = load_record(records + i);
    __syncwarp();
    if (move) store_record(records + to, r);
    if (survive) earliest = due < earliest ? due : earliest;
    kept += warp::popcount(survive_mask);
    __syncwarp();
  }
  reads = warp_sum(reads);
  writes = warp_sum(writes);
  bytes_read = warp_sum(bytes_read);
  bytes_written = warp_sum(bytes_written);
  if (lane == 0) {
    stats.reads += reads;
    stats.writes += writes;
    stats.bytes_read += bytes_read;
    stats.bytes_written += bytes_written;
  }
  c.active = kept;
  c.earliest_due = warp_min(earliest);
  c.cq_tail += posted;
  if (c.cq_tail >= s.depth) {
    c.cq_tail -= s.depth;
    c.phase ^= 1u;
  }
  return posted != 0;
}

/// The lane-local peek: does queue `q` have entries to fetch or records due?
__device__ bool wants_service(const controller_params& p, std::uint32_t q, std::uint64_t now) {
  const queue_slot& s = p.queues[q];
  const queue_cursor& c = p.cursors[q];
  // relaxed: a peek; fetch() acquires the doorbell again before it reads entries.
  const std::uint32_t tail =
      atomic_ref<std::uint32_t, scope::system>(*s.sq_doorbell).load(order::relaxed);
  const bool to_fetch = tail != c.sq_head && c.active < s.depth;
  const bool to_complete = c.active > 0 && c.earliest_due <= now;
  return to_fetch || to_complete;
}

/// Serves one queue with the whole warp.
__device__ bool serve(const controller_params& p, std::uint32_t q, std::uint64_t origin) {
  const queue_slot s = p.queues[q];
  queue_cursor c = p.cursors[q];
  queue_stats& stats = p.stats[q];
  const device_params& d = p.devices[s.device];
  pending_command* records = p.pending + std::uint64_t{q} * s.depth;
  bool worked = false;
  // Fetch until the queue is empty (or the batch limit): entries that sit in the ring cost
  // their submitters latency, while a fetch batch is cheap next to a completion pass.
  for (std::uint32_t batch = 0; p.fetch_batches == 0 || batch < p.fetch_batches; ++batch) {
    if (c.active >= s.depth || !fetch(p, s, d, c, stats, records, origin)) break;
    worked = true;
  }
  if (c.active > 0) {
    const std::uint64_t now_abs = broadcast(now_ns(), 0);
    const std::uint64_t now = now_abs > origin ? now_abs - origin : 0;
    if (c.earliest_due <= now) worked |= complete(p, s, d, c, stats, records, origin);
  }
  __syncwarp();  // every lane has read the cursor and records before lane 0 replaces them
  if (warp::lane() == 0) p.cursors[q] = c;
  __syncwarp();  // lane 0's cursor and statistics before any lane reads them again
  return worked;
}

/// Per-queue ages for the host's watchdog (mapped memory, read with relaxed loads).
__device__ __noinline__ void report(const controller_params& p, std::uint32_t w,
                                    std::uint32_t mine) {
  const std::uint64_t now_abs = broadcast(now_ns(), 0);
  for (std::uint32_t i = warp::lane(); i < mine; i += warp_lanes) {
    const std::uint32_t q = w + i * p.warps;
    const queue_cursor& c = p.cursors[q];
    const pending_command* records = p.pending + std::uint64_t{q} * p.queues[q].depth;
    std::uint64_t oldest = c.dropped_since;
    std::uint32_t cid = c.dropped_cid;
    for (std::uint32_t k = 0; k < c.active; ++k) {
      const std::uint64_t t = records[k].fetched;
      if (oldest == 0 || t < oldest) {
        oldest = t;
        cid = records[k].cid;
      }
    }
    watch_record& out = p.watch[q];
    // relaxed: a report for a human; single writer, and a torn pair only skews one line.
    atomic_ref<std::uint64_t, scope::system>(out.oldest).store(oldest, order::relaxed);
    atomic_ref<std::uint32_t, scope::system>(out.oldest_cid).store(cid, order::relaxed);
    atomic_ref<std::uint32_t, scope::system>(out.outstanding)
        .store(c.active + static_cast<std::uint32_t>(p.stats[q].dropped), order::relaxed);
    atomic_ref<std::uint64_t, scope::system>(out.gpu_now).store(now_abs, order::relaxed);
  }
  __syncwarp();
}

/// The origin of controller time: the first start's %globaltimer (64-bit picosecond clocks
/// past an epoch-based origin would overflow). Agreed by one compare-exchange per warp.
__device__ std::uint64_t establish_origin(std::uint64_t* origin) {
  std::uint64_t o = 0;
  if (warp::lane() == 0) {
    std::uint64_t expected = 0;
    const std::uint64_t now = now_ns();
    // relaxed: every warp needs the same number, nothing more.
    o = atomic_ref<std::uint64_t>(*origin).compare_exchange(expected, now, order::relaxed)
            ? now
            : expected;
  }
  return broadcast(o, 0);
}

/// How the warps learn of a stop. Only warp 0 reads the stop flag in mapped host memory, and
/// rarely while any warp has work (stop_poll_ns): on the H200, warps loading mapped host memory
/// every 100 us made every system-scope barrier of every kernel on the GPU cost about 130 us,
/// and a GPU-scope fence.sc half the time (docs/results.md, "The stop poll"). Once no warp has
/// had work for idle_stop_poll_after_ns it reads the flag every idle_stop_poll_ns, so a stop
/// (which comes when the apps are done) is seen soon after the last work. The others look at a
/// word in device memory, where warp 0 leaves the epoch of the start it saw stopped.
class stop_watch {
 public:
  __device__ stop_watch(const controller_params& p, std::uint32_t w) : p_(p), poller_(w == 0) {}

  /// True once this start has been told to stop (every lane the same).
  __device__ bool seen(std::uint64_t now) {
    if (now < next_look_) return false;
    next_look_ = now + look_ns;
    std::uint32_t stopped = 0;
    if (warp::lane() == 0) stopped = poller_ ? poll(now) : read_stopped();
    return broadcast(stopped, 0) != 0;
  }

  /// This warp had work at `now`: tells the poller, at most once per publish_ns.
  __device__ void worked(std::uint64_t now) {
    if (now - published_ < publish_ns) return;
    published_ = now;
    // relaxed: a hint for the poller's period; nothing is read through it.
    if (warp::lane() == 0) last_work().store(now, order::relaxed);
  }

 private:
  static constexpr std::uint64_t look_ns = 20'000;        // device word: cheap, but not every pass
  static constexpr std::uint64_t publish_ns = 1'000'000;  // last_work: one store per ms per warp

  __device__ atomic_ref<std::uint64_t> last_work() const {
    return atomic_ref<std::uint64_t>(p_.stop_words->last_work);
  }
  __device__ atomic_ref<std::uint32_t> stopped_epoch() const {
    return atomic_ref<std::uint32_t>(p_.stop_words->stopped_epoch);
  }
  __device__ std::uint32_t read_stopped() const {
    // relaxed: the word only ends the loop.
    return stopped_epoch().load(order::relaxed) == p_.epoch ? 1u : 0u;
  }
  __device__ std::uint32_t poll(std::uint64_t now) {
    // relaxed: a hint (the stores above).
    const std::uint64_t last = last_work().load(order::relaxed);
    // A `last` past our `now` (another warp read the clock later) means work: not idle.
    const bool idle = now >= last + p_.idle_stop_poll_after_ns;
    const std::uint64_t period = idle ? p_.idle_stop_poll_ns : p_.stop_poll_ns;
    if (now - polled_ < period && polled_ != 0) return 0;
    polled_ = now;
    // relaxed: the flag only ends the loop; nothing is read through it.
    if (atomic_ref<std::uint32_t, scope::system>(p_.control->stop).load(order::relaxed) == 0) {
      return 0;
    }
    stopped_epoch().store(p_.epoch, order::relaxed);  // relaxed: only ends the others' loops
    return 1;
  }

  const controller_params& p_;
  const bool poller_;
  std::uint64_t next_look_ = 0;
  std::uint64_t published_ = 0;
  std::uint64_t polled_ = 0;
};

__device__ void run_warp(const controller_params& p, std::uint32_t w) {
  const std::uint32_t mine = w < p.queue_count ? (p.queue_count - 1 - w) / p.warps + 1 : 0;
  if (mine == 0) return;
  const std::uint64_t origin = establish_origin(p.origin);
  backoff idle(32, p.idle_sleep_ns);
  std::uint64_t next_report = 0;
  stop_watch stop(p, w);
  for (;;) {
    const std::uint64_t now_abs = broadcast(now_ns(), 0);
    if (stop.seen(now_abs)) break;
    const std::uint64_t now = now_abs > origin ? now_abs - origin : 0;
    bool worked = false;
    for (std::uint32_t base = 0; base < mine; base += warp_lanes) {
      const std::uint32_t i = base + warp::lane();
      const bool want = i < mine && wants_service(p, w + i * p.warps, now);
      unsigned m = warp::ballot(all_lanes, want);
      while (m != 0) {
        const unsigned l = warp::lowest_lane(m);
        m &= m - 1;
        worked |= serve(p, w + (base + l) * p.warps, origin);
      }
    }
    if (now_abs >= next_report) {
      report(p, w, mine);
      next_report = now_abs + p.watch_period_ns;
    }
    if (worked) {
      stop.worked(now_abs);
      idle.reset();
    } else {
      idle.pause();  // nanosleep: fewer polls of doorbells the apps' drainers also touch
    }
  }
  report(p, w, mine);
}

}  // namespace kernel

/// The controller: a persistent grid, every block resident, each checking in on start.
__global__ void __launch_bounds__(controller_block_threads, 2)
    controller_kernel(controller_params p) {
  if (p.control == nullptr) return;  // the warm-up launch: loads the kernel, does nothing
  if (threadIdx.x == 0) {
    // relaxed: the host only counts blocks that run; it reads nothing through the flag.
    atomic_ref<std::uint32_t, scope::system>(p.check_in[blockIdx.x]).store(p.epoch, order::relaxed);
  }
  const std::uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / warp_lanes;
  kernel::run_warp(p, w);
  __syncthreads();
  if (threadIdx.x == 0) {
    // release: this block's cursors and statistics before the host sees it ended (the host
    // also waits for the stream, which orders everything).
    atomic_ref<std::uint32_t, scope::system>(p.check_out[blockIdx.x])
        .store(p.epoch, order::release);
  }
}

}  // namespace bam::emulated::gpu
