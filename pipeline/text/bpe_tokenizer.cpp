#include "pipeline/text/bpe_tokenizer.h"

#include <charconv>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "pipeline/text/nfc.h"
#include "pipeline/text/tokenizer_files.h"
#include "pipeline/text/utf8.h"

namespace megatts {
namespace {

// The added tokens of tokenizer_config.json. Only the plain verbatim match is implemented,
// which is what every Qwen3-TTS token asks for; a file that asks for more is refused rather
// than tokenized differently from Hugging Face.
result<added_token_set> read_added_tokens(const std::filesystem::path& path,
                                          std::int32_t vocab_size) {
    auto config = read_tokenizer_json(path);
    if (!config) return config.err();
    const std::string name = path.string();
    if (!config->is_object()) {
        return make_error(error_kind::invalid_input, name + ": expected a JSON object");
    }
    const auto tokenizer_class = config->find("tokenizer_class");
    if (tokenizer_class != config->end() &&
        (!tokenizer_class->is_string() || (*tokenizer_class != "Qwen2Tokenizer" &&
                                           *tokenizer_class != "Qwen2TokenizerFast"))) {
        return make_error(error_kind::mismatch, name + ": tokenizer_class is " +
                                                    tokenizer_class->dump() +
                                                    ", not Qwen2Tokenizer");
    }
    const auto decoder = config->find("added_tokens_decoder");
    if (decoder == config->end() || !decoder->is_object()) {
        return make_error(error_kind::invalid_input, name + ": no added_tokens_decoder object");
    }

    std::vector<std::pair<std::string, std::int32_t>> tokens;
    for (const auto& [key, token] : decoder->items()) {
        std::int32_t id = -1;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
        if (ec != std::errc{} || end != key.data() + key.size() || id < 0) {
            return make_error(error_kind::invalid_input,
                              name + ": added_tokens_decoder key '" + key + "' is not an id");
        }
        const auto content = token.find("content");
        if (content == token.end() || !content->is_string()) {
            return make_error(error_kind::invalid_input,
                              name + ": added token " + key + " has no string content");
        }
        for (const char* option : {"lstrip", "rstrip", "single_word", "normalized"}) {
            const auto value = token.find(option);
            if (value != token.end() && *value != false) {
                return make_error(error_kind::invalid_input,
                                  name + ": added token " + content->dump() + " sets " + option +
                                      ", which is not supported");
            }
        }
        if (id < vocab_size) {
            return make_error(error_kind::mismatch,
                              name + ": added token " + content->dump() + " has id " + key +
                                  ", which vocab.json already gives to another token");
        }
        tokens.emplace_back(content->get<std::string>(), id);
    }
    auto added = added_token_set::create(std::move(tokens));
    if (!added) return make_error(added.err().kind, name + ": " + added.err().message);
    return added;
}

}  // namespace

bpe_tokenizer::bpe_tokenizer(byte_level_bpe model, added_token_set added_tokens,
                             pre_tokenizer splitter)
    : model_(std::move(model)),
      added_tokens_(std::move(added_tokens)),
      splitter_(std::move(splitter)) {}

result<bpe_tokenizer> bpe_tokenizer::load(const std::string& dir) {
    const std::filesystem::path root(dir);
    auto model = byte_level_bpe::load(root / "vocab.json", root / "merges.txt");
    if (!model) return model.err();
    auto added = read_added_tokens(root / "tokenizer_config.json", model->size());
    if (!added) return added.err();
    auto splitter = pre_tokenizer::create();
    if (!splitter) return splitter.err();
    return bpe_tokenizer(std::move(*model), std::move(*added), std::move(*splitter));
}

result<std::vector<std::int32_t>> bpe_tokenizer::encode(std::string_view text) const {
    const std::size_t valid = utf8_valid_prefix_length(text);
    if (valid != text.size()) {
        return make_error(error_kind::invalid_input,
                          "text is not valid UTF-8 at byte " + std::to_string(valid));
    }
    std::vector<std::int32_t> ids;
    std::size_t at = 0;
    while (const auto match = added_tokens_.find(text, at)) {
        MEGATTS_TRY(encode_segment(text.substr(at, match->begin - at), ids));
        ids.push_back(match->id);
        at = match->begin + match->length;
    }
    MEGATTS_TRY(encode_segment(text.substr(at), ids));
    return ids;
}

result<void> bpe_tokenizer::encode_segment(std::string_view segment,
                                           std::vector<std::int32_t>& out) const {
    std::string normalized;
    MEGATTS_TRY(append_nfc(segment, normalized));
    auto pieces = splitter_.split(normalized, /*more_may_follow=*/false);
    if (!pieces) return pieces.err();
    for (const std::string_view piece : *pieces) model_.encode(piece, out);
    return {};
}

result<std::string> bpe_tokenizer::decode(std::span<const std::int32_t> ids) const {
    std::string bytes;
    for (const std::int32_t id : ids) {
        if (const auto content = added_tokens_.content(id)) {
            bytes.append(*content);
        } else if (const auto token = model_.token_bytes(id)) {
            bytes.append(*token);
        } else {
            return make_error(error_kind::invalid_input,
                              "token id " + std::to_string(id) +
                                  " is neither in vocab.json nor an added token");
        }
    }
    return utf8_replace_invalid(bytes);
}

result<std::int32_t> bpe_tokenizer::token_id(std::string_view added_token) const {
    if (const auto id = added_tokens_.id(added_token)) return *id;
    return make_error(error_kind::not_found,
                      "tokenizer has no added token '" + std::string(added_token) + "'");
}

}  // namespace megatts
