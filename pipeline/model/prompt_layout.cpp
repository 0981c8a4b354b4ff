#include "pipeline/model/prompt_layout.h"

#include <string>

namespace megatts {
namespace {

// The template's fixed ids: 3 role ids before the text, 5 after it.
constexpr std::size_t k_role_ids = 3;
constexpr std::size_t k_tail_ids = 5;

result<void> check_template(const model_config& c, std::span<const std::int32_t> ids) {
    const auto& t = c.text_ids;
    auto bad = [] { return make_error(error_kind::invalid_input, "prompt: template ids are not "
                                      "<|im_start|>assistant\\n{text}<|im_end|>\\n<|im_start|>assistant\\n"); };
    if (ids.size() < k_role_ids + k_tail_ids) return bad();
    if (ids[0] != t.im_start || ids[1] != t.assistant) return bad();
    auto tail = ids.subspan(ids.size() - k_tail_ids);
    if (tail[0] != t.im_end || tail[2] != t.im_start || tail[3] != t.assistant) return bad();
    if (ids.size() == k_role_ids + k_tail_ids)
        return make_error(error_kind::invalid_input, "prompt: the text is empty");
    return {};
}

result<std::vector<std::int32_t>> codec_prefix(const model_config& c, std::string_view speaker,
                                               std::string_view language) {
    auto spk = c.speakers.find(std::string(speaker));
    if (spk == c.speakers.end()) {
        std::string known;
        for (const auto& [name, id] : c.speakers) known += (known.empty() ? "" : ", ") + name;
        return make_error(error_kind::not_found, "unknown voice '" + std::string(speaker) + "'" +
                                                     (known.empty() ? " (this model has no built-in voices)"
                                                                    : " (known: " + known + ")"));
    }
    std::string lang(language);
    if (lang != "auto" && !c.languages.contains(lang)) {
        std::string known = "auto";
        for (const auto& [name, id] : c.languages) known += ", " + name;
        return make_error(error_kind::not_found, "unknown language '" + lang + "' (known: " + known + ")");
    }
    // A dialect speaker speaks its dialect whenever Chinese (or auto) is asked for.
    if (auto d = c.speaker_dialect.find(spk->first);
        d != c.speaker_dialect.end() && (lang == "auto" || lang == "chinese"))
        lang = d->second;

    const auto& ids = c.codec_ids;
    if (lang == "auto") return std::vector<std::int32_t>{ids.nothink, ids.think_bos, ids.think_eos, spk->second};
    return std::vector<std::int32_t>{ids.think, ids.think_bos, c.languages.at(lang), ids.think_eos, spk->second};
}

}  // namespace

result<prompt_plan> build_prompt(const model_config& c, std::span<const std::int32_t> template_ids,
                                 std::string_view speaker, std::string_view language, text_layout layout) {
    MEGATTS_TRY(check_template(c, template_ids));
    auto prefix = codec_prefix(c, speaker, language);
    if (!prefix) return prefix.err();

    const auto& t = c.text_ids;
    const auto& codec = c.codec_ids;
    prompt_plan p;
    p.codec_prefix = std::move(prefix.value());
    p.text_ids.assign(template_ids.begin() + k_role_ids, template_ids.end() - k_tail_ids);
    p.pad_text_id = t.tts_pad;

    for (std::size_t i = 0; i < k_role_ids; ++i) p.rows.push_back({template_ids[i], prompt_row::none});
    for (auto id : p.codec_prefix) p.rows.push_back({t.tts_pad, id});
    p.rows.push_back({t.tts_bos, codec.pad});
    if (layout == text_layout::non_streaming) {
        for (auto id : p.text_ids) p.rows.push_back({id, codec.pad});
        p.rows.push_back({t.tts_eos, codec.pad});
        p.rows.push_back({t.tts_pad, codec.bos});
    } else {
        p.rows.push_back({p.text_ids.front(), codec.bos});
        p.trailing_text.assign(p.text_ids.begin() + 1, p.text_ids.end());
        p.trailing_text.push_back(t.tts_eos);
    }
    return p;
}

}  // namespace megatts
