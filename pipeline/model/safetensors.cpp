#include "pipeline/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

// safetensors is little-endian; so is every host we build for.
static_assert(std::endian::native == std::endian::little);

namespace megatts {

struct safetensors_file::mapping {
    const std::byte* data = nullptr;
    std::size_t size = 0;
    bool mapped = false;

    ~mapping() {
        if (mapped) ::munmap(const_cast<std::byte*>(data), size);
    }
};

namespace {

// A header larger than this is not a model we would load; refusing it early keeps a
// hostile file from making us parse gigabytes of JSON.
constexpr std::uint64_t k_max_header_bytes = 100u << 20;

error format_error(const std::string& label, const std::string& what) {
    return make_error(error_kind::invalid_input, label + ": " + what);
}

result<tensor_view> parse_entry(const std::string& label, const std::string& name,
                                const nlohmann::json& entry,
                                std::span<const std::byte> data) {
    auto bad = [&](const std::string& what) {
        return format_error(label, "tensor '" + name + "': " + what);
    };
    if (!entry.is_object()) return bad("header entry is not an object");
    auto dt = entry.find("dtype");
    auto shape = entry.find("shape");
    auto offsets = entry.find("data_offsets");
    if (dt == entry.end() || !dt->is_string()) return bad("missing dtype");
    if (shape == entry.end() || !shape->is_array()) return bad("missing shape");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
        return bad("data_offsets must be [begin, end]");

    auto type = parse_dtype(dt->get<std::string>());
    if (!type) return bad("unsupported dtype '" + dt->get<std::string>() + "'");

    tensor_view view;
    view.name = name;
    view.type = *type;
    // The product of the non-zero dims must fit in int64, so that numel() and every partial
    // product of the shape do too, even when a zero dim makes the tensor empty.
    std::uint64_t nonzero_product = 1;
    bool empty = false;
    for (const auto& d : *shape) {
        if (!d.is_number_unsigned()) return bad("shape entries must be non-negative integers");
        auto dim = d.get<std::uint64_t>();
        if (dim == 0) {
            empty = true;
        } else if (nonzero_product > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / dim) {
            return bad("shape overflows");
        } else {
            nonzero_product *= dim;
        }
        view.shape.push_back(static_cast<std::int64_t>(dim));
    }
    const std::uint64_t numel = empty ? 0 : nonzero_product;
    for (const auto& o : *offsets)
        if (!o.is_number_unsigned()) return bad("data_offsets must be non-negative integers");
    auto begin = (*offsets)[0].get<std::uint64_t>();
    auto end = (*offsets)[1].get<std::uint64_t>();
    if (begin > end || end > data.size())
        return bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                   ") outside the data section of " + std::to_string(data.size()) +
                   " bytes (truncated file?)");
    auto size = dtype_size(*type);
    if (numel > std::numeric_limits<std::uint64_t>::max() / size || numel * size != end - begin)
        return bad("byte length " + std::to_string(end - begin) + " does not match shape and dtype");
    view.bytes = data.subspan(begin, end - begin);
    return view;
}

}  // namespace

std::int64_t tensor_view::numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

result<safetensors_file> safetensors_file::parse(std::span<const std::byte> image, std::string label) {
    if (image.size() < 8) return format_error(label, "file too short for a safetensors header");
    std::uint64_t header_len = 0;
    std::memcpy(&header_len, image.data(), 8);
    if (header_len > k_max_header_bytes)
        return format_error(label, "header length " + std::to_string(header_len) + " is implausible");
    if (header_len > image.size() - 8)
        return format_error(label, "header length " + std::to_string(header_len) +
                                       " exceeds the file size (truncated file?)");

    auto header_bytes = image.subspan(8, header_len);
    auto data = image.subspan(8 + header_len);
    nlohmann::json header = nlohmann::json::parse(
        reinterpret_cast<const char*>(header_bytes.data()),
        reinterpret_cast<const char*>(header_bytes.data()) + header_bytes.size(),
        nullptr, /*allow_exceptions=*/false);
    if (header.is_discarded() || !header.is_object())
        return format_error(label, "header is not a JSON object");

    safetensors_file file;
    file.path_ = std::move(label);
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object()) return format_error(file.path_, "__metadata__ is not an object");
            for (const auto& [key, value] : entry.items()) {
                if (!value.is_string())
                    return format_error(file.path_, "__metadata__['" + key + "'] is not a string");
                file.metadata_[key] = value.get<std::string>();
            }
            continue;
        }
        auto view = parse_entry(file.path_, name, entry, data);
        if (!view) return view.err();
        file.tensors_.push_back(std::move(view.value()));
    }

    std::vector<const tensor_view*> by_offset;
    for (const auto& t : file.tensors_) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(),
              [](auto* a, auto* b) { return a->bytes.data() < b->bytes.data(); });
    for (std::size_t i = 1; i < by_offset.size(); ++i) {
        const auto* prev = by_offset[i - 1];
        if (prev->bytes.data() + prev->bytes.size() > by_offset[i]->bytes.data())
            return format_error(file.path_, "tensors '" + prev->name + "' and '" +
                                                by_offset[i]->name + "' overlap");
    }
    std::sort(file.tensors_.begin(), file.tensors_.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    return file;
}

result<safetensors_file> safetensors_file::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return make_error(errno == ENOENT ? error_kind::not_found : error_kind::io,
                          path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        return make_error(error_kind::io, path + ": " + std::strerror(e));
    }
    auto map = std::make_shared<mapping>();
    map->size = static_cast<std::size_t>(st.st_size);
    if (map->size > 0) {
        void* p = ::mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            return make_error(error_kind::io, path + ": mmap: " + std::strerror(e));
        }
        map->data = static_cast<const std::byte*>(p);
        map->mapped = true;
    }
    ::close(fd);

    auto parsed = parse({map->data, map->size}, path);
    if (!parsed) return parsed.err();
    parsed->mapping_ = std::move(map);
    return parsed;
}

const tensor_view* safetensors_file::find(std::string_view name) const {
    auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                               [](const tensor_view& t, std::string_view n) { return t.name < n; });
    return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

float bf16_to_f32(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t f32_to_bf16(float value) {
    auto bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
        return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // keep NaN a quiet NaN
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(bits >> 16);
}

namespace {

float f16_to_f32(std::uint16_t h) {
    std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        // Subnormal or zero: value = mant * 2^-24.
        float v = static_cast<float>(mant) * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace

result<std::vector<float>> to_f32(const tensor_view& t) {
    std::vector<float> out(static_cast<std::size_t>(t.numel()));
    const std::byte* src = t.bytes.data();
    switch (t.type) {
    case dtype::f32:
        // An empty tensor has no bytes to copy, and memcpy must not see its null pointers.
        if (!out.empty()) std::memcpy(out.data(), src, out.size() * sizeof(float));
        return out;
    case dtype::bf16:
    case dtype::f16:
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            out[i] = t.type == dtype::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
        }
        return out;
    default:
        return make_error(error_kind::mismatch, "tensor '" + t.name + "' has dtype " +
                                                    std::string(dtype_name(t.type)) +
                                                    ", expected a floating-point type");
    }
}

}  // namespace megatts
