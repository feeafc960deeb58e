// Size strings (--cache-bytes 8G, --line-bytes 64K, ...): the parser, and the formatting of
// what it returns.

#include <cstddef>
#include <cstdint>

#include "common/sizes.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bam::fuzz::expect_clean([&] {
    const std::uint64_t bytes = bam::tools::parse_size(bam::fuzz::as_text(data, size));
    (void)bam::tools::format_bytes(static_cast<double>(bytes));
    (void)bam::tools::format_count(static_cast<double>(bytes));
  });
  return 0;
}
