#include <bam/cache.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include <bam/cache/mosaic/epochs.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/error.hpp>
#include <bam/nvme/prp.hpp>

#include "cache/cpu_executor.hpp"
#include "cache/gpu_executor.hpp"
#include "runtime/memory.hpp"

namespace bam {

const char* to_string(cache_mode m) {
  switch (m) {
    case cache_mode::none:
      return "none";
    case cache_mode::naive:
      return "naive";
    case cache_mode::optimized:
      return "optimized";
  }
  return "unknown";
}

cache_stats& cache_stats::operator+=(const cache_stats& o) {
  accesses += o.accesses;
  hits += o.hits;
  misses += o.misses;
  miss_waits += o.miss_waits;
  coalesced += o.coalesced;
  reused += o.reused;
  loads += o.loads;
  write_backs += o.write_backs;
  write_backs_beside_loads += o.write_backs_beside_loads;
  prefetched += o.prefetched;
  zero_filled += o.zero_filled;
  read_through += o.read_through;
  evictions += o.evictions;
  bytes_requested += o.bytes_requested;
  bytes_moved += o.bytes_moved;
  errors += o.errors;
  bytes_fetched += o.bytes_fetched;
  coalesces += o.coalesces;
  promotions += o.promotions;
  splinters += o.splinters;
  bytes_compacted += o.bytes_compacted;
  fills += o.fills;
  return *this;
}

namespace {

constexpr std::uint32_t max_arrays = 64;
constexpr std::uint32_t bounce_bytes = 4096;
constexpr std::uint32_t prp_page_bytes = 4096;

bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

void check_policy_percents(const cache_config& c) {
  auto bad = [](const std::string& what) { throw input_error("cache configuration: " + what); };
  if (c.frame_percent == 0 || c.frame_percent > 100) bad("frame_percent must be 1..100");
  if (c.promote_percent == 0 || c.promote_percent > 100) bad("promote_percent must be 1..100");
  if (c.fill_percent > 100) bad("fill_percent must be 0..100");
  if (c.base_first && c.frame_percent == 100) {
    // Its pieces start in the lines outside the frames, which would be a line or two.
    bad("base_first needs frame_percent below 100 (its pieces start outside the frames)");
  }
  if (c.splinter_percent >= c.promote_percent) {
    // A piece splintered at this residency would be promoted again at once.
    bad("splinter_percent (" + std::to_string(c.splinter_percent) +
        ") must be below promote_percent (" + std::to_string(c.promote_percent) + ")");
  }
}

namespace {

void check_config(const cache_config& c) {
  auto bad = [](const std::string& what) { throw input_error("cache configuration: " + what); };
  if (!power_of_two(c.line_bytes) || c.line_bytes < 512 || c.line_bytes > 65536) {
    bad("line size must be a power of two from 512 B to 64 KiB, got " +
        std::to_string(c.line_bytes));
  }
  const std::uint64_t lines = c.capacity_bytes / c.line_bytes;
  if (lines < 1) bad("capacity " + std::to_string(c.capacity_bytes) + " holds no line");
  if (lines > cache::page_bits::max_lines) bad("too many lines (" + std::to_string(lines) + ")");
  if (c.stat_shards == 0) bad("statistics need at least one shard");
  if (c.victim_timeout_ns == 0) bad("victim timeout must be positive");
  if (c.translation == translation_kind::two_level) {
    if (c.frame_bytes < c.line_bytes || (c.frame_bytes & (c.frame_bytes - 1)) != 0) {
      bad("frame size must be a power of two of at least one line, got " +
          std::to_string(c.frame_bytes));
    }
    check_policy_percents(c);
    if (cache::mosaic::plan_frames(c.line_bytes, lines, c.frame_bytes, c.frame_percent).frames ==
        0) {
      bad("a two_level cache needs at least two lines");
    }
  }
}

/// Epoch reader slots: the configured count, else what the executor's threads need (on a GPU
/// one per resident thread of every SM, which every grace period scans).
std::uint32_t epoch_slots_for(const cache_config& c, const detail::cache_executor& exec) {
  if (c.pinning != pinning_kind::epochs || c.translation != translation_kind::two_level) return 0;
  return c.epoch_slots != 0 ? c.epoch_slots : exec.reader_slots();
}

/// PRP list entries kept per line: what a line needs, rounded up to a power of two. Each
/// line's list then sits inside one memory page (the lists start page aligned, each at a
/// multiple of its size), so no list ends on a page's last entry, which a controller would
/// take for a chain pointer: with 3 entries for a 16 KiB line, some lines' lists crossed a
/// page and every command on those lines was rejected.
std::uint32_t prp_entries_per_line(std::uint32_t line_bytes) {
  const auto needed =
      static_cast<std::uint32_t>(nvme::prp_list_entries(0, line_bytes, prp_page_bytes));
  // check_config allows lines up to 64 KiB: 15 entries, far from a page's 512.
  return needed == 0 ? 0 : std::bit_ceil(needed);
}

}  // namespace

cache_plan plan_cache(const cache_config& c, std::uint64_t data_bytes,
                      std::uint64_t concurrent_warps) {
  check_config(c);
  cache_plan p;
  p.lines = c.capacity_bytes / c.line_bytes;
  p.line_state_bytes = p.lines * (8 + 4);
  p.prp_list_bytes = p.lines * prp_entries_per_line(c.line_bytes) * 8;
  p.bounce_bytes = std::uint64_t{c.bounce_buffers} * bounce_bytes;
  p.page_table_bytes = (data_bytes + c.line_bytes - 1) / c.line_bytes * 4;
  if (c.translation == translation_kind::two_level) {
    const cache::mosaic::frame_geometry g =
        cache::mosaic::plan_frames(c.line_bytes, p.lines, c.frame_bytes, c.frame_percent);
    p.frames = g.frames;
    p.frame_bytes = g.frame_bytes;
    p.frame_table_bytes = cache::mosaic::frame_table_bytes(g, c.epoch_slots);
    p.large_table_bytes = (data_bytes + g.frame_bytes - 1) / g.frame_bytes * 8;
  }
  p.metadata_bytes = p.line_state_bytes + p.prp_list_bytes + p.bounce_bytes + p.page_table_bytes +
                     std::uint64_t{c.stat_shards} * sizeof(stat_shard) + p.frame_table_bytes;
  p.min_lines_for_launch = 2 * concurrent_warps;
  return p;
}

struct page_cache::impl {
  cache_config config;
  std::unique_ptr<detail::cache_executor> exec;
  memory_kind memory = memory_kind::host;
  memory_kind prp_memory = memory_kind::host;  ///< of mem.prp_lists
  std::uint32_t lines = 0;
  page_cache_ref::memory mem{};

