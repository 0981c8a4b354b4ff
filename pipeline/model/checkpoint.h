// checkpoint: a Hugging Face checkpoint directory, opened and fully validated.
//
// Contract: open(dir) reads config.json, generation_config.json,
// speech_tokenizer/config.json, maps model.safetensors and
// speech_tokenizer/model.safetensors, and checks every tensor of the tensor-name
// table: present, with the shape the config implies and the expected dtype; a
// tensor the table does not know (outside the documented ignored prefixes) is an
// error too. Each error names the file and the tensor. After open() succeeds,
// tensor() and vocoder_tensor() cannot fail for names from tensor_names.h.
// Read-only afterwards: safe to share between threads. Movable, not copyable.
#pragma once

#include <string>
#include <string_view>

#include "kernels/common/result.h"
#include "pipeline/model/model_config.h"
#include "pipeline/model/safetensors.h"

namespace megatts {

class checkpoint {
public:
    static result<checkpoint> open(const std::string& dir);

    const std::string& dir() const { return dir_; }
    const model_config& config() const { return config_; }
    const safetensors_file& model_file() const { return model_; }
    const safetensors_file& vocoder_file() const { return vocoder_; }

    // Views of validated tensors; the name must come from the tensor-name table.
    const tensor_view& tensor(std::string_view name) const;
    const tensor_view& vocoder_tensor(std::string_view name) const;

private:
    std::string dir_;
    model_config config_;
    safetensors_file model_;
    safetensors_file vocoder_;
};

}  // namespace megatts
