#pragma once
/// @file
/// The bam command line's subcommands. Each adds itself to the parent app; its callback runs
/// the command and throws bam::input_error for bad arguments, bam::error for failures.

#include <CLI/CLI.hpp>

namespace bam::tools {

void add_bench_commands(CLI::App& app);   // bench queue, bench cache, ...
void add_graph_commands(CLI::App& app);   // graph gen | convert | export | info
void add_gather_command(CLI::App& app);   // gather
void add_plan_command(CLI::App& app);     // plan
void add_app_commands(CLI::App& app);     // bfs, cc, pagerank
void add_tenants_command(CLI::App& app);  // tenants

/// Registers --json FILE on `command`; figures printed by the command are also written there.
CLI::Option* add_json_option(CLI::App& command, std::string& path);

/// A CLI11 validator/transformer that accepts sizes like 64K or 8G (sizes.hpp).
CLI::Validator size_transformer();

}  // namespace bam::tools
