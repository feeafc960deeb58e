// --faults specs: the parser, then the bad range mapped onto 1 to 8 striped devices (the
// count and the stripe unit picked by the input's length).

#include <cstddef>
#include <cstdint>

#include "common/fault_spec.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bam::fuzz::expect_clean([&] {
    const bam::fault_plan plan = bam::tools::parse_fault_spec(bam::fuzz::as_text(data, size));
    const bam::tools::set_striping striping{.devices = static_cast<std::uint32_t>(size % 8 + 1),
                                            .stripe_bytes = std::uint64_t{65536} << (size % 3),
                                            .block_bytes = 512};
    for (std::uint32_t d = 0; d < striping.devices; ++d) {
      (void)bam::tools::device_lba_range({plan.bad_lba_begin, plan.bad_lba_end}, striping, d);
    }
    (void)bam::tools::bad_lba_for_devices(plan, striping);
  });
  return 0;
}
