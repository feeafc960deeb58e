// `bam bench ...`: benchmark programs. Each prints a table and, with --json, writes its figures.

#include <map>
#include <memory>

#include "bam/commands.hpp"
#include "cache_bench.hpp"
#include "ceilings.hpp"
#include "file_bench.hpp"
#include "graph_cpu_bench.hpp"
#include "io_bench.hpp"
#include "queue_bench.hpp"
#include "translation_bench.hpp"

namespace bam::tools {

namespace {

// bench cache: random reads through a bam::array (bench/cache_bench.hpp).
void add_cache_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::cache_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "cache", "Random element reads through a bam::array and its page cache (hit or miss)");
  c->add_option("--pattern", o->pattern,
                "hit (data fits the cache and is read once first) or miss (data many times the "
                "cache)")
      ->check(CLI::IsMember({"hit", "miss"}))
      ->capture_default_str();
  c->add_option("--line-bytes", o->line_bytes, "Cache line, a power of two from 512 to 64K")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--cache-bytes", o->cache_bytes, "Cache capacity")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--data-bytes", o->data_bytes, "Data read (0: hit 1/2 the cache, miss 16x)")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--element-bytes", o->element_bytes, "Element size, 4 or 8")
      ->check(CLI::IsMember({4u, 8u}))
      ->capture_default_str();
  c->add_option("--accesses", o->accesses, "Timed reads in total")->capture_default_str();
  c->add_option("--threads", o->threads, "CPU threads")->capture_default_str();
  c->add_option("--cache-mode", o->mode, "none | naive | optimized")
      ->check(CLI::IsMember({"none", "naive", "optimized"}))
      ->capture_default_str();
  c->add_option("--latency-us", o->latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  c->add_option("--side", o->side, "cpu (CPU threads, CPU controller) or gpu (figures 7a, 7b, 8)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  c->add_option("--figure", o->figure,
                "gpu side: lines (7a, whole-line hits), elements (7b, 8-byte hits) or modes "
                "(8, none/naive/optimized on a gather with misses)")
      ->check(CLI::IsMember({"lines", "elements", "modes"}))
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "gpu side: length of one timed run")
      ->capture_default_str();
  c->add_option("--controller-sms", o->controller_sms, "gpu side: SMs of the controller")
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_cache_bench(*o); });
}

// bench io: BaM's raw I/O figures on the GPU (bench/io_bench.hpp).
void add_io_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::io_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "io", "Raw NVMe-queue I/O figures on the GPU, each beside its ceiling (figures 1-6)");
  c->add_option("--figure", o->figure,
                "controller (1), e2e (2), host (3), devices (4), latency (5), queues (6), "
                "decompose (round-trip stages) or sleep (__nanosleep against its request)")
      ->required()
      ->check(CLI::IsMember(
          {"controller", "e2e", "host", "devices", "latency", "queues", "decompose", "sleep"}));
  c->add_option("--controller-sms", o->controller_sms,
                "Controller SMs (list: the controller figure sweeps it; others use the first)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--devices", o->devices, "devices figure: device counts (list)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--footprint", o->footprints,
                "host figure: image footprints (list); devices figure: the largest is the image")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--latency-us", o->latencies_us, "latency figure: modelled latencies (list)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--threads", o->threads,
                "latency figure: thread counts (list; default powers of two from 32); others: "
                "the first (default every resident thread)")
      ->delimiter(',');
  c->add_option("--queues", o->queues, "Queue pairs per device (0: the figure's default)")
      ->capture_default_str();
  c->add_option("--depth", o->depth, "Entries per queue (0: the figure's default)")
      ->capture_default_str();
  c->add_option("--rounds", o->rounds, "controller figure: rounds per SM count")
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "Length of one timed run")->capture_default_str();
  c->add_option("--latency-devices", o->latency_devices,
                "latency figure: devices (modelled peak = devices x 5.1 M IOPS)")
      ->capture_default_str();
  c->add_option("--fetch-batches", o->fetch_batches,
                "Batches of 32 entries the controller fetches per queue per pass (0: all there)")
      ->capture_default_str();
  c->add_option("--wait-sleep-ns", o->wait_sleep_ns,
                "Longest sleep between polls of a waiting GPU thread, 0 = none (list: latency "
                "and decompose figures run each)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--controller-sleep-ns", o->controller_sleep_ns,
                "Longest sleep of an idle controller warp (0: none)")
      ->capture_default_str();
  c->add_option(
       "--controller-stop-poll-us", o->controller_stop_poll_us,
       "How often the controller reads its stop flag in host memory while it has work (us)")
      ->capture_default_str();
  c->add_option("--sleep-requests-ns", o->sleep_requests_ns,
                "sleep figure: the __nanosleep requests measured (list)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--lanes-per-warp", o->lanes_per_warp,
                "decompose figure: working lanes per warp, 1, 2, 4, 8, 16 or 32 (list; "
                "--threads counts working threads)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--edges", o->edges,
                "decompose figure: scope of the fences publishing doorbells and completions, "
                "system or gpu (list)")
      ->delimiter(',')
      ->check(CLI::IsMember({"system", "gpu"}))
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_io_bench(*o); });
}

