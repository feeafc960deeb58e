// `bam table gen` writes the synthetic taxi-trip table (common/taxi_table.hpp); `bam query`
// evaluates q0..q5 over its columns with kernel threads that read a column of a row only when
// the predicates before it passed (BaM's point: data-dependent reads move only what is
// needed), through bam arrays on any backend. Answers go to standard output; timings and
// statistics to standard error and --json.

#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/warp_sync.hpp>
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>  // this file is compiled as CUDA in GPU builds
#endif

#include "bam/commands.hpp"
#include "bam/copy_pacer.hpp"
#include "bam/shared_buffer.hpp"
#include "bam/storage_options.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/taxi_table.hpp"

namespace bam::tools {

namespace {

/// The columns as kernels read them.
struct taxi_views {
  array_ref<const std::uint32_t> pickup_s, distance_m, fare_cents, tip_cents;
  array_ref<const std::uint8_t> passengers, payment;
  array_ref<const std::uint16_t> pickup_zone, dropoff_zone;
};

/// Evaluates one query over rows [0, rows): per row, the predicates in order, each column read
/// only if the ones before passed; groups counted with atomics.
///
/// The `lanes` threads of a group (a warp) take `chunk_rows` consecutive rows at a time, lanes
/// interleaved, so a group misses once per line and the groups miss on different lines at
/// once. Striding by the grid instead, row i to thread i, put 32 warps on each 4 KiB line: a
/// wave of the grid had only its few hundred lines loading at a time.
///
/// A query is a few stages, each reading one column (or the two or three its test needs) of
/// the rows a thread holds that passed the stages before: a group is done with a column's line
/// before it reads the next column's. Taking them row by row instead went back to each
/// column's line once per row, and with the default cache (an eighth of the columns) a line was
/// often evicted in between: q4 moved 5.2 times what its columns hold on the H100. Stages alone
/// still moved 4.2 times: a stage that reads two columns (q4's zones) lost one's line while it
/// waited for the other's. So a stage reads through cursors of its own, which keep their lines
/// pinned until the stage ends, and only its own: cursors of every column live at once spilled
/// 1.5 KB a thread under the 64-register cap.
///
/// A thread adds the rows of one group into registers and only then into the group's totals:
/// queries of one group (q0..q2) would otherwise put every thread's atomics on the same two
/// words, once per passing row.
struct query_args {
  taxi_views c;
  std::uint64_t rows;
  std::uint64_t* counts;  // per group
  std::uint64_t* sums;    // per group
  std::uint32_t* failed;  // set when a read failed (the arrays' records say which)
  std::uint32_t lanes;    // threads that share a chunk: a warp's on a GPU, 1 on the CPU
  std::uint64_t chunk_rows;
};

/// A kernel per query (q0..q5), so that each has the registers of its own stages only.
template <std::uint32_t Query>
struct query_kernel : query_args {
  /// Rows a thread holds at once, a bit each of a mask: those still passing.
  static constexpr std::uint32_t rows_per_lane = 32;

  using u8_cursor = array_ref<const std::uint8_t>::cursor;
  using u16_cursor = array_ref<const std::uint16_t>::cursor;
  using u32_cursor = array_ref<const std::uint32_t>::cursor;

  /// The run of one group a thread is adding up.
  struct group_run {
    std::uint64_t key = 0;
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
  };

  BAM_HD void operator()(thread_index t) const {
    group_run run;
    const std::uint64_t group = t.id / lanes;
    const std::uint64_t groups = t.count / lanes;
    const std::uint64_t lane = t.id % lanes;
    const std::uint64_t held = std::uint64_t{lanes} * rows_per_lane;
    for (std::uint64_t first = group * chunk_rows; first < rows; first += groups * chunk_rows) {
      const std::uint64_t end = first + chunk_rows < rows ? first + chunk_rows : rows;
      for (std::uint64_t base = first + lane; base < end; base += held) {
        std::uint32_t alive = 0;
        for (std::uint32_t b = 0; b < rows_per_lane; ++b) {
          if (base + b * lanes < end) alive |= 1u << b;
        }
        evaluate(alive, base, run);
      }
    }
    add(run);
  }

