#include "pipeline/model/model_config.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "pipeline/model/json_file.h"

namespace megatts {
namespace {

// Upper bounds far above every published Qwen3-TTS config (the largest size is the text
// vocabulary, 151936; at most 28 layers and 16 codebooks). They keep a broken or hostile
// config.json from making the loader list billions of tensors, or from overflowing the sizes
// derived from it (heads * head_dim, the vocoder's samples per frame).
constexpr std::int64_t max_size = std::int64_t{1} << 20;  // a vocabulary, a width, a length
constexpr std::int64_t max_repeats = 1024;               // layers, codebooks, quantizers

// Reads many keys of one file and keeps the first error, so the parsing code reads
// as a list of fields rather than a ladder of early returns.
class field_reader {
public:
    explicit field_reader(const json_file& file) : file_(file) {}

    // An int; a value beyond 32 bits is an error, not silently cut to one.
    int integer(std::string_view key) {
        const auto v = take(file_.get_int(key), std::int64_t{0});
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
            fail(key, "does not fit in 32 bits");
            return 0;
        }
        return static_cast<int>(v);
    }
    float number(std::string_view key) { return static_cast<float>(take(file_.get_number(key), 0.0)); }
    bool boolean(std::string_view key) { return take(file_.get_bool(key), false); }
    std::string string(std::string_view key) { return take(file_.get_string(key), std::string{}); }

    // Sizes and counts are positive and bounded; a zero or negative size is a broken config.
    int positive(std::string_view key, std::int64_t max = max_size) {
        const int v = integer(key);
        if (v <= 0 || v > max) fail(key, "must be an integer in 1.." + std::to_string(max));
        return v;
    }

    void fail(error e) {
        if (!first_) first_ = std::move(e);
    }
    void fail(std::string_view key, std::string_view what) { fail(file_.key_error(key, what)); }
    const std::optional<error>& first_error() const { return first_; }

private:
    template <class T, class D>
    T take(result<T> r, D fallback) {
        if (r) return std::move(r).value();
        fail(r.err());
        return fallback;
    }

    const json_file& file_;
    std::optional<error> first_;
};

transformer_dims read_transformer(field_reader& r, const std::string& p) {
    transformer_dims d;
    d.layers = r.positive(p + "num_hidden_layers", max_repeats);
    d.hidden = r.positive(p + "hidden_size");
    d.intermediate = r.positive(p + "intermediate_size");
    d.heads = r.positive(p + "num_attention_heads");
    d.kv_heads = r.positive(p + "num_key_value_heads");
    d.head_dim = r.positive(p + "head_dim");
    d.rms_eps = r.number(p + "rms_norm_eps");
    d.rope_theta = r.number(p + "rope_theta");
    if (d.kv_heads > 0 && d.heads % d.kv_heads != 0)
        r.fail(p + "num_attention_heads", "must be a multiple of num_key_value_heads");
    if (d.head_dim % 2 != 0) r.fail(p + "head_dim", "must be even (RoPE pairs)");
    if (std::int64_t{d.heads} * d.head_dim > max_size)
        r.fail(p + "num_attention_heads", "times head_dim must be at most " + std::to_string(max_size));
    return d;
}

std::map<std::string, std::int32_t> read_id_map(field_reader& r, const json_file& f, std::string_view key) {
    std::map<std::string, std::int32_t> out;
    const auto* node = f.find(key);
    if (!node || node->is_null()) return out;  // Base and VoiceDesign have no speakers
    if (!node->is_object()) {
        r.fail(f.key_error(key, "must be an object"));
        return out;
    }
    for (const auto& [name, id] : node->items()) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
            id.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
            r.fail(f.key_error(std::string(key) + "." + name, "must be an integer id"));
            continue;
        }
        out[name] = static_cast<std::int32_t>(id.get<std::int64_t>());
    }
    return out;
}