  struct array_state {
    bool used = false;
    std::string name;
    array_slot slot;
    std::uint32_t* page_table = nullptr;
    bool has_page_table = false;  ///< one entry per page (false: a dense array's 4-byte stub)
    std::uint64_t* large_table = nullptr;
    std::uint32_t* frames_held = nullptr;
    std::uint32_t* stored_pages = nullptr;
    stat_shard* shards = nullptr;
    error_record* errors = nullptr;
  };
  std::vector<array_state> arrays;
  std::uint64_t next_tag_base = 0;
  std::uint32_t next_tenant = 1;  ///< frame owner ids are never reused (dense_cache.hpp)

  void* alloc(std::uint64_t bytes) { return alloc(bytes, memory); }
  void* alloc(std::uint64_t bytes, memory_kind kind) {
    void* p = runtime::allocate(bytes, kind);
    runtime::fill_zero(p, bytes, kind);
    return p;
  }
  void free(void* p) { runtime::release(p, memory); }
  void free(void* p, memory_kind kind) { runtime::release(p, kind); }

  void publish_slot(std::uint32_t index) {
    exec->copy_to_cache(&mem.slots[index], &arrays[index].slot, sizeof(array_slot));
  }

  ~impl() {
    for (auto& a : arrays) {
      if (!a.used) continue;
      free(a.page_table);
      free(a.large_table);
      free(a.frames_held);
      free(a.stored_pages);
      free(a.shards);
      runtime::release(a.errors,
                       memory == memory_kind::host ? memory_kind::host : memory_kind::pinned);
    }
    const cache::mosaic::frame_pool_view& f = mem.frames;
    for (void* p :
         {static_cast<void*>(f.state), static_cast<void*>(f.resident), static_cast<void*>(f.busy),
          static_cast<void*>(f.dirty), static_cast<void*>(f.abandoned), static_cast<void*>(f.owner),
          static_cast<void*>(f.referenced), static_cast<void*>(f.resident_count),
          static_cast<void*>(f.hand), static_cast<void*>(f.epoch),
          static_cast<void*>(f.epoch_slots), static_cast<void*>(f.epoch_scan)}) {
      free(p);
    }
    free(mem.data);
    free(mem.state);
    free(mem.referenced);
    free(mem.hand);
    free(mem.prp_lists, prp_memory);
    free(mem.bounce);
    free(mem.bounce_busy);
    free(mem.slots);
  }
};

page_cache::page_cache(const cache_config& config, host_stream& stream)
    : impl_(std::make_unique<impl>()) {
  check_config(config);
  init(config, detail::make_cpu_executor(stream));
}

page_cache::page_cache(const cache_config& config, gpu_runtime& runtime)
    : impl_(std::make_unique<impl>()) {
  check_config(config);
  init(config, detail::make_gpu_executor(runtime));
}

void page_cache::init(const cache_config& config, std::unique_ptr<detail::cache_executor> exec) {
  impl& m = *impl_;
  m.config = config;
  m.exec = std::move(exec);
  m.memory = m.exec->memory();
  m.lines = static_cast<std::uint32_t>(config.capacity_bytes / config.line_bytes);
  if (m.config.bounce_buffers == 0) {
    // One per thread that can run at once, at most 1 GiB of them.
    const std::uint64_t wanted =
        m.exec->concurrent_warps() * (m.memory == memory_kind::host ? 1 : 32);
    m.config.bounce_buffers =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted, (1ull << 30) / bounce_bytes));
  }
  auto& mem = m.mem;
  mem.data = static_cast<std::uint8_t*>(m.alloc(std::uint64_t{m.lines} * config.line_bytes));
  mem.state = static_cast<std::uint64_t*>(m.alloc(std::uint64_t{m.lines} * 8));
  mem.referenced = static_cast<std::uint32_t*>(m.alloc(std::uint64_t{m.lines} * 4));
  mem.hand = static_cast<std::uint64_t*>(m.alloc(hot_line_bytes));
  mem.prp_per_line = prp_entries_per_line(config.line_bytes);
  m.prp_memory = config.prp_lists_in_host_memory && m.memory == memory_kind::device
                     ? memory_kind::pinned
                     : m.memory;
  mem.prp_lists = mem.prp_per_line ? static_cast<std::uint64_t*>(m.alloc(
                                          std::uint64_t{m.lines} * mem.prp_per_line * 8, m.prp_memory))
                                    : nullptr;
  mem.bounce_count = m.config.bounce_buffers;
  mem.bounce_bytes = bounce_bytes;
  mem.bounce = static_cast<std::uint8_t*>(m.alloc(std::uint64_t{mem.bounce_count} * bounce_bytes));
  // One flag per buffer and a release counter after them (read_through's progress check).
  mem.bounce_busy = static_cast<std::uint64_t*>(m.alloc((std::uint64_t{mem.bounce_count} + 1) * 8));
  mem.slots = static_cast<array_slot*>(m.alloc(sizeof(array_slot) * max_arrays));
  // Every ref scans every slot (unused ones have no pages): a ref taken before a later
  // attach must still find the owner of a line it evicts, or that owner's page stays mapped
  // to a line that now holds another page.
  mem.slot_count = max_arrays;
  m.arrays.resize(max_arrays);
  if (config.translation == translation_kind::two_level) init_frames();
}

