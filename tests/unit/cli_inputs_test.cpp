// The bam binary on bad input, as a new user meets it: each case runs `bam` on generated files
// and checks the exit status (2: bad input, with a one-line reason on stderr) and that nothing
// is computed or left behind first.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct run_result {
  int status = -1;  ///< exit status; 128 + N for a signal
  std::string out;
  std::string err;
  double seconds = 0;
};

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "bam-cli-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Runs `bam ARGS` in the test's folder (ARGS as a shell would split them).
  run_result bam(const std::string& args) const {
    const std::string command =
        "cd '" + dir_.string() + "' && timeout 120 '" BAM_CLI_PATH "' " + args + " >.out 2>.err";
    const auto start = std::chrono::steady_clock::now();
    const int raw = std::system(command.c_str());
    run_result r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = read_all(dir_ / ".out");
    r.err = read_all(dir_ / ".err");
    fs::remove(dir_ / ".out");
    fs::remove(dir_ / ".err");
    return r;
  }

  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  [[nodiscard]] std::string read(const std::string& name) const { return read_all(dir_ / name); }

  // Overwrites 8 bytes of a file.
  void patch_u64(const std::string& name, std::uint64_t at, std::uint64_t value) const {
    std::fstream f(dir_ / name, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void set_flags(const std::string& name, std::uint32_t flags) const {
    std::fstream f(dir_ / name, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(12);  // bcsr_header::flags
    f.write(reinterpret_cast<const char*>(&flags), sizeof flags);
  }

  [[nodiscard]] std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  // A small graph file through the binary itself.
  void make_graph(const std::string& name, unsigned scale = 10) const {
    const run_result r =
        bam("graph gen --scale " + std::to_string(scale) + " --quiet --out " + name);
    ASSERT_EQ(r.status, 0) << r.err;
  }

  fs::path dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Exit status 2 with a one-line reason that says `part`.
void expect_input_error(const run_result& r, const std::string& part) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, part)) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "bam: error: ")) << r.err;
}

constexpr std::uint64_t offsets_at = 65536;  // where the writers put the offsets section

TEST_F(cli, graph_info_and_export_refuse_offsets_that_jump_past_the_file) {
  make_graph("g.bcsr", 14);
  patch_u64("g.bcsr", offsets_at + 8, std::uint64_t{1} << 40);  // offsets[1] = 2^40
  expect_input_error(bam("graph info g.bcsr"), "offsets[2]");
  for (const char* out : {"g.el", "g.mtx", "g.bel"}) {
    expect_input_error(bam(std::string("graph export --in g.bcsr --out ") + out),
                       "is less than offsets[1] = 1099511627776");
    EXPECT_EQ(files(), std::vector<std::string>{"g.bcsr"});  // no temporary file left
  }
  expect_input_error(bam("bfs --graph g.bcsr --target cpu"), "offsets[2]");
}

TEST_F(cli, graph_info_refuses_a_symmetric_flag_the_edges_contradict) {
  write("d.el", "0 1\n1 2\n2 0\n3 4\n");
  ASSERT_EQ(bam("graph convert --in d.el --out d.bcsr").status, 0);
  set_flags("d.bcsr", 1u | 4u | 8u);  // symmetric, sorted, simple
  expect_input_error(bam("graph info d.bcsr"), "symmetric flag is set, but edge 0 -> 1");
  // Without the flag info says what the edges are.
  write("u.el", "0 1\n1 0\n");
  // (--no-hubs: a symmetric result gets a hubs section, which a file without the flag may not
  // have.)
  ASSERT_EQ(bam("graph convert --in u.el --out u.bcsr --no-hubs").status, 0);
  set_flags("u.bcsr", 4u | 8u);
  const run_result r = bam("graph info u.bcsr");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "no flag, but the edges are symmetric")) << r.out;
}