  /// The stages of the query over the rows `base + b * lanes` whose bit b is set in `alive`.
  BAM_HD void evaluate(std::uint32_t alive, std::uint64_t base, group_run& run) const {
    if constexpr (Query == 0) {
      u32_cursor fare(c.fare_cents);
      keep(alive, base, [&](std::uint64_t i) { return take(run, 0, fare, i); });
    } else if constexpr (Query == 1) {
      equals(alive, base, c.payment, 1);
      u32_cursor tip(c.tip_cents);
      keep(alive, base, [&](std::uint64_t i) { return take(run, 0, tip, i); });
    } else if constexpr (Query == 2) {
      above(alive, base, c.distance_m, 20000);
      u32_cursor fare(c.fare_cents);
      keep(alive, base, [&](std::uint64_t i) { return take(run, 0, fare, i); });
    } else if constexpr (Query == 3) {
      above(alive, base, c.distance_m, 20000);
      at_least(alive, base, c.passengers, 3);
      u16_cursor zone(c.pickup_zone);
      u32_cursor fare(c.fare_cents);
      keep(alive, base, [&](std::uint64_t i) {
        std::uint16_t z = 0;
        return read(zone, i, z) && take(run, z, fare, i);
      });
    } else if constexpr (Query == 4) {
      above(alive, base, c.distance_m, 20000);
      equals(alive, base, c.payment, 1);
      {
        u16_cursor zone(c.pickup_zone);
        u16_cursor drop(c.dropoff_zone);
        keep(alive, base, [&](std::uint64_t i) {
          std::uint16_t z = 0, d = 0;
          return read(zone, i, z) && read(drop, i, d) && d != z;
        });
      }
      u32_cursor when(c.pickup_s);
      u32_cursor tip(c.tip_cents);
      keep(alive, base, [&](std::uint64_t i) {
        std::uint32_t w = 0;
        return read(when, i, w) && take(run, w / 3600 % 24, tip, i);
      });
    } else {
      above(alive, base, c.distance_m, 30000);
      at_least(alive, base, c.passengers, 4);
      equals(alive, base, c.payment, 1);
      u32_cursor fare(c.fare_cents);
      u32_cursor tip(c.tip_cents);
      u16_cursor zone(c.pickup_zone);
      keep(alive, base, [&](std::uint64_t i) {
        std::uint32_t f = 0, t = 0;
        std::uint16_t z = 0;
        if (!read(fare, i, f) || !read(tip, i, t) || std::uint64_t{t} * 5 <= f) return false;
        if (!read(zone, i, z)) return false;
        add_row(run, z, t);
        return true;
      });
    }
  }

  /// Calls `test(row)` for each row still alive, every lane the same number of turns (so
  /// cursors may keep their pins across them), and drops the rows it turns down.
  template <class Test>
  BAM_HD void keep(std::uint32_t& alive, std::uint64_t base, Test&& test) const {
    // The group starts each stage together. Lanes that left the stage before at different
    // times (their rows ran out at different turns) otherwise probed the next column's line
    // a few at a time, and the first few dropped their pins before the last arrived: with the
    // default cache, q4 loaded the lines of its very first column 4.0 times each on an H100.
    warp::sync(lanes >= 32 ? ~0u : (1u << lanes) - 1u);
    for (std::uint32_t b = 0; b < rows_per_lane; ++b) {
      if ((alive >> b & 1u) && !test(base + b * lanes)) alive &= ~(1u << b);
    }
  }