void page_cache::init_frames() {
  impl& m = *impl_;
  cache::mosaic::frame_pool_view& f = m.mem.frames;
  f.geometry = cache::mosaic::plan_frames(m.config.line_bytes, m.lines, m.config.frame_bytes,
                                          m.config.frame_percent);
  f.pinning = m.config.pinning;
  f.check_owner = m.config.check_frame_owners;
  f.splinter_percent = m.config.splinter_percent;
  f.promote_percent = m.config.promote_percent;
  f.base_first = m.config.base_first;
  f.fill_slots =
      m.config.fill_percent == 0
          ? 0
          : std::max<std::uint32_t>(
                1u, static_cast<std::uint32_t>(std::uint64_t{f.geometry.lines_per_frame} *
                                               m.config.fill_percent / 100));
  const std::uint64_t frames = f.geometry.frames;
  const std::uint64_t words = frames * f.geometry.words_per_frame;
  f.state = static_cast<std::uint64_t*>(m.alloc(frames * 8));
  f.resident = static_cast<std::uint64_t*>(m.alloc(words * 8));
  f.busy = static_cast<std::uint64_t*>(m.alloc(words * 8));
  f.dirty = static_cast<std::uint64_t*>(m.alloc(words * 8));
  f.abandoned = static_cast<std::uint64_t*>(m.alloc(words * 8));
  f.owner = static_cast<std::uint64_t*>(m.alloc(frames * 8));
  f.referenced = static_cast<std::uint32_t*>(m.alloc(frames * 4));
  f.resident_count = static_cast<std::uint32_t*>(m.alloc(frames * 4));
  f.hand = static_cast<std::uint64_t*>(m.alloc(hot_line_bytes));
  f.epoch_slot_count = epoch_slots_for(m.config, *m.exec);
  if (f.epoch_slot_count != 0) {
    f.epoch = static_cast<std::uint64_t*>(m.alloc(hot_line_bytes));
    const std::uint64_t first = cache::mosaic::first_epoch;
    m.exec->copy_to_cache(f.epoch, &first, sizeof first);
    f.epoch_slots = static_cast<std::uint64_t*>(m.alloc(std::uint64_t{f.epoch_slot_count} * 8));
    // zero: none quiet yet, no scan yet
    f.epoch_scan = static_cast<std::uint64_t*>(m.alloc(cache::mosaic::epoch_scan_bytes));
  }
}

