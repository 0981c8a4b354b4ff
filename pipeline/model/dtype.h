// dtype: the element types a safetensors file may hold, their names and sizes.
//
// Contract: pure functions, no state; parse_dtype returns nullopt for a name that
// is not one of the safetensors dtype strings megatts accepts.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace megatts {

enum class dtype { bf16, f16, f32, f64, i8, i16, i32, i64, u8, boolean };

std::optional<dtype> parse_dtype(std::string_view name);
std::string_view dtype_name(dtype t);
std::size_t dtype_size(dtype t);

}  // namespace megatts