// bench ceilings: copy bandwidths and random-read rates everything else is compared to.
void add_ceilings_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::ceilings_options>();
  CLI::App* c = bench.add_subcommand(
      "ceilings", "HBM and host copy bandwidths, random zero-copy and HBM read rates (GPU)");
  c->add_option("--footprint", o->footprints, "Host footprints of the zero-copy reads (list)")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--line-bytes", o->line_bytes, "Line sizes of the random line reads (list)")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "Length of one timed repetition")->capture_default_str();
  c->add_option("--repetitions", o->repetitions, "Timed repetitions per figure (median)")
      ->capture_default_str();
  c->add_option("--hbm-bytes", o->hbm_bytes, "HBM buffer of the random reads")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--copy-bytes", o->copy_bytes, "Bytes per cudaMemcpyAsync of the copy ceilings")
      ->transform(size_transformer())
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_ceilings(*o); });
}

// bench translation: hit-path throughput of each translation scheme (Mosaic).
void add_translation_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::translation_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "translation", "Hit-path gathers through base, two-level (Mosaic) and no translation");
  c->add_option("--side", o->side, "gpu or cpu (default gpu when a GPU is present)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  c->add_option("--line-bytes", o->line_bytes, "Base page sizes (list)")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--data-bytes", o->data_bytes, "Data sizes (list, multiples of the frame)")
      ->delimiter(',')
      ->transform(size_transformer());
  c->add_option("--gather-bytes", o->gather_bytes, "Gather sizes (list; 0 = a whole line)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option(
       "--schemes", o->schemes,
       "bam, lean, two_level_pins, two_level_epochs, two_level_epochs_warp, large_only, ideal, "
       "lean_l2 (GPU: lean with its table in a persisting L2 window) (list)")
      ->delimiter(',');
  c->add_option("--frame-bytes", o->frame_bytes, "Large frame size")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "Length of one timed repetition")->capture_default_str();
  c->add_option("--repetitions", o->repetitions, "Timed repetitions (median)")
      ->capture_default_str();
  c->add_option("--threads", o->threads, "cpu side: pool threads (0: hardware threads)")
      ->capture_default_str();
  c->add_option("--occupancy", o->occupancy,
                "gpu side: compiler (ptxas chooses registers) or full (kernels capped at 32)")
      ->check(CLI::IsMember({"compiler", "full"}))
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_translation_bench(*o); });
}

// bench file: a file's block reads by CPU threads, through bam's queues and its cache.
void add_file_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::file_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "file",
      "Block reads of a file: CPU threads with io_uring (the ceiling), then kernel threads "
      "through bam's queues (--backend file), raw and through the cache");
  c->add_option("--file", o->file, "The file to read (O_DIRECT)")->required();
  c->add_option("--create", o->create_bytes,
                "First write a pattern file of this size there (kept; reused when it is already "
                "one), so every read is checked")
      ->transform(size_transformer());
  c->add_option("--block", o->block, "Bytes per read: 512 or 4K")
      ->transform(size_transformer())
      ->check(CLI::IsMember({512u, 4096u}))
      ->capture_default_str();
  c->add_option("--pattern", o->pattern, "random or seq")
      ->check(CLI::IsMember({"random", "seq"}))
      ->capture_default_str();
  c->add_option("--depth", o->depth, "Reads in flight per I/O thread")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  c->add_option("--io-threads", o->io_threads,
                "CPU threads of the ceiling, and the file backend's I/O threads")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  c->add_option("--threads-per-slot", o->threads_per_slot,
                "Kernel threads per I/O slot (I/O threads x depth): above 1, commands wait in "
                "bam's queues while the disk holds the same depth as the ceiling's")
      ->check(CLI::Range(1u, 16u))
      ->capture_default_str();
  c->add_option("--io-engine", o->io_engine, "io_uring or psync")
      ->check(CLI::IsMember({"io_uring", "psync"}))
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "Length of each phase")->capture_default_str();
  c->add_option("--cache-bytes", o->cache_bytes, "Cache of the third phase")
      ->transform(size_transformer())
      ->check(nonzero_size())
      ->capture_default_str();
  c->add_option("--target", o->target, "Where kernel threads run (cpu)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_file_bench(*o); });
}

