// Faults under load: injected media errors, invalid commands, dropped completions (halts and
// queue resets) and completions that come after their submitter gave up. Every outcome reaches
// its submitter, is counted once, and no wait hangs.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/storage/emulated_storage.hpp>

#include "stress_support.hpp"

namespace {

using namespace bam::testing;
using bam::io_status;
using bam::status_source;

class FaultStress : public testing::TestWithParam<protocol> {};

std::string protocol_name(const testing::TestParamInfo<protocol>& info) {
  return info.param == protocol::ticket ? "Ticket" : "Naive";
}

const std::uint16_t read_error =
    bam::nvme::make_status_field(bam::nvme::media_status::unrecovered_read_error);
const std::uint16_t write_fault =
    bam::nvme::make_status_field(bam::nvme::media_status::write_fault);
const std::uint16_t out_of_range =
    bam::nvme::make_status_field(bam::nvme::generic_status::lba_out_of_range, true);

// ---------------------------------------------------------------------------------------------
// Injected errors (error_rate and a bad LBA range) and invalid commands.

TEST_P(FaultStress, EveryInjectedErrorReachesItsSubmitterAsItsNvmeStatus) {
  constexpr unsigned threads = 64;
  constexpr std::uint32_t devices = 2, queues = 4;
  constexpr std::uint64_t stripe = 4096;
  constexpr std::uint64_t read_area = 1 << 20;  // never written: the pattern stays
  constexpr std::uint64_t region_bytes = 2 * stripe;
  constexpr std::uint64_t image_bytes = read_area + threads * region_bytes;
  constexpr std::uint64_t bad_begin = 64, bad_end = 96;  // device LBAs, inside the read area
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = devices;
  config.queues_per_device = queues;
  config.queue_depth = 8;
  config.stripe_bytes = stripe;
  config.model = {.latency_us = 2, .latency_p99_us = 30, .caps = false};
  config.faults = {
      .error_rate = 0.02, .bad_lba_begin = bad_begin, .bad_lba_end = bad_end, .seed = 5};
  config.timeout_ns = 120'000'000'000ull;
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint32_t block = set.block_bytes;
  const std::uint64_t commands = scaled(200'000, 2000);
  ssd.start();

  struct tally {
    std::uint64_t reads_ok = 0, read_errors = 0, bad_range_reads = 0, bad_range_errors = 0;
    std::uint64_t writes_ok = 0, write_faults = 0, rejected = 0, wrong = 0, unexpected = 0;
    std::string first_unexpected;
  };
  std::vector<tally> tallies(threads);
  std::vector<std::vector<std::uint64_t>> shadow(threads);
  std::atomic<std::uint64_t> next{0};
  auto client = [&](unsigned t) {
    tally& n = tallies[t];
    rng r(77 + t);
    auto buffer = std::make_unique<io_buffer>();
    const std::uint64_t region = read_area + t * region_bytes;
    std::vector<std::uint64_t>& mine = shadow[t];
    for (std::uint64_t k = 0; k < region_bytes / 8; ++k)
      mine.push_back(pattern_word(region + k * 8));
    auto unexpected = [&](const io_status& s, const char* what) {
      if (n.unexpected++ == 0) n.first_unexpected = std::string(what) + ": " + s.name();
    };
    for (std::uint64_t seq = 0; next.fetch_add(1, std::memory_order_relaxed) < commands; ++seq) {
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const std::uint64_t kind = r.below(100);
      bam::queue_ticket ticket;
      if (kind < 2) {
        // A read past the end of a device's namespace: rejected by validation.
        const std::uint32_t d = static_cast<std::uint32_t>(r.below(devices));
        extent e{0, d, image_bytes / devices / block + r.below(100), 1};
        const bam::queue_pair_ref& q = set.queue(d, static_cast<std::uint32_t>(r.below(queues)));
        const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, block);
        const auto until = bam::deadline::after_ns(q.timeout_ns());
        const io_status s = run_command(q, GetParam(), cmd, until, until, ticket);
        if (s == io_status::from_device(out_of_range)) {
          ++n.rejected;
        } else {
          unexpected(s, "out-of-range read");
        }
      } else if (kind < 80) {
        const extent e = random_extent(set, r, 0, read_area, 8);
        const bool in_bad_range = e.lba < bad_end && e.lba + e.blocks > bad_begin;
        const bam::queue_pair_ref& q =
            set.queue(e.device, static_cast<std::uint32_t>(r.below(queues)));
        const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, block);
        const auto until = bam::deadline::after_ns(q.timeout_ns());
        const io_status s = run_command(q, GetParam(), cmd, until, until, ticket);
        n.bad_range_reads += in_bad_range;
        if (s.ok() && !in_bad_range) {
          ++n.reads_ok;
          n.wrong += pattern_mismatches(*buffer, offset, e, block);
        } else if (s == io_status::from_device(read_error)) {
          ++n.read_errors;
          n.bad_range_errors += in_bad_range;
          // No data moves for a failed command.
          n.wrong += !buffer->untouched(offset, e.bytes(block));
        } else {
          unexpected(s, in_bad_range ? "read of a bad LBA" : "read");
        }
      } else {
        const extent e = random_extent(set, r, region, region + region_bytes, 8);
        const bam::queue_pair_ref& q =
            set.queue(e.device, static_cast<std::uint32_t>(r.below(queues)));
        const auto cmd = rw_command(bam::nvme::io_opcode::write, e, *buffer, offset, block);
        const std::uint64_t first = (e.image_offset - region) / 8, words = e.bytes(block) / 8;
        for (std::uint64_t k = 0; k < words; ++k) {
          const std::uint64_t v = pattern_word(~((std::uint64_t{t} << 40) | (seq << 12) | k));
          std::memcpy(buffer->data + offset + k * 8, &v, 8);
        }
        const auto until = bam::deadline::after_ns(q.timeout_ns());
        const io_status s = run_command(q, GetParam(), cmd, until, until, ticket);
        if (s.ok()) {
          ++n.writes_ok;
          for (std::uint64_t k = 0; k < words; ++k) mine[first + k] = buffer->word(offset + k * 8);
        } else if (s == io_status::from_device(write_fault)) {
          ++n.write_faults;  // the blocks keep their old contents
        } else {
          unexpected(s, "write");
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(client, t);
  for (auto& t : pool) t.join();
  ssd.stop();

  tally sum;
  for (const auto& n : tallies) {
    sum.reads_ok += n.reads_ok;
    sum.read_errors += n.read_errors;
    sum.bad_range_reads += n.bad_range_reads;
    sum.bad_range_errors += n.bad_range_errors;
    sum.writes_ok += n.writes_ok;
    sum.write_faults += n.write_faults;
    sum.rejected += n.rejected;
    sum.wrong += n.wrong;
    sum.unexpected += n.unexpected;
    if (n.unexpected) ADD_FAILURE() << "unexpected outcome: " << n.first_unexpected;
  }
  EXPECT_EQ(sum.unexpected, 0u);
  EXPECT_EQ(sum.wrong, 0u) << "words read that differ from the image, or failed reads with data";
  EXPECT_EQ(sum.bad_range_errors, sum.bad_range_reads) << "every read of a bad LBA fails";
  EXPECT_GT(sum.bad_range_reads, 0u);
  EXPECT_GT(sum.write_faults, 0u);

  const bam::device_stats dev = ssd.stats().total();
  EXPECT_EQ(sum.read_errors + sum.write_faults, dev.injected_errors);
  EXPECT_EQ(sum.rejected, dev.invalid);
  EXPECT_EQ(sum.reads_ok, dev.reads);
  EXPECT_EQ(sum.writes_ok, dev.writes);
  EXPECT_EQ(dev.commands, commands);

  std::uint64_t image_wrong = 0;
  for (unsigned t = 0; t < threads; ++t) {
    for (std::uint64_t k = 0; k < region_bytes / 8; ++k) {
      std::uint64_t w;
      std::memcpy(&w, image->data() + read_area + t * region_bytes + k * 8, 8);
      image_wrong += w != shadow[t][k];
    }
  }
  EXPECT_EQ(image_wrong, 0u) << "failed writes left data behind, or good ones were lost";
}

// ---------------------------------------------------------------------------------------------
// Dropped completions: each becomes an error at its submitter, a slot that never comes back
// halts its queue, and a halted queue is reset and serves again.

struct outcome_counts {
  std::uint64_t ok = 0, device_errors = 0, timeouts = 0, lost = 0, halted = 0, other = 0;
  std::uint64_t wrong = 0;
};

TEST_P(FaultStress, DroppedCompletionsBecomeErrorsAndHaltedQueuesServeAgainAfterAReset) {
  constexpr unsigned threads = 32;
  constexpr std::uint32_t queues = 4;
  constexpr std::uint64_t image_bytes = 1 << 20;
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = 1;
  config.queues_per_device = queues;
  config.queue_depth = 4;
  config.model = {.latency_us = 2, .latency_p99_us = 20, .caps = false};
  config.faults = {.drop_rate = 0.004, .seed = 7};  // this seed drops early: sequences 41, 71, ...
  // Short, so that a dropped command's slot halts its queue soon; commands that are merely slow
  // may time out too, which the checks below allow.
  config.timeout_ns = 50'000'000ull * stress_slowdown();
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint32_t block = set.block_bytes;
  const std::uint64_t per_thread = scaled(400, 30);
  constexpr int rounds = 3;

  std::vector<std::unique_ptr<io_buffer>> retired;  // buffers of abandoned commands
  const stop_on_exit stop_first(ssd);               // ... outlive the controller
  std::array<std::uint64_t, queues> drained_before{}, late_before{};
  std::array<bool, queues> reset_last_round{};
  std::uint64_t drained_lost_to_resets = 0, dropped_before = 0, resets = 0, resets_checked = 0;
  outcome_counts all;

  for (int round = 0; round < rounds; ++round) {
    ssd.start();
    std::vector<std::array<outcome_counts, queues>> per_thread_counts(threads);
    std::vector<std::vector<std::unique_ptr<io_buffer>>> thread_retired(threads);
    auto client = [&](unsigned t) {
      rng r(round * 1000 + t);
      auto buffer = std::make_unique<io_buffer>();
      for (std::uint64_t i = 0; i < per_thread; ++i) {
        // Pick a queue that is not known to be halted; stop when all are.
        std::uint32_t qi = static_cast<std::uint32_t>(r.below(queues));
        std::uint32_t tries = 0;
        while (set.queue(0, qi).halted() && ++tries <= queues) qi = (qi + 1) % queues;
        if (tries > queues) return;
        const bam::queue_pair_ref& q = set.queue(0, qi);
        outcome_counts& n = per_thread_counts[t][qi];
        const extent e = random_extent(set, r, 0, image_bytes, 8);
        const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
        const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, block);
        bam::queue_ticket ticket;
        const auto until = bam::deadline::after_ns(q.timeout_ns());
        const io_status s = run_command(q, GetParam(), cmd, until, until, ticket);
        if (s.ok()) {
          ++n.ok;
          n.wrong += pattern_mismatches(*buffer, offset, e, block);
          continue;
        }
        switch (s.source()) {
          case status_source::device:
            ++n.device_errors;
            break;
          case status_source::timeout:
          case status_source::submit_timeout:  // waited past its deadline to enter the queue
            ++n.timeouts;
            break;
          case status_source::command_lost:
            ++n.lost;
            break;
          case status_source::queue_halted:
            ++n.halted;
            break;
          default:
            ++n.other;
        }
        // The command may still be fetched and answered into this buffer: never reuse it.
        thread_retired[t].push_back(std::move(buffer));
        buffer = std::make_unique<io_buffer>();
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(client, t);
    for (auto& t : pool) t.join();
    for (auto& v : thread_retired) {
      for (auto& b : v) retired.push_back(std::move(b));
    }

    // Let every fetched command be answered or dropped, then account for each one.
    ASSERT_TRUE(quiesce(ssd, drained_lost_to_resets, 10'000'000'000ull * stress_slowdown()))
        << "a fetched command was neither answered nor dropped";
    const bam::storage_stats stats = ssd.stats();
    const bam::device_stats dev = stats.total();
    std::uint64_t round_errors = 0;
    for (std::uint32_t qi = 0; qi < queues; ++qi) {
      outcome_counts q;
      for (const auto& per : per_thread_counts) {
        q.ok += per[qi].ok;
        q.device_errors += per[qi].device_errors;
        q.timeouts += per[qi].timeouts;
        q.lost += per[qi].lost;
        q.halted += per[qi].halted;
        q.other += per[qi].other;
        q.wrong += per[qi].wrong;
      }
      EXPECT_EQ(q.device_errors, 0u) << "queue " << qi;
      EXPECT_EQ(q.other, 0u) << "queue " << qi;
      EXPECT_EQ(q.wrong, 0u) << "queue " << qi;
      // Each drained completion went to exactly one place: its waiter, or (late) the drainer.
      const std::uint64_t drained = stats.queues[qi].drained - drained_before[qi];
      const std::uint64_t late = stats.queues[qi].late_completions - late_before[qi];
      EXPECT_EQ(drained, q.ok + q.device_errors + late) << "queue " << qi << " round " << round;
      if (reset_last_round[qi]) {
        EXPECT_GT(q.ok, 0u) << "queue " << qi << " served nothing in the round after its reset";
        ++resets_checked;
      }
      round_errors += q.timeouts + q.lost + q.halted;
      all.ok += q.ok;
      all.timeouts += q.timeouts;
      all.lost += q.lost;
      all.halted += q.halted;
    }
    const std::uint64_t dropped = dev.dropped - dropped_before;
    EXPECT_GE(round_errors, dropped) << "a dropped command reached its submitter as a success";
    dropped_before = dev.dropped;

    // Reset every halted queue (the controller must be stopped) and carry the counters over.
    ssd.stop();
    for (std::uint32_t qi = 0; qi < queues; ++qi) {
      if (set.queue(0, qi).halted()) {
        drained_lost_to_resets += stats.queues[qi].drained;
        ssd.reset_queue(0, qi);
        EXPECT_FALSE(set.queue(0, qi).halted());
        ++resets;
        reset_last_round[qi] = true;
        drained_before[qi] = 0;
        late_before[qi] = 0;
      } else {
        reset_last_round[qi] = false;
        drained_before[qi] = stats.queues[qi].drained;
        late_before[qi] = stats.queues[qi].late_completions;
      }
    }
  }

  EXPECT_GT(dropped_before, 0u) << "the run dropped some completions";
  EXPECT_GT(all.timeouts, 0u);
  EXPECT_GT(resets, 0u) << "some queue halted and was reset";
  EXPECT_GT(resets_checked, 0u) << "some queue was used again after a reset";
}

// ---------------------------------------------------------------------------------------------
// Late completions: the submitter gives up first; the completion, when it comes, is counted as
// late and frees its slot, and the slot's next command goes through.

TEST_P(FaultStress, LateCompletionsAreCountedAndFreeTheirSlots) {
  constexpr unsigned threads = 32;
  constexpr std::uint32_t queues = 4, depth = 4;
  constexpr std::uint64_t image_bytes = 1 << 20;
  const std::uint64_t wait_ns = 4'000'000ull * stress_slowdown();
  auto image = pattern_image(image_bytes);
  bam::storage_config config;
  config.devices = 1;
  config.queues_per_device = queues;
  config.queue_depth = depth;
  config.model = {.latency_us = 2, .latency_p99_us = 20, .caps = false};
  config.faults = {.late_rate = 0.01,
                   .late_us = 5.0 * static_cast<double>(wait_ns) / 1e3,  // well past the wait
                   .seed = 3};
  config.timeout_ns = 120'000'000'000ull;  // submits never give up
  bam::emulated_storage ssd(config, image);
  const bam::device_set_ref set = ssd.ref();
  const std::uint32_t block = set.block_bytes;
  const std::uint64_t commands = scaled(30'000, 1000);
  ssd.start();

  struct tally {
    std::uint64_t ok = 0, timeouts = 0, wrong = 0, unexpected = 0;
    std::uint64_t ok_past_deadline = 0;  ///< answered, but found only after the wait's deadline
    std::string first_unexpected;
    std::vector<std::unique_ptr<io_buffer>> retired;
  };
  std::vector<tally> tallies(threads);
  const stop_on_exit stop_first(ssd);  // before the retired buffers go
  std::atomic<std::uint64_t> next{0};
  auto client = [&](unsigned t) {
    tally& n = tallies[t];
    rng r(500 + t);
    auto buffer = std::make_unique<io_buffer>();
    while (next.fetch_add(1, std::memory_order_relaxed) < commands) {
      const std::uint32_t qi = static_cast<std::uint32_t>(r.below(queues));
      const bam::queue_pair_ref& q = set.queue(0, qi);
      const extent e = random_extent(set, r, 0, image_bytes, 8);
      const std::uint32_t offset = static_cast<std::uint32_t>(r.below(1024)) * 4;
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, offset, block);
      bam::queue_ticket ticket;
      const io_status submitted =
          GetParam() == protocol::ticket
              ? q.submit(cmd, bam::deadline::after_ns(q.timeout_ns()), ticket)
              : q.submit_naive(cmd, bam::deadline::after_ns(q.timeout_ns()), ticket);
      if (!submitted.ok()) {
        if (n.unexpected++ == 0) n.first_unexpected = std::string("submit: ") + submitted.name();
        continue;
      }
      // The wait's own deadline starts after the doorbell: a late command always misses it.
      // A waiter that comes to wait() only after the late completion (a descheduled thread on
      // a loaded machine) finds it posted and takes it; it is counted apart.
      const bam::deadline until = bam::deadline::after_ns(wait_ns);
      const io_status s = q.wait(ticket, until);
      if (s.ok()) {
        ++n.ok;
        if (until.expired()) ++n.ok_past_deadline;
        n.wrong += pattern_mismatches(*buffer, offset, e, block);
      } else if (s.source() == status_source::timeout) {
        ++n.timeouts;
        n.retired.push_back(std::move(buffer));  // the late completion still writes into it
        buffer = std::make_unique<io_buffer>();
      } else if (n.unexpected++ == 0) {
        n.first_unexpected = std::string("wait: ") + s.name();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(client, t);
  for (auto& t : pool) t.join();
  ASSERT_TRUE(quiesce(ssd, 0, 60'000'000'000ull)) << "a late completion never came";

  std::uint64_t ok = 0, timeouts = 0, wrong = 0, ok_past_deadline = 0;
  for (const auto& n : tallies) {
    ok += n.ok;
    timeouts += n.timeouts;
    wrong += n.wrong;
    ok_past_deadline += n.ok_past_deadline;
    EXPECT_EQ(n.unexpected, 0u) << n.first_unexpected;
  }
  EXPECT_EQ(wrong, 0u);
  const bam::storage_stats stats = ssd.stats();
  const bam::device_stats dev = stats.total();
  const bam::queue_counters q = total(stats.queues);
  EXPECT_GT(dev.late, 0u);
  EXPECT_GT(timeouts, 0u);
  EXPECT_GE(timeouts + ok_past_deadline, dev.late)
      << "a late command was answered before its wait's deadline";
  EXPECT_EQ(q.late_completions, timeouts) << "every given-up command's completion came late";
  EXPECT_EQ(q.drained, ok + timeouts);
  EXPECT_EQ(dev.dropped, 0u);
  for (std::uint32_t qi = 0; qi < queues; ++qi) EXPECT_FALSE(set.queue(0, qi).halted());

  // Every slot was freed: each queue serves two more laps in order.
  auto buffer = std::make_unique<io_buffer>();
  for (std::uint32_t qi = 0; qi < queues; ++qi) {
    for (std::uint32_t i = 0; i < 2 * depth; ++i) {
      const bam::queue_pair_ref& qp = set.queue(0, qi);
      const extent e = extent_at(set, i * block, 1);
      const auto cmd = rw_command(bam::nvme::io_opcode::read, e, *buffer, 0, block);
      bam::queue_ticket ticket;
      const auto until = bam::deadline::after_ns(60'000'000'000ull);
      // Generous wait: the command may sit behind late ones that are still due.
      ASSERT_TRUE(run_command(qp, GetParam(), cmd, until, until, ticket).ok())
          << "queue " << qi << " command " << i;
      EXPECT_EQ(pattern_mismatches(*buffer, 0, e, block), 0u);
    }
  }
  ssd.stop();
}

INSTANTIATE_TEST_SUITE_P(Protocols, FaultStress, testing::Values(protocol::ticket, protocol::naive),
                         protocol_name);

}  // namespace
