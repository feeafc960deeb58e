#include "runtime/memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

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

bool host_readable(const void* p) { return detail::cuda_host_readable(p); }

void copy_any(void* dst, const void* src, std::uint64_t bytes) {
  detail::cuda_copy_any(dst, src, bytes, true);
}

void copy_any_async(void* dst, const void* src, std::uint64_t bytes) {
  detail::cuda_copy_any(dst, src, bytes, false);
}

void copy_fence() { detail::cuda_copy_fence(); }

std::uint64_t copy_mark() { return detail::cuda_copy_mark(); }

bool copy_reached(std::uint64_t mark) { return detail::cuda_copy_reached(mark); }

namespace {

// Reads [begin, end) of `fd` into `dst` (which holds that range from its start). Throws
// bam::input_error naming `path` on an error or a short read.
void read_range(int fd, const std::string& path, std::uint8_t* dst, std::uint64_t begin,
                std::uint64_t end, std::uint64_t file_bytes) {
  std::uint64_t at = begin;
  while (at < end) {
    const ssize_t n = ::pread(fd, dst + (at - begin), end - at, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw input_error("cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) {
      throw input_error("'" + path + "' ended after " + std::to_string(at) + " bytes; expected " +
                        std::to_string(file_bytes));
    }
    at += static_cast<std::uint64_t>(n);
  }
}

// Host and pinned memory: several threads read their own stripes of chunks, so a file in the
// page cache loads at memory speed instead of one thread's copy rate (seconds for a few GiB).
void load_parallel(int fd, const std::string& path, std::uint8_t* out, std::uint64_t bytes,
                   std::uint64_t chunk) {
  constexpr unsigned max_readers = 8;
  const std::uint64_t chunks = (bytes + chunk - 1) / chunk;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const auto readers = static_cast<unsigned>(
      std::min<std::uint64_t>({chunks, std::uint64_t{hw}, std::uint64_t{max_readers}}));
  std::vector<std::exception_ptr> failures(readers);
  auto stripe = [&](unsigned r) {
    try {
      for (std::uint64_t c = r; c < chunks; c += readers) {
        const std::uint64_t begin = c * chunk;
        const std::uint64_t end = std::min(bytes, begin + chunk);
        read_range(fd, path, out + begin, begin, end, bytes);
      }
    } catch (...) {
      failures[r] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned r = 1; r < readers; ++r) threads.emplace_back(stripe, r);
  stripe(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& f : failures) {
    if (f) std::rethrow_exception(f);
  }
}

}  // namespace

void load_file(int fd, const std::string& path, void* p, std::uint64_t bytes, memory_kind kind) {
  constexpr std::uint64_t chunk = 64ull << 20;
  auto* out = static_cast<std::uint8_t*>(p);
  if (kind != memory_kind::device) {
    load_parallel(fd, path, out, bytes, chunk);
    return;
  }
  const auto staging = std::make_unique<std::uint8_t[]>(chunk);
  for (std::uint64_t at = 0; at < bytes; at += chunk) {
    const std::uint64_t end = std::min(bytes, at + chunk);
    read_range(fd, path, staging.get(), at, end, bytes);
    detail::cuda_copy_to_device(out + at, staging.get(), end - at);
  }
}

}  // namespace bam::runtime
