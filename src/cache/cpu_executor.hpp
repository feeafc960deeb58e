#pragma once
// The CPU path's executor: host memory, operations as launches on a host_stream.

#include <memory>

#include <bam/platform/launch.hpp>

#include "cache/executor.hpp"

namespace bam::detail {

std::unique_ptr<cache_executor> make_cpu_executor(host_stream& stream);

}  // namespace bam::detail
