#pragma once
// What every fuzz target shares: a scratch folder in memory for parsers that read files, and
// the rule that bad input may throw bam::error (bam::input_error) but nothing else.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <bam/error.hpp>

namespace bam::fuzz {

/// A folder made once per process (under /dev/shm when there is one), removed at exit.
const std::filesystem::path& scratch();

/// Writes `bytes` to scratch()/name, replacing it, and returns its path.
std::filesystem::path write_scratch(const std::string& name, std::string_view bytes);

/// The input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `parse`; a bam::error is the parser's answer to bad input, anything else escapes and
/// libFuzzer reports it (as it does crashes, leaks and undefined behaviour).
template <class Parse>
void expect_clean(Parse&& parse) {
  try {
    parse();
  } catch (const bam::error&) {
  }
}

}  // namespace bam::fuzz