page_cache::~page_cache() = default;

page_cache_ref page_cache::ref() const {
  return page_cache_ref(impl_->mem, impl_->config, impl_->lines);
}
const cache_config& page_cache::config() const { return impl_->config; }
std::uint32_t page_cache::lines() const { return impl_->lines; }
std::uint64_t page_cache::concurrent_warps() const { return impl_->exec->concurrent_warps(); }
std::uint32_t page_cache::warp_width() const { return impl_->exec->warp_width(); }

page_cache::attachment page_cache::attach(const device_set_ref& set, std::uint64_t first_line,
                                          std::uint64_t pages, bool writable,
                                          const std::string& name, bool dense,
                                          std::uint32_t frame_quota, bool fresh) {
  impl& m = *impl_;
  std::uint32_t index = 0;
  while (index < max_arrays && m.arrays[index].used) ++index;
  if (index == max_arrays) {
    throw input_error("a cache serves at most " + std::to_string(max_arrays) + " arrays at once");
  }
  if (m.next_tag_base + pages >= cache::line_bits::max_tag) {
    throw input_error("array '" + name + "': the cache's page space (2^40 pages) is used up");
  }
  auto& a = m.arrays[index];
  a.used = true;
  a.name = name;
  const bool two_level = dense && m.config.translation == translation_kind::two_level;
  if (fresh && (!writable || two_level)) {
    throw input_error("array '" + name + "': a fresh array must be writable and on base pages " +
                      "(not dense on a two_level cache)");
  }
  if (two_level && m.next_tenant > cache::mosaic::entry_bits::tenant_mask) {
    throw input_error("array '" + name + "': the cache's dense-array ids (65535) are used up");
  }
  // A dense array on a two_level cache is translated by its large table alone, unless its
  // pieces start on base pages (base_first).
  a.has_page_table = !two_level || m.config.base_first;
  a.page_table = static_cast<std::uint32_t*>(m.alloc(a.has_page_table ? pages * 4 : 4));
  if (two_level) {
    const std::uint64_t per = m.mem.frames.geometry.lines_per_frame;
    a.large_table = static_cast<std::uint64_t*>(m.alloc((pages + per - 1) / per * 8));
    a.frames_held = static_cast<std::uint32_t*>(m.alloc(hot_line_bytes));  // a hot word alone
  }
  if (fresh) a.stored_pages = static_cast<std::uint32_t*>(m.alloc((pages + 31) / 32 * 4));
  a.shards = static_cast<stat_shard*>(m.alloc(sizeof(stat_shard) * m.config.stat_shards));
  const memory_kind record_memory =
      m.memory == memory_kind::host ? memory_kind::host : memory_kind::pinned;
  a.errors = static_cast<error_record*>(runtime::allocate(sizeof(error_record), record_memory));
  std::memset(a.errors, 0, sizeof(error_record));
  a.slot.tag_base = m.next_tag_base;
  a.slot.pages = pages;
  a.slot.page_table = a.page_table;
  a.slot.first_line = first_line;
  a.slot.set = set;
  a.slot.stats = stats_ref{a.shards, m.config.stat_shards};
  a.slot.errors = a.errors;
  a.slot.writable = writable ? 1u : 0u;
  a.slot.large_table = a.large_table;
  a.slot.tenant = two_level ? m.next_tenant++ : 0u;
  a.slot.frame_quota = two_level ? frame_quota : 0u;
  a.slot.frames_held = a.frames_held;
  a.slot.stored_pages = a.stored_pages;
  m.next_tag_base += pages;
  m.publish_slot(index);
  return {index, a.slot};
}

