#pragma once
/// @file
/// Host-side error types. Device code returns [[nodiscard]] status values instead; the host
/// turns recorded device errors into these exceptions.

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace bam {

/// Base of every bam exception; the message starts with file:line of the throw.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& what,
                 std::source_location where = std::source_location::current());
  /// The message without the source location, for users ("cannot open 'x': No such file").
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  std::string message_;
};

/// Bad input: a malformed file, an out-of-range argument, a request too large. The message
/// names the input (file and line where there is one).
class input_error : public error {
 public:
  explicit input_error(const std::string& what,
                       std::source_location where = std::source_location::current())
      : error(what, where) {}
};

/// A CUDA call or launch failed.
class cuda_error : public error {
 public:
  cuda_error(int code, const std::string& what,
             std::source_location where = std::source_location::current())
      : error(what, where), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// An I/O command failed: an NVMe error status, a timeout, or a lost command slot.
class nvme_error : public error {
 public:
  struct details {
    std::uint32_t device = 0;
    std::uint32_t queue = 0;
    std::uint32_t command_id = 0;
    std::uint64_t lba = 0;
    std::uint32_t status = 0;  ///< bam::io_status bits (nvme/status.hpp)
  };
  explicit nvme_error(const details& d, const std::string& context = {},
                      std::source_location where = std::source_location::current());
  [[nodiscard]] const details& info() const noexcept { return details_; }

 private:
  details details_;
};

}  // namespace bam
