// The CPU build: the GPU controller cannot exist; constructing one says why.
#include "storage/gpu/gpu_controller.hpp"

#include <bam/error.hpp>

namespace bam::emulated {

struct gpu_controller::impl {};

gpu_controller::gpu_controller(gpu_runtime&, std::vector<controller_device>, backing_store*,
                               const gpu_controller_options&) {
  throw input_error("controller placement gpu_kernel needs a CUDA build of bam");
}
gpu_controller::~gpu_controller() = default;
void gpu_controller::start() {}
void gpu_controller::stop() {}
bool gpu_controller::running() const { return false; }
std::uint32_t gpu_controller::reset_queue(std::uint32_t, std::uint32_t) { return 0; }
std::vector<device_stats> gpu_controller::stats() const { return {}; }
std::vector<std::string> gpu_controller::stuck_queues(std::uint64_t) const { return {}; }
std::string gpu_controller::health() const { return {}; }
std::string gpu_controller::describe() const { return {}; }

}  // namespace bam::emulated