void page_cache::detach(std::uint32_t index) noexcept {
  impl& m = *impl_;
  auto& a = m.arrays[index];
  if (!a.used) return;
  // Lines still tagged with this array's pages now belong to no slot and are taken as free.
  a.slot.pages = 0;
  try {
    m.publish_slot(index);
  } catch (...) {
  }
  m.free(a.page_table);
  m.free(a.large_table);
  m.free(a.frames_held);
  m.free(a.stored_pages);
  m.free(a.shards);
  runtime::release(a.errors,
                   m.memory == memory_kind::host ? memory_kind::host : memory_kind::pinned);
  a = impl::array_state{};
}

namespace {
[[noreturn]] void throw_recorded(const error_record& r, const std::string& name,
                                 std::uint32_t lines, std::uint64_t warps) {
  nvme_error::details d;
  d.device = r.device;
  d.queue = r.queue;
  d.command_id = r.command_id;
  d.lba = r.lba;
  d.status = r.status;
  std::string context = "array '" + name + "'";
  switch (static_cast<error_kind>(r.kind)) {
    case error_kind::read:
      context += ": reading page " + std::to_string(r.index);
      break;
    case error_kind::write_back:
      context += ": writing back page " + std::to_string(r.index);
      break;
    case error_kind::out_of_range:
      context += ": index " + std::to_string(r.index) + " is past the end";
      break;
    case error_kind::cache:
      context += ": no free line for page " + std::to_string(r.index) + " (the cache has " +
                 std::to_string(lines) + " lines; a launch of " + std::to_string(warps) +
                 " warps can pin up to " + std::to_string(warps * 32) + ")";
      break;
    case error_kind::bounce:
      context += ": no free bounce buffer for an uncached read (the cache has " +
                 std::to_string(r.index) + ")";
      break;
    case error_kind::none:
      break;
  }
  if (r.count > 1) context += " (" + std::to_string(r.count) + " errors in all; this is the first)";
  throw nvme_error(d, context);
}
}  // namespace

void page_cache::check(std::uint32_t index) {
  impl& m = *impl_;
  error_record* r = m.arrays.at(index).errors;
  // acquire: the fields the recording thread released with state 2.
  if (atomic_ref<std::uint32_t, scope::system>(r->state).load(order::acquire) != 2u) return;
  const error_record copy = *r;
  std::memset(r, 0, sizeof(error_record));
  throw_recorded(copy, m.arrays[index].name, m.lines, m.exec->concurrent_warps());
}

void page_cache::read_bytes(std::uint32_t index, std::uint64_t set_byte, std::uint64_t bytes,
                            void* out) {
  impl& m = *impl_;
  if (!m.exec->read_bytes(ref(), m.arrays.at(index).slot, set_byte, bytes, out).ok()) check(index);
}

void page_cache::write_bytes(std::uint32_t index, std::uint64_t set_byte, std::uint64_t bytes,
                             const void* in) {
  impl& m = *impl_;
  if (!m.exec->write_bytes(ref(), m.arrays.at(index).slot, set_byte, bytes, in).ok()) check(index);
}

void page_cache::flush(std::uint32_t index) {
  impl& m = *impl_;
  if (!m.exec->flush(ref(), m.arrays.at(index).slot).ok()) check(index);
}

cache_stats page_cache::stats(std::uint32_t index) const {
  impl& m = *impl_;
  std::vector<stat_shard> shards(m.config.stat_shards);
  m.exec->copy_from_cache(shards.data(), m.arrays.at(index).shards,
                          sizeof(stat_shard) * shards.size());
  cache_stats total;
  for (const auto& s : shards) total += s.counters;
  return total;
}

