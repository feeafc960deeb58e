// The bam command line: one tool, subcommands for each job.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include <bam/error.hpp>

#include "bam/commands.hpp"
#include "common/sizes.hpp"

namespace bam::tools {

CLI::Option* add_json_option(CLI::App& command, std::string& path) {
  return command.add_option("--json", path, "Also write the figures as JSON to FILE")
      ->type_name("FILE")
      ->check(output_file({.makes_folders = true}));
}

CLI::Validator size_transformer() {
  return CLI::Validator(
      [](std::string& text) {
        text = std::to_string(parse_size(text));
        return std::string();
      },
      "SIZE", "size");
}

CLI::Validator nonzero_size() {
  return CLI::Validator(
      [](const std::string& text) {
        return text == "0" ? std::string(
                                 "0 bytes is not a size for this option (leave the option "
                                 "out for the default)")
                           : std::string();
      },
      "", "nonzero size");
}

CLI::Validator existing_files() {
  return CLI::Validator(
      [](const std::string& text) {
        std::size_t at = 0;
        for (;;) {
          const std::size_t comma = text.find(',', at);
          const std::string one = text.substr(at, comma == std::string::npos ? comma : comma - at);
          const std::string bad = CLI::ExistingFile(one);
          if (!bad.empty()) return bad;
          if (comma == std::string::npos) return std::string();
          at = comma + 1;
        }
      },
      "FILE[,FILE...]", "existing files");
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) {
        const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
        if (!digits) return "'" + text + "' is not a non-negative integer (decimal digits only)";
        std::uint64_t value = 0;
        if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{}) {
          return "'" + text + "' is too large (at most 2^64-1)";
        }
        const std::size_t first = text.find_first_not_of('0');
        text = first == std::string::npos ? std::string("0") : text.substr(first);
        return std::string();
      },
      "", "whole number");
}

CLI::Validator output_file(const output_rules& rules) {
  return CLI::Validator(
      [rules](const std::string& path) {
        const std::string problem = output_path_problem(path, rules);
        return problem.empty() ? problem : "cannot write there: " + problem;
      },
      "", "output file");
}

}  // namespace bam::tools

int main(int argc, char** argv) {
  CLI::App app{
      "bam: GPU threads reading and writing data sets larger than GPU memory, "
      "straight from storage"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  bam::tools::add_bench_commands(app);
  bam::tools::add_graph_commands(app);
  bam::tools::add_gather_command(app);
  bam::tools::add_copy_command(app);
  bam::tools::add_plan_command(app);
  bam::tools::add_app_commands(app);
  bam::tools::add_tenants_command(app);
  bam::tools::add_table_commands(app);
  bam::tools::add_vector_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "bam: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const bam::input_error& e) {
    std::fprintf(stderr, "bam: error: %s\n", e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bam: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
