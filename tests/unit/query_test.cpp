// bam table gen and bam query, end to end: every query's answer on every backend (through tiny
// caches, so lines are evicted constantly) equals a reference computed here from the column
// files the generator wrote.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/taxi_table.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bam::tools;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class query : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string pattern = (fs::temp_directory_path() / "bam-query-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = new fs::path(pattern);
    ASSERT_EQ(run("table gen --rows 150001 --seed 9 --out table"), 0);
    rows_ = new std::vector<taxi_row>(read_rows(*dir_ / "table"));
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete rows_;
  }

  static int run(const std::string& args) {
    const std::string command =
        "cd '" + dir_->string() + "' && timeout 300 '" BAM_CLI_PATH "' " + args + " >.out 2>.err";
    const int raw = std::system(command.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }

  /// The rows, from the column files as written.
  static std::vector<taxi_row> read_rows(const fs::path& table) {
    std::vector<std::string> columns;
    for (const taxi_column& c : taxi_columns) {
      columns.push_back(read_all(table / (std::string(c.name) + ".bin")));
    }
    const std::uint64_t n = columns[0].size() / 4;
    std::vector<taxi_row> rows(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      taxi_row& r = rows[i];
      std::memcpy(&r.pickup_s, columns[0].data() + 4 * i, 4);
      std::memcpy(&r.distance_m, columns[1].data() + 4 * i, 4);
      std::memcpy(&r.fare_cents, columns[2].data() + 4 * i, 4);
      std::memcpy(&r.tip_cents, columns[3].data() + 4 * i, 4);
      std::memcpy(&r.passengers, columns[4].data() + i, 1);
      std::memcpy(&r.payment, columns[5].data() + i, 1);
      std::memcpy(&r.pickup_zone, columns[6].data() + 2 * i, 2);
      std::memcpy(&r.dropoff_zone, columns[7].data() + 2 * i, 2);
    }
    return rows;
  }

  static inline fs::path* dir_ = nullptr;
  static inline std::vector<taxi_row>* rows_ = nullptr;
};

TEST_F(query, the_generator_writes_every_column_with_every_row) {
  ASSERT_EQ(rows_->size(), 150001u);
  std::uint64_t long_trips = 0;
  for (const taxi_row& r : *rows_) {
    EXPECT_GE(r.passengers, 1);
    EXPECT_LE(r.passengers, 6);
    EXPECT_GE(r.payment, 1);
    EXPECT_LE(r.payment, 3);
    EXPECT_LT(r.pickup_zone, taxi_zones);
    EXPECT_LT(r.dropoff_zone, taxi_zones);
    if (r.distance_m > 20000) ++long_trips;
  }
  // Exponential with a 5 km mean: e^-4 = 1.83% of trips are longer than 20 km.
  EXPECT_NEAR(static_cast<double>(long_trips) / static_cast<double>(rows_->size()), 0.0183, 0.002);
}

TEST_F(query, every_query_on_every_backend_equals_the_reference) {
  const char* backends[] = {
      "--backend emulated-ssd --cache-bytes 64K --line-bytes 512",
      "--backend emulated-ssd --cache-bytes 256K --line-bytes 4096 --cache-mode naive",
      "--backend host-memory",
      "--backend column-copy",
      "--backend file --cache-bytes 64K --line-bytes 512",
  };
  for (std::uint32_t q = 0; q <= 5; ++q) {
    const std::string want = format_answer(q, reference_answer(q, *rows_));
    ASSERT_FALSE(want.empty());
    for (const char* b : backends) {
      const std::string args =
          "query --table table --query q" + std::to_string(q) + " --target cpu " + b;
      ASSERT_EQ(run(args), 0) << args << ": " << read_all(*dir_ / ".err");
      EXPECT_EQ(read_all(*dir_ / ".out"), want) << args;
    }
  }
}

TEST_F(query, a_missing_column_is_named) {
  fs::create_directory(*dir_ / "short");
  std::ofstream(*dir_ / "short" / "pickup_s.bin") << "abcd";
  EXPECT_EQ(run("query --table short --query q0 --target cpu"), 2);
  EXPECT_NE(read_all(*dir_ / ".err").find("distance_m.bin"), std::string::npos);
}

}  // namespace
