// `bam bench translation`: the sweep, the table and the JSON, and the CPU runner (the same
// kernels on a CPU pool). The GPU runner is translation_bench_gpu.cu.
#include "translation_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <bam/error.hpp>
#include <bam/platform/launch.hpp>

#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"
#include "translation_runner.hpp"

namespace bam::bench {

namespace translation {
namespace {

/// Host memory for the CPU runner: zeroed, 4 KiB aligned, freed with the runner.
class host_arena {
 public:
  void* take(std::uint64_t bytes) {
    const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 8) + 4095) / 4096 * 4096;
    void* p = std::aligned_alloc(4096, rounded);
    if (p == nullptr) throw error("cannot allocate " + std::to_string(rounded) + " bytes");
    std::memset(p, 0, rounded);
    blocks_.emplace_back(p);
    return p;
  }
  void clear() { blocks_.clear(); }

 private:
  struct freer {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<void, freer>> blocks_;
};

class cpu_runner final : public runner {
 public:
  explicit cpu_runner(const translation_bench_options& o)
      : threads_(o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency())),
        stream_(threads_) {}

  void prepare(const shape& s) override {
    arena_.clear();
    f_ = build_fixture(
        s, epoch_slots, [&](std::uint64_t bytes) { return arena_.take(bytes); },
        [&](auto kernel) {
          launch(stream_, 1, threads_, kernel);
          stream_.synchronize();
        });
    sink_.assign(threads_, 0);
  }

