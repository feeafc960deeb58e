// bam::array checks its extent and its use when it is made, and the host read/write ranges
// when they are asked for: every bad one is a bam::input_error naming the array.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace {

using namespace bam;

constexpr std::uint64_t set_bytes = 64 * 1024;

/// One device over a 64 KiB image (controller running, so writable arrays can flush when
/// they die) and a cache of `config`.
struct small_set {
  explicit small_set(const cache_config& config = {.line_bytes = 4096, .capacity_bytes = 64 * 1024},
                     const storage_config& storage = {})
      : ssd(storage, backing_store::in_memory(set_bytes)), stream(2), cache(config, stream) {
    ssd.start();
  }
  emulated_storage ssd;
  host_stream stream;
  page_cache cache;
};

struct element_of_1k {
  std::uint8_t bytes[1024];
};

/// The message of the input_error `f` throws ("" if it throws none).
template <class F>
std::string input_error_of(F f) {
  try {
    f();
  } catch (const input_error& e) {
    return e.message();
  }
  return "";
}

TEST(ArrayExtent, AnOffsetThatIsNotAMultipleOfTheElementSizeIsRefused) {
  small_set s;
  const std::string m = input_error_of(
      [&] { array<const std::uint64_t>(s.cache, s.ssd.ref(), {.offset_bytes = 12, .name = "x"}); });
  EXPECT_NE(m.find("array 'x'"), std::string::npos) << m;
  EXPECT_NE(m.find("offset 12"), std::string::npos) << m;
}

TEST(ArrayExtent, AnOffsetPastTheEndOfTheSetIsRefused) {
  small_set s;
  EXPECT_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref(), {.offset_bytes = set_bytes + 8}),
               input_error);
}

TEST(ArrayExtent, AnOffsetAtTheEndOfTheSetLeavesNoElementAndIsRefused) {
  small_set s;
  EXPECT_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref(), {.offset_bytes = set_bytes}),
               input_error);
}

TEST(ArrayExtent, ElementsPastTheEndOfTheSetAreRefused) {
  small_set s;
  EXPECT_THROW(
      array<const std::uint64_t>(s.cache, s.ssd.ref(), {.offset_bytes = 8, .count = set_bytes / 8}),
      input_error);
  EXPECT_NO_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref(),
                                             {.offset_bytes = 8, .count = set_bytes / 8 - 1}));
}

TEST(ArrayExtent, ACountOfZeroTakesEveryWholeElementUpToTheEnd) {
  small_set s;
  array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.offset_bytes = 16});
  EXPECT_EQ(a.size(), (set_bytes - 16) / 8);
}

TEST(ArrayExtent, AnElementLargerThanALineIsRefused) {
  small_set s({.line_bytes = 512, .capacity_bytes = 64 * 1024});
  EXPECT_THROW(array<const element_of_1k>(s.cache, s.ssd.ref()), input_error);
}

TEST(ArrayExtent, AWritableArrayInModeNoneIsRefused) {
  small_set s({.line_bytes = 4096, .capacity_bytes = 64 * 1024, .mode = cache_mode::none});
  const std::string m =
      input_error_of([&] { array<std::uint64_t>(s.cache, s.ssd.ref(), {.name = "w"}); });
  EXPECT_NE(m.find("array 'w'"), std::string::npos) << m;
  EXPECT_NE(m.find("none"), std::string::npos) << m;
}

TEST(ArrayExtent, AReadOnlyArrayInModeNoneIsAccepted) {
  small_set s({.line_bytes = 4096, .capacity_bytes = 64 * 1024, .mode = cache_mode::none});
  array<const std::uint64_t> a(s.cache, s.ssd.ref());
  EXPECT_TRUE(a.ref().reads_through());
}

TEST(ArrayExtent, ALineLargerThanTheDevicesLargestCommandIsRefused) {
  storage_config storage;
  storage.max_transfer_bytes = 4096;
  small_set s({.line_bytes = 8192, .capacity_bytes = 64 * 1024}, storage);
  EXPECT_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref()), input_error);
}

TEST(ArrayExtent, AStripeThatIsNotAMultipleOfTheLineIsRefused) {
  storage_config storage;
  storage.devices = 4;
  storage.stripe_bytes = 8192;
  small_set s({.line_bytes = 16384, .capacity_bytes = 64 * 1024}, storage);
  EXPECT_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref()), input_error);
}

TEST(ArrayExtent, AReplicatedSetIgnoresTheStripeUnit) {
  storage_config storage;
  storage.devices = 4;
  storage.stripe_bytes = 8192;
  storage.replicated = true;
  small_set s({.line_bytes = 16384, .capacity_bytes = 64 * 1024}, storage);
  EXPECT_NO_THROW(array<const std::uint64_t>(s.cache, s.ssd.ref()));
}

TEST(ArrayHostRange, AReadStartingPastTheEndIsRefused) {
  small_set s;
  array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100, .name = "r"});
  const std::string m = input_error_of([&] { (void)a.read(101, 0); });
  EXPECT_NE(m.find("array 'r'"), std::string::npos) << m;
  EXPECT_NE(m.find("100 elements"), std::string::npos) << m;
}

TEST(ArrayHostRange, AReadRunningPastTheEndIsRefused) {
  small_set s;
  array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100});
  EXPECT_THROW((void)a.read(90, 11), input_error);
  EXPECT_THROW((void)a.read(0, 101), input_error);
}

TEST(ArrayHostRange, AReadWhoseEndOverflowsIsRefused) {
  small_set s;
  array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100});
  EXPECT_THROW((void)a.read(1, std::numeric_limits<std::uint64_t>::max()), input_error);
}

TEST(ArrayHostRange, AnEmptyReadAtTheEndIsFine) {
  small_set s;
  array<const std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100});
  EXPECT_TRUE(a.read(100, 0).empty());
}

TEST(ArrayHostRange, AWriteRunningPastTheEndIsRefused) {
  small_set s;
  array<std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100});
  EXPECT_THROW(a.write(95, std::vector<std::uint64_t>(6)), input_error);
  EXPECT_THROW(a.write(101, {}), input_error);
  EXPECT_NO_THROW(a.write(100, {}));
}

TEST(ArrayHostRange, AWriteThatFitsReadsBack) {
  small_set s;
  array<std::uint64_t> a(s.cache, s.ssd.ref(), {.count = 100});
  a.write(95, {1, 2, 3, 4, 5});
  EXPECT_EQ(a.read(94, 6), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