  BAM_HD void above(std::uint32_t& alive, std::uint64_t base,
                    const array_ref<const std::uint32_t>& column, std::uint32_t limit) const {
    u32_cursor r(column);
    keep(alive, base, [&](std::uint64_t i) {
      std::uint32_t v = 0;
      return read(r, i, v) && v > limit;
    });
  }
  BAM_HD void at_least(std::uint32_t& alive, std::uint64_t base,
                       const array_ref<const std::uint8_t>& column, std::uint8_t limit) const {
    u8_cursor r(column);
    keep(alive, base, [&](std::uint64_t i) {
      std::uint8_t v = 0;
      return read(r, i, v) && v >= limit;
    });
  }
  BAM_HD void equals(std::uint32_t& alive, std::uint64_t base,
                     const array_ref<const std::uint8_t>& column, std::uint8_t value) const {
    u8_cursor r(column);
    keep(alive, base, [&](std::uint64_t i) {
      std::uint8_t v = 0;
      return read(r, i, v) && v == value;
    });
  }

  /// Reads row i of a column; a failed read sets the flag and turns the row down.
  template <class Cursor, class T>
  BAM_HD bool read(Cursor& r, std::uint64_t i, T& v) const {
    if (r.try_read(i, v).ok()) return true;
    // relaxed: a flag the host reads after the launch has finished.
    atomic_ref<std::uint32_t>(*failed).store(1u, order::relaxed);
    return false;
  }

  /// Reads row i's value from `column` and adds the row to group `key`.
  BAM_HD bool take(group_run& run, std::uint64_t key, u32_cursor& column, std::uint64_t i) const {
    std::uint32_t v = 0;
    if (!read(column, i, v)) return false;
    add_row(run, key, v);
    return true;
  }

  BAM_HD void add_row(group_run& run, std::uint64_t key, std::uint64_t value) const {
    if (key != run.key) {
      add(run);
      run = group_run{key, 0, 0};
    }
    ++run.count;
    run.sum += value;
  }

