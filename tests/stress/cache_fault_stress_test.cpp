// Injected media errors reach the application: try_read returns the NVMe status, operator[]
// the poison value, and array::check() throws bam::nvme_error naming queue, command id, LBA
// and status. Never wrong bytes.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

constexpr io_status unrecovered_read =
    io_status::from_device(nvme::make_status_field(nvme::media_status::unrecovered_read_error));

// The fault plan's bad range in 512-byte blocks: blocks [64, 72) hold words [4096, 4608).
constexpr std::uint64_t bad_first_block = 64;
constexpr std::uint64_t bad_blocks = 8;
constexpr std::uint64_t bad_first_word = bad_first_block * 64;
constexpr std::uint64_t bad_words = bad_blocks * 64;

storage_config storage_with_bad_blocks() {
  storage_config s = fast_storage();
  s.faults.bad_lba_begin = bad_first_block;
  s.faults.bad_lba_end = bad_first_block + bad_blocks;
  return s;
}

bool in_bad_range(std::uint64_t word) {
  return word >= bad_first_word && word < bad_first_word + bad_words;
}

class CacheFaults : public ::testing::TestWithParam<cache_mode> {};

std::string mode_name(const ::testing::TestParamInfo<cache_mode>& info) {
  return to_string(info.param);
}

TEST_P(CacheFaults, ABadLbaRangeReachesTryReadAsTheNvmeStatus) {
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), storage_with_bad_blocks(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024, .mode = GetParam()}, 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.name = "faulty"});
  const array_ref<const std::uint64_t> ref = a.ref();
  const auto threads = static_cast<unsigned>(scaled(64, 24));
  const std::uint64_t reads = scaled(2000, 200);
  std::atomic<std::uint64_t> wrong{0}, bad_ok{0}, good_failed{0}, wrong_status{0}, seen_bad{0};
  run_threads(threads, [&](unsigned t) {
    rng g(t + 3);
    for (std::uint64_t n = 0; n < reads; ++n) {
      // One read in four lands in the bad range.
      const std::uint64_t i = n % 4 == 0 ? bad_first_word + g.below(bad_words) : g.below(words);
      std::uint64_t v = 0;
      const io_status s = ref.try_read(i, v);
      if (in_bad_range(i)) {
        seen_bad.fetch_add(1);
        if (s.ok()) bad_ok.fetch_add(1);
        if (!s.ok() && s != unrecovered_read) wrong_status.fetch_add(1);
      } else if (!s.ok()) {
        good_failed.fetch_add(1);
      } else if (v != pattern_word(i)) {
        wrong.fetch_add(1);
      }
    }
  });
  EXPECT_GT(seen_bad.load(), 0u);
  EXPECT_EQ(bad_ok.load(), 0u);
  EXPECT_EQ(wrong_status.load(), 0u);
  EXPECT_EQ(good_failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(ref[bad_first_word], array_ref<const std::uint64_t>::poison());
  EXPECT_THROW(a.check(), nvme_error);
}

