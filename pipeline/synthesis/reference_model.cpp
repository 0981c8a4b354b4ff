#include "pipeline/synthesis/reference_model.h"

#include "pipeline/model/reference_loader.h"
#include "pipeline/model/vocoder_loader.h"

namespace megatts {

result<reference_model> reference_model::load(const std::string& dir, bool with_reference_weights) {
    auto c = checkpoint::open(dir);
    if (!c) return c.err();
    auto tokenizer = bpe_tokenizer::load(dir);
    if (!tokenizer) return tokenizer.err();
    auto vocoder = load_vocoder_weights(*c);
    if (!vocoder) return vocoder.err();
    ref::talker_weights talker;
    ref::code_predictor_weights cp;
    if (with_reference_weights) {
        talker = load_talker_weights(*c);
        cp = load_code_predictor_weights(*c);
    }
    return reference_model{std::move(c.value()), std::move(tokenizer.value()), std::move(talker), std::move(cp),
                           std::move(vocoder.value())};
}

}  // namespace megatts
