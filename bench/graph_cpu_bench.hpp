#pragma once
/// @file
/// `bam bench graph-cpu`: the CPU reference for bam's graph apps. Reads a .bcsr file whole
/// into memory (timed on its own) and times OpenMP implementations of the fast CPU algorithms
/// over it: direction-optimizing BFS, Afforest connected components and pull PageRank
/// (apps/graph_cpu). Run on the GPU machine beside `bam bfs|cc|pagerank --graph` to compare
/// bam's GPU apps with a CPU framework on the same graph and host.
///
/// BFS runs from `sources` vertices of nonzero degree picked by `seed`, each `trials` times;
/// CC and PageRank run `trials` times. Each app reports its average and fastest run, its edges
/// per second (as the GPU apps count them: BFS the reached vertices' out-degrees, CC every
/// stored edge, PageRank every stored edge per iteration) and a checksum to compare with the
/// GPU app's output (BFS vertices reached per source, CC components and the largest one's
/// size, PageRank the sum of the ranks).

#include <cstdint>
#include <string>

namespace bam::bench {

struct graph_cpu_bench_options {
  std::string graph;              ///< the .bcsr file
  std::string app = "all";        ///< bfs | cc | pagerank | all
  unsigned threads = 0;           ///< 0: every hardware thread
  unsigned sources = 8;           ///< BFS sources
  std::uint64_t seed = 27491095;  ///< picks the BFS sources and CC's samples
  unsigned trials = 3;            ///< timed runs per app (BFS: per source)
  unsigned iterations = 20;       ///< PageRank iterations (bam pagerank's default)
  bool hubs = false;  ///< BFS tests each vertex's hub first (the file's hubs section; not GAP's)
  std::string json;               ///< where to write JSON ("" = nowhere)
};

/// Runs the benchmark; prints a table, writes JSON if asked. Throws bam::input_error for a
/// bad graph file or options.
void run_graph_cpu_bench(const graph_cpu_bench_options& options);

}  // namespace bam::bench
