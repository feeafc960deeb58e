#pragma once
/// @file
/// The --faults option: a comma list of fault settings for the emulated SSD, read into a
/// bam::fault_plan, and the mapping of a device set's bad blocks onto its striped devices.
///
///     error-rate=R        share of reads and writes completed with a media error status
///     write-error-rate=R  share of writes completed with "write fault" (drawn apart)
///     late-rate=R         share of commands completed late (needs late-us)
///     late-us=U           how late, in microseconds
///     drop-rate=R         share of commands whose completion is never posted
///     bad-lba=A-B         logical blocks A to B (both included) of the device set fail every
///                         read and write
///     seed=S              seed of the per-command draws
///
/// Rates are numbers from 0 to 1.

#include <cstdint>
#include <string_view>

#include <bam/storage/device_model.hpp>

namespace bam::tools {

/// Reads a --faults spec. The bad range comes back in the *device set's* logical blocks, as
/// [bad_lba_begin, bad_lba_end), with bad_lba_writes set; bad_lba_for_devices turns it into
/// the devices' blocks. Throws bam::input_error with a one-line reason naming the bad item
/// ("item 'error-rate=2': a rate is a share of commands, from 0 to 1, not 2"):
/// an empty item, an unknown or repeated key, a malformed number, a rate outside [0, 1], a
/// range whose start is past its end, late-rate without late-us or late-us without late-rate.
[[nodiscard]] fault_plan parse_fault_spec(std::string_view spec);

/// A half-open range of logical blocks.
struct lba_range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  [[nodiscard]] bool empty() const { return end <= begin; }
  friend bool operator==(const lba_range&, const lba_range&) = default;
};

/// How a device set lays its logical blocks over its devices (device_set_ref::locate).
struct set_striping {
  std::uint32_t devices = 1;
  std::uint64_t stripe_bytes = 65536;  ///< a multiple of block_bytes
  std::uint32_t block_bytes = 512;
  bool replicated = false;  ///< every device holds the whole set
};

/// The blocks of device `device` that hold set blocks `set` (empty when it holds none). A
/// striped device's share of a contiguous set range is contiguous on that device: only the
/// range's first and last stripe units can be partial, and a device's stripe units follow one
/// another in its own address space.
[[nodiscard]] lba_range device_lba_range(lba_range set, const set_striping& striping,
                                         std::uint32_t device);

/// The plan each emulated device gets for `plan` (from parse_fault_spec: its bad range in set
/// blocks). The emulated devices share one plan, so the range must be the same range of every
/// device: always so on one device or a replicated set; on a striped set when it covers whole
/// rows of stripe units (devices x stripe_bytes). Throws bam::input_error otherwise, naming
/// the range, the devices' shares and the row size.
[[nodiscard]] fault_plan bad_lba_for_devices(fault_plan plan, const set_striping& striping);

}  // namespace bam::tools
