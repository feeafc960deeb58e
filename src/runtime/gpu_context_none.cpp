// The CPU build: there is never a GPU context; the runtime serves host-thread controllers only.
#include "runtime/gpu_context.hpp"

#include <bam/error.hpp>

namespace bam::detail {

std::unique_ptr<gpu_context> gpu_context::create(const runtime_config&, const log_function&,
                                                 std::string& why) {
  why = "bam was built without CUDA";
  return nullptr;
}

gpu_context::~gpu_context() = default;

std::size_t gpu_context::load(const void* const*, std::size_t) { return 0; }
void gpu_context::reserve_limits(std::size_t, std::size_t) {}
void gpu_context::synchronize(stream_handle, std::uint64_t, const std::string&) const {}
void gpu_context::synchronize(event_handle, std::uint64_t, const std::string&) const {}
void gpu_context::make_green(const runtime_config&) {}
void gpu_context::make_plain(const runtime_config&) {}
bool gpu_context::probe(stream_handle, std::string&) { return false; }

}  // namespace bam::detail
