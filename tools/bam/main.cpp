// The bam command line: one tool, subcommands for each job.

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
      ->type_name("FILE");
}

CLI::Validator size_transformer() {
  return CLI::Validator(
      [](std::string& text) {
        text = std::to_string(parse_size(text));
        return std::string();
      },
      "SIZE", "size");
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
  bam::tools::add_plan_command(app);
  bam::tools::add_app_commands(app);
  bam::tools::add_tenants_command(app);

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
