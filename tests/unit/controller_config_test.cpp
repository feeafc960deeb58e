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

}  // namespace
