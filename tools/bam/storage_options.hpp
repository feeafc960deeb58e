#pragma once
/// @file
/// Options every command that reads data through bam shares (--backend, --cache-bytes,
/// --line-bytes, --devices, --queues, --depth, --latency-us, --cache-mode), and the objects
/// they build: the backing image, the emulated devices, the stream and the cache.

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam::tools {

struct storage_options {
  std::string backend = "emulated-ssd";  ///< emulated-ssd | host-memory | device-memory
  std::uint64_t cache_bytes = 0;         ///< 0: a default chosen by the command
  std::uint64_t line_bytes = 4096;
  std::uint32_t devices = 1;
  std::uint32_t queues = 8;
  std::uint32_t depth = 256;
  double latency_us = 11.0;
  bool caps = false;
  std::string mode_name = "optimized";
  unsigned workers = 0;  ///< CPU threads (0: four per hardware thread)

  /// Registers the options on `command`.
  void add_to(CLI::App& command);
  [[nodiscard]] bam::cache_mode mode() const;
  [[nodiscard]] storage_config storage() const;
  [[nodiscard]] cache_config cache(std::uint64_t default_cache_bytes) const;
};

/// What a command reads through: the devices, the cache and the stream they run on.
struct data_path {
  std::shared_ptr<backing_store> image;
  std::unique_ptr<emulated_storage> storage;  ///< null for host-memory
  std::unique_ptr<host_stream> stream;
  std::unique_ptr<page_cache> cache;  ///< null for host-memory

  /// Builds the path for `options` over `image` and starts the controller.
  static data_path open(const storage_options& options, std::shared_ptr<backing_store> image,
                        std::uint64_t default_cache_bytes);
  ~data_path();
  data_path() = default;
  data_path(data_path&&) = default;
};

}  // namespace bam::tools
