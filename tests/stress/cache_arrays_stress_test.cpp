// Several arrays sharing one cache, and arrays over sets of four devices (striped or
// replicated): each read returns its own array's bytes while the arrays evict each other.

#include <gtest/gtest.h>

#include <string>

#include "cache_stress_support.hpp"

namespace {

using namespace bam;
using namespace bam::stress;

TEST(CacheArrays, SeveralArraysOnOneCacheEachReadTheirOwnBytes) {
  // Three extents of one image with the same page numbers (lines collide in the page space
  // only through the cache) and a fourth array of 32-bit elements over the first extent.
  const std::uint64_t words = 96 * 1024;
  const std::uint64_t third = words / 3;
  rig r(pattern_image(words), fast_storage(),
        {.line_bytes = 512, .capacity_bytes = 32 * 1024, .mode = cache_mode::naive}, 8);
  std::vector<array<const std::uint64_t>> arrays;
  for (std::uint64_t k = 0; k < 3; ++k) {
    arrays.emplace_back(r.cache(), r.set(),
                        array_options{.offset_bytes = k * third * 8, .count = third});
  }
  array<const std::uint32_t> halves(r.cache(), r.set(), {.count = 2 * third});
  std::vector<array_ref<const std::uint64_t>> refs;
  for (auto& a : arrays) refs.push_back(a.ref());
  const array_ref<const std::uint32_t> half_ref = halves.ref();

  const auto threads = static_cast<unsigned>(scaled(128, 48));
  const std::uint64_t reads = scaled(2000, 200);
  std::atomic<std::uint64_t> wrong{0}, failed{0};
  run_threads(threads, [&](unsigned t) {
    rng g(t + 1);
    for (std::uint64_t n = 0; n < reads; ++n) {
      const std::uint64_t k = g.below(4);
      const std::uint64_t i = g.below(third);
      if (k < 3) {
        std::uint64_t v = 0;
        if (!refs[k].try_read(i, v).ok()) {
          failed.fetch_add(1);
        } else if (v != pattern_word(k * third + i)) {
          wrong.fetch_add(1);
        }
      } else {
        std::uint32_t v = 0;
        const std::uint64_t w = pattern_word(i);
        if (!half_ref.try_read(2 * i + 1, v).ok()) {
          failed.fetch_add(1);
        } else if (v != static_cast<std::uint32_t>(w >> 32)) {  // little-endian high half
          wrong.fetch_add(1);
        }
      }
    }
  });
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
}

TEST(CacheArrays, ARefTakenBeforeAnotherArrayIsAttachedStillEvictsThatArraysLines) {
  // A ref is taken as soon as its array exists; a second array is attached afterwards. A
  // thread of the first array that evicts a line of the second must still unmap the second
  // array's page, or the second array's readers find their page mapped to a line that holds
  // another page and wait for it in vain.
  const std::uint64_t words = 32 * 1024;
  storage_config storage = fast_storage();
  storage.timeout_ns = 2'000'000'000ull;
  rig r(pattern_image(2 * words), storage,
        {.line_bytes = 512,
         .capacity_bytes = 8 * 1024,
         .mode = cache_mode::naive,
         .victim_timeout_ns = 2'000'000'000ull},
        8);
  array<const std::uint64_t> first(r.cache(), r.set(), {.count = words});
  const array_ref<const std::uint64_t> first_ref = first.ref();
  array<const std::uint64_t> second(r.cache(), r.set(),
                                    {.offset_bytes = words * 8, .count = words});
  const array_ref<const std::uint64_t> second_ref = second.ref();

  const auto threads = static_cast<unsigned>(scaled(32, 16));
  const std::uint64_t reads = scaled(2000, 300);
  read_tally first_tally, second_tally;
  const random_reader first_reader{first_ref, reads, 0, &first_tally};
  const random_reader second_reader{second_ref, reads, words, &second_tally};
  run_threads(threads, [&](unsigned t) {
    if (t % 2 == 0) {
      first_reader(thread_index{t, threads});
    } else {
      second_reader(thread_index{t, threads});
    }
  });
  EXPECT_EQ(first_tally.failed.load(), 0u);
  EXPECT_EQ(first_tally.wrong.load(), 0u);
  EXPECT_EQ(second_tally.failed.load(), 0u);
  EXPECT_EQ(second_tally.wrong.load(), 0u);
}

TEST(CacheArrays, AnArrayAttachedWhereADetachedOneWasReadsItsOwnBytes) {
  const std::uint64_t words = 16 * 1024;
  rig r(pattern_image(2 * words), fast_storage(), {.line_bytes = 512, .capacity_bytes = 16 * 1024},
        8);
  {
    array<const std::uint64_t> gone(r.cache(), r.set(), {.count = words});
    EXPECT_EQ(gone.read(0, words)[words - 1], pattern_word(words - 1));
  }
  array<const std::uint64_t> next(r.cache(), r.set(), {.offset_bytes = words * 8, .count = words});
  const auto threads = static_cast<unsigned>(scaled(64, 24));
  read_tally tally;
  const random_reader reader{next.ref(), scaled(1000, 150), words, &tally};
  run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u);
}

struct set_case {
  bool replicated;
  std::uint32_t line_bytes;
};

std::string set_name(const ::testing::TestParamInfo<set_case>& info) {
  return std::string(info.param.replicated ? "Replicated" : "Striped") + "_Line" +
         std::to_string(info.param.line_bytes);
}

class CacheDeviceSets : public ::testing::TestWithParam<set_case> {};

TEST_P(CacheDeviceSets, ReadsOverFourDevicesReturnTheFilesBytesFromEveryDevice) {
  const set_case c = GetParam();
  const std::uint64_t words = 128 * 1024;
  storage_config storage = fast_storage(4);
  storage.replicated = c.replicated;
  storage.stripe_bytes = 8 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), false), storage,
        {.line_bytes = c.line_bytes, .capacity_bytes = 64 * 1024}, 16);
  array<const std::uint64_t> a(r.cache(), r.set());
  const auto threads = static_cast<unsigned>(scaled(128, 48));
  read_tally tally;
  const random_reader reader{a.ref(), scaled(1500, 150), 0, &tally};
  run_threads(threads, [&](unsigned t) { reader(thread_index{t, threads}); });
  EXPECT_EQ(tally.failed.load(), 0u);
  EXPECT_EQ(tally.wrong.load(), 0u) << "first wrong element " << tally.first_wrong_index.load();
  const storage_stats s = r.ssd->stats();
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    EXPECT_GT(s.devices[d].reads, 0u) << "device " << d << " served no read";
  }
}

