// A host controller whose data copies are only queued (namespace_view::host_copy, as over GPU
// memory) keeps several batches of them in flight: a completion is posted only once its
// batch's copies have landed, never before, and no more than `batches_in_flight` batches are
// outstanding. The copies here are held back by the test and land when it says so.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <bam/queue/queue_pair.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/io.hpp>

#include "storage/cpu/cpu_controller.hpp"
#include "storage/emulated/timing.hpp"

namespace {

using namespace bam;
using namespace std::chrono_literals;

constexpr std::uint32_t block = 4096;
constexpr std::uint64_t image_bytes = 64 * block;
constexpr std::uint32_t queues = 4;
constexpr std::uint32_t depth = 8;

// The held-back copies. Only the controller thread queues and performs them; the test thread
// only moves `landed` forward.
struct held_copies {
  struct copy {
    void* dst;
    const void* src;
    std::uint64_t bytes;
    std::uint64_t mark;  // the mark that covers it
  };
  std::vector<copy> queued;
  std::atomic<std::uint64_t> marks{0};
  std::atomic<std::uint64_t> landed{0};  // marks up to this one may complete
  std::uint64_t fenced = 0;
  std::uint32_t fences = 0;
  bool lists_readable = false;  // what host_readable answers

  void perform_up_to(std::uint64_t mark) {
    auto done = std::stable_partition(queued.begin(), queued.end(),
                                      [mark](const copy& c) { return c.mark > mark; });
    for (auto c = done; c != queued.end(); ++c) std::memcpy(c->dst, c->src, c->bytes);
    queued.erase(done, queued.end());
  }
};

held_copies* held = nullptr;

void queue_copy(void* dst, const void* src, std::uint64_t bytes) {
  // relaxed: marks is written by this same thread; the test only watches it.
  held->queued.push_back({dst, src, bytes, held->marks.load(std::memory_order_relaxed) + 1});
}
void fence_copies() {
  ++held->fences;
  held->fenced = held->marks.load(std::memory_order_relaxed);
  held->perform_up_to(~std::uint64_t{0});
}
std::uint64_t mark_copies() {
  return held->marks.fetch_add(1, std::memory_order_relaxed) + 1;  // relaxed: a counter
}
bool copies_reached(std::uint64_t mark) {
  // acquire: pairs with the test's release of `landed`; nothing else rides on it.
  const std::uint64_t landed = std::max(held->landed.load(std::memory_order_acquire), held->fenced);
  if (mark > landed) return false;
  held->perform_up_to(landed);
  return true;
}

bool lists_readable(const void*) { return held->lists_readable; }

struct rig {
  held_copies copies;
  std::vector<std::uint8_t> image = std::vector<std::uint8_t>(image_bytes);
  std::unique_ptr<std::uint8_t, decltype(&std::free)> queue_memory{nullptr, &std::free};
  std::vector<queue_pair_ref> refs;
  device_set_ref set;
  std::unique_ptr<emulated::cpu_controller> controller;

