#include "pipeline/audio/write_file.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>

namespace megatts {
namespace {

struct file_closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

error io_error(const std::filesystem::path& path, const char* what) {
    return make_error(error_kind::io, path.string() + ": " + what + ": " +
                                          std::generic_category().message(errno));
}

}  // namespace

result<void> write_file(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
    std::unique_ptr<std::FILE, file_closer> file(std::fopen(path.c_str(), "wb"));
    if (!file) return io_error(path, "cannot open for writing");
    if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size()) {
        return io_error(path, "write failed");
    }
    // Closed by hand, not by the deleter, because stdio reports deferred write errors here.
    if (std::fclose(file.release()) != 0) return io_error(path, "close failed");
    return {};
}

}  // namespace megatts