  BAM_HD void add(const group_run& run) const {
    if (run.count == 0) return;
    // relaxed: totals the host reads after the launch has finished.
    atomic_ref<std::uint64_t>(counts[run.key]).fetch_add(run.count, order::relaxed);
    atomic_ref<std::uint64_t>(sums[run.key]).fetch_add(run.sum, order::relaxed);
  }
};

struct query_options {
  std::string table;
  std::string query = "q0";
  std::string json;
  storage_options storage;
};

/// The table's column files and their common row count; throws bam::input_error naming a
/// missing or short column.
std::vector<std::string> column_files(const std::string& dir, std::uint64_t& rows) {
  std::vector<std::string> paths;
  rows = ~std::uint64_t{0};
  for (const taxi_column& c : taxi_columns) {
    paths.push_back((std::filesystem::path(dir) / (std::string(c.name) + ".bin")).string());
    std::error_code ec;
    const std::uint64_t bytes = std::filesystem::file_size(paths.back(), ec);
    if (ec) throw input_error("--table '" + dir + "': no column file '" + paths.back() + "'");
    if (bytes % c.bytes != 0) {
      throw input_error("'" + paths.back() + "' is not a whole number of " +
                        std::to_string(c.bytes) + "-byte values");
    }
    rows = std::min(rows, bytes / c.bytes);
  }
  return paths;
}

void run_query(const query_options& o) {
  o.storage.validate();
  const auto query = static_cast<std::uint32_t>(o.query[1] - '0');
  std::uint64_t rows = 0;
  const std::vector<std::string> paths = column_files(o.table, rows);
  const bool gpu = o.storage.use_gpu();
  const std::uint64_t align = std::max<std::uint64_t>(o.storage.line_bytes, 65536);

  // Every backend but file: the columns side by side in one image, each line-aligned.
  std::vector<std::uint64_t> offsets;
  std::uint64_t needed = 0;
  std::uint64_t total = 0;
  for (const taxi_column& c : taxi_columns) {
    offsets.push_back(total);
    total += (rows * c.bytes + align - 1) / align * align;
    needed += rows * c.bytes;
  }
  const auto began = std::chrono::steady_clock::now();
  std::shared_ptr<backing_store> image;
  if (!o.storage.on_files()) {
    image = backing_store::in_memory(std::max<std::uint64_t>(total, align),
                                     gpu ? memory_kind::pinned : memory_kind::host);
    for (std::size_t k = 0; k < paths.size(); ++k) {
      std::FILE* f = std::fopen(paths[k].c_str(), "rb");
      const std::uint64_t bytes = rows * taxi_columns[k].bytes;
      if (f == nullptr || std::fread(image->data() + offsets[k], 1, bytes, f) != bytes) {
        if (f) std::fclose(f);
        throw input_error("cannot read '" + paths[k] + "'");
      }
      std::fclose(f);
    }
  }
  // --backend column-copy (the CPU-centric baseline): the columns the query reads are copied
  // whole into the kernel's memory (GPU memory on a GPU) before it runs, the copy timed with
  // it. The other columns are empty views: a read of a column that query_columns leaves out
  // fails the query instead of reading the host's copy unnoticed.
  const bool copy_columns = o.storage.backend == "column-copy";
  const std::uint32_t used = query_columns(query);
  std::vector<std::uint64_t> copy_offsets(taxi_columns.size(), 0);
  std::uint64_t copy_bytes = 0;
  std::uint64_t query_column_bytes = 0;
  for (std::size_t k = 0; k < taxi_columns.size(); ++k) {
    if ((used >> k & 1u) == 0) continue;
    copy_offsets[k] = copy_bytes;
    copy_bytes += (rows * taxi_columns[k].bytes + 255) / 256 * 256;
    query_column_bytes += rows * taxi_columns[k].bytes;
  }
  device_memory copy_device;
  std::vector<std::uint8_t> copy_host;
  std::uint8_t* copy_base = nullptr;
  if (copy_columns) {
    if (gpu) {
      copy_device = device_memory(std::max<std::uint64_t>(copy_bytes, 256));
      copy_base = copy_device.as<std::uint8_t>();
    } else {
      copy_host.resize(std::max<std::uint64_t>(copy_bytes, 256));
      copy_base = copy_host.data();
    }
  }
  double copy_seconds = 0;
  copy_pacer pacer = copy_columns ? copy_pacer::for_options(o.storage) : copy_pacer{};
  const std::uint64_t default_cache = std::max<std::uint64_t>(needed / 8, 1 << 20);
  data_path path = image ? data_path::open(o.storage, image, default_cache)
                         : data_path::open_files(o.storage, {paths[0]}, false, default_cache);
  // --backend file: the first column is the path's set; each other column a file set of its
  // own (one I/O thread each), attached to the same runtime.
  std::vector<std::unique_ptr<file_storage>> more;
  if (o.storage.on_files()) {
    for (std::size_t k = 1; k < paths.size(); ++k) {
      file_storage_config fc = o.storage.files({paths[k]}, false);
      fc.io_threads = 1;
      more.push_back(std::make_unique<file_storage>(fc, path.runtime.get()));
      if (!gpu) more.back()->start();
    }
  }
  const std::uint32_t groups = query_groups(query);
  const stream_handle totals_stream = path.runtime ? path.runtime->stream() : stream_handle{};
  device_totals counts(gpu, groups, totals_stream);
  device_totals sums(gpu, groups, totals_stream);
  shared_buffer failed(gpu, 8);
  cache_stats stats;
  // Each column's own statistics (a column the query does not read shows none): which column's
  // lines were loaded more than once.
  struct column_stats {
    const char* name;
    std::uint64_t bytes;
    cache_stats stats;
  };
  std::vector<column_stats> by_column;
  double seconds = 0;
  double start_seconds = 0;  // the controllers' start (and the CPU path's workers)
  double stop_seconds = 0;
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  std::string errors;
  {
    auto set_of = [&](std::size_t k) {
      if (k == 0 || !o.storage.on_files()) return *path.devices();
      return more[k - 1]->ref();
    };
    auto offset_of = [&](std::size_t k) { return o.storage.on_files() ? 0 : offsets[k]; };
    auto make = [&]<class T>(std::size_t k, T*) {
      if (copy_columns) {
        const bool read = (used >> k & 1u) != 0;
        return array<const T>::over_memory(reinterpret_cast<T*>(copy_base + copy_offsets[k]),
                                           read ? rows : 0, !gpu, taxi_columns[k].name);
      }
      if (!path.cache) {
        return array<const T>::over_memory(reinterpret_cast<T*>(path.memory_data() + offsets[k]),
                                           rows, !path.device_image.data(), taxi_columns[k].name);
      }
      return array<const T>(
          *path.cache, set_of(k),
          {.offset_bytes = offset_of(k), .count = rows, .name = taxi_columns[k].name});
    };
    array<const std::uint32_t> pickup_s = make(0, static_cast<std::uint32_t*>(nullptr));
    array<const std::uint32_t> distance_m = make(1, static_cast<std::uint32_t*>(nullptr));
    array<const std::uint32_t> fare_cents = make(2, static_cast<std::uint32_t*>(nullptr));
    array<const std::uint32_t> tip_cents = make(3, static_cast<std::uint32_t*>(nullptr));
    array<const std::uint8_t> passengers = make(4, static_cast<std::uint8_t*>(nullptr));
    array<const std::uint8_t> payment = make(5, static_cast<std::uint8_t*>(nullptr));
    array<const std::uint16_t> pickup_zone = make(6, static_cast<std::uint16_t*>(nullptr));
    array<const std::uint16_t> dropoff_zone = make(7, static_cast<std::uint16_t*>(nullptr));
    const std::uint32_t block = 256;
    const std::uint32_t lanes = gpu ? 32 : 1;
    const std::uint64_t chunk_rows = 1024;  // a 4 KiB line of a u32 column
    const std::uint64_t threads = (rows + chunk_rows - 1) / chunk_rows * lanes;
    const auto grid = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>((threads + block - 1) / block, 1, gpu ? 132 * 8 : 1024));
    const query_args args{
        {pickup_s.ref_for_launch(grid, block), distance_m.ref_for_launch(grid, block),
         fare_cents.ref_for_launch(grid, block), tip_cents.ref_for_launch(grid, block),
         passengers.ref_for_launch(grid, block), payment.ref_for_launch(grid, block),
         pickup_zone.ref_for_launch(grid, block), dropoff_zone.ref_for_launch(grid, block)},
        rows,
        counts.data(),
        sums.data(),
        failed.as<std::uint32_t>(),
        lanes,
        chunk_rows};
    // Copies the query's columns (column-copy); the copy is part of the query's time.
    auto copy_in = [&](auto copy, auto wait) {
      const auto copy_start = std::chrono::steady_clock::now();
      for (std::size_t c = 0; c < taxi_columns.size(); ++c) {
        if ((used >> c & 1u) == 0) continue;
        // Paced: in pieces, each copied once the devices have read it, so a piece's copy
        // overlaps the next one's read.
        const std::uint64_t bytes = rows * taxi_columns[c].bytes;
        const std::uint64_t piece = pacer.paced() ? std::uint64_t{64} << 20 : bytes;
        for (std::uint64_t at = 0; at < bytes; at += piece) {
          const std::uint64_t n = std::min(piece, bytes - at);
          pacer.read(n);
          copy(copy_base + copy_offsets[c] + at, path.image->data() + offsets[c] + at, n);
        }
      }
      wait();
      copy_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count();
    };
    // Runs and times kernel k (a query_kernel<q>): the copy of the columns (column-copy) and
    // the kernel, as vector-add times its kernel phase. Starting and stopping the controllers
    // is timed apart (start_seconds, stop_seconds): an application keeps them running.
    auto timed = [&](const auto& k) {
      if (!gpu) {
        auto started = std::chrono::steady_clock::now();
        path.start();
        start_seconds = since(started);
        const auto start = std::chrono::steady_clock::now();
        if (copy_columns) {
          copy_in([](void* d, const void* s, std::uint64_t n) { std::memcpy(d, s, n); }, [] {});
        }
        launch(*path.stream, grid, block, k);
        path.stream->synchronize();
        seconds = since(start);
      } else {
#if defined(BAM_HAVE_CUDA)
        using kernel = std::decay_t<decltype(k)>;
        gpu_runtime& rt = *path.runtime;
        rt.preload({kernel_function<kernel>()});
        rt.warm_up([](stream_handle s) { warm_up_launch<kernel>(s); });
        auto started = std::chrono::steady_clock::now();
        path.start();
        start_seconds = since(started);
        const auto start = std::chrono::steady_clock::now();
        if (copy_columns) {
          copy_in(
              [&](void* d, const void* s, std::uint64_t n) { copy_async(d, s, n, rt.stream()); },
              [&] { rt.synchronize(rt.stream(), 0, "copying the query's columns"); });
        }
        launch(rt.stream(), grid, block, k);
        rt.synchronize(rt.stream(), 0, "the query kernel");
        seconds = since(start);
        const auto stopping = std::chrono::steady_clock::now();
        rt.stop();
        stop_seconds = since(stopping);
#endif
      }
    };
    switch (query) {
      case 0:
        timed(query_kernel<0>{args});
        break;
      case 1:
        timed(query_kernel<1>{args});
        break;
      case 2:
        timed(query_kernel<2>{args});
        break;
      case 3:
        timed(query_kernel<3>{args});
        break;
      case 4:
        timed(query_kernel<4>{args});
        break;
      default:
        timed(query_kernel<5>{args});
        break;
    }
    // Every column's statistics, and the first error any of them recorded.
    auto account = [&](const auto& a) {
      const std::size_t k = by_column.size();
      by_column.push_back({taxi_columns[k].name, rows * taxi_columns[k].bytes, a.stats()});
      stats += by_column.back().stats;
      try {
        a.check();
      } catch (const error& e) {
        if (errors.empty()) errors = e.what();
      }
    };
    account(pickup_s);
    account(distance_m);
    account(fare_cents);
    account(tip_cents);
    account(passengers);
    account(payment);
    account(pickup_zone);
    account(dropoff_zone);
  }
  for (auto& m : more) m->stop();
  if (*failed.as<std::uint32_t>() != 0 || !errors.empty()) {
    throw error("bam query: reads failed; no answer printed. First error: " + errors);
  }
  const std::vector<std::uint64_t>& count_of = counts.read(totals_stream, path.runtime.get());
  const std::vector<std::uint64_t>& sum_of = sums.read(totals_stream, path.runtime.get());
  std::vector<query_group> answer;
  for (std::uint32_t g = 0; g < groups; ++g) answer.push_back({g, count_of[g], sum_of[g]});
  std::fputs(format_answer(query, answer).c_str(), stdout);
  std::fflush(stdout);
  // Views of memory count nothing; a cache counts the bytes the kernel's reads asked for.
  const std::string asked =
      stats.bytes_requested == 0
          ? std::string()
          : "; the reads asked for " + format_bytes(static_cast<double>(stats.bytes_requested));
  std::string copy_note;
  if (copy_columns) {
    stats.bytes_moved = query_column_bytes;  // what the copy moved; the kernel read memory
    char text[80];
    std::snprintf(text, sizeof text, ", %.3f s of it copying the columns from ", copy_seconds);
    copy_note = text + pacer.describe(o.storage);
  }
  const double all =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::fprintf(stderr,
               "# %s over %" PRIu64
               " rows of '%s' in %.3f s (%.2f s in all) via %s on the %s; "
               "%s moved for %s of columns (%.3f of them%s); %" PRIu64 " I/O commands%s\n",
               o.query.c_str(), rows, o.table.c_str(), seconds, all, o.storage.backend.c_str(),
               path.where().c_str(), format_bytes(static_cast<double>(stats.bytes_moved)).c_str(),
               format_bytes(static_cast<double>(needed)).c_str(),
               needed ? static_cast<double>(stats.bytes_moved) / static_cast<double>(needed) : 0.0,
               asked.c_str(), stats.io_commands(), copy_note.c_str());
  // Loads per line of each column the cache read: 1 when every line was loaded once.
  const std::uint64_t line = o.storage.line_bytes;
  std::string per_column;
  for (const column_stats& c : by_column) {
    if (c.stats.loads == 0) continue;
    char text[96];
    std::snprintf(
        text, sizeof text, "%s%s %.2f", per_column.empty() ? "" : ", ", c.name,
        static_cast<double>(c.stats.loads) / static_cast<double>((c.bytes + line - 1) / line));
    per_column += text;
  }
  if (!per_column.empty()) std::fprintf(stderr, "# loads per line: %s\n", per_column.c_str());
  if (!o.json.empty()) {
    json_writer j;
    j.begin_object().field("command", std::string("query")).key("machine");
    write_json(j, read_machine_info());
    j.field("query", o.query)
        .field("rows", rows)
        .field("backend", o.storage.backend)
        .field("where", path.where())
        .field("seconds", seconds)
        .field("start_seconds", start_seconds)
        .field("stop_seconds", stop_seconds)
        .field("column_bytes", needed)
        .field("query_column_bytes", query_column_bytes)
        .field("bytes_requested", stats.bytes_requested)
        .field("bytes_moved", stats.bytes_moved)
        .field("copy_seconds", copy_seconds)
        .field("copy_source", copy_columns ? pacer.describe(o.storage) : std::string())
        .field("devices", std::uint64_t{o.storage.devices})
        .field("model", o.storage.model_label())
        .field("media", o.storage.media)
        .field("line_bytes", o.storage.line_bytes)
        .field("io_commands", stats.io_commands())
        .field("cache_bytes",
               path.cache ? std::uint64_t{path.cache->lines()} * path.cache->config().line_bytes
                          : std::uint64_t{0});
    j.key("columns").begin_array();
    for (const column_stats& c : by_column) {
      j.begin_object()
          .field("name", std::string(c.name))
          .field("bytes", c.bytes)
          .field("bytes_requested", c.stats.bytes_requested)
          .field("loads", c.stats.loads)
          .field("bytes_moved", c.stats.bytes_moved)
          .field("hits", c.stats.hits)
          .field("misses", c.stats.misses)
          .field("miss_waits", c.stats.miss_waits)
          .field("coalesced", c.stats.coalesced)
          .field("reused", c.stats.reused)
          .end_object();
    }
    j.end_array().end_object();
    j.save(o.json);
  }
}

}  // namespace

