// Index lists (bam gather --indices): the line parser, from memory and from a stream.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "common/index_list.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = bam::fuzz::as_text(data, size);
  bam::fuzz::expect_clean([&] { (void)bam::tools::parse_index_list(text, "'fuzz'"); });
  bam::fuzz::expect_clean([&] {
    std::istringstream in{std::string(text)};
    (void)bam::tools::parse_index_list(in, "'fuzz'");
  });
  return 0;
}