// bench graph-cpu: the graph apps' CPU reference over the same .bcsr file (OpenMP, in memory).
void add_graph_cpu_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::graph_cpu_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "graph-cpu",
      "CPU reference of the graph apps (direction-optimizing BFS, Afforest CC, pull PageRank; "
      "OpenMP over the graph in memory), to compare bam's GPU apps with");
  c->add_option("--graph", o->graph, "The .bcsr graph file")->required()->check(CLI::ExistingFile);
  c->add_option("--app", o->app, "bfs, cc, pagerank or all")
      ->check(CLI::IsMember({"bfs", "cc", "pagerank", "all"}))
      ->capture_default_str();
  c->add_option("--threads", o->threads, "OpenMP threads (0: every hardware thread)")
      ->capture_default_str();
  c->add_option("--sources", o->sources,
                "BFS sources, drawn by --seed among vertices with out-edges")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--seed", o->seed, "Seed of the BFS sources and CC's sampling")
      ->capture_default_str();
  c->add_option("--trials", o->trials, "Timed runs of each app (BFS: of each source)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--iterations", o->iterations, "PageRank iterations (as bam pagerank's default)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--hubs", o->hubs,
                "on: bottom-up BFS steps test each vertex's highest-degree neighbour (the file's "
                "hubs section) before its list, as bam bfs does; off: GAP's algorithm")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, bool>{{"on", true}, {"off", false}}))
      ->default_str("off");
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_graph_cpu_bench(*o); });
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks (print a table, --json FILE for figures)");
  bench->require_subcommand(1);

  auto q = std::make_shared<bench::queue_bench_options>();
  CLI::App* queue = bench->add_subcommand(
      "queue", "Commands per second through the NVMe queue protocol (ticketed or naive)");
  queue
      ->add_option("--side", q->side,
                   "gpu (GPU threads, GPU controller kernel) or cpu (CPU threads, CPU "
                   "controller); default gpu when a GPU is present")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  queue->add_option("--protocol", q->protocol, "ticket or naive")
      ->check(CLI::IsMember({"ticket", "naive"}))
      ->capture_default_str();
  queue
      ->add_option("--threads", q->threads,
                   "Submitting threads (0: cpu 64, gpu every resident thread)")
      ->capture_default_str();
  queue->add_option("--commands", q->commands, "Commands in total")->capture_default_str();
  queue->add_option("--depth", q->depth, "Entries per queue, 2..65535 (0: cpu 64, gpu 1024)")
      ->capture_default_str();
  queue->add_option("--queues", q->queues, "Queue pairs per device (0: cpu 4, gpu 128)")
      ->capture_default_str();
  queue->add_option("--devices", q->devices, "Emulated devices (gpu side)")->capture_default_str();
  queue->add_option("--image", q->image, "gpu side: the image in pinned host or GPU memory")
      ->check(CLI::IsMember({"pinned", "device"}))
      ->capture_default_str();
  queue
      ->add_option("--controller-sms", q->controller_sms,
                   "gpu side: SMs of the controller's green context")
      ->capture_default_str();
  queue->add_option("--io-bytes", q->io_bytes, "Bytes per read (512..4096)")
      ->transform(size_transformer())
      ->capture_default_str();
  queue->add_option("--latency-us", q->latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  add_json_option(*queue, q->json);
  queue->callback([q] { bench::run_queue_bench(*q); });
  add_cache_bench(*bench);
  add_ceilings_bench(*bench);
  add_io_bench(*bench);
  add_translation_bench(*bench);
  add_file_bench(*bench);
  add_graph_cpu_bench(*bench);
  add_prefetch_bench(*bench);
}

}  // namespace bam::tools
