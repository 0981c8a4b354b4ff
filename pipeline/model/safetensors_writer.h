// safetensors_writer: writes one .safetensors file as a stream, the counterpart of
// safetensors_file. Used by make-checkpoint, whose 1.7B model (3.8 GB) must never be
// held in memory at once.
//
// Contract: create() takes every tensor's name, shape and dtype up front and writes
// the header the Hugging Face library writes: compact JSON with `__metadata__`
// {"format": "pt", plus the caller's string entries} first, then the tensors in the
// given order with contiguous data_offsets, padded with spaces to a multiple of 8
// bytes so the data section starts 8-byte aligned. The caller then append()s the
// raw little-endian bytes of the tensors, in that order, in pieces of any size, and
// calls finish(). The file is built under `path + ".partial"` and renamed to `path`
// by finish(), so `path` never holds a truncated file: after an error, or when the
// writer is destroyed unfinished, the partial file is removed and an older file at
// `path` stays untouched. Every error (disk full, bad directory, too many or too few
// bytes, duplicate names) names the path. Blocking I/O on the calling thread; one
// thread at a time. Movable, not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/model/tensor_names.h"

namespace megatts {

class safetensors_writer {
public:
    // `metadata` may not contain "format", which is always "pt".
    static result<safetensors_writer> create(const std::string& path, const std::vector<tensor_spec>& tensors,
                                             const std::map<std::string, std::string>& metadata = {});

    safetensors_writer(safetensors_writer&& other) noexcept;
    safetensors_writer& operator=(safetensors_writer&& other) noexcept;
    safetensors_writer(const safetensors_writer&) = delete;
    safetensors_writer& operator=(const safetensors_writer&) = delete;
    ~safetensors_writer();

    // Appends the next bytes of the data section.
    result<void> append(std::span<const std::byte> bytes);

    // Checks that every declared byte arrived, closes the file and moves it to `path`.
    result<void> finish();

    const std::string& path() const { return path_; }

private:
    safetensors_writer() = default;

    error fail(error_kind kind, const std::string& what);  // removes the partial file
    void discard();

    std::string path_;
    std::string partial_path_;
    int fd_ = -1;
    std::uint64_t data_bytes_ = 0;  // declared by the header
    std::uint64_t written_ = 0;     // data bytes appended so far
};

}  // namespace megatts
