// Output files checked before the work: missing folders, folders named as files, outputs on
// top of inputs or of each other.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <bam/error.hpp>

#include "common/output_paths.hpp"

namespace {

namespace fs = std::filesystem;
using bam::tools::named_path;
using bam::tools::output_path_problem;
using bam::tools::output_rules;
using bam::tools::refuse_overlaps;
using bam::tools::same_file;

class output_paths : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "bam-output-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_ / "locked", fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  [[nodiscard]] std::string at(const std::string& name) const { return (dir_ / name).string(); }
  void touch(const std::string& name) const { std::ofstream(dir_ / name) << "x"; }

  fs::path dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(output_paths, a_new_file_in_an_existing_folder_is_fine) {
  EXPECT_EQ(output_path_problem(at("out.txt"), {}), "");
  touch("old.txt");
  EXPECT_EQ(output_path_problem(at("old.txt"), {}), "");
  EXPECT_EQ(output_path_problem(at("old.txt"), {.renamed_into_place = true}), "");
}

TEST_F(output_paths, a_missing_folder_is_named) {
  const std::string problem = output_path_problem(at("missing/out.txt"), {});
  EXPECT_TRUE(contains(problem, "does not exist")) << problem;
  EXPECT_TRUE(contains(problem, at("missing"))) << problem;
}

TEST_F(output_paths, a_writer_that_makes_folders_needs_only_a_writable_ancestor) {
  EXPECT_EQ(output_path_problem(at("a/b/c.json"), {.makes_folders = true}), "");
  touch("file");
  EXPECT_TRUE(contains(output_path_problem(at("file/b/c.json"), {.makes_folders = true}),
                       "is not a folder"));
}

TEST_F(output_paths, a_folder_is_not_an_output_file) {
  EXPECT_TRUE(contains(output_path_problem(dir_.string(), {}), "is a folder"));
  EXPECT_TRUE(contains(output_path_problem(at("new/"), {}), "names a folder"));
}

TEST_F(output_paths, standard_output_is_allowed_only_where_the_command_says) {
  EXPECT_EQ(output_path_problem("-", {.standard_output = true}), "");
  // Elsewhere '-' is a file of that name in the current folder, checked like any other.
  EXPECT_EQ(output_path_problem("-", {}), "");
  EXPECT_NE(output_path_problem("", {}), "");
}

TEST_F(output_paths, a_read_only_folder_is_refused_when_the_process_cannot_write_it) {
  fs::create_directory(dir_ / "locked");
  fs::permissions(dir_ / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  if (::access((dir_ / "locked").c_str(), W_OK) == 0) GTEST_SKIP() << "running as root";
  EXPECT_TRUE(contains(output_path_problem(at("locked/out.txt"), {}), "not writable"));
}

TEST_F(output_paths, the_same_file_is_recognised_through_other_spellings_and_links) {
  touch("g.el");
  fs::create_directory(dir_ / "sub");
  EXPECT_TRUE(same_file(at("g.el"), at("sub/../g.el")));
  fs::create_symlink(dir_ / "g.el", dir_ / "link.el");
  EXPECT_TRUE(same_file(at("g.el"), at("link.el")));
  fs::create_hard_link(dir_ / "g.el", dir_ / "hard.el");
  EXPECT_TRUE(same_file(at("g.el"), at("hard.el")));
  EXPECT_FALSE(same_file(at("g.el"), at("other.el")));
  EXPECT_TRUE(same_file(at("new.json"), at("sub/../new.json")));  // neither exists yet
}

TEST_F(output_paths, an_output_on_an_input_or_another_output_is_refused) {
  touch("g.bcsr");
  const named_path inputs[] = {{"--graph", at("g.bcsr")}};
  const named_path onto_input[] = {{"--depths-out", at("sub/../g.bcsr")}};
  fs::create_directory(dir_ / "sub");
  try {
    refuse_overlaps(inputs, onto_input);
    FAIL() << "no error";
  } catch (const bam::input_error& e) {
    EXPECT_TRUE(contains(e.message(), "--depths-out")) << e.message();
    EXPECT_TRUE(contains(e.message(), "same file as --graph")) << e.message();
  }
  const named_path twice[] = {{"--depths-out", at("r.txt")}, {"--json", at("r.txt")}};
  EXPECT_THROW(refuse_overlaps({}, twice), bam::input_error);
  const named_path fine[] = {{"--depths-out", "-"}, {"--json", ""}, {"--keep-graph", at("k")}};
  EXPECT_NO_THROW(refuse_overlaps(inputs, fine));
}

}  // namespace
