#include "runtime/memory.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <bam/error.hpp>

namespace bam::runtime {

void* allocate(std::uint64_t bytes, memory_kind kind) {
  if (kind != memory_kind::host) return detail::cuda_allocate(bytes, kind);
  const std::uint64_t rounded = (bytes + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded);
  if (!p) throw error("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  return p;
}

void release(void* p, memory_kind kind) noexcept {
  if (!p) return;
  if (kind != memory_kind::host) {
    detail::cuda_release(p, kind);
    return;
  }
  std::free(p);
}

void fill_zero(void* p, std::uint64_t bytes, memory_kind kind) {
  if (kind == memory_kind::device) {
    detail::cuda_fill_zero(p, bytes);
  } else {
    std::memset(p, 0, bytes);
  }
}

void copy_any(void* dst, const void* src, std::uint64_t bytes) {
  detail::cuda_copy_any(dst, src, bytes);
}

void load_file(int fd, const std::string& path, void* p, std::uint64_t bytes, memory_kind kind) {
  constexpr std::uint64_t chunk = 64ull << 20;
  std::unique_ptr<std::uint8_t[]> staging;
  if (kind == memory_kind::device) staging = std::make_unique<std::uint8_t[]>(chunk);
  auto* out = static_cast<std::uint8_t*>(p);
  std::uint64_t at = 0;
  while (at < bytes) {
    const std::uint64_t want = bytes - at < chunk ? bytes - at : chunk;
    std::uint8_t* dst = staging ? staging.get() : out + at;
    std::uint64_t got = 0;
    while (got < want) {
      const ssize_t n = ::pread(fd, dst + got, want - got, static_cast<off_t>(at + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw input_error("cannot read '" + path + "': " + std::strerror(errno));
      if (n == 0) {
        throw input_error("'" + path + "' ended after " + std::to_string(at + got) +
                          " bytes; expected " + std::to_string(bytes));
      }
      got += static_cast<std::uint64_t>(n);
    }
    if (staging) detail::cuda_copy_to_device(out + at, staging.get(), want);
    at += want;
  }
}

}  // namespace bam::runtime
