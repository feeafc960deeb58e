#include "graph/staged_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <bam/error.hpp>

namespace bam::graph {

namespace {

// Paths of live temporary files for the signal handler. A slot goes free -> claimed (path
// being written) -> ready; the handler only reads ready slots, whose path is published by the
// release store of `ready` and read after an acquire load.
enum class slot_state : int { free = 0, claimed = 1, ready = 2 };
constexpr int cleanup_slot_count = 16;
constexpr std::size_t cleanup_path_bytes = 4096;

struct cleanup_slot {
  std::atomic<int> state{static_cast<int>(slot_state::free)};
  char path[cleanup_path_bytes];
};
cleanup_slot cleanup_slots[cleanup_slot_count];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads slot states");

extern "C" void remove_staged_files_then_die(int signal_number) {
  for (cleanup_slot& slot : cleanup_slots) {
    if (slot.state.load(std::memory_order_acquire) == static_cast<int>(slot_state::ready)) {
      ::unlink(slot.path);  // async-signal-safe
    }
  }
  // SA_RESETHAND restored the default action; the re-raised signal ends the process once
  // this handler returns, with the status a shell expects.
  ::raise(signal_number);
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0) continue;
      if (current.sa_handler != SIG_DFL) continue;  // someone else handles it
      struct sigaction ours {};
      ours.sa_handler = remove_staged_files_then_die;
      ours.sa_flags = SA_RESETHAND;
      sigemptyset(&ours.sa_mask);
      ::sigaction(signal_number, &ours, nullptr);
    }
  });
}

int register_for_cleanup(const std::string& path) {
  if (path.size() >= cleanup_path_bytes) return -1;
  install_cleanup_handlers();
  for (int i = 0; i < cleanup_slot_count; ++i) {
    int expected = static_cast<int>(slot_state::free);
    if (cleanup_slots[i].state.compare_exchange_strong(
            expected, static_cast<int>(slot_state::claimed), std::memory_order_relaxed)) {
      std::memcpy(cleanup_slots[i].path, path.c_str(), path.size() + 1);
      // Publishes the path to the signal handler.
      cleanup_slots[i].state.store(static_cast<int>(slot_state::ready), std::memory_order_release);
      return i;
    }
  }
  return -1;  // more live outputs than slots: that one is only removed on ordinary failure
}

void unregister_cleanup(int slot) {
  if (slot < 0) return;
  cleanup_slots[slot].state.store(static_cast<int>(slot_state::free), std::memory_order_release);
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

staged_file::staged_file(std::filesystem::path destination) : destination_(std::move(destination)) {
  std::error_code ec;
  if (std::filesystem::is_directory(destination_, ec)) {
    throw input_error("cannot write '" + destination_.string() + "': it is a folder");
  }
  const std::filesystem::path folder =
      destination_.has_parent_path() ? destination_.parent_path() : std::filesystem::path(".");
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    // Hidden, and named after the destination so a leftover is easy to recognise.
    std::string name = ".";
    name += destination_.filename().string();
    name += ".tmp-";
    name += std::to_string(::getpid());
    name += '-';
    name += std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    temporary_ = folder / name;
    // O_EXCL: never reuse (and then delete) a file someone else made.
    fd_ = ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) break;
    if (errno != EEXIST) {
      throw input_error("cannot write '" + destination_.string() + "': " + errno_text());
    }
  }
  if (fd_ < 0) throw input_error("cannot create a temporary file in '" + folder.string() + "'");
  cleanup_slot_ = register_for_cleanup(temporary_.string());
}

staged_file::~staged_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
  unregister_cleanup(cleanup_slot_);
}

void staged_file::fail(std::string_view what) const {
  throw error("writing '" + destination_.string() + "': " + std::string(what) + ": " +
              errno_text());
}

void staged_file::reserve(std::uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("cannot size the file");
  if (bytes == 0) return;
  const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes));
  if (rc == EOPNOTSUPP || rc == EINVAL) return;  // file system cannot reserve: sparse file
  if (rc != 0) {
    errno = rc;
    fail("cannot reserve " + std::to_string(bytes) + " bytes");
  }
}

void staged_file::truncate(std::uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("cannot cut the file");
}

void staged_file::commit() {
  // No fsync: the rename makes the file appear whole to other processes, which is what a
  // failed or interrupted run must not break; surviving a power cut is not worth the wait
  // (a 17 GB graph takes ~12 s to reach the VM's disk, and can be regenerated).
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot close the file");
  if (::rename(temporary_.c_str(), destination_.c_str()) != 0) {
    fail("cannot rename " + temporary_.string());
  }
  committed_ = true;
}

void file_writer::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > buffer_bytes) flush();
  if (bytes.size() >= buffer_bytes) {
    buffer_.assign(bytes);
    flush();
    return;
  }
  buffer_.append(bytes);
}

void file_writer::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(file_.fd(), buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw error("writing '" + file_.destination().string() + "': " + errno_text());
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

}  // namespace bam::graph