result<void> read_main_config(const json_file& f, model_config& c) {
    field_reader r(f);
    auto type = r.string("tts_model_type");
    if (type == "custom_voice") c.kind = model_kind::custom_voice;
    else if (type == "base") c.kind = model_kind::base;
    else if (type == "voice_design") c.kind = model_kind::voice_design;
    else if (!type.empty()) r.fail(f.key_error("tts_model_type", "is '" + type + "', not a known model type"));
    c.size_tag = r.string("tts_model_size");

    c.text_ids.im_start = r.integer("im_start_token_id");
    c.text_ids.im_end = r.integer("im_end_token_id");
    c.text_ids.assistant = r.integer("assistant_token_id");
    c.text_ids.tts_pad = r.integer("tts_pad_token_id");
    c.text_ids.tts_bos = r.integer("tts_bos_token_id");
    c.text_ids.tts_eos = r.integer("tts_eos_token_id");

    const std::string t = "talker_config.";
    c.talker.body = read_transformer(r, t);
    c.talker.text_vocab = r.positive(t + "text_vocab_size");
    c.talker.text_hidden = r.positive(t + "text_hidden_size");
    c.talker.codec_vocab = r.positive(t + "vocab_size");
    c.talker.num_code_groups = r.positive(t + "num_code_groups", max_repeats);
    c.max_positions = r.positive(t + "max_position_embeddings");

    c.codec_ids.pad = r.integer(t + "codec_pad_id");
    c.codec_ids.bos = r.integer(t + "codec_bos_id");
    c.codec_ids.eos = r.integer(t + "codec_eos_token_id");
    c.codec_ids.think = r.integer(t + "codec_think_id");
    c.codec_ids.nothink = r.integer(t + "codec_nothink_id");
    c.codec_ids.think_bos = r.integer(t + "codec_think_bos_id");
    c.codec_ids.think_eos = r.integer(t + "codec_think_eos_id");

    c.languages = read_id_map(r, f, t + "codec_language_id");
    c.speakers = read_id_map(r, f, t + "spk_id");
    if (const auto* dialects = f.find(t + "spk_is_dialect"); dialects && dialects->is_object()) {
        for (const auto& [speaker, value] : dialects->items()) {
            if (!value.is_string()) continue;  // false: not a dialect speaker
            auto dialect = value.get<std::string>();
            if (!c.languages.contains(dialect))
                r.fail(f.key_error(t + "spk_is_dialect." + speaker,
                                   "names dialect '" + dialect + "', which codec_language_id lacks"));
            c.speaker_dialect[speaker] = dialect;
        }
    }

    const std::string p = t + "code_predictor_config.";
    c.code_predictor.body = read_transformer(r, p);
    c.code_predictor.vocab = r.positive(p + "vocab_size");
    c.code_predictor.num_code_groups = r.positive(p + "num_code_groups", max_repeats);
    c.code_predictor.embed_width = c.talker.body.hidden;
    c.code_predictor.has_projection = c.talker.body.hidden != c.code_predictor.body.hidden;

    if (c.code_predictor.num_code_groups != c.talker.num_code_groups)
        r.fail(f.key_error(p + "num_code_groups", "differs from talker_config.num_code_groups"));
    for (auto [name, id] : std::initializer_list<std::pair<const char*, std::int32_t>>{
             {"codec_pad_id", c.codec_ids.pad}, {"codec_bos_id", c.codec_ids.bos},
             {"codec_eos_token_id", c.codec_ids.eos}}) {
        if (id < c.code_predictor.vocab || id >= c.talker.codec_vocab)
            r.fail(f.key_error(t + name, "must be a control id in [vocab_size of the code predictor, "
                                         "talker vocab_size)"));
    }
    if (r.first_error()) return *r.first_error();
    return {};
}

result<void> read_generation_config(const json_file& f, sampling_defaults& s) {
    field_reader r(f);
    s.do_sample = r.boolean("do_sample");
    s.temperature = r.number("temperature");
    s.top_k = r.integer("top_k");
    s.top_p = r.number("top_p");
    s.repetition_penalty = r.number("repetition_penalty");
    s.sub_do_sample = r.boolean("subtalker_dosample");
    s.sub_temperature = r.number("subtalker_temperature");
    s.sub_top_k = r.integer("subtalker_top_k");
    s.sub_top_p = r.number("subtalker_top_p");
    s.max_new_tokens = r.positive("max_new_tokens");
    if (r.first_error()) return *r.first_error();
    return {};
}

