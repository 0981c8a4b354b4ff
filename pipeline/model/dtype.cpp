#include "pipeline/model/dtype.h"

#include <array>

namespace megatts {
namespace {

struct dtype_info {
    dtype type;
    std::string_view name;  // as spelled in safetensors headers
    std::size_t size;
};

constexpr std::array<dtype_info, 10> k_dtypes{{
    {dtype::bf16, "BF16", 2},
    {dtype::f16, "F16", 2},
    {dtype::f32, "F32", 4},
    {dtype::f64, "F64", 8},
    {dtype::i8, "I8", 1},
    {dtype::i16, "I16", 2},
    {dtype::i32, "I32", 4},
    {dtype::i64, "I64", 8},
    {dtype::u8, "U8", 1},
    {dtype::boolean, "BOOL", 1},
}};

}  // namespace

std::optional<dtype> parse_dtype(std::string_view name) {
    for (const auto& d : k_dtypes)
        if (d.name == name) return d.type;
    return std::nullopt;
}

std::string_view dtype_name(dtype t) { return k_dtypes[static_cast<std::size_t>(t)].name; }

std::size_t dtype_size(dtype t) { return k_dtypes[static_cast<std::size_t>(t)].size; }

}  // namespace megatts
