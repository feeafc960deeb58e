// --faults: the spec parser, and a device set's bad blocks mapped onto its striped devices.

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include <bam/error.hpp>
#include <bam/storage/device_set.hpp>

#include "common/fault_spec.hpp"

namespace {

using bam::tools::bad_lba_for_devices;
using bam::tools::device_lba_range;
using bam::tools::lba_range;
using bam::tools::parse_fault_spec;
using bam::tools::set_striping;

std::string error_of(const std::string& spec) {
  try {
    (void)parse_fault_spec(spec);
  } catch (const bam::input_error& e) {
    return e.message();
  }
  ADD_FAILURE() << "no error for '" << spec << "'";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(fault_spec, reads_every_key) {
  const bam::fault_plan p = parse_fault_spec(
      "error-rate=0.01,write-error-rate=0.5,late-rate=0.25,late-us=300,drop-rate=1,"
      "bad-lba=2048-2055,seed=42");
  EXPECT_DOUBLE_EQ(p.error_rate, 0.01);
  EXPECT_DOUBLE_EQ(p.write_error_rate, 0.5);
  EXPECT_DOUBLE_EQ(p.late_rate, 0.25);
  EXPECT_DOUBLE_EQ(p.late_us, 300);
  EXPECT_DOUBLE_EQ(p.drop_rate, 1.0);
  EXPECT_EQ(p.bad_lba_begin, 2048u);
  EXPECT_EQ(p.bad_lba_end, 2056u);  // both ends included
  EXPECT_TRUE(p.bad_lba_writes);
  EXPECT_EQ(p.seed, 42u);
}

TEST(fault_spec, leaves_what_is_not_given_at_the_plan_defaults) {
  const bam::fault_plan p = parse_fault_spec("error-rate=0");
  const bam::fault_plan defaults;
  EXPECT_EQ(p.seed, defaults.seed);
  EXPECT_EQ(p.bad_lba_end, 0u);
  EXPECT_FALSE(p.bad_lba_writes);
  EXPECT_FALSE(p.any());
}

TEST(fault_spec, accepts_spaces_around_items_and_one_block_ranges) {
  const bam::fault_plan p = parse_fault_spec(" seed = 3 , bad-lba=7-7 ");
  EXPECT_EQ(p.seed, 3u);
  EXPECT_EQ(p.bad_lba_begin, 7u);
  EXPECT_EQ(p.bad_lba_end, 8u);
}

TEST(fault_spec, refuses_an_unknown_key_naming_it) {
  const std::string m = error_of("error-rate=0.1,eror-rate=0.2");
  EXPECT_TRUE(contains(m, "'eror-rate=0.2'")) << m;
  EXPECT_TRUE(contains(m, "unknown key")) << m;
}

TEST(fault_spec, refuses_a_key_given_twice) {
  const std::string m = error_of("seed=1,seed=2");
  EXPECT_TRUE(contains(m, "'seed=2'")) << m;
  EXPECT_TRUE(contains(m, "twice")) << m;
}

TEST(fault_spec, refuses_rates_outside_zero_to_one) {
  for (const char* spec :
       {"error-rate=1.5", "drop-rate=-0.1", "late-rate=2,late-us=1", "write-error-rate=1e3"}) {
    EXPECT_TRUE(contains(error_of(spec), "from 0 to 1")) << spec;
  }
}

TEST(fault_spec, refuses_bad_numbers) {
  for (const char* spec :
       {"error-rate=abc", "error-rate=0.1x", "error-rate=nan", "error-rate=inf", "seed=-1",
        "seed=1.5", "seed=99999999999999999999", "late-rate=0.1,late-us=fast"}) {
    EXPECT_TRUE(contains(error_of(spec), "not a")) << spec;
  }
}

TEST(fault_spec, refuses_a_range_that_runs_backwards_or_is_malformed) {
  EXPECT_TRUE(contains(error_of("bad-lba=10-5"), "past its last block"))
      << error_of("bad-lba=10-5");
  EXPECT_TRUE(contains(error_of("bad-lba=10"), "A-B"));
  EXPECT_TRUE(contains(error_of("bad-lba=-5"), "non-negative integers"));
  EXPECT_TRUE(contains(error_of("bad-lba=1-x"), "non-negative integers"));
  EXPECT_TRUE(contains(error_of("bad-lba=0-18446744073709551615"), "too large"));
}

TEST(fault_spec, refuses_empty_items_and_an_empty_spec) {
  EXPECT_TRUE(contains(error_of(""), "empty"));
  EXPECT_TRUE(contains(error_of("seed=1,,error-rate=0"), "item 2 is empty"));
  EXPECT_TRUE(contains(error_of("seed=1,"), "item 2 is empty"));
  EXPECT_TRUE(contains(error_of("seed="), "no value"));
  EXPECT_TRUE(contains(error_of("seed"), "key=value"));
}

TEST(fault_spec, refuses_late_rate_and_late_us_one_without_the_other) {
  EXPECT_TRUE(contains(error_of("late-rate=0.5"), "needs late-us"));
  EXPECT_TRUE(contains(error_of("late-us=100"), "needs late-rate"));
  EXPECT_TRUE(contains(error_of("late-us=-1,late-rate=0.1"), "late-us must be"));
}

TEST(fault_spec, an_error_is_one_line) {
  EXPECT_EQ(error_of("error-rate=7").find('\n'), std::string::npos);
}

// Every set block's device and device block, by the device set's own striping.
std::set<std::pair<std::uint32_t, std::uint64_t>> located(lba_range set, const set_striping& s) {
  bam::device_set_ref ref;
  ref.devices = s.devices;
  ref.stripe_bytes = s.stripe_bytes;
  ref.block_bytes = s.block_bytes;
  ref.replicated = s.replicated;
  std::set<std::pair<std::uint32_t, std::uint64_t>> blocks;
  for (std::uint64_t b = set.begin; b < set.end; ++b) {
    const bam::device_location at = ref.locate(b * s.block_bytes);
    blocks.insert({at.device, at.byte / s.block_bytes});
  }
  return blocks;
}

TEST(fault_spec_striping, each_devices_share_is_exactly_the_blocks_the_set_puts_there) {
  for (const std::uint32_t devices : {1u, 2u, 3u, 4u}) {
    const set_striping s{.devices = devices, .stripe_bytes = 4 * 512, .block_bytes = 512};
    for (std::uint64_t begin = 0; begin < 40; ++begin) {
      for (std::uint64_t end = begin; end < 44; ++end) {
        std::set<std::pair<std::uint32_t, std::uint64_t>> mapped;
        for (std::uint32_t d = 0; d < devices; ++d) {
          const lba_range r = device_lba_range({begin, end}, s, d);
          for (std::uint64_t b = r.begin; b < r.end; ++b) mapped.insert({d, b});
        }
        ASSERT_EQ(mapped, located({begin, end}, s))
            << devices << " devices, set blocks [" << begin << ", " << end << ")";
      }
    }
  }
}

TEST(fault_spec_striping, one_device_takes_the_range_as_it_is) {
  bam::fault_plan p = parse_fault_spec("bad-lba=100-199");
  p = bad_lba_for_devices(p, {.devices = 1});
  EXPECT_EQ(p.bad_lba_begin, 100u);
  EXPECT_EQ(p.bad_lba_end, 200u);
}

TEST(fault_spec_striping, whole_rows_of_stripe_units_give_every_device_the_same_range) {
  // 4 devices x 64 KiB units: a row is 512 blocks; rows 2 and 3 are blocks 1024-2047, which
  // are blocks 256-511 of each device.
  const set_striping s{.devices = 4, .stripe_bytes = 65536, .block_bytes = 512};
  const bam::fault_plan p = bad_lba_for_devices(parse_fault_spec("bad-lba=1024-2047"), s);
  EXPECT_EQ(p.bad_lba_begin, 256u);
  EXPECT_EQ(p.bad_lba_end, 512u);
}

TEST(fault_spec_striping, a_range_the_devices_hold_differently_is_refused_with_the_row_size) {
  const set_striping s{.devices = 4, .stripe_bytes = 65536, .block_bytes = 512};
  try {
    (void)bad_lba_for_devices(parse_fault_spec("bad-lba=0-9"), s);
    FAIL() << "no error";
  } catch (const bam::input_error& e) {
    EXPECT_TRUE(contains(e.message(), "512 blocks")) << e.message();
    EXPECT_TRUE(contains(e.message(), "--devices 1")) << e.message();
  }
}

}  // namespace
