// The file backend on the CPU path: arrays over real files read the files' bytes and write
// them back durably, at 512 B and 4 KiB lines, over one file or a striped set, with io_uring
// and with psync; reads past the end and writes to a read-only set get the NVMe statuses a
// device would give; nothing is read up front.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>
#include <bam/nvme/command.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/file_storage.hpp>

namespace {

using namespace bam;
namespace fs = std::filesystem;

/// A folder of its own under the system's temporary folder, removed with everything in it.
class scratch {
 public:
  explicit scratch(const fs::path& parent = fs::temp_directory_path()) {
    std::string pattern = (parent / "bam-file-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = pattern;
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

std::vector<std::uint8_t> pattern(std::uint64_t bytes, std::uint32_t seed) {
  std::vector<std::uint8_t> v(bytes);
  std::mt19937_64 g(seed);
  for (auto& b : v) b = static_cast<std::uint8_t>(g());
  return v;
}

void write_file(const std::string& path, const std::uint8_t* data, std::uint64_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  ASSERT_TRUE(out.good()) << path;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Writes `data` as a striped set of `files` files (what file_storage expects) and returns
/// their paths.
std::vector<std::string> write_striped(const scratch& s, const std::vector<std::uint8_t>& data,
                                       std::uint32_t files, std::uint64_t stripe) {
  std::vector<std::vector<std::uint8_t>> parts(files);
  for (std::uint64_t at = 0; at < data.size(); at += stripe) {
    const std::uint64_t n = std::min<std::uint64_t>(stripe, data.size() - at);
    auto& p = parts[(at / stripe) % files];
    p.insert(p.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
             data.begin() + static_cast<std::ptrdiff_t>(at + n));
  }
  std::vector<std::string> paths;
  for (std::uint32_t i = 0; i < files; ++i) {
    paths.push_back(s.file("part" + std::to_string(i)));
    write_file(paths.back(), parts[i].data(), parts[i].size());
  }
  return paths;
}

struct engine_case {
  io_engine_kind engine;
  bool direct;
  std::uint32_t line_bytes;
};

std::string name_of(const ::testing::TestParamInfo<engine_case>& i) {
  return std::string(i.param.engine == io_engine_kind::psync ? "psync" : "uring") +
         (i.param.direct ? "Direct" : "Buffered") + std::to_string(i.param.line_bytes);
}

/// A file storage over `paths`, a CPU stream and a cache of 16 lines.
struct file_rig {
  file_rig(const engine_case& c, std::vector<std::string> paths, bool writable,
           std::uint64_t stripe = 64 * 1024)
      : disk({.paths = std::move(paths),
              .writable = writable,
              .engine = c.engine,
              .io_threads = 2,
              .io_depth = 8,
              .direct = c.direct,
              .queues_per_device = 2,
              .queue_depth = 32,
              .stripe_bytes = stripe,
              .timeout_ns = 10'000'000'000ull}),
        stream(4),
        cache({.line_bytes = c.line_bytes, .capacity_bytes = 16ull * c.line_bytes}, stream) {
    disk.start();
  }
  file_storage disk;
  host_stream stream;
  page_cache cache;
};

class FileStorage : public ::testing::TestWithParam<engine_case> {};

TEST_P(FileStorage, ReadsEveryByteOfAFileWhoseSizeIsNotAWholeBlock) {
  scratch s;
  const auto data = pattern(300 * 1024 + 100, 1);
  write_file(s.file("a"), data.data(), data.size());
  file_rig r(GetParam(), {s.file("a")}, false);
  EXPECT_EQ(r.disk.bytes(), data.size());
  array<const std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "a"});
  EXPECT_EQ(a.read(0, data.size()), data);
  const file_io_stats st = r.disk.io_stats();
  EXPECT_EQ(st.errors, 0u);
  EXPECT_EQ(st.engine, GetParam().engine == io_engine_kind::psync ? "psync" : "io_uring");
  EXPECT_GT(r.disk.stats().total().reads, 0u);
}

TEST_P(FileStorage, ReadsAStripedSetOfThreeFilesAsOneAddressSpace) {
  scratch s;
  const std::uint64_t stripe = 16 * 1024;
  const auto data = pattern(7 * stripe + 5000, 2);  // a partial stripe at the end
  file_rig r(GetParam(), write_striped(s, data, 3, stripe), false, stripe);
  EXPECT_EQ(r.disk.bytes(), data.size());
  EXPECT_EQ(r.disk.ref().devices, 3u);
  array<const std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "set"});
  EXPECT_EQ(a.read(0, data.size()), data);
  for (const device_stats& d : r.disk.stats().devices) EXPECT_GT(d.reads, 0u);
}

TEST_P(FileStorage, WritesReachTheFileAfterFlushAndTheFileDoesNotGrow) {
  scratch s;
  auto data = pattern(40 * 1024 + 300, 3);
  write_file(s.file("w"), data.data(), data.size());
  {
    file_rig r(GetParam(), {s.file("w")}, true);
    array<std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "w"});
    const auto update = pattern(data.size(), 4);
    // Every other 1000-byte piece, the last one reaching the file's partial last block.
    for (std::uint64_t at = 0; at < data.size(); at += 2000) {
      const std::uint64_t n = std::min<std::uint64_t>(1000, data.size() - at);
      std::vector<std::uint8_t> piece(update.begin() + static_cast<std::ptrdiff_t>(at),
                                      update.begin() + static_cast<std::ptrdiff_t>(at + n));
      a.write(at, piece);
      std::copy(piece.begin(), piece.end(), data.begin() + static_cast<std::ptrdiff_t>(at));
    }
    std::vector<std::uint8_t> tail(update.end() - 50, update.end());
    a.write(data.size() - 50, tail);
    std::copy(tail.begin(), tail.end(), data.end() - 50);
    a.flush();
    EXPECT_GT(r.disk.stats().total().flushes, 0u);
    EXPECT_EQ(r.disk.io_stats().errors, 0u);
  }
  EXPECT_EQ(fs::file_size(s.file("w")), data.size());
  EXPECT_EQ(read_file(s.file("w")), data);
}

TEST_P(FileStorage, WritesToAStripedSetLandInTheRightFiles) {
  scratch s;
  const std::uint64_t stripe = 8 * 1024;
  auto data = pattern(5 * stripe + 1024, 5);
  const auto paths = write_striped(s, data, 2, stripe);
  const auto update = pattern(data.size(), 6);
  {
    file_rig r(GetParam(), paths, true, stripe);
    array<std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "set"});
    a.write(0, update);
    a.flush();
  }
  scratch expected;
  const auto want = write_striped(expected, update, 2, stripe);
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(read_file(paths[i]), read_file(want[i]));
}

