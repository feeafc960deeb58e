#pragma once
// One host I/O thread of the file backend: it polls the submission doorbells of its queues,
// fetches and validates the entries, turns each read or write into one positioned vector I/O
// on the device's file (FLUSH into fdatasync), keeps up to its engine's depth in flight, and
// posts each completion with the NVMe status the outcome deserves.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <bam/queue/queue_pair.hpp>

#include "storage/emulated/command_engine.hpp"
#include "storage/file/file_set.hpp"
#include "storage/file/io_engine.hpp"
#include "storage/file/staging.hpp"

namespace bam::file_io {

/// A queue pair and the controller-side state its one server keeps.
struct served_queue {
  queue_pair_ref ref;
  std::uint32_t device = 0;
  emulated::queue_service service;
  std::deque<std::pair<std::uint16_t, std::uint16_t>> blocked;  // (cid, status): CQ was full
  std::unique_ptr<std::atomic<std::uint64_t>[]> fetched_at;     // per cid; 0: none outstanding
};

/// Counters of one device, added to by every server (relaxed: statistics).
struct device_counters {
  std::atomic<std::uint64_t> commands{0}, reads{0}, writes{0}, flushes{0}, bytes_read{0},
      bytes_written{0}, invalid{0}, errors{0}, buffered{0}, staged_bytes{0};
};

struct server_options {
  bool writable = false;
  std::uint32_t page_bytes = 4096;
  std::uint32_t max_transfer_bytes = 1u << 20;
  std::uint64_t stop_timeout_ns = 30'000'000'000ull;
};

class file_server {
 public:
  /// `queues` and `counters` outlive the server; `copier` is null unless PRPs may point at
  /// GPU memory.
  file_server(const file_set& files, std::vector<emulated::namespace_view> namespaces,
              std::vector<served_queue*> queues, device_counters* counters,
              std::unique_ptr<io_engine> engine, staging_copier* copier,
              const server_options& options);
  ~file_server();
  file_server(const file_server&) = delete;
  file_server& operator=(const file_server&) = delete;

  void start();
  /// Stops fetching, waits (bounded) for the I/O in flight, posts its completions.
  void stop();
  [[nodiscard]] bool running() const { return thread_.joinable(); }
  /// CPU seconds of this thread (and the engine's workers) while it ran.
  [[nodiscard]] double cpu_seconds() const;
  /// What stopped the thread, if it died on an error ("" while healthy).
  [[nodiscard]] std::string failure() const;

 private:
  struct slot;

  void run();
  [[nodiscard]] bool submit_now() const;
  bool fetch_from(served_queue& q, std::uint32_t queue_index);
  void begin(std::uint32_t queue_index, const nvme::submission_entry& c);
  void issue(slot& s);
  void finish(std::uint32_t slot_index, std::int64_t value);
  void complete(slot& s, std::uint16_t status);
  void post(served_queue& q, std::uint16_t cid, std::uint16_t status);
  bool retry_blocked();
  void flush_staged_copies();

  const file_set& files_;
  std::vector<emulated::namespace_view> namespaces_;
  std::vector<served_queue*> queues_;
  device_counters* counters_;
  std::unique_ptr<io_engine> engine_;
  staging_copier* copier_;
  server_options options_;
  std::vector<slot> slots_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> copied_in_;   // writes whose data is being staged
  std::vector<std::uint32_t> copied_out_;  // reads whose data is being copied to their PRPs
  std::vector<io_result> results_;
  std::uint32_t in_flight_ = 0;
  std::uint32_t next_queue_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> cpu_ns_{0};
  std::string failure_;
  std::atomic<bool> failed_{false};
  bool abandoned_ = false;  // the thread ended with operations or copies still in flight
  std::thread thread_;
};

}  // namespace bam::file_io
