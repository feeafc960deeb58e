// The emulated device's timing model (latency distribution, throughput caps) and its fault
// plan, checked over many samples.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <bam/nvme/command.hpp>
#include <bam/storage/device_model.hpp>

#include "storage/emulated/command_engine.hpp"
#include "storage/emulated/timing.hpp"

namespace {

using bam::device_model;
using bam::emulated::device_clock;
using bam::emulated::timing_model;

std::vector<double> latencies_us(const timing_model& t, int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<double>(t.latency_ns(7, 0, i)) / 1e3;
  return v;
}

TEST(TimingModel, WithoutATailEveryCommandTakesTheMeanLatency) {
  const timing_model t = timing_model::from({.latency_us = 11.0});
  for (std::uint64_t s = 0; s < 1000; ++s) ASSERT_EQ(t.latency_ns(1, 0, s), 11'000u);
}

TEST(TimingModel, ATailKeepsTheMeanNearTheRequestedLatency) {
  const timing_model t = timing_model::from({.latency_us = 11.0, .latency_p99_us = 50.0});
  const auto v = latencies_us(t, 200'000);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  EXPECT_NEAR(mean, 11.0, 0.2);
}

TEST(TimingModel, ATailPutsTheNinetyNinthPercentileNearTheRequestedP99) {
  const timing_model t = timing_model::from({.latency_us = 11.0, .latency_p99_us = 50.0});
  auto v = latencies_us(t, 200'000);
  std::nth_element(v.begin(), v.begin() + 198'000, v.end());
  EXPECT_NEAR(v[198'000], 50.0, 2.0);
}

TEST(TimingModel, ATailNeverGoesBelowItsFixedPart) {
  const timing_model t = timing_model::from({.latency_us = 100.0, .latency_p99_us = 200.0});
  const auto v = latencies_us(t, 50'000);
  const double floor_us = static_cast<double>(t.base_ns) / 1e3;
  EXPECT_GT(floor_us, 0.0);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), floor_us);
}

TEST(TimingModel, LatencyIsAPureFunctionOfSeedDeviceAndSequence) {
  const timing_model t = timing_model::from({.latency_us = 11.0, .latency_p99_us = 50.0});
  EXPECT_EQ(t.latency_ns(3, 1, 99), t.latency_ns(3, 1, 99));
  int differ = 0;
  for (std::uint64_t s = 0; s < 100; ++s) differ += t.latency_ns(3, 1, s) != t.latency_ns(3, 2, s);
  EXPECT_GT(differ, 90) << "devices draw from different streams";
}

TEST(TimingModel, CostIsTheLargerOfTheCommandAndByteCaps) {
  const timing_model t = timing_model::from(
      {.latency_us = 0, .iops = 1e6, .bandwidth_bytes_per_s = 1e9, .caps = true});
  EXPECT_EQ(t.cost_ps(512), 1'000'000u);   // 1 us per command beats 0.512 us of bytes
  EXPECT_EQ(t.cost_ps(4096), 4'096'000u);  // 4.096 us of bytes beats 1 us per command
}

TEST(TimingModel, WithoutCapsCommandsCostNothing) {
  const timing_model t = timing_model::from(device_model::unlimited());
  EXPECT_EQ(t.cost_ps(1u << 20), 0u);
}

TEST(DeviceClock, CommandsArrivingTogetherCompleteOneCostApart) {
  const timing_model t = timing_model::from(
      {.latency_us = 0, .iops = 1e6, .bandwidth_bytes_per_s = 1e9, .caps = true});
  device_clock c;
  for (std::uint64_t k = 0; k < 100; ++k) {
    EXPECT_EQ(c.schedule(5'000, 0, t.cost_ps(512)), 5'000 + (k + 1) * 1'000) << "command " << k;
  }
}

TEST(DeviceClock, TheByteCapSpacesLargeCommandsByTheirTransferTime) {
  const timing_model t = timing_model::from(
      {.latency_us = 0, .iops = 1e6, .bandwidth_bytes_per_s = 1e9, .caps = true});
  device_clock c;
  std::uint64_t previous = c.schedule(0, 0, t.cost_ps(4096));
  for (int k = 0; k < 50; ++k) {
    const std::uint64_t done = c.schedule(0, 0, t.cost_ps(4096));
    EXPECT_EQ(done - previous, 4096u);
    previous = done;
  }
}

TEST(DeviceClock, SparseArrivalsCompleteAfterTheirLatency) {
  device_clock c;
  for (std::uint64_t k = 0; k < 20; ++k) {
    const std::uint64_t arrival = k * 10'000;
    EXPECT_EQ(c.schedule(arrival, 5'000, 1'000'000), arrival + 5'000);
  }
}

TEST(DeviceClock, AQueuedCommandWaitsForThePipelineEvenWithLatency) {
  device_clock c;
  // 3 us per command, 1 us latency: the tenth command of a burst starts at 27 us.
  std::uint64_t done = 0;
  for (int k = 0; k < 10; ++k) done = c.schedule(0, 1'000, 3'000'000);
  EXPECT_EQ(done, 30'000u);
}

// The fault plan, decided per command.
bam::nvme::submission_entry read_at(std::uint64_t lba, std::uint32_t blocks) {
  return bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, lba, blocks, 0x1000, 0);
}
bam::nvme::submission_entry write_at(std::uint64_t lba, std::uint32_t blocks) {
  return bam::nvme::make_rw(bam::nvme::io_opcode::write, 1, lba, blocks, 0x1000, 0);
}

const std::uint16_t read_error =
    bam::nvme::make_status_field(bam::nvme::media_status::unrecovered_read_error);
const std::uint16_t write_fault =
    bam::nvme::make_status_field(bam::nvme::media_status::write_fault);

TEST(FaultPlan, AReadTouchingTheBadRangeFailsWithUnrecoveredReadError) {
  const bam::fault_plan plan{.bad_lba_begin = 100, .bad_lba_end = 200};
  EXPECT_EQ(bam::emulated::decide_fault(plan, read_at(99, 2), 0, 0).status, read_error);
  EXPECT_EQ(bam::emulated::decide_fault(plan, read_at(199, 1), 0, 0).status, read_error);
  EXPECT_EQ(bam::emulated::decide_fault(plan, read_at(50, 300), 0, 0).status, read_error);
}

TEST(FaultPlan, ReadsNextToTheBadRangeSucceed) {
  const bam::fault_plan plan{.bad_lba_begin = 100, .bad_lba_end = 200};
  EXPECT_EQ(bam::emulated::decide_fault(plan, read_at(90, 10), 0, 0).status, 0u);
  EXPECT_EQ(bam::emulated::decide_fault(plan, read_at(200, 8), 0, 0).status, 0u);
}

TEST(FaultPlan, WritesToTheBadRangeSucceed) {
  const bam::fault_plan plan{.bad_lba_begin = 100, .bad_lba_end = 200};
  EXPECT_EQ(bam::emulated::decide_fault(plan, write_at(150, 1), 0, 0).status, 0u);
}

TEST(FaultPlan, ErrorRateFailsAboutThatShareOfReadsAndWrites) {
  const bam::fault_plan plan{.error_rate = 0.1};
  int read_errors = 0, write_errors = 0;
  constexpr int n = 100'000;
  for (std::uint64_t s = 0; s < n; ++s) {
    const auto r = bam::emulated::decide_fault(plan, read_at(0, 1), 0, s).status;
    const auto w = bam::emulated::decide_fault(plan, write_at(0, 1), 0, s).status;
    ASSERT_TRUE(r == 0 || r == read_error);
    ASSERT_TRUE(w == 0 || w == write_fault);
    read_errors += r != 0;
    write_errors += w != 0;
  }
  EXPECT_NEAR(read_errors, n / 10, n / 100);
  EXPECT_NEAR(write_errors, n / 10, n / 100);
}

TEST(FaultPlan, ErrorRateNeverFailsAFlush) {
  const bam::fault_plan plan{.error_rate = 1.0};
  EXPECT_EQ(bam::emulated::decide_fault(plan, bam::nvme::make_flush(1), 0, 0).status, 0u);
}

TEST(FaultPlan, DropRateDropsAboutThatShareOfCommands) {
  const bam::fault_plan plan{.drop_rate = 0.05};
  int dropped = 0;
  constexpr int n = 100'000;
  for (std::uint64_t s = 0; s < n; ++s)
    dropped += bam::emulated::decide_fault(plan, read_at(0, 1), 3, s).drop;
  EXPECT_NEAR(dropped, n / 20, n / 200);
}

TEST(FaultPlan, LateCommandsGetTheLateDelay) {
  const bam::fault_plan plan{.late_rate = 0.5, .late_us = 250};
  int late = 0;
  for (std::uint64_t s = 0; s < 1000; ++s) {
    const auto d = bam::emulated::decide_fault(plan, read_at(0, 1), 0, s);
    ASSERT_TRUE(d.extra_ns == 0 || d.extra_ns == 250'000u);
    late += d.extra_ns != 0;
  }
  EXPECT_NEAR(late, 500, 60);
}

TEST(FaultPlan, AnEmptyPlanLeavesEveryCommandAlone) {
  const bam::fault_plan plan{};
  EXPECT_FALSE(plan.any());
  for (std::uint64_t s = 0; s < 1000; ++s) {
    const auto d = bam::emulated::decide_fault(plan, read_at(s, 1), 0, s);
    ASSERT_EQ(d.status, 0u);
    ASSERT_FALSE(d.drop);
    ASSERT_EQ(d.extra_ns, 0u);
  }
}

}  // namespace
