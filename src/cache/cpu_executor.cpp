#include "cache/cpu_executor.hpp"

#include <cstring>

#include <bam/storage/io.hpp>

#include "cache/host_op_kernels.hpp"

namespace bam::detail {

namespace {

class cpu_executor final : public cache_executor {
 public:
  explicit cpu_executor(host_stream& stream) : stream_(stream) {}

  [[nodiscard]] memory_kind memory() const override { return memory_kind::host; }
  [[nodiscard]] std::uint64_t concurrent_warps() const override { return stream_.workers(); }
  [[nodiscard]] std::uint32_t warp_width() const override { return 1; }

  void copy_to_cache(void* dst, const void* src, std::uint64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_from_cache(void* dst, const void* src, std::uint64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }

  io_status read_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                       std::uint64_t bytes, void* out) override {
    return copy(cache, slot, set_byte, bytes, static_cast<std::uint8_t*>(out), false);
  }

  io_status write_bytes(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                        std::uint64_t bytes, const void* in) override {
    return copy(cache, slot, set_byte, bytes,
                const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), true);
  }

  io_status flush(const page_cache_ref& cache, const array_slot& slot) override {
    std::uint32_t failure = 0;
    launch(stream_, 1, stream_.workers(), flush_lines{cache, slot, &failure});
    stream_.synchronize();
    // The late completions of abandoned commands give back what they held; between launches
    // no other thread would drain them.
    device_drain(slot.set);
    if (failure != 0) return io_status::from_bits(failure);
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
  io_status copy(const page_cache_ref& cache, const array_slot& slot, std::uint64_t set_byte,
                 std::uint64_t bytes, std::uint8_t* buffer, bool to_cache) {
    std::uint32_t failure = 0;
    launch(stream_, 1, stream_.workers(),
           copy_through_cache{cache, slot, set_byte, bytes, buffer, to_cache, &failure});
    stream_.synchronize();
    return io_status::from_bits(failure);
  }

  host_stream& stream_;
};

}  // namespace

std::unique_ptr<cache_executor> make_cpu_executor(host_stream& stream) {
  return std::make_unique<cpu_executor>(stream);
}

}  // namespace bam::detail
