#include "pipeline/model/checkpoint.h"

#include <cstdlib>
#include <set>

#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace {

std::string shape_string(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Checks a safetensors file against the table: every spec present with its shape and
// dtype, nothing unknown outside `ignored_prefix`.
result<void> check_against(const safetensors_file& file, const std::vector<tensor_spec>& specs,
                           std::string_view ignored_prefix) {
    std::set<std::string_view> expected;
    for (const auto& spec : specs) {
        expected.insert(spec.name);
        const auto* t = file.find(spec.name);
        if (!t) return make_error(error_kind::mismatch, file.path() + ": missing tensor '" + spec.name + "'");
        if (t->shape != spec.shape)
            return make_error(error_kind::mismatch,
                              file.path() + ": tensor '" + spec.name + "' has shape " + shape_string(t->shape) +
                                  " but config.json implies " + shape_string(spec.shape));
        if (t->type != spec.type)
            return make_error(error_kind::mismatch,
                              file.path() + ": tensor '" + spec.name + "' has dtype " +
                                  std::string(dtype_name(t->type)) + ", expected " +
                                  std::string(dtype_name(spec.type)));
    }
    for (const auto& t : file.tensors()) {
        if (!expected.contains(t.name) && !t.name.starts_with(ignored_prefix))
            return make_error(error_kind::mismatch,
                              file.path() + ": unexpected tensor '" + t.name +
                                  "' (not part of this model according to config.json)");
    }
    return {};
}

}  // namespace

result<checkpoint> checkpoint::open(const std::string& dir) {
    checkpoint c;
    c.dir_ = dir;
    auto config = model_config::load(dir);
    if (!config) return config.err();
    c.config_ = std::move(config.value());

    auto model = safetensors_file::open(dir + "/model.safetensors");
    if (!model) return model.err();
    c.model_ = std::move(model.value());
    MEGATTS_TRY(check_against(c.model_, model_tensor_specs(c.config_), tensor_names::ignored_model_prefix));

    auto vocoder = safetensors_file::open(dir + "/speech_tokenizer/model.safetensors");
    if (!vocoder) return vocoder.err();
    c.vocoder_ = std::move(vocoder.value());
    MEGATTS_TRY(check_against(c.vocoder_, vocoder_tensor_specs(c.config_),
                              tensor_names::ignored_vocoder_prefix));
    return c;
}

const tensor_view& checkpoint::tensor(std::string_view name) const {
    const auto* t = model_.find(name);
    if (!t) std::abort();  // open() validated the table; a miss is a name outside it (a bug)
    return *t;
}

const tensor_view& checkpoint::vocoder_tensor(std::string_view name) const {
    const auto* t = vocoder_.find(name);
    if (!t) std::abort();  // as above
    return *t;
}

}  // namespace megatts
