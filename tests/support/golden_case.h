// golden_case: one case file of the oracle data (tests/fixtures/<ckpt>/cases/*.safetensors):
// typed access to its tensors and metadata; a missing tensor fails the test.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pipeline/model/safetensors.h"

namespace megatts::test {

inline std::string fixture(const std::string& relative) { return std::string(MEGATTS_FIXTURE_DIR) + "/" + relative; }

class golden_case {
public:
    golden_case(std::string checkpoint_name, std::string case_name)
        : checkpoint_(std::move(checkpoint_name)), name_(std::move(case_name)) {
        auto f = safetensors_file::open(fixture(checkpoint_ + "/cases/" + name_ + ".safetensors"));
        INFO((f ? "" : f.err().message));
        REQUIRE(f.ok());
        file_ = std::move(f.value());
    }

    const std::string& name() const { return name_; }
    std::string checkpoint_dir() const { return fixture(checkpoint_); }

    const tensor_view& view(const std::string& tensor) const {
        const auto* t = file_.find(tensor);
        INFO(name_ << ": tensor " << tensor);
        REQUIRE(t != nullptr);
        return *t;
    }
    std::vector<float> floats(const std::string& tensor) const { return *to_f32(view(tensor)); }
    std::vector<std::int32_t> ints(const std::string& tensor) const {
        const auto& t = view(tensor);
        REQUIRE(t.type == dtype::i32);
        std::vector<std::int32_t> out(static_cast<std::size_t>(t.numel()));
        std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
        return out;
    }
    std::string meta(const std::string& key) const {
        auto it = file_.metadata().find(key);
        REQUIRE(it != file_.metadata().end());
        return it->second;
    }

private:
    std::string checkpoint_, name_;
    safetensors_file file_;
};

// The eight golden cases: {checkpoint, case}.
inline const std::vector<std::pair<std::string, std::string>>& all_golden_cases() {
    static const std::vector<std::pair<std::string, std::string>> cases{
        {"tiny-cv06", "cv06_en_ryan_english"},
        {"tiny-cv06", "cv06_zh_vivian_chinese"},
        {"tiny-cv06", "cv06_en_serena_auto_streaming"},
        {"tiny-cv06", "cv06_zh_dylan_auto_dialect"},
        {"tiny-cv17", "cv17_en_aiden_english"},
        {"tiny-cv17", "cv17_zh_uncle_fu_auto"},
        {"tiny-cv17", "cv17_ja_ono_anna_japanese_streaming"},
        {"tiny-cv17", "cv17_zh_eric_chinese_dialect"},
    };
    return cases;
}

}  // namespace megatts::test