void add_table_commands(CLI::App& app) {
  CLI::App* table = app.add_subcommand("table", "The synthetic taxi-trip table (bam query)");
  table->require_subcommand(1);
  struct gen_options {
    std::uint64_t rows = 1'000'000;
    std::uint64_t seed = 1;
    std::string out;
  };
  auto g = std::make_shared<gen_options>();
  CLI::App* gen = table->add_subcommand(
      "gen", "Write a taxi-trip table: one little-endian file per column, DIR/<column>.bin");
  gen->add_option("--rows", g->rows, "Rows")->transform(size_transformer())->capture_default_str();
  gen->add_option("--seed", g->seed, "Seed (the same seed, the same table)")
      ->transform(whole_number())
      ->capture_default_str();
  gen->add_option("--out", g->out, "Folder of the column files (made if missing)")->required();
  gen->callback([g] {
    generate_taxi_table(g->out, g->rows, g->seed);
    std::fprintf(stderr, "# wrote %" PRIu64 " rows of 8 columns into '%s'\n", g->rows,
                 g->out.c_str());
  });

  auto o = std::make_shared<query_options>();
  CLI::App* q = app.add_subcommand(
      "query",
      "Evaluate q0..q5 over a taxi-trip table, reading a row's columns only as its predicates "
      "pass (docs/analytics.md); groups on standard output");
  q->add_option("--table", o->table, "Folder written by bam table gen")
      ->required()
      ->check(CLI::ExistingDirectory);
  q->add_option("--query", o->query, "q0 .. q5")
      ->check(CLI::IsMember({"q0", "q1", "q2", "q3", "q4", "q5"}))
      ->capture_default_str();
  o->storage.add_to(*q, {.column_copy = true});
  add_json_option(*q, o->json);
  q->callback([o] { run_query(*o); });
}

}  // namespace bam::tools
