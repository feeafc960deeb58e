// Builds without liburing: the io_uring engine is absent and the file backend uses psync.
#include "storage/file/io_engine.hpp"

namespace bam::file_io {

std::unique_ptr<io_engine> make_uring_engine(std::uint32_t, std::string& why) {
  why =
      "this build has no io_uring engine (liburing was not found when it was configured; "
      "scripts/bootstrap installs it)";
  return nullptr;
}

}  // namespace bam::file_io
