// Several host controller threads (storage_config::controller_threads) serve one device set:
// every queue is served by exactly one of them, reads return the image's bytes, the counters
// add up over the threads, and a reset queue is reset in the thread that serves it.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/platform/atomic.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>
#include <bam/storage/io.hpp>

namespace {

using namespace bam;

constexpr std::uint64_t image_bytes = 4 << 20;
constexpr std::uint32_t block = 4096;

storage_config threaded(std::uint32_t threads) {
  storage_config c;
  c.devices = 2;
  c.queues_per_device = 8;
  c.queue_depth = 16;
  c.model = device_model::latency_only(5);  // no caps
  c.timeout_ns = 10'000'000'000ull;
  c.controller_threads = threads;
  return c;
}

std::shared_ptr<backing_store> patterned() {
  auto image = backing_store::in_memory(image_bytes);
  for (std::uint64_t i = 0; i < image_bytes; i += 8) {
    const std::uint64_t v = i * 0x9E3779B97F4A7C15ull;
    std::memcpy(image->data() + i, &v, sizeof v);
  }
  return image;
}

struct aligned_block {
  aligned_block()
      : bytes(static_cast<std::uint8_t*>(std::aligned_alloc(4096, block)), &std::free) {}
  std::unique_ptr<std::uint8_t, decltype(&std::free)> bytes;
};

// Reads `blocks` blocks at `first`, `first + stride`, ... through queue hint `hint`; counts
// the reads that failed or came back with other bytes than the image's.
std::uint32_t read_and_check(const emulated_storage& ssd, const backing_store& image,
                             std::uint32_t hint, std::uint64_t first, std::uint64_t stride,
                             std::uint32_t blocks) {
  aligned_block b;
  std::uint32_t bad = 0;
  for (std::uint32_t k = 0; k < blocks; ++k) {
    io_request r;
    r.set_byte = (first + k * stride) % (image_bytes / block) * block;
    r.bytes = block;
    r.buffer = b.bytes.get();
    r.queue_hint = hint;
    io_where where;
    if (!device_io(ssd.ref(), r, where).ok() ||
        std::memcmp(b.bytes.get(), image.data() + r.set_byte, block) != 0) {
      ++bad;
    }
  }
  return bad;
}

TEST(ControllerThreads, EveryQueueIsServedAndTheCountersAddUp) {
  const auto image = patterned();
  emulated_storage ssd(threaded(3), image);
  ssd.start();
  // Sixteen submitters, one per queue hint 0..15: with 8 queues a device, each queue of each
  // device gets commands, and three threads serve queues 0,3,6 / 1,4,7 / 2,5.
  constexpr std::uint32_t submitters = 16, each = 200;
  std::atomic<std::uint32_t> bad{0};
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < submitters; ++t) {
    threads.emplace_back([&, t] { bad += read_and_check(ssd, *image, t, t * 37, 131, each); });
  }
  for (auto& t : threads) t.join();
  ssd.stop();
  EXPECT_EQ(bad.load(), 0u);
  const device_stats total = ssd.stats().total();
  EXPECT_EQ(total.reads, std::uint64_t{submitters} * each);
  EXPECT_EQ(total.bytes_read, std::uint64_t{submitters} * each * block);
  std::uint64_t queues_used = 0;
  for (const queue_counters& q : ssd.stats().queues) queues_used += q.submitted != 0 ? 1 : 0;
  EXPECT_EQ(queues_used, 16u) << "every queue of both devices took commands";
}

TEST(ControllerThreads, AResetQueueIsResetInTheThreadThatServesIt) {
  const auto image = patterned();
  emulated_storage ssd(threaded(3), image);
  // Queue 5 is the second queue of thread 2; a halted queue refuses commands until reset.
  atomic_ref<std::uint32_t>(ssd.ref().queue(1, 5).control()->halted).store(1, order::relaxed);
  EXPECT_EQ(ssd.halted_queues(), 1u);
  (void)ssd.reset_queue(1, 5);
  EXPECT_EQ(ssd.halted_queues(), 0u);
  ssd.start();
  // Hints 5 and 13 go to queue 5 of whichever device holds the block.
  EXPECT_EQ(read_and_check(ssd, *image, 5, 0, 1, 64), 0u);
  EXPECT_EQ(read_and_check(ssd, *image, 13, 100, 3, 64), 0u);
  ssd.stop();
}

}  // namespace
