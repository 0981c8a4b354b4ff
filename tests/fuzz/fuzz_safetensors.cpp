// Fuzz target: bytes as a .safetensors file (8-byte header length, JSON header, data) through
// safetensors_file::parse, the check every checkpoint file passes before its tensors are used.
// Properties: never crashes; a failure is invalid_input; every tensor of an accepted file lies
// inside the file, has as many bytes as its shape and dtype say, is found by its name, and
// converts to float32 when it is a floating-point tensor (reading every byte of it).
#include <cstddef>
#include <cstdint>
#include <span>

#include "pipeline/model/safetensors.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data), size);
    auto file = safetensors_file::parse(image, "fuzz.safetensors");
    if (!file) {
        FUZZ_CHECK(file.err().kind == error_kind::invalid_input, "a bad file fails as invalid_input");
        return 0;
    }
    for (const auto& tensor : file->tensors()) {
        FUZZ_CHECK(tensor.bytes.empty() || (tensor.bytes.data() >= image.data() &&
                                            tensor.bytes.data() + tensor.bytes.size() <= image.data() + image.size()),
                   "a tensor lies inside the file");
        FUZZ_CHECK(tensor.numel() >= 0, "a tensor has a non-negative element count");
        FUZZ_CHECK(static_cast<std::uint64_t>(tensor.numel()) * dtype_size(tensor.type) == tensor.bytes.size(),
                   "a tensor has the bytes its shape and dtype say");
        FUZZ_CHECK(file->find(tensor.name) == &tensor, "a tensor is found by its name");
        if (tensor.type == dtype::f32 || tensor.type == dtype::f16 || tensor.type == dtype::bf16) {
            const auto values = to_f32(tensor);
            FUZZ_CHECK(values.ok() && static_cast<std::int64_t>(values->size()) == tensor.numel(),
                       "a floating-point tensor converts to float32");
        }
    }
    return 0;
}