tenant_stats page_cache::frame_stats(std::uint32_t index) const {
  impl& m = *impl_;
  const auto& a = m.arrays.at(index);
  tenant_stats t;
  t.counters = stats(index);
  t.tenant = a.slot.tenant;
  t.frame_quota = a.slot.frame_quota;
  const cache::mosaic::frame_pool_view& f = m.mem.frames;
  if (t.tenant == 0 || f.geometry.frames == 0) return t;
  const std::uint64_t frames = f.geometry.frames;
  std::vector<std::uint64_t> state(frames), owner(frames);
  std::vector<std::uint32_t> resident(frames);
  m.exec->copy_from_cache(state.data(), f.state, frames * 8);
  m.exec->copy_from_cache(owner.data(), f.owner, frames * 8);
  m.exec->copy_from_cache(resident.data(), f.resident_count, frames * 4);
  namespace fb = cache::mosaic::frame_bits;
  for (std::uint64_t i = 0; i < frames; ++i) {
    if (cache::mosaic::frame_free(state[i])) continue;
    const bool open = (state[i] & fb::open) != 0;
    // An open frame of base pages of several pieces names no piece in its owner word.
    const bool shared =
        open && (owner[i] & cache::mosaic::shared_piece) == cache::mosaic::shared_piece;
    const auto tenant =
        open && !shared ? static_cast<std::uint32_t>(cache::mosaic::frame_tag(state[i]) &
                                                     cache::mosaic::entry_bits::tenant_mask)
                        : static_cast<std::uint32_t>(owner[i] >> cache::mosaic::owner_tenant_shift);
    if (tenant != t.tenant) continue;
    (shared ? t.frames_shared : open ? t.frames_coalesced : t.frames_reserved) += 1;
    const std::uint64_t held = std::uint64_t{resident[i]} * m.config.line_bytes;
    t.resident_bytes += held;
    t.bloat_bytes += f.geometry.frame_bytes - held;
  }
  return t;
}

cache_holds page_cache::held_resources() const {
  const impl& m = *impl_;
  cache_holds h;
  const cache::mosaic::frame_pool_view& f = m.mem.frames;
  const std::uint64_t frame_lines = f.geometry.frames == 0 ? 0 : f.geometry.frame_lines;
  std::vector<std::uint64_t> state(m.lines);
  m.exec->copy_from_cache(state.data(), m.mem.state, state.size() * 8);
  for (std::uint64_t l = frame_lines; l < m.lines; ++l) {
    if (state[l] & cache::line_bits::busy) ++h.busy_lines;
    if (cache::line_pins(state[l]) != 0) ++h.pinned_lines;
  }
  if (f.geometry.frames != 0) {
    const std::uint64_t frames = f.geometry.frames;
    std::vector<std::uint64_t> busy(frames * f.geometry.words_per_frame), frame_state(frames);
    m.exec->copy_from_cache(busy.data(), f.busy, busy.size() * 8);
    m.exec->copy_from_cache(frame_state.data(), f.state, frames * 8);
    for (std::uint64_t w : busy) {
      for (; w != 0; w &= w - 1) ++h.busy_slots;
    }
    for (std::uint64_t s : frame_state) {
      if (s & cache::mosaic::frame_bits::held) ++h.held_frames;
      if (cache::mosaic::frame_pins(s) != 0) ++h.pinned_frames;
    }
  }
  std::vector<std::uint64_t> bounce(m.mem.bounce_count);
  m.exec->copy_from_cache(bounce.data(), m.mem.bounce_busy, bounce.size() * 8);
  for (std::uint64_t b : bounce) h.bounce_buffers += b != 0 ? 1 : 0;
  return h;
}

void page_cache::reset_stats(std::uint32_t index) {
  impl& m = *impl_;
  std::vector<stat_shard> zero(m.config.stat_shards);
  m.exec->copy_to_cache(m.arrays.at(index).shards, zero.data(), sizeof(stat_shard) * zero.size());
}

void page_cache::clear_failures(std::uint32_t index) {
  impl& m = *impl_;
  auto& a = m.arrays.at(index);
  if (!a.has_page_table) return;  // a dense array's failures are not kept (they recur)
  std::vector<std::uint32_t> table(a.slot.pages);
  m.exec->copy_from_cache(table.data(), a.page_table, table.size() * 4);
  for (auto& e : table) {
    if (cache::page_failed(e)) e = cache::page_bits::unmapped;
  }
  m.exec->copy_to_cache(a.page_table, table.data(), table.size() * 4);
}

void page_cache::synchronize() { impl_->exec->synchronize(); }

}  // namespace bam
