// safetensors_file: a memory-mapped, validated view of one .safetensors file.
//
// Contract: open() maps the file read-only and validates the whole header before
// returning: JSON well-formed, every entry has a known dtype, a shape of
// non-negative dims whose non-zero ones multiply to at most 2^63 - 1 (so numel()
// never overflows), and data_offsets [begin, end) inside the data section whose
// length equals numel * dtype size, no two tensors overlap. Tensor views point
// into the mapping and stay valid as long as the safetensors_file (movable, not
// copyable) lives. Read-only after open(): safe to share between threads.
// Errors name the file and, where it applies, the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/model/dtype.h"

namespace megatts {

struct tensor_view {
    std::string name;
    dtype type = dtype::f32;
    std::vector<std::int64_t> shape;
    std::span<const std::byte> bytes;

    std::int64_t numel() const;
};

class safetensors_file {
public:
    static result<safetensors_file> open(const std::string& path);

    // Parses an in-memory image (header + data); the caller keeps `image` alive.
    // Used by open() and by the fuzz and unit tests.
    static result<safetensors_file> parse(std::span<const std::byte> image, std::string label);

    const std::string& path() const { return path_; }
    const tensor_view* find(std::string_view name) const;
    const std::vector<tensor_view>& tensors() const { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

private:
    struct mapping;  // owns the mmap; shared so views survive moves of this object

    std::string path_;
    std::shared_ptr<const mapping> mapping_;
    std::vector<tensor_view> tensors_;  // sorted by name
    std::map<std::string, std::string> metadata_;
};

// Converts a floating-point tensor (BF16, F16, F32) to float32, element order kept.
result<std::vector<float>> to_f32(const tensor_view& t);

// bf16 <-> float32 (round to nearest even; NaN stays NaN).
float bf16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16(float value);

}  // namespace megatts