TEST_P(FileStorage, AReadOnlySetRefusesWritesAndKeepsTheFile) {
  scratch s;
  const auto data = pattern(16 * 1024, 7);
  write_file(s.file("ro"), data.data(), data.size());
  {
    file_rig r(GetParam(), {s.file("ro")}, false);
    array<std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "ro"});
    a.write(0, std::vector<std::uint8_t>(4096, 0xee));
    try {
      a.flush();
      ADD_FAILURE() << "a flush to a read-only set succeeded";
    } catch (const nvme_error& e) {
      EXPECT_NE(std::string(e.what()).find("write protected"), std::string::npos) << e.what();
    }
    EXPECT_GT(r.disk.io_stats().errors, 0u);
    a.clear_failures();
  }
  EXPECT_EQ(read_file(s.file("ro")), data);
}

TEST_P(FileStorage, TheLastPartialBlockReadsAsItsBytesThenZeroesAndPastTheEndIsOutOfRange) {
  scratch s;
  const auto data = pattern(4096 + 700, 8);
  write_file(s.file("t"), data.data(), data.size());
  file_rig r(GetParam(), {s.file("t")}, false);
  const device_set_ref set = r.disk.ref();
  alignas(4096) static std::uint8_t buffer[4096];
  std::fill(std::begin(buffer), std::end(buffer), 0xab);
  const auto p = reinterpret_cast<std::uint64_t>(buffer);
  queue_ticket t;
  // Blocks 8 and 9: block 9 holds bytes 4608..4795 of the file, then zeroes.
  io_status st = set.queue(0, 0).execute(nvme::make_rw(nvme::io_opcode::read, 1, 8, 2, p, 0), t);
  ASSERT_TRUE(st.ok()) << st.bits();
  EXPECT_TRUE(std::equal(buffer, buffer + 700, data.begin() + 4096));
  EXPECT_TRUE(std::all_of(buffer + 700, buffer + 1024, [](std::uint8_t b) { return b == 0; }));
  // Block 10 holds no byte of the file.
  st = set.queue(0, 1).execute(nvme::make_rw(nvme::io_opcode::read, 1, 10, 1, p, 0), t);
  EXPECT_EQ(st.sct(), 0u);
  EXPECT_EQ(st.sc(), static_cast<std::uint8_t>(nvme::generic_status::lba_out_of_range));
}