TEST_F(cli, pagerank_pulls_where_in_lists_exist_and_refuses_pull_without_them) {
  // A directed graph and its transpose: pull over the transpose gives push's ranks.
  write("d.el", "0 1\n0 2\n1 2\n2 0\n3 2\n4 4\n2 5\n");
  ASSERT_EQ(bam("graph convert --in d.el --out d.bcsr").status, 0);
  ASSERT_EQ(bam("graph convert --in d.el --out dt.bcsr --transpose").status, 0);
  expect_input_error(bam("graph convert --in d.el --out x.bcsr --transpose --undirected"),
                     "its own transpose");
  expect_input_error(bam("pagerank --graph d.bcsr --target cpu --algorithm pull"),
                     "--in-edges (bam graph convert --transpose)");
  expect_input_error(bam("pagerank --in-edges dt.bcsr --target cpu"), "--in-edges needs --graph");
  expect_input_error(bam("pagerank --graph d.bcsr --in-edges dt.bcsr --algorithm push"),
                     "--in-edges is for --algorithm pull");
  expect_input_error(bam("pagerank --graph d.bcsr --in-edges d.el --target cpu"), "d.el");
  const run_result push =
      bam("pagerank --graph d.bcsr --target cpu --ranks-out push.txt --json push.json");
  ASSERT_EQ(push.status, 0) << push.err;
  const run_result pull =
      bam("pagerank --graph d.bcsr --in-edges dt.bcsr --target cpu --ranks-out pull.txt "
          "--json pull.json");
  ASSERT_EQ(pull.status, 0) << pull.err;
  EXPECT_TRUE(contains(read("push.json"), "\"algorithm\":\"push\"")) << read("push.json");
  EXPECT_TRUE(contains(read("pull.json"), "\"algorithm\":\"pull\"")) << read("pull.json");
  std::istringstream a(read("push.txt")), b(read("pull.txt"));
  double x = 0, y = 0, l1 = 0;
  int rows = 0;
  while (a >> x && b >> y) {
    l1 += std::abs(x - y);
    ++rows;
  }
  EXPECT_EQ(rows, 6);
  EXPECT_LT(l1, 1e-12);
  // A symmetric graph pulls by default.
  make_graph("g.bcsr");
  ASSERT_EQ(bam("pagerank --graph g.bcsr --target cpu --iterations 2 --json g.json").status, 0);
  EXPECT_TRUE(contains(read("g.json"), "\"algorithm\":\"pull\"")) << read("g.json");
}

TEST_F(cli, a_negative_or_octal_looking_source_is_not_wrapped_or_misread) {
  make_graph("g.bcsr");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --source -1"),
                     "'-1' is not a non-negative integer");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --source 99999999999999999999"),
                     "too large");
  const run_result r = bam("bfs --graph g.bcsr --target cpu --source 010");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "from vertex 10")) << r.out;  // decimal ten, not octal eight
  expect_input_error(bam("graph gen --scale 4 --seed -3 --out x.bcsr"), "'-3'");
}

TEST_F(cli, a_zero_cache_size_is_refused) {
  make_graph("g.bcsr");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --cache-bytes 0"), "--cache-bytes");
  expect_input_error(bam("gather --file g.bcsr --indices - --cache-bytes 0K </dev/null"),
                     "--cache-bytes");
  expect_input_error(bam("plan --data-bytes 1G --cache-bytes 0"), "--cache-bytes");
}

TEST_F(cli, the_file_backend_refuses_what_it_cannot_do_before_any_work) {
  make_graph("g.bcsr");
  expect_input_error(bam("gather --file g.bcsr --indices - --backend file --faults "
                         "error-rate=0.1 </dev/null"),
                     "emulated-ssd");
  expect_input_error(bam("gather --file g.bcsr --indices - --io-engine psync </dev/null"),
                     "--backend file");
  expect_input_error(bam("gather --file g.bcsr,nothing-here --indices - --backend file "
                         "</dev/null"),
                     "nothing-here");
  // A set the files do not make: the error names the file that does not fit.
  write("part0", std::string(70000, 'x'));
  write("part1", std::string(100, 'y'));
  expect_input_error(bam("gather --file part1,part0 --indices - --backend file </dev/null"),
                     "part1");
}

TEST_F(cli, convert_refuses_to_overwrite_its_input) {
  const std::string text = "0 1\n1 2\n";
  write("g.el", text);
  fs::create_directory(dir_ / "sub");
  expect_input_error(bam("graph convert --in g.el --out g.el"), "same file as input");
  expect_input_error(bam("graph convert --in g.el --out sub/../g.el"), "same file as input");
  EXPECT_EQ(read("g.el"), text);
  ASSERT_EQ(bam("graph convert --in g.el --out g.bcsr").status, 0);
  expect_input_error(bam("graph export --in g.bcsr --out g.bcsr --format el"),
                     "same file as input");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --depths-out ./g.bcsr"),
                     "same file as --graph");
}

