#pragma once
/// @file
/// Identify data structures (NVMe 1.4, figures 247 and 249): the fields a driver reads.

#include <cstddef>
#include <cstdint>

namespace bam::nvme {

inline constexpr std::uint32_t identify_bytes = 4096;

struct identify_controller {
  std::uint16_t vid;
  std::uint16_t ssvid;
  char serial[20];
  char model[40];
  char firmware[8];
  std::uint8_t rab;
  std::uint8_t ieee[3];
  std::uint8_t cmic;
  std::uint8_t mdts;  ///< max data transfer: 2^mdts memory pages (0: no limit)
  std::uint16_t cntlid;
  std::uint32_t version;
  std::uint8_t reserved84[512 - 84];
  std::uint8_t sqes;  ///< required (3:0) and maximum (7:4) SQ entry size, log2 bytes
  std::uint8_t cqes;  ///< required (3:0) and maximum (7:4) CQ entry size, log2 bytes
  std::uint16_t maxcmd;
  std::uint32_t nn;  ///< number of namespaces
  std::uint8_t reserved520[identify_bytes - 520];
};
static_assert(sizeof(identify_controller) == identify_bytes);
static_assert(offsetof(identify_controller, serial) == 4);
static_assert(offsetof(identify_controller, model) == 24);
static_assert(offsetof(identify_controller, firmware) == 64);
static_assert(offsetof(identify_controller, mdts) == 77);
static_assert(offsetof(identify_controller, version) == 80);
static_assert(offsetof(identify_controller, sqes) == 512);
static_assert(offsetof(identify_controller, nn) == 516);

struct lba_format {
  std::uint16_t metadata_bytes;
  std::uint8_t lba_data_shift;  ///< log2 of the block size
  std::uint8_t relative_performance;
};
static_assert(sizeof(lba_format) == 4);

struct identify_namespace {
  std::uint64_t nsze;  ///< size in logical blocks
  std::uint64_t ncap;
  std::uint64_t nuse;
  std::uint8_t nsfeat;
  std::uint8_t nlbaf;  ///< number of LBA formats minus one
  std::uint8_t flbas;  ///< bits 3:0 select the LBA format in use
  std::uint8_t reserved27[128 - 27];
  lba_format lbaf[16];
  std::uint8_t reserved192[identify_bytes - 192];

  [[nodiscard]] std::uint32_t block_bytes() const {
    return 1u << lbaf[flbas & 0xfu].lba_data_shift;
  }
};
static_assert(sizeof(identify_namespace) == identify_bytes);
static_assert(offsetof(identify_namespace, nlbaf) == 25);
static_assert(offsetof(identify_namespace, flbas) == 26);
static_assert(offsetof(identify_namespace, lbaf) == 128);

}  // namespace bam::nvme
