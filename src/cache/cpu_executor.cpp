#include "cache/cpu_executor.hpp"

#include <atomic>
#include <cstring>

#include <bam/platform/atomic.hpp>
#include <bam/storage/io.hpp>

namespace bam::detail {

namespace {

class cpu_executor final : public cache_executor {
 public:
  explicit cpu_executor(host_stream& stream) : stream_(stream) {}

  [[nodiscard]] memory_kind memory() const override { return memory_kind::host; }
  [[nodiscard]] std::uint64_t concurrent_warps() const override { return stream_.workers(); }

  void copy_to_cache(void* dst, const void* src, std::uint64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_from_cache(void* dst, const void* src, std::uint64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }

  io_status read_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                       std::uint64_t bytes, void* out) override {
    return per_line(
        cache, slot, set_byte, bytes,
        [out, set_byte](std::uint8_t* line_part, std::uint64_t at, std::uint64_t n, std::uint32_t) {
          std::memcpy(static_cast<std::uint8_t*>(out) + (at - set_byte), line_part, n);
          return false;
        });
  }

  io_status write_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                        std::uint64_t bytes, const void* in) override {
    return per_line(
        cache, slot, set_byte, bytes,
        [in, set_byte](std::uint8_t* line_part, std::uint64_t at, std::uint64_t n, std::uint32_t) {
          std::memcpy(line_part, static_cast<const std::uint8_t*>(in) + (at - set_byte), n);
          return true;
        });
  }

  io_status flush(const page_cache_ref& cache, const array_slot& slot) override {
    std::atomic<std::uint32_t> failure{0};
    const std::uint32_t lines = cache.lines();
    launch(stream_, 1, stream_.workers(), [=, &failure](thread_index t) {
      for (std::uint64_t l = t.id; l < lines; l += t.count) {
        const io_status s = cache.flush_line(slot, static_cast<std::uint32_t>(l));
        std::uint32_t none = 0;
        if (!s.ok()) failure.compare_exchange_strong(none, s.bits(), std::memory_order_relaxed);
      }
    });
    stream_.synchronize();
    if (failure.load() != 0) return io_status::from_bits(failure.load());
    io_where where;
    const io_status s = device_flush(slot.set, where);
    if (!s.ok()) {
      slot.errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id, 0,
                          0);
    }
    return s;
  }

  void synchronize() override { stream_.synchronize(); }

 private:
  // Runs `op(line_bytes_ptr, set_byte_of_part, part_bytes, line)` for each line-sized part of
  // [set_byte, +bytes), each part on its own logical thread with the line pinned; `op`
  // returns true when it wrote the line.
  template <class Op>
  io_status per_line(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                     std::uint64_t bytes, Op op) {
    const std::uint32_t shift = cache.line_shift();
    const std::uint64_t first = set_byte >> shift;
    const std::uint64_t last = (set_byte + bytes - 1) >> shift;
    const std::uint64_t parts = last - first + 1;
    std::atomic<std::uint32_t> failure{0};
    launch(stream_, 1, stream_.workers(), [=, &failure](thread_index t) {
      for (std::uint64_t p = t.id; p < parts; p += t.count) {
        const std::uint64_t line_start = (first + p) << shift;
        const std::uint64_t from = line_start > set_byte ? line_start : set_byte;
        const std::uint64_t line_end = line_start + (std::uint64_t{1} << shift);
        const std::uint64_t to = line_end < set_byte + bytes ? line_end : set_byte + bytes;
        const acquire_result r =
            cache.acquire(slot, first + p - slot.first_line, 1, static_cast<std::uint32_t>(p));
        if (!r.status.ok()) {
          std::uint32_t none = 0;
          failure.compare_exchange_strong(none, r.status.bits(), std::memory_order_relaxed);
          continue;
        }
        if (op(cache.line_data(r.line) + (from - line_start), from, to - from, r.line))
          cache.mark_dirty(r.line);
        cache.release(r.line);
      }
    });
    stream_.synchronize();
    return io_status::from_bits(failure.load());
  }

  host_stream& stream_;
};

}  // namespace

std::unique_ptr<cache_executor> make_cpu_executor(host_stream& stream) {
  return std::make_unique<cpu_executor>(stream);
}

}  // namespace bam::detail
