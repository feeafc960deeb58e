#pragma once
// The parameters the dense-cache stress tests run under: both pinning kinds in both cache modes.

#include <gtest/gtest.h>

#include <string>

#include <bam/cache.hpp>

namespace bam::stress {

struct stress_case {
  pinning_kind pinning;
  cache_mode mode;
};

inline std::string case_name(const ::testing::TestParamInfo<stress_case>& info) {
  return std::string(to_string(info.param.pinning)) + "_" + to_string(info.param.mode);
}

/// Every pinning kind in every cache mode, for INSTANTIATE_TEST_SUITE_P.
inline auto pinnings_and_modes() {
  return ::testing::Values(stress_case{pinning_kind::frame_pins, cache_mode::naive},
                           stress_case{pinning_kind::frame_pins, cache_mode::optimized},
                           stress_case{pinning_kind::epochs, cache_mode::naive},
                           stress_case{pinning_kind::epochs, cache_mode::optimized});
}

}  // namespace bam::stress
