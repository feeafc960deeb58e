// Loading an image from a file: every byte in place across the readers' chunks, zeroes in the
// padding up to the page, and a clear error for a missing file.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <bam/error.hpp>
#include <bam/storage/backing_store.hpp>

#include "../stress/cache_stress_support.hpp"

namespace {

using bam::backing_store;
using bam::stress::pattern_word;
using bam::stress::temp_file;  // a file of pattern words, removed when it dies

// Index of the first 8-byte word of `s` that differs from the pattern, or its word count.
std::uint64_t first_wrong_word(const backing_store& s) {
  const std::uint64_t words = s.bytes() / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + 8 * i, 8);
    if (w != pattern_word(i)) return i;
  }
  return words;
}

TEST(BackingStore, LoadsAFileOfSeveralReadChunksByteForByte) {
  // Two whole 64 MiB read chunks and a ragged tail, so several readers take part.
  const std::uint64_t words = ((128ull << 20) + 4096 + 8) / 8;
  const std::uint64_t bytes = 8 * words;
  const temp_file file(words);
  const auto store = backing_store::from_file(file.path(), false);
  ASSERT_EQ(store->bytes(), bytes);
  EXPECT_EQ(first_wrong_word(*store), words);
  // The image is allocated in whole pages; what lies past the file reads as zeroes.
  const std::uint64_t padded = (bytes + 4095) / 4096 * 4096;
  for (std::uint64_t i = bytes; i < padded; ++i) ASSERT_EQ(store->data()[i], 0) << "byte " << i;
}

TEST(BackingStore, LoadsASmallFile) {
  const temp_file file(125);
  const auto store = backing_store::from_file(file.path(), true);
  ASSERT_EQ(store->bytes(), 1000u);
  EXPECT_EQ(first_wrong_word(*store), 125u);
}

TEST(BackingStore, NamesAMissingFile) {
  try {
    (void)backing_store::from_file("/nonexistent/bam-image.bin", false);
    FAIL() << "no error for a missing file";
  } catch (const bam::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/bam-image.bin"), std::string::npos);
  }
}

}  // namespace
