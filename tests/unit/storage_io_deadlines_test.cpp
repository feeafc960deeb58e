// One I/O (storage/io.hpp) is bounded twice: entering the queue and completing, each by the
// queue's timeout, and a failure says which of the two it waited for.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>
#include <bam/storage/io.hpp>

namespace {

using namespace bam;

constexpr std::uint64_t ms = 1'000'000;

/// One device with one queue of depth 3 (two commands in flight at most): a third command
/// waits for the first completion to report the SQ head before it enters.
storage_config one_narrow_queue(double latency_us, std::uint64_t timeout_ns) {
  storage_config s;
  s.devices = 1;
  s.queues_per_device = 1;
  s.queue_depth = 3;
  s.model = device_model::latency_only(latency_us);
  s.timeout_ns = timeout_ns;
  return s;
}

struct buffer {
  buffer() : bytes(static_cast<std::uint8_t*>(std::aligned_alloc(4096, 4096)), &std::free) {}
  std::unique_ptr<std::uint8_t, decltype(&std::free)> bytes;
};

TEST(IoDeadlines, ACommandThatWaitedToEnterTheQueueStillHasItsWholeTimeoutToComplete) {
  // Each command takes 130 ms; the timeout is 200 ms. The third command enters about 130 ms
  // after it was issued and completes about 130 ms later: each wait fits its own deadline,
  // the two together would not fit one.
  emulated_storage ssd(one_narrow_queue(130'000, 200 * ms), backing_store::in_memory(1 << 20));
  ssd.start();
  const device_set_ref set = ssd.ref();
  std::vector<buffer> buffers(3);
  std::vector<io_status> got(3);
  std::vector<std::uint64_t> took_ns(3);
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      io_request r;
      r.set_byte = std::uint64_t{t} * 4096;
      r.bytes = 4096;
      r.buffer = buffers[t].bytes.get();
      io_where where;
      const std::uint64_t start = now_ns();
      got[t] = device_io(set, r, where);
      took_ns[t] = now_ns() - start;
    });
  }
  for (auto& t : threads) t.join();
  std::uint64_t longest = 0;
  for (std::uint32_t t = 0; t < 3; ++t) {
    EXPECT_TRUE(got[t].ok()) << "command " << t << ": " << got[t].name();
    longest = took_ns[t] > longest ? took_ns[t] : longest;
  }
  EXPECT_GT(longest, 200 * ms) << "one command waited to enter and then to complete";
  ssd.stop();
}

TEST(IoDeadlines, ACommandThatCannotEnterTheQueueSaysSo) {
  // Two commands fill the queue for 300 ms; a third gives up entering after 100 ms.
  emulated_storage ssd(one_narrow_queue(300'000, 100 * ms), backing_store::in_memory(1 << 20));
  ssd.start();
  const device_set_ref set = ssd.ref();
  const queue_pair_ref& q = set.queue(0, 0);
  std::vector<queue_ticket> first(2);
  for (std::uint32_t t = 0; t < 2; ++t) {
    const auto cmd = nvme::make_flush(1);
    ASSERT_TRUE(q.submit(cmd, deadline::after_ns(100 * ms), first[t]).ok());
  }
  buffer b;
  io_request r;
  r.bytes = 4096;
  r.buffer = b.bytes.get();
  io_where where;
  const io_status s = device_io(set, r, where);
  EXPECT_EQ(s.source(), status_source::submit_timeout) << s.name();
  EXPECT_STREQ(s.name(), "timeout waiting to enter the queue");
  ssd.stop();
}

}  // namespace

TEST(QueueHalts, TheStorageCountsHaltedQueuesAndAResetRestartsThem) {
  storage_config c = one_narrow_queue(10, 200 * ms);
  c.queues_per_device = 4;
  emulated_storage ssd(c, backing_store::in_memory(1 << 20));
  EXPECT_EQ(ssd.halted_queues(), 0u);
  // As a submitter that could not get its slot does (queue_pair.inl): it names the slot + 1.
  atomic_ref<std::uint32_t>(ssd.ref().queue(0, 2).control()->halted).store(3, order::relaxed);
  EXPECT_EQ(ssd.halted_queues(), 1u);
  (void)ssd.reset_queue(0, 2);
  EXPECT_EQ(ssd.halted_queues(), 0u);
  ssd.start();
  io_request r;
  r.bytes = 4096;
  buffer b;
  r.buffer = b.bytes.get();
  io_where where;
  EXPECT_TRUE(device_io(ssd.ref(), r, where).ok()) << "the reset queue serves commands again";
  ssd.stop();
}
