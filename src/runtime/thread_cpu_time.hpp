#pragma once
// CPU time the calling thread has used (user and system), for the host threads that report
// what serving I/O cost them.

#include <cstdint>
#include <ctime>

namespace bam::runtime {

inline std::uint64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(t.tv_nsec);
}

}  // namespace bam::runtime