TEST_P(FileStorage, AReadWhoseMemoryCrossesAPageWithoutASecondPrpEntryFailsAndTheQueueGoesOn) {
  scratch s;
  const auto data = pattern(8192, 9);
  write_file(s.file("t"), data.data(), data.size());
  file_rig r(GetParam(), {s.file("t")}, false);
  const device_set_ref set = r.disk.ref();
  alignas(4096) static std::uint8_t buffer[8192];
  const auto p = reinterpret_cast<std::uint64_t>(buffer);
  queue_ticket t;
  // Eight blocks from 512 bytes into a page run into the next page, which PRP2 (0) does not name.
  io_status st =
      set.queue(0, 0).execute(nvme::make_rw(nvme::io_opcode::read, 1, 0, 8, p + 512, 0), t);
  EXPECT_EQ(st.sct(), 0u);
  EXPECT_EQ(st.sc(), static_cast<std::uint8_t>(nvme::generic_status::data_transfer_error));
  // The same read with both pages named lands whole.
  st = set.queue(0, 0).execute(nvme::make_rw(nvme::io_opcode::read, 1, 0, 8, p + 512, p + 4096), t);
  ASSERT_TRUE(st.ok()) << st.bits();
  EXPECT_TRUE(std::equal(buffer + 512, buffer + 512 + 4096, data.begin()));
}

INSTANTIATE_TEST_SUITE_P(Engines, FileStorage,
                         ::testing::Values(engine_case{io_engine_kind::io_uring, true, 4096},
                                           engine_case{io_engine_kind::io_uring, true, 512},
                                           engine_case{io_engine_kind::io_uring, false, 4096},
                                           engine_case{io_engine_kind::psync, true, 512},
                                           engine_case{io_engine_kind::psync, false, 4096}),
                         name_of);

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST(FileStorageMemory, ReadingAcrossA4GiBFileKeepsResidentMemoryNearTheCache) {
  scratch s;
  const std::string path = s.file("sparse");
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  {
    std::ofstream(path).close();
    fs::resize_file(path, bytes);  // sparse: holes read as zeroes
    // A few known words spread over it.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uint64_t k = 0; k < 64; ++k) {
      const std::uint64_t at = k * (bytes / 64) + 8 * k;
      const std::uint64_t v = k + 1;
      f.seekp(static_cast<std::streamoff>(at));
      f.write(reinterpret_cast<const char*>(&v), 8);
    }
  }
  const std::uint64_t before = resident_bytes();
  file_storage disk({.paths = {path}, .io_depth = 16, .queues_per_device = 2, .queue_depth = 32});
  disk.start();
  host_stream stream(2);
  page_cache cache({.line_bytes = 4096, .capacity_bytes = 8 << 20}, stream);
  array<const std::uint64_t> a(cache, disk.ref(), {.count = bytes / 8, .name = "sparse"});
  for (std::uint64_t k = 0; k < 64; ++k) {
    EXPECT_EQ(a.read(k * (bytes / 64 / 8) + k, 1)[0], k + 1);
  }
  std::mt19937_64 g(9);
  for (int i = 0; i < 20000; ++i) EXPECT_EQ(a.read(g() % (bytes / 8) / 512 * 512 + 500, 1)[0], 0u);
  const std::uint64_t grown = resident_bytes() - std::min(before, resident_bytes());
  EXPECT_LT(grown, std::uint64_t{96} << 20) << "resident memory grew by " << grown << " bytes";
}

