#include <bam/storage/backing_store.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>

#include "runtime/memory.hpp"

namespace bam {

namespace {
std::string errno_text(int e) { return std::strerror(e); }
}  // namespace

void backing_store::allocate(std::uint64_t bytes, memory_kind kind) {
  bytes_ = bytes;
  kind_ = kind;
  allocated_ = (bytes + 4095) / 4096 * 4096;
  if (allocated_ == 0) allocated_ = 4096;
  data_ = static_cast<std::uint8_t*>(runtime::allocate(allocated_, kind));
  const std::uint64_t chunks = (allocated_ + (1ull << chunk_shift_) - 1) >> chunk_shift_;
  dirty_words_ = (chunks + 31) / 32;
  // The dirty bits are written by the controller, so they live where it can reach them.
  dirty_ = static_cast<std::uint32_t*>(runtime::allocate(
      dirty_words_ * 4, kind == memory_kind::host ? memory_kind::host : memory_kind::pinned));
  std::memset(dirty_, 0, dirty_words_ * 4);
}

std::shared_ptr<backing_store> backing_store::in_memory(std::uint64_t bytes, memory_kind kind) {
  std::shared_ptr<backing_store> s(new backing_store());
  s->allocate(bytes, kind);
  runtime::fill_zero(s->data_, s->allocated_, kind);
  return s;
}

std::shared_ptr<backing_store> backing_store::from_file(const std::string& path, bool writable,
                                                        memory_kind kind) {
  const int fd = ::open(path.c_str(), writable ? O_RDWR : O_RDONLY);
  if (fd < 0) throw input_error("cannot open '" + path + "': " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw input_error("cannot stat '" + path + "': " + errno_text(e));
  }
  std::shared_ptr<backing_store> s(new backing_store());
  s->path_ = path;
  s->fd_ = writable ? fd : -1;
  try {
    s->allocate(static_cast<std::uint64_t>(st.st_size), kind);
    // The file fills [0, bytes); only the padding up to the allocation needs zeroes.
    runtime::fill_zero(s->data_ + s->bytes_, s->allocated_ - s->bytes_, kind);
    runtime::load_file(fd, path, s->data_, s->bytes_, kind);
  } catch (...) {
    if (!writable) ::close(fd);  // a writable store's destructor closes it
    throw;
  }
  if (!writable) ::close(fd);
  return s;
}

backing_store::~backing_store() {
  if (fd_ >= 0) ::close(fd_);
  runtime::release(data_, kind_);
  runtime::release(dirty_, kind_ == memory_kind::host ? memory_kind::host : memory_kind::pinned);
}

std::uint64_t backing_store::flush() {
  std::uint64_t written = 0;
  const std::uint64_t chunk = 1ull << chunk_shift_;
  for (std::uint64_t w = 0; w < dirty_words_; ++w) {
    // acquire: pairs with nothing stronger than the controller's relaxed bit set; the data
    // itself was ordered by the completions of the writes, which precede this FLUSH.
    const std::uint32_t bits =
        atomic_ref<std::uint32_t, scope::system>(dirty_[w]).exchange(0u, order::acquire);
    if (bits == 0) continue;
    for (unsigned b = 0; b < 32; ++b) {
      if (!(bits & (1u << b))) continue;
      const std::uint64_t begin = (w * 32 + b) * chunk;
      if (fd_ < 0 || begin >= bytes_) continue;
      const std::uint64_t end = begin + chunk < bytes_ ? begin + chunk : bytes_;
      std::uint64_t at = begin;
      while (at < end) {
        const ssize_t n = ::pwrite(fd_, data_ + at, end - at, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const int e = errno;
          // Keep the chunk dirty so no data is lost; the caller reports the failure.
          // relaxed: bookkeeping only, as above.
          atomic_ref<std::uint32_t, scope::system>(dirty_[w]).fetch_or(bits & ~((1u << b) - 1u),
                                                                       order::relaxed);
          throw error("write-back to '" + path_ + "' at byte " + std::to_string(at) +
                      " failed: " + errno_text(e));
        }
        at += static_cast<std::uint64_t>(n);
      }
      written += end - begin;
    }
  }
  if (fd_ >= 0 && written > 0 && ::fsync(fd_) != 0) {
    throw error("fsync of '" + path_ + "' failed: " + errno_text(errno));
  }
  flushed_ += written;
  return written;
}

}  // namespace bam