TEST_P(CacheDeviceSets, WritesOverFourDevicesReachTheFile) {
  const set_case c = GetParam();
  const std::uint64_t words = scaled(64 * 1024, 16 * 1024);
  storage_config storage = fast_storage(4);
  storage.replicated = c.replicated;
  storage.stripe_bytes = 8 * 1024;
  temp_file file(words);
  rig r(backing_store::from_file(file.path(), true), storage,
        {.line_bytes = c.line_bytes, .capacity_bytes = 32 * 1024}, 16);
  std::vector<std::uint64_t> expected(words);
  for (std::uint64_t i = 0; i < words; ++i) {
    expected[i] = i % 5 == 0 ? written_word(i) : pattern_word(i);
  }
  {
    array<std::uint64_t> a(r.cache(), r.set());
    const array_ref<std::uint64_t> ref = a.ref();
    const auto threads = static_cast<unsigned>(scaled(64, 24));
    std::atomic<std::uint64_t> failed{0};
    run_threads(threads, [&](unsigned t) {
      for (std::uint64_t i = 5 * t; i < words; i += 5 * threads) {
        if (!ref.try_store(i, written_word(i)).ok()) failed.fetch_add(1);
      }
    });
    EXPECT_EQ(failed.load(), 0u);
    a.flush();
  }
  EXPECT_EQ(file.words(), expected);
  const storage_stats s = r.ssd->stats();
  for (std::size_t d = 0; d < s.devices.size(); ++d) {
    EXPECT_GT(s.devices[d].writes, 0u) << "device " << d << " served no write";
  }
  if (c.replicated) {
    // Every write-back went to each of the four replicas.
    EXPECT_EQ(s.devices[0].writes, s.devices[3].writes);
  }
}

INSTANTIATE_TEST_SUITE_P(StripedAndReplicated, CacheDeviceSets,
                         ::testing::Values(set_case{false, 512}, set_case{false, 4096},
                                           set_case{true, 512}, set_case{true, 4096}),
                         set_name);

}  // namespace
