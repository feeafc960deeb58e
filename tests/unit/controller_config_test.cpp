// Storage configurations the emulated devices refuse, with a message that names the field.

#include <gtest/gtest.h>

#include <string>

#include <bam/error.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace {

using bam::backing_store;
using bam::emulated_storage;
using bam::input_error;
using bam::storage_config;

// The message of the input_error that building storage from `c` throws ("" when none).
std::string refusal(const storage_config& c) {
  try {
    const emulated_storage s(c, backing_store::in_memory(1 << 20));
  } catch (const input_error& e) {
    return e.what();
  }
  return {};
}

TEST(StorageConfig, AcceptsPollingWithoutSleep) {
  storage_config c;
  c.wait_sleep_ns = 0;
  c.controller.idle_sleep_ns = 0;
  EXPECT_EQ(refusal(c), "");
}

TEST(StorageConfig, RefusesAWaitSleepLongerThanNanosleepAllows) {
  storage_config c;
  c.wait_sleep_ns = bam::max_sleep_ns + 1;
  EXPECT_NE(refusal(c).find("wait sleep"), std::string::npos);
}

TEST(StorageConfig, RefusesAControllerSleepLongerThanNanosleepAllows) {
  storage_config c;
  c.controller.idle_sleep_ns = bam::max_sleep_ns + 1;
  EXPECT_NE(refusal(c).find("controller idle sleep"), std::string::npos);
}

TEST(StorageConfig, RefusesGpuScopeEdgesWithoutAControllerKernel) {
  storage_config c;
  c.controller.gpu_scope_edges = true;
  EXPECT_NE(refusal(c).find("GPU-scope queue edges"), std::string::npos);
}

// Two devices of 8 queues, served by `threads` host threads, a model without caps.
storage_config threaded(std::uint32_t threads) {
  storage_config c;
  c.devices = 2;
  c.queues_per_device = 8;
  c.model = bam::device_model::latency_only(5);
  c.controller_threads = threads;
  return c;
}

TEST(StorageConfig, RefusesNoControllerThreadsMoreThanTheQueuesCapsOrAControllerKernel) {
  storage_config c = threaded(0);
  EXPECT_NE(refusal(c).find("controller threads must be 1 to"), std::string::npos);
  c = threaded(9);
  EXPECT_NE(refusal(c).find("controller threads must be 1 to the queues per device (8)"),
            std::string::npos);
  c = threaded(2);
  c.model = bam::device_model::optane();  // caps on
  EXPECT_NE(refusal(c).find("without caps"), std::string::npos);
  c = threaded(2);
  c.placement = bam::controller_placement::gpu_kernel;
  EXPECT_NE(refusal(c).find("gpu_kernel placement has none"), std::string::npos);
  EXPECT_EQ(refusal(threaded(3)), "");
}

}  // namespace
