#include "graph/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <bam/error.hpp>

namespace bam::graph {

mapped_file::mapped_file(const std::filesystem::path& path) : name_(path.string()) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw input_error("cannot open '" + name_ + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw input_error("cannot read '" + name_ + "': not a regular file");
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
  if (size_ > 0) {
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      throw input_error("cannot map '" + name_ + "': " + std::strerror(saved));
    }
    data_ = static_cast<std::byte*>(map);
  }
  ::close(fd);  // the mapping keeps the file open
}

mapped_file::~mapped_file() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void mapped_file::advise_sequential() const {
  if (data_ != nullptr) ::madvise(data_, size_, MADV_SEQUENTIAL);
}

}  // namespace bam::graph
