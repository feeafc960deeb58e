// `bam graph ...`: placeholder until the graph tools land.
#include "bam/commands.hpp"

namespace bam::tools {
void add_graph_commands(CLI::App&) {}
}  // namespace bam::tools