TEST_F(cli, an_empty_edge_list_is_refused_like_an_empty_matrix_market_file) {
  write("e.el", "");
  write("c.el", "# only a comment\n");
  write("e.mtx", "");
  expect_input_error(bam("graph convert --in e.el --out e.bcsr"), "no edges");
  expect_input_error(bam("graph convert --in c.el --out c.bcsr"), "no edges");
  expect_input_error(bam("graph convert --in e.mtx --out m.bcsr"), "empty file");
}

TEST_F(cli, outputs_into_a_missing_folder_are_refused_before_any_work) {
  make_graph("g.bcsr");
  const std::vector<std::string> commands = {
      "bfs --graph g.bcsr --target cpu --depths-out missing/d.txt",
      "cc --graph g.bcsr --target cpu --labels-out missing/l.txt",
      "pagerank --graph g.bcsr --target cpu --ranks-out missing/r.txt",
      "bfs --scale 20 --target cpu --keep-graph missing/k.bcsr",
      "graph gen --scale 20 --out missing/g.bcsr",
      "graph convert --in g.el --out missing/g.bcsr",
      "graph export --in g.bcsr --out missing/g.el",
      "bfs --graph g.bcsr --target cpu --depths-out g.bcsr.d/",
      "graph info g.bcsr --json g.bcsr",
  };
  for (const std::string& command : commands) {
    const run_result r = bam(command);
    EXPECT_EQ(r.status, 2) << command << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "missing") || contains(r.err, "folder") ||
                contains(r.err, "same file"))
        << command << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << command << ": " << r.out;  // refused before the work
  }
  // --json makes its folders, so a missing one is fine there.
  const run_result r = bam("graph info g.bcsr --json made/here/info.json");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "made" / "here" / "info.json"));
}

TEST_F(cli, fault_specs_are_checked_as_the_options_are_read) {
  make_graph("g.bcsr");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --faults error-rate=2"), "from 0 to 1");
  expect_input_error(bam("cc --graph g.bcsr --target cpu --faults seed=1,sed=2"),
                     "unknown key 'sed'");
  expect_input_error(bam("pagerank --graph g.bcsr --target cpu --faults bad-lba=9-3"),
                     "past its last block");
  expect_input_error(
      bam("bfs --graph g.bcsr --target cpu --backend host-memory --faults error-rate=0.1"),
      "needs --backend emulated-ssd");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --devices 2 --faults bad-lba=0-9"),
                     "whole rows of stripe units");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --io-timeout-ms 0"), "--io-timeout-ms");
}

TEST_F(cli, devices_data_in_gpu_memory_needs_emulated_devices_on_a_gpu) {
  make_graph("g.bcsr");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --backend host-memory --media gpu"),
                     "needs --backend emulated-ssd");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --media gpu"), "needs a GPU");
  expect_input_error(bam("bfs --graph g.bcsr --target cpu --media disk"), "--media");
}

TEST_F(cli, injected_faults_reach_the_user_as_errors) {
  make_graph("g.bcsr");
  const run_result errors = bam("bfs --graph g.bcsr --target cpu --faults error-rate=1");
  EXPECT_EQ(errors.status, 1);  // a failure of the run, not of its input
  EXPECT_TRUE(contains(errors.err, "unrecovered read error")) << errors.err;
  // The whole neighbour section is bad: blocks 128.. hold it (byte 65536 on).
  const run_result bad = bam("bfs --graph g.bcsr --target cpu --faults bad-lba=0-100000");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.err, "unrecovered read error")) << bad.err;
  const run_result clean = bam("bfs --graph g.bcsr --target cpu --faults error-rate=0,seed=3");
  EXPECT_EQ(clean.status, 0) << clean.err;
}

TEST_F(cli, a_dropped_completion_times_out_after_io_timeout_ms) {
  make_graph("g.bcsr");
  const run_result r =
      bam("bfs --graph g.bcsr --target cpu --faults drop-rate=1 --io-timeout-ms 300");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "timeout waiting")) << r.err;
  EXPECT_LT(r.seconds, 60) << r.err;
}

TEST_F(cli, every_command_with_the_emulated_ssd_explains_the_fault_options) {
  for (const char* command : {"bfs", "cc", "pagerank", "gather", "tenants"}) {
    const run_result r = bam(std::string(command) + " --help");
    EXPECT_EQ(r.status, 0) << command;
    for (const char* part : {"--faults", "error-rate=R", "write-error-rate=R", "late-us=U",
                             "drop-rate=R", "bad-lba=A-B", "seed=S", "--io-timeout-ms"}) {
      EXPECT_TRUE(contains(r.out, part)) << command << " --help lacks " << part;
    }
  }
}

}  // namespace
