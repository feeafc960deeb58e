#pragma once
/// @file
/// The bam command line's subcommands. Each adds itself to the parent app; its callback runs
/// the command and throws bam::input_error for bad arguments, bam::error for failures.

#include <CLI/CLI.hpp>

#include "common/output_paths.hpp"

namespace bam::tools {

void add_bench_commands(CLI::App& app);   // bench queue, bench cache, ...
void add_prefetch_bench(CLI::App& bench);  // bench prefetch (cmd_bench_prefetch.cpp)
void add_graph_commands(CLI::App& app);   // graph gen | convert | export | info
void add_gather_command(CLI::App& app);   // gather
void add_copy_command(CLI::App& app);     // copy
void add_plan_command(CLI::App& app);     // plan
void add_app_commands(CLI::App& app);     // bfs, cc, pagerank
void add_tenants_command(CLI::App& app);  // tenants
void add_table_commands(CLI::App& app);   // table gen, query
void add_vector_commands(CLI::App& app);  // vector-gen, vector-add

/// Registers --json FILE on `command`; figures printed by the command are also written there.
/// The file is checked as the options are parsed (output_file; missing folders are made).
CLI::Option* add_json_option(CLI::App& command, std::string& path);

/// A CLI11 validator/transformer that accepts sizes like 64K or 8G (sizes.hpp).
CLI::Validator size_transformer();

/// A check for a size option where 0 means nothing useful ("--cache-bytes 0"): use after
/// size_transformer().
CLI::Validator nonzero_size();

/// A transformer for unsigned integer options: decimal digits only, so "-1" is refused rather
/// than wrapped to 2^64-1 and "010" is ten (CLI11 would read it as octal).
CLI::Validator whole_number();

/// A check that a data file exists, or each of a comma list of them (a striped set).
CLI::Validator existing_files();

/// A check that an output file can be written (common/output_paths.hpp), run while the
/// options are parsed, before any work.
CLI::Validator output_file(const output_rules& rules);

}  // namespace bam::tools