  explicit rig(std::uint32_t batches_in_flight, bool readable_lists = false) {
    held = &copies;
    copies.lists_readable = readable_lists;
    for (std::uint64_t i = 0; i < image_bytes; ++i)
      image[i] = static_cast<std::uint8_t>(i * 131 + 7);
    const queue_layout layout = queue_layout::for_depth(depth);
    queue_memory.reset(static_cast<std::uint8_t*>(std::aligned_alloc(4096, layout.bytes * queues)));
    std::memset(queue_memory.get(), 0, layout.bytes * queues);
    for (std::uint32_t q = 0; q < queues; ++q) {
      refs.emplace_back(queue_memory.get() + q * layout.bytes, depth,
                        static_cast<std::uint16_t>(q + 1), 10'000'000'000ull);
    }
    set.queues = refs.data();
    set.devices = 1;
    set.queues_per_device = queues;
    set.block_bytes = block;
    set.capacity_bytes = image_bytes;
    set.max_transfer_bytes = 1u << 20;

    emulated::controller_device d;
    d.ns.image = image.data();
    d.ns.image_bytes = image_bytes;
    d.ns.block_bytes = block;
    d.ns.capacity_blocks = image_bytes / block;
    d.ns.host_copy = &queue_copy;
    d.ns.host_fence = &fence_copies;
    d.ns.host_mark = &mark_copies;
    d.ns.host_reached = &copies_reached;
    d.ns.host_readable = &lists_readable;
    d.timing = emulated::timing_model::from(device_model::latency_only(1));
    d.queues = refs;
    std::vector<emulated::controller_device> devices;
    devices.push_back(d);
    controller =
        std::make_unique<emulated::cpu_controller>(std::move(devices), nullptr, batches_in_flight);
    controller->start();
  }
  ~rig() {
    copies.landed.store(~std::uint64_t{0}, std::memory_order_release);
    controller->stop();
    held = nullptr;
  }

  // Waits (bounded) until the controller has taken `n` marks.
  bool marks_reach(std::uint64_t n) const {
    for (int i = 0; i < 5000; ++i) {
      if (copies.marks.load(std::memory_order_relaxed) >= n) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }
};

// A reader of block `b` through queue `q` on a thread of its own.
struct reader {
  std::vector<std::uint8_t> buffer;
  std::atomic<bool> done{false};
  bool ok = false;
  std::thread thread;

  reader(const device_set_ref& set, std::uint32_t q, std::uint64_t b) {
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(4096, block));
    std::memset(p, 0, block);
    thread = std::thread([this, set, q, b, p] {
      io_request r;
      r.set_byte = b * block;
      r.bytes = block;
      r.buffer = p;
      r.queue_hint = q;
      io_where where;
      ok = device_io(set, r, where).ok();
      buffer.assign(p, p + block);
      std::free(p);
      done.store(true, std::memory_order_release);  // release: buffer and ok are written
    });
  }
  ~reader() {
    if (thread.joinable()) thread.join();
  }
  bool matches(const std::vector<std::uint8_t>& image, std::uint64_t b) {
    thread.join();
    return ok && std::memcmp(buffer.data(), image.data() + b * block, block) == 0;
  }
};

TEST(ControllerCopyBatches, ACompletionWaitsForItsBatchsCopies) {
  rig r(4);
  reader a(r.set, 0, 5);
  ASSERT_TRUE(r.marks_reach(1)) << "the controller never queued the read's copy";
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(a.done.load(std::memory_order_acquire))
      << "the read completed before its copy landed";
  r.copies.landed.store(1, std::memory_order_release);
  EXPECT_TRUE(a.matches(r.image, 5));
}

TEST(ControllerCopyBatches, KeepsAtMostTheGivenBatchesInFlight) {
  rig r(2);
  reader a(r.set, 0, 1);
  ASSERT_TRUE(r.marks_reach(1));
  reader b(r.set, 1, 2);
  ASSERT_TRUE(r.marks_reach(2)) << "a second batch was not started while the first ran";
  reader c(r.set, 2, 3);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(r.copies.marks.load(std::memory_order_relaxed), 2u)
      << "a third batch started with two in flight";
  r.copies.landed.store(1, std::memory_order_release);  // the first lands: c's batch may go
  ASSERT_TRUE(r.marks_reach(3));
  EXPECT_TRUE(a.matches(r.image, 1));
  EXPECT_FALSE(b.done.load(std::memory_order_acquire)) << "b completed before its batch landed";
  r.copies.landed.store(3, std::memory_order_release);
  EXPECT_TRUE(b.matches(r.image, 2));
  EXPECT_TRUE(c.matches(r.image, 3));
}

TEST(ControllerCopyBatches, ManyReadsThroughFewBatchesAllReturnTheirBlocks) {
  rig r(3);
  std::vector<std::unique_ptr<reader>> readers;
  for (std::uint32_t k = 0; k < 32; ++k) {
    readers.push_back(std::make_unique<reader>(r.set, k % queues, (k * 7) % 64));
  }
  // Copies land in steps while readers are still submitting.
  for (std::uint64_t m = 1; m < 200; ++m) {
    r.copies.landed.store(m, std::memory_order_release);
    std::this_thread::sleep_for(1ms);
  }
  r.copies.landed.store(~std::uint64_t{0}, std::memory_order_release);
  for (std::uint32_t k = 0; k < 32; ++k) {
    EXPECT_TRUE(readers[k]->matches(r.image, (k * 7) % 64)) << "read " << k;
  }
}

// A read of four pages through a PRP list: the list's entries are read in place where the host
// can load from it, else each is copied and waited for; the data arrives either way.
void read_through_a_prp_list(bool readable) {
  rig r(4, readable);
  constexpr std::uint32_t pages = 4;
  auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(4096, pages * block));
  std::uint64_t list[pages] = {};
  std::thread reader([&] {
    io_request q;
    q.set_byte = 8 * block;
    q.bytes = pages * block;
    q.buffer = buffer;
    q.prp_list = list;
    q.prp_list_dma = reinterpret_cast<std::uint64_t>(list);
    q.prp_capacity = pages;
    io_where where;
    EXPECT_TRUE(device_io(r.set, q, where).ok());
  });
  ASSERT_TRUE(r.marks_reach(1));
  r.copies.landed.store(1, std::memory_order_release);
  reader.join();
  EXPECT_EQ(std::memcmp(buffer, r.image.data() + 8 * block, pages * block), 0);
  if (readable) {
    EXPECT_EQ(r.copies.fences, 0u) << "a list the host reads in place was copied and waited for";
  } else {
    EXPECT_GE(r.copies.fences, 1u) << "a list in memory the host cannot load was read in place";
  }
  std::free(buffer);
}

TEST(ControllerCopyBatches, APrpListTheHostCanLoadIsReadInPlace) { read_through_a_prp_list(true); }

TEST(ControllerCopyBatches, APrpListElsewhereIsCopiedAndWaitedFor) {
  read_through_a_prp_list(false);
}

}  // namespace
