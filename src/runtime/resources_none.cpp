// The CPU build: GPU resources cannot be made; every constructor says so.
#include <bam/runtime/resources.hpp>

#include <utility>

#include <bam/error.hpp>

namespace bam {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw error(std::string(what) + " needs a CUDA build of bam");
}
}  // namespace

device_memory::device_memory(std::size_t) { no_cuda("device memory"); }
device_memory::~device_memory() = default;
device_memory::device_memory(device_memory&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
device_memory& device_memory::operator=(device_memory&& o) noexcept {
  data_ = std::exchange(o.data_, nullptr);
  bytes_ = std::exchange(o.bytes_, 0);
  return *this;
}

pinned_memory::pinned_memory(std::size_t) { no_cuda("pinned memory"); }
pinned_memory::~pinned_memory() = default;
pinned_memory::pinned_memory(pinned_memory&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
pinned_memory& pinned_memory::operator=(pinned_memory&& o) noexcept {
  data_ = std::exchange(o.data_, nullptr);
  bytes_ = std::exchange(o.bytes_, 0);
  return *this;
}

owned_stream owned_stream::create_non_blocking() { no_cuda("a CUDA stream"); }
owned_stream owned_stream::adopt(stream_handle) { no_cuda("a CUDA stream"); }
owned_stream::~owned_stream() = default;
owned_stream::owned_stream(owned_stream&& o) noexcept
    : stream_(std::exchange(o.stream_, nullptr)) {}
owned_stream& owned_stream::operator=(owned_stream&& o) noexcept {
  stream_ = std::exchange(o.stream_, nullptr);
  return *this;
}

owned_event owned_event::create() { no_cuda("a CUDA event"); }
owned_event::~owned_event() = default;
owned_event::owned_event(owned_event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
owned_event& owned_event::operator=(owned_event&& o) noexcept {
  event_ = std::exchange(o.event_, nullptr);
  return *this;
}
void owned_event::record(stream_handle) const { no_cuda("a CUDA event"); }

void copy_async(void*, const void*, std::size_t, stream_handle) { no_cuda("copy_async"); }
void zero_async(void*, std::size_t, stream_handle) { no_cuda("zero_async"); }

}  // namespace bam
