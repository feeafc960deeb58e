// Writers and readers on a small cache while writes fail or complete late, past their timeout,
// and some reads complete late too. The contract: every access returns the right bytes or a
// reported error (never wrong bytes with success), every access ends within a few multiples of
// the I/O timeout, what was written reaches the image once a flush succeeds, and once the late
// completions are drained the cache holds nothing. Base pages and dense arrays (both pinnings).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cache_stress_support.hpp"
#include "late_io.hpp"

#ifndef BAM_STRESS_SLOWDOWN
#define BAM_STRESS_SLOWDOWN 1
#endif

namespace {

using namespace bam;
using namespace bam::stress;
using namespace std::chrono_literals;
using bam::testing::describe;
using bam::testing::drain_until_released;
using bam::testing::finishes_within;
using bam::testing::reset_halted_queues;

constexpr std::uint64_t ms = 1'000'000;
/// The I/O timeout: commands that come late_us = 1.5 x this late are given up on.
constexpr std::uint64_t io_timeout_ns = 20 * ms * BAM_STRESS_SLOWDOWN;
constexpr std::uint64_t victim_timeout_ns = 2 * io_timeout_ns;
/// The longest an access may take: a victim search, a frame's write-back and a load, and a
/// waiter's deadline over them, with room for a loaded machine.
constexpr std::uint64_t access_bound_ns = 4 * victim_timeout_ns + 8 * io_timeout_ns + 1000 * ms;

/// What a writer stores at `i` on its `n`th store: names both, never the pattern.
constexpr std::uint64_t stored_at(std::uint64_t i, std::uint64_t n) {
  return ((i << 20) | (n & 0xfffffu)) ^ 0xa5a5000000000000ull;
}

struct late_case {
  const char* name;
  bool dense;
  pinning_kind pinning;
};

class CacheLateWritesStress : public ::testing::TestWithParam<late_case> {};

std::string case_name(const ::testing::TestParamInfo<late_case>& info) { return info.param.name; }

storage_config faulty_storage() {
  storage_config s = fast_storage();
  // Deep queues: a slot whose command came late is taken again only a ring later, and a
  // submitter that waits for it past its deadline halts the queue (reset between launches).
  s.queue_depth = 1024;
  s.timeout_ns = io_timeout_ns;
  s.faults.write_late_rate = 0.1;
  s.faults.write_error_rate = 0.1;
  s.faults.late_rate = 0.02;
  s.faults.late_us = 1.5 * static_cast<double>(io_timeout_ns) / 1e3;
  s.faults.seed = 17;
  return s;
}

cache_config small_cache(const late_case& c) {
  cache_config cc;
  cc.line_bytes = 512;
  cc.victim_timeout_ns = victim_timeout_ns;
  if (c.dense) {
    cc.capacity_bytes = 128 * 512;  // 8 frames of 8 lines, and 64 base lines
    cc.translation = translation_kind::two_level;
    cc.pinning = c.pinning;
    cc.frame_bytes = 8 * 512;
    cc.splinter_percent = 0;
  } else {
    cc.capacity_bytes = 16 * 512;
  }
  return cc;
}

TEST_P(CacheLateWritesStress, EveryAccessIsRightOrReportedAndNothingIsLeftHeld) {
  const late_case c = GetParam();
  const std::uint64_t words = 128 * 64;  // 128 pages of 512 B: 8 times the cache
  rig r(pattern_image(words), faulty_storage(), small_cache(c), 2);
  const auto writers = static_cast<unsigned>(scaled(8, 4));
  const auto readers = static_cast<unsigned>(scaled(8, 4));
  const std::uint64_t ops = scaled(200, 20);  // per thread and launch
  constexpr int launches = 3;
  // Even words belong to writers (word 2k to writer k % writers), odd words are only read.
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) expected[i] = pattern_word(i);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, accesses{0}, slowest_ns{0};
  unsigned resets = 0;
  auto timed = [&](auto&& access) {
    const std::uint64_t start = now_ns();
    const io_status s = access();
    const std::uint64_t took = now_ns() - start;
    std::uint64_t seen = slowest_ns.load(std::memory_order_relaxed);
    while (took > seen && !slowest_ns.compare_exchange_weak(seen, took)) {
    }
    accesses.fetch_add(1, std::memory_order_relaxed);
    if (!s.ok()) failed.fetch_add(1, std::memory_order_relaxed);
    return s;
  };
  {
    array<std::uint64_t> a(r.cache(), r.set(), {.name = "late", .dense = c.dense});
    const array_ref<std::uint64_t> ref = a.ref();
    for (int launch = 0; launch < launches; ++launch) {
      finishes_within(
          std::chrono::milliseconds(60'000 * BAM_STRESS_SLOWDOWN),
          [&] {
            run_threads(writers + readers, [&](unsigned t) {
              rng g(t + 1 + 100u * static_cast<unsigned>(launch));
              for (std::uint64_t n = 0; n < ops; ++n) {
                std::uint64_t v = 0;
                if (t < writers) {
                  const std::uint64_t i = 2 * (g.below(words / 2 / writers) * writers + t);
                  const io_status got = timed([&] { return ref.try_read(i, v); });
                  if (got.ok() && v != expected[i]) wrong.fetch_add(1);
                  const std::uint64_t value = stored_at(i, launch * ops + n + 1);
                  if (timed([&] { return ref.try_store(i, value); }).ok()) expected[i] = value;
                } else {
                  const std::uint64_t i = 2 * g.below(words / 2) + 1;
                  const io_status got = timed([&] { return ref.try_read(i, v); });
                  if (got.ok() && v != pattern_word(i)) wrong.fetch_add(1);
                }
              }
            });
          },
          "the writers and readers");
      // What the host does between launches: report the errors, forget failed page loads,
      // reset the queues that halted.
      EXPECT_THROW(a.check(), nvme_error) << "launch " << launch << " met no fault";
      a.clear_failures();
      resets += reset_halted_queues(*r.ssd);
    }
    EXPECT_EQ(wrong.load(), 0u) << "accesses that returned wrong bytes with success";
    EXPECT_LT(slowest_ns.load(), access_bound_ns) << "an access took too long";
    bool flushed = false;
    for (int tries = 0; tries < 100 && !flushed; ++tries) {
      try {
        a.flush();
        flushed = true;
      } catch (const nvme_error&) {
        resets += reset_halted_queues(*r.ssd);
        std::this_thread::sleep_for(std::chrono::nanoseconds(io_timeout_ns));
      }
    }
    EXPECT_TRUE(flushed) << "no flush succeeded";
  }
  resets += reset_halted_queues(*r.ssd);
  const cache_holds h = drain_until_released(
      r.cache(), r.set(), std::chrono::milliseconds(2000 * BAM_STRESS_SLOWDOWN));
  EXPECT_EQ(h.total(), 0u) << describe(h);
  const auto* image = reinterpret_cast<const std::uint64_t*>(r.image->data());
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < words; ++i) differ += image[i] != expected[i];
  EXPECT_EQ(differ, 0u) << "words of the image that are not what was written there";
  const device_stats d = r.ssd->stats().total();
  EXPECT_GT(d.late, 0u);
  EXPECT_GT(d.injected_errors, 0u);
  std::printf("%s: %llu accesses, %llu failed, slowest %.1f ms (bound %.1f ms), %llu late, "
              "%llu injected errors, %u queue resets\n",
              c.name, static_cast<unsigned long long>(accesses.load()),
              static_cast<unsigned long long>(failed.load()),
              static_cast<double>(slowest_ns.load()) / 1e6,
              static_cast<double>(access_bound_ns) / 1e6,
              static_cast<unsigned long long>(d.late),
              static_cast<unsigned long long>(d.injected_errors), resets);
}

INSTANTIATE_TEST_SUITE_P(
    BaseAndDense, CacheLateWritesStress,
    ::testing::Values(late_case{"base", false, pinning_kind::frame_pins},
                      late_case{"dense_frame_pins", true, pinning_kind::frame_pins},
                      late_case{"dense_epochs", true, pinning_kind::epochs}),
    case_name);

}  // namespace
