#pragma once
/// @file
/// Helpers for stress tests that drive bam::emulated_storage from many CPU threads: how big a
/// run is (scaled down under ThreadSanitizer), a pattern image whose every word is checkable,
/// DMA buffers with their PRP lists, and one client command (submit + wait) per protocol.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/nvme/command.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/clock.hpp>
#include <bam/queue/queue_pair.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam::testing {

/// Multiplier for the size of a stress run: the BAM_STRESS_SCALE environment variable if set,
/// else the build's default (1 in Release, smaller under ThreadSanitizer, set by CMake).
inline double stress_scale() {
  if (const char* env = std::getenv("BAM_STRESS_SCALE")) {
    const double v = std::strtod(env, nullptr);
    if (v > 0) return v;
  }
#if defined(BAM_STRESS_SCALE_DEFAULT)
  return BAM_STRESS_SCALE_DEFAULT;
#else
  return 1.0;
#endif
}

/// How much slower than Release this build runs (ThreadSanitizer: about ten times): deadlines
/// in tests that inject timeouts are multiplied by it so that they still mean "late".
inline std::uint64_t stress_slowdown() {
#if defined(BAM_STRESS_SLOWDOWN)
  return BAM_STRESS_SLOWDOWN;
#else
  return 1;
#endif
}

/// `n` scaled by stress_scale(), at least `at_least`.
inline std::uint64_t scaled(std::uint64_t n, std::uint64_t at_least = 1) {
  const auto v = static_cast<std::uint64_t>(static_cast<double>(n) * stress_scale());
  return std::max(v, at_least);
}

/// A small counter-based generator: reproducible per thread, no shared state.
class rng {
 public:
  explicit rng(std::uint64_t seed) : x_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  std::uint64_t next() {
    x_ += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t x_;
};

/// The word a pattern image holds at byte `offset` (a multiple of 8).
inline std::uint64_t pattern_word(std::uint64_t offset) {
  std::uint64_t z = offset + 0x5bd1e995ull;
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return z ^ (z >> 33);
}

/// A value no pattern word and no test write uses: buffers hold it before a read lands.
inline constexpr std::uint8_t poison_byte = 0xa5;

/// A host image of `bytes` filled with pattern_word.
inline std::shared_ptr<backing_store> pattern_image(std::uint64_t bytes) {
  auto image = backing_store::in_memory(bytes);
  for (std::uint64_t o = 0; o + 8 <= bytes; o += 8) {
    const std::uint64_t w = pattern_word(o);
    std::memcpy(image->data() + o, &w, 8);
  }
  return image;
}

/// The buffer of one command: data pages and the PRP list that describes them. A buffer whose
/// command was abandoned (timeout) may still be written by the controller when the late
/// completion comes, so a client retires it instead of reusing it.
struct io_buffer {
  static constexpr std::uint32_t page_bytes = 4096;
  static constexpr std::uint32_t pages = 5;
  static constexpr std::uint64_t list_entries = page_bytes / 8;

  alignas(page_bytes) std::uint8_t data[pages * page_bytes];
  alignas(page_bytes) std::uint64_t list[list_entries];

  /// PRPs for `bytes` at data + `offset` (a multiple of 4); fills the buffer with poison.
  nvme::prp_pair prepare(std::uint32_t offset, std::uint64_t bytes) {
    std::memset(data, poison_byte, sizeof data);
    nvme::prp_pair p;
    const bool ok =
        nvme::build_prps(reinterpret_cast<std::uint64_t>(data + offset), bytes, page_bytes, list,
                         reinterpret_cast<std::uint64_t>(list), list_entries, p);
    if (!ok) std::abort();  // a test bug: offsets and sizes are chosen to fit
    return p;
  }

  /// True while no byte of [offset, offset + bytes) has been written since prepare().
  [[nodiscard]] bool untouched(std::uint32_t offset, std::uint64_t bytes) const {
    for (std::uint64_t i = 0; i < bytes; ++i) {
      if (data[offset + i] != poison_byte) return false;
    }
    return true;
  }

  /// The 8-byte word at data + offset (offset need only be 4-aligned).
  [[nodiscard]] std::uint64_t word(std::uint64_t offset) const {
    std::uint64_t w;
    std::memcpy(&w, data + offset, 8);
    return w;
  }
};

/// Which submission path a client uses.
enum class protocol { ticket, naive };

inline const char* to_string(protocol p) { return p == protocol::ticket ? "ticket" : "naive"; }

/// Submits `command` with `p` before `submit_until`, then waits for it until `wait_until`.
inline io_status run_command(const queue_pair_ref& q, protocol p,
                             const nvme::submission_entry& command, deadline submit_until,
                             deadline wait_until, queue_ticket& ticket) {
  const io_status s = p == protocol::ticket ? q.submit(command, submit_until, ticket)
                                            : q.submit_naive(command, submit_until, ticket);
  if (!s.ok()) return s;
  return q.wait(ticket, wait_until);
}

/// A block-aligned piece of the set's image that lies on one device.
struct extent {
  std::uint64_t image_offset = 0;
  std::uint32_t device = 0;
  std::uint64_t lba = 0;  ///< on that device
  std::uint32_t blocks = 0;

