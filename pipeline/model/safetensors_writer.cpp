#include "pipeline/model/safetensors_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

// The header length is written as a native uint64; safetensors wants little-endian.
static_assert(std::endian::native == std::endian::little);

namespace megatts {
namespace {

// The Hugging Face writer pads the header so the data section starts 8-byte aligned.
constexpr std::size_t k_header_alignment = 8;

// Writes all of `size` bytes, retrying short writes and EINTR; returns 0 or the errno.
int write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return 0;
}

}  // namespace

result<safetensors_writer> safetensors_writer::create(const std::string& path, const std::vector<tensor_spec>& tensors,
                                                      const std::map<std::string, std::string>& metadata) {
    auto bad = [&](const std::string& what) { return make_error(error_kind::invalid_input, path + ": " + what); };

    nlohmann::ordered_json header;
    auto& meta = header["__metadata__"];
    meta["format"] = "pt";
    for (const auto& [key, value] : metadata) {
        if (key == "format") return bad("metadata key 'format' is reserved (always \"pt\")");
        meta[key] = value;
    }
    std::set<std::string_view> names;
    std::uint64_t offset = 0;
    for (const auto& t : tensors) {
        if (t.name == "__metadata__" || !names.insert(t.name).second)
            return bad("tensor name '" + t.name + "' is reserved or used twice");
        std::uint64_t numel = 1;
        for (auto d : t.shape) {
            if (d < 0) return bad("tensor '" + t.name + "' has a negative dimension");
            numel *= static_cast<std::uint64_t>(d);
        }
        const std::uint64_t end = offset + numel * dtype_size(t.type);
        header[t.name] = {{"dtype", std::string(dtype_name(t.type))},
                          {"shape", t.shape},
                          {"data_offsets", {offset, end}}};
        offset = end;
    }

    std::string text;
    try {
        text = header.dump();  // compact, as the Hugging Face writer emits it
    } catch (const nlohmann::json::exception& e) {  // a name or value that is not UTF-8
        return bad(std::string("cannot encode the header: ") + e.what());
    }
    text.append((k_header_alignment - text.size() % k_header_alignment) % k_header_alignment, ' ');

    safetensors_writer w;
    w.path_ = path;
    w.partial_path_ = path + ".partial";
    w.data_bytes_ = offset;
    w.fd_ = ::open(w.partial_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.fd_ < 0) {
        const int e = errno;
        return make_error(e == ENOENT ? error_kind::not_found : error_kind::io,
                          w.partial_path_ + ": " + std::strerror(e));
    }
    const std::uint64_t header_len = text.size();
    int e = write_all(w.fd_, &header_len, sizeof header_len);
    if (e == 0) e = write_all(w.fd_, text.data(), text.size());
    if (e != 0) return w.fail(error_kind::io, std::string("write: ") + std::strerror(e));
    return w;
}

safetensors_writer::safetensors_writer(safetensors_writer&& other) noexcept
    : path_(std::move(other.path_)),
      partial_path_(std::move(other.partial_path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_bytes_(other.data_bytes_),
      written_(other.written_) {}

safetensors_writer& safetensors_writer::operator=(safetensors_writer&& other) noexcept {
    if (this != &other) {
        discard();
        path_ = std::move(other.path_);
        partial_path_ = std::move(other.partial_path_);
        fd_ = std::exchange(other.fd_, -1);
        data_bytes_ = other.data_bytes_;
        written_ = other.written_;
    }
    return *this;
}

safetensors_writer::~safetensors_writer() { discard(); }

result<void> safetensors_writer::append(std::span<const std::byte> bytes) {
    if (fd_ < 0) return make_error(error_kind::internal, path_ + ": append after finish() or an error");
    if (bytes.size() > data_bytes_ - written_)
        return fail(error_kind::internal,
                    "more data than the header declares (" + std::to_string(data_bytes_) + " bytes)");
    if (const int e = write_all(fd_, bytes.data(), bytes.size()); e != 0)
        return fail(error_kind::io, std::string("write: ") + std::strerror(e));
    written_ += bytes.size();
    return {};
}

result<void> safetensors_writer::finish() {
    if (fd_ < 0) return make_error(error_kind::internal, path_ + ": finish() after finish() or an error");
    if (written_ != data_bytes_)
        return fail(error_kind::internal, "got " + std::to_string(written_) + " of the " +
                                              std::to_string(data_bytes_) + " data bytes the header declares");
    // close() is where a delayed write error (NFS, quota) surfaces. No fsync: a
    // checkpoint lost to a power cut is simply written again.
    auto io_error = [&](const char* what, int e) {
        ::unlink(partial_path_.c_str());
        return make_error(error_kind::io, path_ + ": " + what + ": " + std::strerror(e));
    };
    if (::close(std::exchange(fd_, -1)) != 0) return io_error("close", errno);
    if (std::rename(partial_path_.c_str(), path_.c_str()) != 0) return io_error("rename from .partial", errno);
    return {};
}

error safetensors_writer::fail(error_kind kind, const std::string& what) {
    discard();
    return make_error(kind, path_ + ": " + what);
}

void safetensors_writer::discard() {
    if (fd_ < 0) return;
    ::close(std::exchange(fd_, -1));
    ::unlink(partial_path_.c_str());
}

}  // namespace megatts
