#pragma once
// The memory the GPU controller kernel works on, laid out on purpose. Device memory unless
// marked "mapped" (pinned host memory the host reads or writes while the kernel runs).
//
// Ownership: every queue belongs to exactly one controller warp (queue q to warp q mod warps),
// which alone reads and writes that queue's cursor, pending records and statistics, with
// plain accesses. Words shared between warps (a device's next-free time, the flush lock) and
// between the kernel and the host (mapped words) go through atomic_ref, one writer per word
// across CPU and GPU.

#include <cstdint>
#include <type_traits>

#include <bam/nvme/command.hpp>
#include <bam/platform/config.hpp>
#include <bam/storage/device_model.hpp>

#include "storage/emulated/command_engine.hpp"
#include "storage/emulated/timing.hpp"

namespace bam::emulated::gpu {

inline constexpr unsigned warp_lanes = 32;
inline constexpr std::uint64_t no_due = ~std::uint64_t{0};

/// What the kernel needs of one queue pair (a compact copy of its queue_pair_ref).
struct queue_slot {
  nvme::submission_entry* sq;
  nvme::completion_entry* cq;
  std::uint32_t* sq_doorbell;
  std::uint32_t* cq_doorbell;
  std::uint32_t depth;
  std::uint16_t queue_id;  ///< the NVMe SQ id posted in completions
  std::uint16_t pad;
  std::uint32_t device;  ///< index of its device in the set
  std::uint32_t index;   ///< global queue index (device major)
};
static_assert(std::is_trivially_copyable_v<queue_slot>);

/// The controller's private cursor of one queue. The first 16 bytes are the summary a lane
/// reads when it scans 32 queues at once.
struct alignas(64) queue_cursor {
  std::uint32_t sq_head;        ///< next SQ entry to fetch
  std::uint32_t active;         ///< pending records in use
  std::uint64_t earliest_due;   ///< smallest due time among them (controller ns), or no_due
  std::uint32_t cq_tail;        ///< next CQ entry to post
  std::uint32_t phase;          ///< phase tag of the next completion (1 on the first lap)
  std::uint64_t sequence;       ///< commands fetched (fault and latency draws)
  std::uint64_t bad_doorbells;  ///< tail doorbell values >= depth seen
  std::uint64_t dropped_since;  ///< fetch time of the first dropped command (0: none)
  std::uint32_t dropped_cid;
  std::uint32_t pad;
};
static_assert(sizeof(queue_cursor) == 64);

/// Counters of one queue; the host sums them per device.
struct queue_stats {
  std::uint64_t commands, reads, writes, flushes, bytes_read, bytes_written, invalid,
      injected_errors, dropped, late;
};
static_assert(sizeof(queue_stats) == 80);

/// A fetched command waiting for its due time. 64 bytes, moved as four 16-byte vectors.
struct alignas(16) pending_command {
  std::uint64_t due;      ///< controller ns (globaltimer minus the origin)
  std::uint64_t fetched;  ///< globaltimer at fetch (the watchdog's age)
  std::uint64_t prp1;
  std::uint64_t prp2;
  std::uint64_t slba;
  std::uint64_t flush_since;  ///< when a FLUSH was handed to the host (0: not yet)
  std::uint32_t blocks;
  std::uint32_t flush_ticket;
  std::uint16_t cid;
  std::uint16_t status;  ///< decided at fetch (validation or injected fault); 0: move data
  std::uint8_t opcode;
  std::uint8_t pad[3];
};
static_assert(sizeof(pending_command) == 64);

/// One emulated device as the kernel sees it.
struct device_params {
  namespace_view ns;
  timing_model timing;
  fault_plan faults;
  std::uint64_t seed;
};
static_assert(std::is_trivially_copyable_v<device_params>);

/// What a FLUSH does on this controller.
enum class flush_mode : std::uint32_t {
  immediate = 0,    ///< no file behind the image: completes at its due time
  host_helper = 1,  ///< a host thread writes dirty chunks back (backing_store::flush)
  unsupported = 2,  ///< a GPU-memory image with a file: cannot be written back; error status
};

/// Mapped: the host's FLUSH helper and the kernel, one writer per word.
struct flush_mailbox {
  alignas(hot_line_bytes) std::uint64_t request;  ///< kernel writes: ticket of the FLUSH asked
  alignas(hot_line_bytes) std::uint64_t done;     ///< host writes: ticket last finished
  std::uint32_t status;                           ///< host writes: its NVMe status field
};

/// Mapped: per-queue view for the watchdog, written by the owner warp every watch period.
struct watch_record {
  std::uint64_t gpu_now;      ///< globaltimer when written
  std::uint64_t oldest;       ///< globaltimer fetch time of the oldest outstanding command
  std::uint32_t oldest_cid;   ///< its command id
  std::uint32_t outstanding;  ///< commands fetched and not completed (dropped ones included)
};
static_assert(sizeof(watch_record) == 24);

/// Mapped: start and stop hand-shakes.
struct host_control {
  alignas(hot_line_bytes) std::uint32_t stop;  ///< host writes 1 to end the kernel
};

/// Device words through which warp 0 tells the others of a stop (stop_watch), each on its own
/// line.
struct controller_stop_words {
  alignas(hot_line_bytes) std::uint64_t last_work;      ///< latest %globaltimer with work (a hint)
  alignas(hot_line_bytes) std::uint32_t stopped_epoch;  ///< epoch of the start seen stopped
};

/// The kernel's parameters (by value).
struct controller_params {
  const queue_slot* queues;
  queue_cursor* cursors;
  queue_stats* stats;
  pending_command* pending;  ///< queue q's records at [q * depth, (q + 1) * depth)
  const device_params* devices;
  std::uint64_t* next_free_ps;  ///< per device: when its pipeline is free (ps past the origin)
  std::uint64_t* origin;        ///< globaltimer of the first start; set once by the kernel
  controller_stop_words* stop_words;  ///< device memory
  std::uint32_t* dirty;               ///< device copy of the dirty chunk bits (null: not tracked)
  std::uint32_t* host_dirty;          ///< the image's own dirty bits (mapped)
  std::uint64_t dirty_words;
  std::uint32_t* flush_lock;    ///< 0, or 1 while a FLUSH is with the host
  std::uint64_t* flush_ticket;  ///< tickets handed out (lock holder only)
  std::uint32_t* flush_broken;  ///< 1 after the helper missed its deadline: FLUSH fails
  flush_mailbox* mailbox;       ///< mapped
  host_control* control;        ///< mapped; null for the warm-up launch
  std::uint32_t* check_in;      ///< mapped, per block: the epoch once the block runs
  std::uint32_t* check_out;     ///< mapped, per block: the epoch once the block ended
  watch_record* watch;          ///< mapped, per queue
  std::uint64_t* trace;         ///< null, or controller_trace_words per (queue, command id)
  flush_mode flushes;
  std::uint32_t queue_count;
  std::uint32_t warps;  ///< warps in the grid (queues are dealt round robin)
  std::uint32_t epoch;
  std::uint64_t watch_period_ns;
  std::uint64_t stop_poll_ns;       ///< while some warp had work in idle_stop_poll_after_ns
  std::uint64_t idle_stop_poll_ns;  ///< once none had
  std::uint64_t idle_stop_poll_after_ns;
  std::uint32_t fetch_batches;    ///< batches of up to 32 entries per queue per serve; 0: all
  std::uint32_t idle_sleep_ns;    ///< longest idle nanosleep of a warp; 0: poll without sleeping
  std::uint32_t gpu_scope_edges;  ///< 1: completions published at GPU scope, not system
  std::uint64_t flush_timeout_ns;
};
static_assert(std::is_trivially_copyable_v<controller_params>);

}  // namespace bam::emulated::gpu