TEST_P(CacheFaults, CheckThrowsAnNvmeErrorNamingQueueCommandIdLbaAndStatus) {
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), storage_with_bad_blocks(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024, .mode = GetParam()}, 8);
  array<const std::uint64_t> a(r.cache(), r.set(), {.name = "faulty"});
  const array_ref<const std::uint64_t> ref = a.ref();
  run_threads(static_cast<unsigned>(scaled(16, 8)), [&](unsigned t) {
    std::uint64_t v = 0;
    (void)ref.try_read(bad_first_word + 3 * 64 + t, v);  // block 67
  });
  try {
    a.check();
    FAIL() << "check() did not throw";
  } catch (const nvme_error& e) {
    const nvme_error::details& d = e.info();
    EXPECT_EQ(io_status::from_bits(d.status), unrecovered_read);
    EXPECT_EQ(d.device, 0u);
    EXPECT_GE(d.queue, 1u);
    EXPECT_LE(d.queue, r.ssd->config().queues_per_device);
    EXPECT_LT(d.command_id, r.ssd->config().queue_depth);
    EXPECT_EQ(d.lba, 67u);  // both a 512 B line and a read-through read exactly that block
    const std::string what = e.what();
    EXPECT_NE(what.find("array 'faulty'"), std::string::npos) << what;
    EXPECT_NE(what.find("media: unrecovered read error"), std::string::npos) << what;
    EXPECT_NE(what.find("queue " + std::to_string(d.queue)), std::string::npos) << what;
    EXPECT_NE(what.find("command id " + std::to_string(d.command_id)), std::string::npos) << what;
    EXPECT_NE(what.find("LBA 67"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(a.check()) << "check() clears the record it reported";
}

INSTANTIATE_TEST_SUITE_P(EveryMode, CacheFaults,
                         ::testing::Values(cache_mode::none, cache_mode::naive,
                                           cache_mode::optimized),
                         mode_name);

TEST(CacheFaultsRandom, RandomMediaErrorsNeverYieldWrongBytes) {
  // One command in twenty fails. A failed page load is sticky until clear_failures(); after
  // clearing, every page loads again (with fresh chances of failing) and reads stay right.
  const std::uint64_t words = 64 * 1024;
  storage_config storage = fast_storage();
  storage.faults.error_rate = 0.05;
  storage.faults.seed = 11;
  rig r(pattern_image(words), storage,
        {.line_bytes = 4096, .capacity_bytes = 64 * 1024, .mode = cache_mode::optimized}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  const auto threads = static_cast<unsigned>(scaled(96, 32));
  const std::uint64_t reads = scaled(1500, 150);
  std::atomic<std::uint64_t> wrong{0}, failed{0}, other_status{0};
  for (int round = 0; round < 2; ++round) {
    run_threads(threads, [&](unsigned t) {
      rng g(t + 100u * static_cast<unsigned>(round));
      for (std::uint64_t n = 0; n < reads; ++n) {
        const std::uint64_t i = g.below(words);
        std::uint64_t v = 0;
        const io_status s = ref.try_read(i, v);
        if (!s.ok()) {
          failed.fetch_add(1);
          if (s != unrecovered_read) other_status.fetch_add(1);
        } else if (v != pattern_word(i)) {
          wrong.fetch_add(1);
        }
      }
    });
    EXPECT_THROW(a.check(), nvme_error);
    a.clear_failures();
  }
  EXPECT_GT(failed.load(), 0u);
  EXPECT_EQ(other_status.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(r.ssd->stats().total().injected_errors, 0u);
}

TEST(CacheFaultsHost, AHostReadOfAFailedPageThrowsEvenAfterTheRecordWasChecked) {
  // The kernel's error was reported and cleared by check(); the page stays failed (sticky),
  // so a later host read of it must not return bytes it never read.
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), storage_with_bad_blocks(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024});
  array<const std::uint64_t> a(r.cache(), r.set());
  std::uint64_t v = 0;
  EXPECT_EQ(a.ref().try_read(bad_first_word, v), unrecovered_read);
  EXPECT_THROW(a.check(), nvme_error);
  EXPECT_THROW((void)a.read(bad_first_word, 4), nvme_error);
}

TEST(CacheFaultsHost, ALaunchThatMeetsAPageThatFailedBeforeIsReportedAgain) {
  // The first launch's failure is reported and cleared by check(); the page stays failed, so
  // the second launch gets the status again and check() must report it again.
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), storage_with_bad_blocks(),
        {.line_bytes = 512, .capacity_bytes = 16 * 1024}, 8);
  array<const std::uint64_t> a(r.cache(), r.set());
  const array_ref<const std::uint64_t> ref = a.ref();
  for (int launch_number = 0; launch_number < 2; ++launch_number) {
    std::atomic<std::uint32_t> status{0};
    launch(*r.stream, 1, 8, [ref, &status](thread_index t) {
      std::uint64_t v = 0;
      status.store(ref.try_read(bad_first_word + t.id, v).bits());
    });
    r.stream->synchronize();
    EXPECT_EQ(io_status::from_bits(status.load()), unrecovered_read);
    try {
      a.check();
      ADD_FAILURE() << "launch " << launch_number << ": check() did not throw";
    } catch (const nvme_error& e) {
      EXPECT_EQ(io_status::from_bits(e.info().status), unrecovered_read);
      EXPECT_EQ(e.info().lba, bad_first_block) << e.what();
    }
  }
}

TEST(CacheFaultsHost, AHostReadOfABadBlockThrowsTheNvmeStatus) {
  const std::uint64_t words = 32 * 1024;
  rig r(pattern_image(words), storage_with_bad_blocks(),
        {.line_bytes = 4096, .capacity_bytes = 16 * 1024});
  array<const std::uint64_t> a(r.cache(), r.set());
  try {
    (void)a.read(0, words);
    FAIL() << "read() did not throw";
  } catch (const nvme_error& e) {
    EXPECT_EQ(io_status::from_bits(e.info().status), unrecovered_read);
  }
  // Pages outside the bad range still read.
  EXPECT_EQ(a.read(0, 16)[15], pattern_word(15));
}

}  // namespace