  double time(scheme sc, std::uint64_t gathers, std::uint32_t bytes, std::uint32_t seed) override {
    std::uint64_t wrong = 0;
    const auto start = std::chrono::steady_clock::now();
    switch (sc) {
      case scheme::bam:
        go<scheme::bam>(gathers, bytes, seed, wrong);
        break;
      case scheme::lean:
        go<scheme::lean>(gathers, bytes, seed, wrong);
        break;
      case scheme::two_level_pins:
        go<scheme::two_level_pins>(gathers, bytes, seed, wrong);
        break;
      case scheme::two_level_epochs:
        go<scheme::two_level_epochs>(gathers, bytes, seed, wrong);
        break;
      case scheme::two_level_epochs_warp:
        go<scheme::two_level_epochs_warp>(gathers, bytes, seed, wrong);
        break;
      case scheme::large_only:
        go<scheme::large_only>(gathers, bytes, seed, wrong);
        break;
      case scheme::ideal:
        go<scheme::ideal>(gathers, bytes, seed, wrong);
        break;
      case scheme::lean_l2:
        throw input_error("lean_l2 needs --side gpu (it keeps the table in the GPU's L2)");
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (wrong != 0) {
      throw error(std::string("bench translation: ") + to_string(sc) + " read " +
                  std::to_string(wrong) + " wrong gathers");
    }
    return s;
  }

  [[nodiscard]] bool supports(scheme sc) const override { return sc != scheme::lean_l2; }

  [[nodiscard]] std::string device() const override {
    return "cpu (" + std::to_string(threads_) + " threads)";
  }
  [[nodiscard]] std::uint64_t l2_bytes() const override { return 0; }
  [[nodiscard]] std::uint64_t threads() const override { return threads_; }

 private:
  static constexpr std::uint32_t epoch_slots = 4096;

  template <scheme S>
  void go(std::uint64_t gathers, std::uint32_t bytes, std::uint32_t seed, std::uint64_t& wrong) {
    launch(stream_, 1, threads_, gather_kernel<S>{f_, gathers, bytes, seed, sink_.data(), &wrong});
    stream_.synchronize();
  }

  unsigned threads_;
  host_stream stream_;
  host_arena arena_;
  fixture f_;
  std::vector<std::uint64_t> sink_;
};

struct row {
  scheme sc;
  shape sh;
  std::uint32_t gather_bytes;
  std::uint64_t gathers;
  std::vector<double> seconds;
  [[nodiscard]] double median() const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    return s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  }
  [[nodiscard]] double gathers_per_s() const { return static_cast<double>(gathers) / median(); }
};

scheme parse_scheme(const std::string& name) {
  for (const scheme s : all_schemes) {
    if (name == to_string(s)) return s;
  }
  throw input_error("--schemes: unknown scheme '" + name +
                    "' (bam, lean, two_level_pins, two_level_epochs, two_level_epochs_warp, "
                    "large_only, ideal, lean_l2)");
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace

std::unique_ptr<runner> make_cpu_runner(const translation_bench_options& o) {
  return std::make_unique<cpu_runner>(o);
}

}  // namespace translation

void run_translation_bench(const translation_bench_options& options) {
  using namespace translation;
  translation_bench_options o = options;
  if (o.side.empty()) o.side = gpu_runner_available() ? "gpu" : "cpu";
  if (o.side != "cpu" && o.side != "gpu") throw input_error("--side must be cpu or gpu");
  const bool gpu = o.side == "gpu";
  if (o.data_bytes.empty() && !gpu) o.data_bytes = {64ull << 20};
  if (o.repetitions < 1 || o.repetitions > 100) throw input_error("--repetitions must be 1..100");
  if (!(o.seconds > 0 && o.seconds <= 10)) throw input_error("--seconds must be in (0, 10]");
  if (o.occupancy != "full" && o.occupancy != "compiler") {
    throw input_error("--occupancy must be full or compiler");
  }
  std::vector<scheme> schemes;
  if (o.schemes.empty()) schemes.assign(std::begin(all_schemes), std::end(all_schemes));
  for (const std::string& n : o.schemes) schemes.push_back(parse_scheme(n));
  if (std::find(schemes.begin(), schemes.end(), scheme::ideal) == schemes.end()) {
    schemes.push_back(scheme::ideal);  // every figure is a ratio to it
  }
  for (const std::uint64_t l : o.line_bytes) {
    if (l < 512 || l > 65536 || (l & (l - 1)) != 0) {
      throw input_error("--line-bytes must be powers of two from 512 to 64K");
    }
    if (o.frame_bytes < l || (o.frame_bytes & (o.frame_bytes - 1)) != 0) {
      throw input_error("--frame-bytes must be a power of two of at least one line");
    }
  }
  std::unique_ptr<runner> r = gpu ? make_gpu_runner(o) : make_cpu_runner(o);
  std::cerr << "bam: translation on " << r->device() << "\n";
  if (o.schemes.empty()) {
    std::erase_if(schemes, [&](scheme sc) { return !r->supports(sc); });
  } else {
    for (const scheme sc : schemes) {
      if (!r->supports(sc)) {
        throw input_error(std::string("--schemes ") + to_string(sc) + " needs --side gpu");
      }
    }
  }

  std::vector<row> rows;
  std::uint32_t seed = 1;
  for (const std::uint64_t line : o.line_bytes) {
    std::vector<std::uint64_t> sizes = o.data_bytes;
    if (sizes.empty()) {
      sizes = line <= 512
                  ? std::vector<std::uint64_t>{512ull << 20, 2ull << 30, 8ull << 30, 32ull << 30}
                  : std::vector<std::uint64_t>{2ull << 30, 8ull << 30, 32ull << 30, 64ull << 30};
    }
    for (const std::uint64_t data : sizes) {
      if (data % o.frame_bytes != 0 || data == 0) {
        throw input_error("--data-bytes must be positive multiples of the frame size");
      }
      const shape sh{static_cast<std::uint32_t>(line), data, o.frame_bytes};
      std::cerr << "bam: " << tools::format_bytes(static_cast<double>(data)) << " at "
                << tools::format_bytes(static_cast<double>(line)) << " pages..." << std::flush;
      r->prepare(sh);
      std::cerr << " ready\n";
      for (const std::uint64_t g0 : o.gather_bytes) {
        const auto g = static_cast<std::uint32_t>(g0 == 0 ? line : g0);
        if (g != 4 && (g % 8 != 0 || g > line)) {
          throw input_error("--gather-bytes must be 4 or multiples of 8 up to a line (0: a line)");
        }
        for (const scheme sc : schemes) {
          // Calibrate: grow the work until one run takes about the target time.
          std::uint64_t n = std::max<std::uint64_t>(r->threads(), 1u << 16);
          double t = r->time(sc, n, g, seed++);
          while (t < o.seconds / 4 && n < (1ull << 40)) {
            n = static_cast<std::uint64_t>(
                std::ceil(static_cast<double>(n) *
                          std::clamp(o.seconds / (2 * std::max(t, 1e-9)), 2.0, 64.0)));
            t = r->time(sc, n, g, seed++);
          }
          n = std::max<std::uint64_t>(
              1, static_cast<std::uint64_t>(static_cast<double>(n) * o.seconds / t));
          row rw{sc, sh, g, n, {}};
          for (unsigned k = 0; k < o.repetitions; ++k)
            rw.seconds.push_back(r->time(sc, n, g, seed++));
          rows.push_back(rw);
        }
      }
    }
  }

  // The ideal of the same shape and gather is the reference of every row.
  auto ideal_of = [&](const row& x) {
    for (const row& y : rows) {
      if (y.sc == scheme::ideal && y.sh.line_bytes == x.sh.line_bytes &&
          y.sh.data_bytes == x.sh.data_bytes && y.gather_bytes == x.gather_bytes) {
        return y.gathers_per_s();
      }
    }
    return 0.0;
  };
  const double l2 = static_cast<double>(r->l2_bytes());
  tools::table t(
      {"page", "data", "gather", "scheme", "metadata", "x L2", "gathers/s", "GB/s", "of ideal"});
  for (const row& x : rows) {
    const double md = static_cast<double>(x.sh.metadata_bytes(x.sc));
    t.add_row({tools::format_bytes(x.sh.line_bytes),
               tools::format_bytes(static_cast<double>(x.sh.data_bytes)),
               std::to_string(x.gather_bytes), to_string(x.sc), tools::format_bytes(md),
               l2 > 0 ? fixed(md / l2, 2) : "-", tools::format_count(x.gathers_per_s()),
               fixed(x.gathers_per_s() * x.gather_bytes / 1e9, 1),
               fixed(x.gathers_per_s() / ideal_of(x), 3)});
  }
  t.print(std::cout);

  if (!o.json.empty()) {
    tools::json_writer j;
    j.begin_object().field("benchmark", "translation").key("machine");
    tools::write_json(j, tools::read_machine_info());
    j.field("side", o.side)
        .field("device", r->device())
        .field("l2_bytes", r->l2_bytes())
        .field("threads", r->threads())
        .field("occupancy", o.occupancy)
        .field("frame_bytes", o.frame_bytes)
        .field("seconds_per_repetition", o.seconds)
        .field("repetitions", o.repetitions)
        .field("note",
               "hit path only: every page resident, base page p in line p, piece f in frame f; "
               "bam = the existing cache's acquire/release; metadata = bytes a hit may touch")
        .key("results")
        .begin_array();
    for (const row& x : rows) {
      j.begin_object()
          .field("scheme", to_string(x.sc))
          .field("line_bytes", std::uint64_t{x.sh.line_bytes})
          .field("data_bytes", x.sh.data_bytes)
          .field("gather_bytes", std::uint64_t{x.gather_bytes})
          .field("metadata_bytes", x.sh.metadata_bytes(x.sc))
          .field("metadata_over_l2",
                 l2 > 0 ? static_cast<double>(x.sh.metadata_bytes(x.sc)) / l2 : 0.0)
          .field("gathers", x.gathers)
          .field("seconds", x.median())
          .field("gathers_per_s", x.gathers_per_s())
          .field("bytes_per_s", x.gathers_per_s() * x.gather_bytes)
          .field("fraction_of_ideal", x.gathers_per_s() / ideal_of(x))
          .key("repetition_seconds")
          .begin_array();
      for (const double s : x.seconds) j.value(s);
      j.end_array().end_object();
    }
    j.end_array().end_object();
    j.save(o.json);
  }
}

}  // namespace bam::bench