  [[nodiscard]] std::uint64_t bytes(std::uint32_t block_bytes) const {
    return std::uint64_t{blocks} * block_bytes;
  }
};

/// The extent of `blocks` blocks at image byte `offset`, which must not cross a stripe.
inline extent extent_at(const device_set_ref& set, std::uint64_t offset, std::uint32_t blocks) {
  const device_location where = set.locate(offset);
  return {offset, where.device, where.byte / set.block_bytes, blocks};
}

/// A random extent of 1..max_blocks blocks inside image bytes [begin, end), within one stripe.
inline extent random_extent(const device_set_ref& set, rng& r, std::uint64_t begin,
                            std::uint64_t end, std::uint32_t max_blocks) {
  const std::uint32_t block = set.block_bytes;
  const auto blocks = static_cast<std::uint32_t>(1 + r.below(max_blocks));
  const std::uint64_t first = begin / block, count = (end - begin) / block;
  std::uint64_t b = first + r.below(count - blocks + 1);
  if (set.devices > 1 && !set.replicated) {
    const std::uint64_t per_stripe = set.stripe_bytes / block;
    // Pull the extent back so that it ends inside the stripe it starts in.
    if (b % per_stripe + blocks > per_stripe) b -= b % per_stripe + blocks - per_stripe;
    if (b < first) b = first;
  }
  return extent_at(set, b * block, blocks);
}

/// Builds a read or write of `e` into `buffer` at `offset` (a multiple of 4).
inline nvme::submission_entry rw_command(nvme::io_opcode op, const extent& e, io_buffer& buffer,
                                         std::uint32_t offset, std::uint32_t block_bytes) {
  const nvme::prp_pair p = buffer.prepare(offset, e.bytes(block_bytes));
  return nvme::make_rw(op, 1, e.lba, e.blocks, p.prp1, p.prp2);
}

/// Counts words of a read that differ from the pattern image.
inline std::uint64_t pattern_mismatches(const io_buffer& buffer, std::uint32_t offset,
                                        const extent& e, std::uint32_t block_bytes) {
  std::uint64_t wrong = 0;
  for (std::uint64_t k = 0; k < e.bytes(block_bytes); k += 8) {
    wrong += buffer.word(offset + k) != pattern_word(e.image_offset + k);
  }
  return wrong;
}

/// Sums of the per-queue counters over a storage set's queues.
inline queue_counters total(const std::vector<queue_counters>& queues) {
  queue_counters t{};
  for (const auto& q : queues) {
    t.sq_doorbells += q.sq_doorbells;
    t.submitted += q.submitted;
    t.cq_doorbells += q.cq_doorbells;
    t.drained += q.drained;
    t.late_completions += q.late_completions;
    t.bad_completions += q.bad_completions;
  }
  return t;
}

/// Stops a storage's controller when it goes out of scope. Declare it after the buffers that
/// commands in flight may still write (abandoned ones included), so that they outlive the
/// controller even when a test returns early.
class stop_on_exit {
 public:
  explicit stop_on_exit(emulated_storage& s) : storage_(s) {}
  ~stop_on_exit() { storage_.stop(); }
  stop_on_exit(const stop_on_exit&) = delete;
  stop_on_exit& operator=(const stop_on_exit&) = delete;

 private:
  emulated_storage& storage_;
};

/// Checks that the positions of one queue whose completions their submitters took are each of
/// 0..handed_out-1 exactly once (no command id carried two commands' completions, none was
/// lost). Returns "" or what is wrong.
inline std::string every_position_once(std::vector<std::uint64_t> positions,
                                       std::uint64_t handed_out) {
  std::sort(positions.begin(), positions.end());
  if (positions.size() != handed_out) {
    return std::to_string(positions.size()) + " completions taken for " +
           std::to_string(handed_out) + " positions handed out";
  }
  for (std::uint64_t k = 0; k < positions.size(); ++k) {
    if (positions[k] != k) return "position " + std::to_string(k) + " is missing or repeated";
  }
  return {};
}

/// Drains every queue of `ssd` from this thread until the controller has answered or dropped
/// every command it fetched (its `commands` equal `dropped` plus the completions drained, the
/// latter being the queues' counters plus `drained_before_resets`). Call it when no other thread
/// uses the queues. Returns false if that has not happened within `timeout_ns`.
inline bool quiesce(emulated_storage& ssd, std::uint64_t drained_before_resets,
                    std::uint64_t timeout_ns) {
  const device_set_ref set = ssd.ref();
  const deadline until = deadline::after_ns(timeout_ns);
  for (;;) {
    for (std::uint64_t i = 0; i < std::uint64_t{set.devices} * set.queues_per_device; ++i) {
      set.queues[i].drain();
    }
    const storage_stats s = ssd.stats();
    const device_stats d = s.total();
    if (d.commands == d.dropped + total(s.queues).drained + drained_before_resets) return true;
    if (until.expired()) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace bam::testing
