// Loading an image from a file: every byte in place across the readers' chunks, zeroes in the
// padding up to the page, and a clear error for a missing file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/storage/backing_store.hpp>

namespace {

using bam::backing_store;

std::uint8_t pattern_byte(std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 0x9e3779b97f4a7c15ull) >> 56);
}

// A file of `bytes` pattern bytes in the temporary folder, removed when this object dies.
class pattern_file {
 public:
  explicit pattern_file(std::uint64_t bytes) {
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/bam_backing_store_XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + name);
    ::close(fd);
    path_ = name;
    std::vector<std::uint8_t> data(bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) data[i] = pattern_byte(i);
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(bytes));
    if (!out) throw std::runtime_error("cannot write " + path_);
  }
  ~pattern_file() { ::unlink(path_.c_str()); }
  pattern_file(const pattern_file&) = delete;
  pattern_file& operator=(const pattern_file&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Index of the first byte of `s` that differs from the pattern, or s.bytes().
std::uint64_t first_wrong_byte(const backing_store& s) {
  for (std::uint64_t i = 0; i < s.bytes(); ++i) {
    if (s.data()[i] != pattern_byte(i)) return i;
  }
  return s.bytes();
}

TEST(BackingStore, LoadsAFileOfSeveralReadChunksByteForByte) {
  // Two whole 64 MiB read chunks and a ragged tail, so several readers take part.
  const std::uint64_t bytes = (128ull << 20) + 4096 + 12;
  const pattern_file file(bytes);
  const auto store = backing_store::from_file(file.path(), false);
  ASSERT_EQ(store->bytes(), bytes);
  EXPECT_EQ(first_wrong_byte(*store), bytes);
  // The image is allocated in whole pages; what lies past the file reads as zeroes.
  const std::uint64_t padded = (bytes + 4095) / 4096 * 4096;
  for (std::uint64_t i = bytes; i < padded; ++i) ASSERT_EQ(store->data()[i], 0) << "byte " << i;
}

TEST(BackingStore, LoadsASmallFile) {
  const pattern_file file(1000);
  const auto store = backing_store::from_file(file.path(), true);
  ASSERT_EQ(store->bytes(), 1000u);
  EXPECT_EQ(first_wrong_byte(*store), 1000u);
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
