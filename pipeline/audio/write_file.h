// Writing a finished byte buffer to a file.
//
// Contract: in: a path and the complete file contents; out: the file, created or truncated.
// Thread: any. Blocking: yes, file I/O; call it from a worker, never from the event loop.
// Errors: io, naming the path and the operating system's reason (open, short write, or a
// failed close, which is where a full disk usually shows up with buffered stdio).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "kernels/common/result.h"

namespace megatts {

result<void> write_file(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

}  // namespace megatts