result<void> read_vocoder_config(const json_file& f, vocoder_dims& v) {
    field_reader r(f);
    const std::string d = "decoder_config.";
    v.num_quantizers = r.positive(d + "num_quantizers", max_repeats);
    v.codebook_size = r.positive(d + "codebook_size");
    v.codebook_dim = r.positive(d + "codebook_dim");
    v.latent_dim = r.positive(d + "latent_dim");
    v.decoder_dim = r.positive(d + "decoder_dim");
    v.transformer = read_transformer(r, d);
    v.sliding_window = r.positive(d + "sliding_window");
    v.layer_scale_init = r.number(d + "layer_scale_initial_scale");
    v.output_sample_rate = r.positive("output_sample_rate");

    auto read_ints = [&](const std::string& key, std::span<int> out) {
        auto arr = f.get_array(key);
        if (!arr) return r.fail(arr.err());
        if ((*arr)->size() != out.size())
            return r.fail(f.key_error(key, "must have " + std::to_string(out.size()) + " entries"));
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto& x = (**arr)[i];
            if (!x.is_number_integer() || x.get<std::int64_t>() <= 0 || x.get<std::int64_t>() > max_size)
                return r.fail(f.key_error(key, "entries must be integers in 1.." + std::to_string(max_size)));
            out[i] = static_cast<int>(x.get<std::int64_t>());
        }
    };
    read_ints(d + "upsample_rates", v.upsample_rates);
    read_ints(d + "upsampling_ratios", v.upsampling_ratios);
    if (v.codebook_dim % 2 != 0)
        r.fail(f.key_error(d + "codebook_dim", "must be even (split into two RVQ halves)"));
    if (v.decoder_dim % 16 != 0)
        r.fail(f.key_error(d + "decoder_dim", "must be a multiple of 16 (halved by each of 4 blocks)"));
    if (r.first_error()) return *r.first_error();
    std::int64_t samples = 1;  // samples_per_frame(), without its int overflow
    for (const int n : v.upsampling_ratios) samples = std::min(samples * n, max_size + 1);
    for (const int n : v.upsample_rates) samples = std::min(samples * n, max_size + 1);
    if (samples > max_size)
        return f.key_error(d + "upsample_rates", "make more than " + std::to_string(max_size) + " samples per frame");
    auto upsample = r.positive("decode_upsample_rate");
    if (!r.first_error() && upsample != v.samples_per_frame())
        return f.key_error("decode_upsample_rate",
                           "is " + std::to_string(upsample) + " but the upsampling stages give " +
                               std::to_string(v.samples_per_frame()));
    if (r.first_error()) return *r.first_error();
    return {};
}

}  // namespace

std::string_view model_kind_name(model_kind kind) {
    switch (kind) {
    case model_kind::custom_voice: return "custom_voice";
    case model_kind::base: return "base";
    case model_kind::voice_design: return "voice_design";
    }
    return "unknown";
}

result<model_config> model_config::load(const std::string& model_dir) {
    auto main = json_file::read(model_dir + "/config.json");
    if (!main) return main.err();
    auto generation = json_file::read(model_dir + "/generation_config.json");
    if (!generation) return generation.err();
    auto vocoder = json_file::read(model_dir + "/speech_tokenizer/config.json");
    if (!vocoder) return vocoder.err();
    return parse(*main, *generation, *vocoder);
}

result<model_config> model_config::parse(const json_file& config, const json_file& generation_config,
                                         const json_file& vocoder_config) {
    model_config c;
    MEGATTS_TRY(read_main_config(config, c));
    MEGATTS_TRY(read_generation_config(generation_config, c.sampling));
    MEGATTS_TRY(read_vocoder_config(vocoder_config, c.vocoder));
    return c;
}

}  // namespace megatts