TEST(FileStorageOpen, FilesThatDoNotFormAStripedSetAreRefusedByName) {
  scratch s;
  const auto a = pattern(64 * 1024, 10);
  write_file(s.file("x0"), a.data(), a.size());
  write_file(s.file("x1"), a.data(), 1000);  // a set of 65 KiB + 1000 B gives x1 only 1000
  write_file(s.file("x2"), a.data(), a.size());
  try {
    file_storage disk({.paths = {s.file("x0"), s.file("x1"), s.file("x2")}});
    ADD_FAILURE() << "a mismatched striped set was opened";
  } catch (const input_error& e) {
    EXPECT_NE(e.message().find("x1"), std::string::npos) << e.message();
  }
}

TEST(FileStorageOpen, AMissingFileIsAnInputErrorNamingIt) {
  scratch s;
  try {
    file_storage disk({.paths = {s.file("nothing-here")}});
    ADD_FAILURE() << "a missing file was opened";
  } catch (const input_error& e) {
    EXPECT_NE(e.message().find("nothing-here"), std::string::npos) << e.message();
  }
}

TEST(FileStorageOpen, OnAFileSystemWithoutODirectItSaysSoAndStillReads) {
  struct statfs st {};
  if (::statfs("/dev/shm", &st) != 0 || st.f_type != 0x01021994 /* TMPFS_MAGIC */) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  scratch s("/dev/shm");
  {
    // tmpfs takes O_DIRECT since Linux 6.6: there is nothing to fall back from.
    const std::string probe = s.file("probe");
    std::ofstream(probe).close();
    const int fd = ::open(probe.c_str(), O_RDONLY | O_DIRECT);
    if (fd >= 0) {
      ::close(fd);
      GTEST_SKIP() << "this kernel's tmpfs takes O_DIRECT";
    }
  }
  const auto data = pattern(10000, 11);
  write_file(s.file("shm"), data.data(), data.size());
  file_rig r({io_engine_kind::automatic, true, 4096}, {s.file("shm")}, false);
  ASSERT_FALSE(r.disk.notices().empty());
  EXPECT_NE(r.disk.notices().front().find("O_DIRECT"), std::string::npos);
  EXPECT_FALSE(r.disk.io_stats().direct);
  array<const std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "shm"});
  EXPECT_EQ(a.read(0, data.size()), data);
}

TEST(FileStorageOpen, WhereIoUringIsRefusedItSaysSoAndFallsBackToPsync) {
  scratch s;
  const auto data = pattern(20000, 12);
  write_file(s.file("f"), data.data(), data.size());
  ::setenv("BAM_NO_IO_URING", "1", 1);
  file_rig r({io_engine_kind::automatic, true, 512}, {s.file("f")}, false);
  ::unsetenv("BAM_NO_IO_URING");
  ASSERT_EQ(r.disk.notices().size(), 1u);
  EXPECT_NE(r.disk.notices().front().find("using psync"), std::string::npos)
      << r.disk.notices().front();
  EXPECT_EQ(r.disk.io_stats().engine, "psync");
  array<const std::uint8_t> a(r.cache, r.disk.ref(), {.count = data.size(), .name = "f"});
  EXPECT_EQ(a.read(0, data.size()), data);
}

TEST(FileStorageOpen, ForcingIoUringWhereItIsRefusedIsAnError) {
  scratch s;
  const auto data = pattern(4096, 13);
  write_file(s.file("f"), data.data(), data.size());
  ::setenv("BAM_NO_IO_URING", "1", 1);
  EXPECT_THROW(file_storage({.paths = {s.file("f")}, .engine = io_engine_kind::io_uring}),
               input_error);
  ::unsetenv("BAM_NO_IO_URING");
}

TEST(FileStorageStripes, SizesFollowTheStripeOrder) {
  EXPECT_EQ(striped_file_bytes(10, 1, 4), (std::vector<std::uint64_t>{10}));
  EXPECT_EQ(striped_file_bytes(10, 2, 4), (std::vector<std::uint64_t>{6, 4}));
  EXPECT_EQ(striped_file_bytes(13, 3, 4), (std::vector<std::uint64_t>{5, 4, 4}));
  EXPECT_EQ(striped_file_bytes(17, 3, 4), (std::vector<std::uint64_t>{8, 5, 4}));
  EXPECT_EQ(striped_file_bytes(24, 3, 4), (std::vector<std::uint64_t>{8, 8, 8}));
}

}  // namespace
