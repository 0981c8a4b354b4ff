#include "pipeline/model/random_checkpoint.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <numbers>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/model/safetensors.h"
#include "pipeline/model/safetensors_writer.h"
#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

// ---- Files ---------------------------------------------------------------------

const char* published_model(checkpoint_shape shape) {
    return shape == checkpoint_shape::cv_1b7 ? "Qwen3-TTS-12Hz-1.7B-CustomVoice" : "Qwen3-TTS-12Hz-0.6B-CustomVoice";
}

result<std::string> read_text(const fs::path& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        const int e = errno;
        return make_error(e == ENOENT ? error_kind::not_found : error_kind::io, path.string() + ": " + std::strerror(e));
    }
    std::string text;
    std::array<char, 1 << 16> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) text.append(buf.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return make_error(error_kind::io, path.string() + ": read error");
    return text;
}

result<void> write_text(const fs::path& path, std::string_view text) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        const int e = errno;
        return make_error(error_kind::io, path.string() + ": " + std::strerror(e));
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int write_errno = errno;
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed)
        return make_error(error_kind::io, path.string() + ": " + std::strerror(written ? errno : write_errno));
    return {};
}

result<void> copy_published(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::copy_file(from, to, ec);
    if (ec)
        return make_error(ec == std::errc::no_such_file_or_directory ? error_kind::not_found : error_kind::io,
                          "copying " + from.string() + " to " + to.string() + ": " + ec.message());
    return {};
}

// Runs `body` with `dir` empty (created if absent, with speech_tokenizer/ inside).
// When it fails, everything in `dir` is ours, and is removed again.
template <class T, class F>
result<T> in_empty_dir(const fs::path& dir, F body) {
    std::error_code ec;
    const bool existed = fs::exists(dir, ec);
    if (!ec && existed && !fs::is_directory(dir, ec))
        return make_error(error_kind::invalid_input, dir.string() + ": exists and is not a directory");
    if (!ec && existed && !fs::is_empty(dir, ec))
        return make_error(error_kind::invalid_input,
                          dir.string() + ": is not empty; a checkpoint is only written into a new or empty "
                                         "directory, so real weights are never overwritten");
    if (!ec) fs::create_directories(dir / "speech_tokenizer", ec);
    if (ec) return make_error(error_kind::io, dir.string() + ": " + ec.message());

    result<T> r = body();
    if (!r.ok()) {
        if (existed) {
            for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
                std::error_code ignored;  // best effort: the error to report is r's
                fs::remove_all(it->path(), ignored);
            }
        } else {
            fs::remove_all(dir, ec);
        }
    }
    return r;
}

// ---- Configs -------------------------------------------------------------------

struct config_edit {
    std::string pointer;  // JSON pointer into the published config
    ordered_json value;
};

// The tiny shape: the dimensions of the golden tiny-cv06 checkpoint (tests/fixtures),
// every id, speaker and language kept, so the real tokenizer and prompts work.
// Talker and code predictor stacks alike:
constexpr std::pair<const char*, int> k_tiny_stack[] = {
    {"hidden_size", 32}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
    {"num_key_value_heads", 2}, {"head_dim", 16}, {"intermediate_size", 96},
};

std::vector<config_edit> tiny_model_edits() {
    std::vector<config_edit> edits;
    for (std::string stack : {"/talker_config/", "/talker_config/code_predictor_config/"})
        for (const auto& [key, value] : k_tiny_stack) edits.push_back({stack + key, value});
    edits.push_back({"/talker_config/text_hidden_size", 16});
    edits.push_back({"/talker_config/rope_scaling/mrope_section", {4, 2, 2}});  // sums to head_dim / 2
    edits.push_back({"/talker_config/code_predictor_config/layer_types", {"full_attention", "full_attention"}});
    return edits;
}

// tiny-cv06's decoder, except sliding_window, which stays at the published 72:
// tiny-cv06 shrinks it to 4 so that its 24-frame goldens exercise the window (those
// fixtures keep covering that), while this checkpoint stands in for the real model in
// daemon tests and the demo, where the streaming vocoder's left context, sized from
// the window, should behave as in production.
constexpr std::pair<const char*, int> k_tiny_decoder[] = {
    {"latent_dim", 64}, {"codebook_dim", 32}, {"decoder_dim", 32}, {"hidden_size", 32},
    {"intermediate_size", 64}, {"head_dim", 16}, {"num_attention_heads", 4}, {"num_hidden_layers", 2},
    {"num_key_value_heads", 4}, {"vector_quantization_hidden_dimension", 32},
};

std::vector<config_edit> tiny_vocoder_edits() {
    std::vector<config_edit> edits;
    for (const auto& [key, value] : k_tiny_decoder) edits.push_back({std::string("/decoder_config/") + key, value});
    return edits;
}

result<std::string> apply_edits(const std::string& text, const std::vector<config_edit>& edits,
                                const fs::path& source) {
    auto config = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded() || !config.is_object())
        return make_error(error_kind::invalid_input, source.string() + ": not a JSON object");
    for (const auto& e : edits) {
        const ordered_json::json_pointer key(e.pointer);
        if (!config.contains(key))
            return make_error(error_kind::invalid_input, source.string() + ": key '" + e.pointer + "' is missing");
        config[key] = e.value;
    }
    return config.dump(2);  // the indentation of the published files
}

// Adds the marker as the first key and leaves every other byte as it was.
result<std::string> mark_synthetic(std::string text, const fs::path& source) {
    const auto brace = text.find('{');
    if (brace != std::string::npos) text.insert(brace + 1, std::string("\n  \"") + synthetic_marker_key + "\": true,");
    const auto config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (brace == std::string::npos || !config.is_object() || config.size() < 2)
        return make_error(error_kind::invalid_input, source.string() + ": not a JSON object with keys");
    return text;
}

result<void> write_config(const fs::path& from, const fs::path& to, const std::vector<config_edit>& edits,
                          bool mark) {
    auto text = read_text(from);
    if (!text) return text.err();
    if (!edits.empty()) {
        auto edited = apply_edits(*text, edits, from);
        if (!edited) return edited.err();
        *text = std::move(*edited);
    }
    if (mark) {
        auto marked = mark_synthetic(std::move(*text), from);
        if (!marked) return marked.err();
        return write_text(to, *marked);
    }
    return write_text(to, *text);
}

result<model_config> write_configs(const random_checkpoint_options& o) {
    const fs::path data(o.data_dir), out(o.out_dir);
    const fs::path published = data / "configs" / published_model(o.shape);
    const bool tiny = o.shape == checkpoint_shape::tiny;
    MEGATTS_TRY(write_config(published / "config.json", out / "config.json",
                             tiny ? tiny_model_edits() : std::vector<config_edit>{}, true));
    MEGATTS_TRY(write_config(published / "speech_tokenizer/config.json", out / "speech_tokenizer/config.json",
                             tiny ? tiny_vocoder_edits() : std::vector<config_edit>{}, false));
    for (const char* name :
         {"generation_config.json", "preprocessor_config.json", "speech_tokenizer/preprocessor_config.json"})
        MEGATTS_TRY(copy_published(published / name, out / name));
    for (const char* name : {"vocab.json", "merges.txt", "tokenizer_config.json"})
        MEGATTS_TRY(copy_published(data / "tokenizer" / name, out / name));
    return model_config::load(out.string());
}

// ---- Random numbers ------------------------------------------------------------
//
// Counter-based: value i of a tensor is a function of (its stream key, i) alone, so
// chunks can be generated on any thread in any order with identical results. Unlike
// std::normal_distribution, every step is specified here: the integer steps are
// exact everywhere, and Box-Muller runs in double precision, through libm's
// log/cos/sin. Those may differ in the last bit between C libraries; rounded to
// float, a value differs only if it lies within that bit of a rounding boundary:
// never expected among the BF16 model's values, conceivable for one or two of the
// vocoder's 114 M F32 values.

// splitmix64's output function: fed a counter it passes BigCrush.
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

constexpr std::uint64_t k_golden_gamma = 0x9e3779b97f4a7c15ull;

// A tensor's key depends on the seed and its name (FNV-1a), not on its place in the
// table, so adding a tensor to the table leaves every other tensor's values alone.
std::uint64_t stream_key(std::uint64_t seed, std::string_view name) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
    return mix64(mix64(h) + seed * k_golden_gamma);
}

double uniform01(std::uint64_t key, std::uint64_t i) {  // [0, 1), 53 bits
    return static_cast<double>(mix64(key + (i + 1) * k_golden_gamma) >> 11) * 0x1.0p-53;
}

// N(0, 1) for elements [first, first + out.size()): element i is half of Box-Muller
// pair i / 2, drawn from uniforms 2 * (i / 2) and 2 * (i / 2) + 1.
void fill_standard_normal(std::uint64_t key, std::uint64_t first, std::span<float> out) {
    std::uint64_t i = first;
    const std::uint64_t end = first + out.size();
    while (i < end) {
        const std::uint64_t pair = i / 2;
        const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform01(key, 2 * pair)));  // 1 - u: never log(0)
        const double angle = 2.0 * std::numbers::pi * uniform01(key, 2 * pair + 1);
        if (i % 2 == 0) out[i++ - first] = static_cast<float>(radius * std::cos(angle));
        if (i < end) out[i++ - first] = static_cast<float>(radius * std::sin(angle));
    }
}

// ---- Initialisation rules ------------------------------------------------------

// How one tensor's values are drawn.
enum class init_kind {
    normal,          // mean + stddev * N(0, 1)
    fan_in_normal,   // N(0, 1) * gain / sqrt(fan_in)
    uniform,         // U(low, high)
    codebook_usage,  // cluster_usage: see codebook_usage_value()
    codebook_sum,    // embedding_sum: N(0, 1) * the clamped usage of its row
};

struct init_rule {
    init_kind kind = init_kind::normal;
    float mean = 0.f, stddev = 0.f;  // normal
    float gain = 1.f;                // fan_in_normal
    int transposed_stride = 0;       // fan_in_normal of a ConvTranspose1d [in, out, k] with this stride
    float low = 0.f, high = 0.f;     // uniform
    std::string usage_tensor;        // codebook_sum: the cluster_usage tensor of the same codebook
    std::int64_t scaled_row = -1;    // fan_in_normal: one row drawn at row_scale times the others' scale
    float row_scale = 1.f;
};

// Scales: the recipe of the golden tiny checkpoints in tests/fixtures. Linear and
// conv weights are N(0, 1/fan_in), so a unit-variance input gives a unit-variance
// output and no path carries a signal too weak to expose a wiring bug (as the usual
// std 0.02 would: a near-constant text projection, a near-silent vocoder).
constexpr float k_norm_weight_std = 0.1f;   // RMSNorm / LayerNorm weights: 1 + N(0, 0.1^2)
constexpr float k_bias_std = 0.05f;
constexpr float k_text_embedding_std = 1.f;
// Codec embeddings: a talker input sums 16 of them, which then has unit variance.
constexpr float k_codec_embedding_std = 0.25f;
// The EOS row of the codec head is drawn at half scale: its logit then practically
// never reaches the top 50 of the 2048 unit-variance code logits (at full size it
// ranked 370-1630 of 2049), so a random model stops neither at once nor by itself:
// utterances run into the daemon's frame caps, lengths a benchmark can predict.
constexpr float k_eos_row_scale = 0.5f;
constexpr float k_layer_scale_low = 0.05f, k_layer_scale_high = 0.2f;  // vocoder transformer LayerScale
constexpr float k_convnext_gamma_low = 0.1f, k_convnext_gamma_high = 0.3f;
constexpr float k_snake_log_std = 0.1f;  // SnakeBeta log-alpha / log-beta: alpha, beta near 1
// A residual unit's output conv is drawn 4x smaller: each of the 12 units adds about
// 1/16 of its input's variance instead of doubling it.
constexpr float k_residual_unit_gain = 0.25f;
// The decoder blocks' upsampling ConvTranspose halves the variance, offsetting what
// the SnakeBeta before it adds (sin^2 >= 0 shifts every channel up).
constexpr float k_decoder_upsample_gain = 0.70710678f;
// The output conv maps the unit-scale channels to audio with an RMS of ~0.2 and
// peaks of ~0.7 (measured at full size on random codes): inside [-1, 1], where the
// decoder clamps, but for rare peaks.
constexpr float k_output_gain = 0.2f;
// Codebooks: usage U(0.5, 2), and embedding_sum = N(0, 1) * usage so that a decoded
// vector (embedding_sum / clamp(usage, 1e-5)) is N(0, 1); except that ~5% of the rows
// are "dead", with usage below the clamp, so a decoder that forgets the clamp gets
// vectors 10-1000x too large.
constexpr double k_usage_clamp = 1e-5;
constexpr double k_dead_row_fraction = 0.05;

init_rule normal(float mean, float stddev) { return {.kind = init_kind::normal, .mean = mean, .stddev = stddev}; }
init_rule norm_weight() { return normal(1.f, k_norm_weight_std); }
init_rule bias() { return normal(0.f, k_bias_std); }
init_rule weight(float gain = 1.f) { return {.kind = init_kind::fan_in_normal, .gain = gain}; }
init_rule transposed_weight(int stride, float gain = 1.f) {
    return {.kind = init_kind::fan_in_normal, .gain = gain, .transposed_stride = stride};
}
init_rule uniform(float low, float high) { return {.kind = init_kind::uniform, .low = low, .high = high}; }

// Pre-norm residual stacks: each branch's output projection is scaled by
// 1/sqrt(2 * layers) (GPT-2), so the 2 * layers branches together add about one
// unit of variance to the residual stream and a 28-layer talker stays O(1).
float depth_gain(int layers) { return 1.f / std::sqrt(2.f * static_cast<float>(layers)); }

using rule_map = std::map<std::string, init_rule>;

void add_decoder_layers(rule_map& r, const transformer_dims& d, std::string (*name)(int, layer_tensor), bool qk_norm,
                        float residual_gain) {
    using lt = layer_tensor;
    for (int i = 0; i < d.layers; ++i) {
        for (lt t : {lt::input_norm, lt::post_norm}) r[name(i, t)] = norm_weight();
        if (qk_norm)
            for (lt t : {lt::q_norm, lt::k_norm}) r[name(i, t)] = norm_weight();
        for (lt t : {lt::q_proj, lt::k_proj, lt::v_proj, lt::gate_proj, lt::up_proj}) r[name(i, t)] = weight();
        for (lt t : {lt::o_proj, lt::down_proj}) r[name(i, t)] = weight(residual_gain);
    }
}

rule_map model_rules(const model_config& c) {
    namespace tn = tensor_names;
    const auto& p = c.code_predictor;
    rule_map r;
    r[tn::text_embedding] = normal(0.f, k_text_embedding_std);
    r[tn::text_fc1_weight] = weight();
    r[tn::text_fc1_bias] = bias();
    r[tn::text_fc2_weight] = weight();
    r[tn::text_fc2_bias] = bias();
    r[tn::codec_embedding] = normal(0.f, k_codec_embedding_std);
    r[tn::talker_norm] = norm_weight();
    r[tn::codec_head] = {.kind = init_kind::fan_in_normal, .scaled_row = c.codec_ids.eos, .row_scale = k_eos_row_scale};
    r[tn::cp_norm] = norm_weight();
    add_decoder_layers(r, c.talker.body, tn::talker_layer, true, depth_gain(c.talker.body.layers));
    add_decoder_layers(r, p.body, tn::cp_layer, true, depth_gain(p.body.layers));
    for (int j = 0; j < p.steps(); ++j) {
        r[tn::cp_codec_embedding(j)] = normal(0.f, k_codec_embedding_std);
        r[tn::cp_lm_head(j)] = weight();
    }
    if (p.has_projection) {
        r[tn::cp_projection_weight] = weight();
        r[tn::cp_projection_bias] = bias();
    }
    return r;
}

rule_map vocoder_rules(const model_config& c) {
    namespace tn = tensor_names;
    const auto& v = c.vocoder;
    rule_map r;
    for (bool first : {true, false}) r[tn::voc_rvq_input_proj(first)] = weight();
    r[tn::voc_rvq_output_proj(true)] = weight();
    // rvq_rest projects the sum of the other codebooks' unit-variance vectors.
    r[tn::voc_rvq_output_proj(false)] = weight(1.f / std::sqrt(static_cast<float>(v.num_quantizers - 1)));
    for (int q = 0; q < v.num_quantizers; ++q) {
        r[tn::voc_codebook_usage(q)] = {.kind = init_kind::codebook_usage};
        r[tn::voc_codebook_sum(q)] = {.kind = init_kind::codebook_sum, .usage_tensor = tn::voc_codebook_usage(q)};
    }
    r[tn::voc_pre_conv_weight] = weight();
    r[tn::voc_pre_conv_bias] = bias();
    r[tn::voc_pt_input_proj_weight] = weight();
    r[tn::voc_pt_input_proj_bias] = bias();
    // The LayerScales shrink the residual branches here, so no depth gain.
    add_decoder_layers(r, v.transformer, tn::voc_pt_layer, false, 1.f);
    for (int i = 0; i < v.transformer.layers; ++i) {
        r[tn::voc_pt_attn_scale(i)] = uniform(k_layer_scale_low, k_layer_scale_high);
        r[tn::voc_pt_mlp_scale(i)] = uniform(k_layer_scale_low, k_layer_scale_high);
    }
    r[tn::voc_pt_norm] = norm_weight();
    r[tn::voc_pt_output_proj_weight] = weight();
    r[tn::voc_pt_output_proj_bias] = bias();
    for (int k = 0; k < 2; ++k) {
        using ct = convnext_tensor;
        r[tn::voc_upsample(k, ct::up_weight)] = transposed_weight(v.upsampling_ratios[k]);
        r[tn::voc_upsample(k, ct::dw_weight)] = weight();
        r[tn::voc_upsample(k, ct::norm_weight)] = norm_weight();
        r[tn::voc_upsample(k, ct::pw1_weight)] = weight();
        r[tn::voc_upsample(k, ct::pw2_weight)] = weight();
        r[tn::voc_upsample(k, ct::gamma)] = uniform(k_convnext_gamma_low, k_convnext_gamma_high);
        for (ct t : {ct::up_bias, ct::dw_bias, ct::norm_bias, ct::pw1_bias, ct::pw2_bias})
            r[tn::voc_upsample(k, t)] = bias();
    }
    r[tn::voc_decoder0_weight] = weight();
    r[tn::voc_decoder0_bias] = bias();
    for (int b = 1; b <= 4; ++b) {
        r[tn::voc_block_snake(b, false)] = normal(0.f, k_snake_log_std);
        r[tn::voc_block_snake(b, true)] = normal(0.f, k_snake_log_std);
        r[tn::voc_block_up(b, false)] = transposed_weight(v.upsample_rates[b - 1], k_decoder_upsample_gain);
        r[tn::voc_block_up(b, true)] = bias();
        for (int u = 0; u < 3; ++u) {
            using rt = residual_tensor;
            for (rt t : {rt::act1_alpha, rt::act1_beta, rt::act2_alpha, rt::act2_beta})
                r[tn::voc_block_residual(b, u, t)] = normal(0.f, k_snake_log_std);
            r[tn::voc_block_residual(b, u, rt::conv1_weight)] = weight();
            r[tn::voc_block_residual(b, u, rt::conv2_weight)] = weight(k_residual_unit_gain);
            for (rt t : {rt::conv1_bias, rt::conv2_bias}) r[tn::voc_block_residual(b, u, t)] = bias();
        }
    }
    r[tn::voc_final_snake_alpha] = normal(0.f, k_snake_log_std);
    r[tn::voc_final_snake_beta] = normal(0.f, k_snake_log_std);
    r[tn::voc_final_conv_weight] = weight(k_output_gain);
    r[tn::voc_final_conv_bias] = bias();
    return r;
}

// ---- Generation ----------------------------------------------------------------

// Inputs per output element: [out, in, k...] for Linear / Conv1d; for a
// ConvTranspose1d [in, out, k] with stride s, each output sample sees in * k / s.
double fan_in(const init_rule& rule, const std::vector<std::int64_t>& shape) {
    if (rule.transposed_stride > 0) return static_cast<double>(shape[0] * shape[2]) / rule.transposed_stride;
    double n = 1;
    for (std::size_t i = 1; i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
    return n;
}

float codebook_usage_value(std::uint64_t key, std::uint64_t row) {
    const double pick = uniform01(key, 2 * row), u = uniform01(key, 2 * row + 1);
    return static_cast<float>(pick < k_dead_row_fraction ? std::pow(10.0, -8.0 + 2.0 * u) : 0.5 + 1.5 * u);
}

struct tensor_job {
    const tensor_spec* spec;
    const init_rule* rule;
    std::uint64_t key;
    std::uint64_t usage_key;  // codebook_sum only
    std::uint64_t numel;
};

// Elements [first, first + out.size()) of one tensor, row-major.
void generate(const tensor_job& job, std::uint64_t first, std::span<float> out) {
    const init_rule& rule = *job.rule;
    const std::uint64_t cols = job.spec->shape.empty() ? 1 : job.numel / static_cast<std::uint64_t>(job.spec->shape[0]);
    switch (rule.kind) {
    case init_kind::normal:
        fill_standard_normal(job.key, first, out);
        for (float& x : out) x = rule.mean + rule.stddev * x;
        break;
    case init_kind::fan_in_normal: {
        fill_standard_normal(job.key, first, out);
        const auto scale = static_cast<float>(rule.gain / std::sqrt(fan_in(rule, job.spec->shape)));
        for (float& x : out) x *= scale;
        if (rule.scaled_row >= 0) {
            const std::uint64_t row_begin = static_cast<std::uint64_t>(rule.scaled_row) * cols;
            const std::uint64_t lo = std::max(first, row_begin), hi = std::min(first + out.size(), row_begin + cols);
            for (std::uint64_t i = lo; i < hi; ++i) out[i - first] *= rule.row_scale;
        }
        break;
    }
    case init_kind::uniform:
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = rule.low + (rule.high - rule.low) * static_cast<float>(uniform01(job.key, first + i));
        break;
    case init_kind::codebook_usage:
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = codebook_usage_value(job.key, first + i);
        break;
    case init_kind::codebook_sum:
        fill_standard_normal(job.key, first, out);
        for (std::size_t i = 0; i < out.size(); ++i) {
            const double usage = codebook_usage_value(job.usage_key, (first + i) / cols);
            out[i] *= static_cast<float>(std::max(usage, k_usage_clamp));
        }
        break;
    }
}

void encode(std::span<const float> values, dtype type, std::byte* out) {
    if (type == dtype::f32) {
        std::memcpy(out, values.data(), values.size_bytes());
        return;
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::uint16_t bits = f32_to_bf16(values[i]);
        std::memcpy(out + 2 * i, &bits, 2);
    }
}

// Elements per task: big enough that starting a thread costs nothing in comparison,
// small enough (4 MB of f32 per thread) that memory stays flat.
constexpr std::uint64_t k_chunk = 1 << 20;

// Writes one weight file: every tensor of `specs` in name order (the Hugging Face
// writer's order for a file of one dtype), generated chunk by chunk on all hardware
// threads and streamed to disk.
result<void> write_weights(const fs::path& path, std::vector<tensor_spec> specs, const rule_map& rules,
                           const random_checkpoint_options& o) {
    std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    std::vector<tensor_job> jobs;
    for (const auto& spec : specs) {
        const auto rule = rules.find(spec.name);
        if (rule == rules.end() || (spec.type != dtype::f32 && spec.type != dtype::bf16))
            return make_error(error_kind::internal, path.string() + ": no way to generate tensor '" + spec.name + "'");
        std::uint64_t numel = 1;
        for (auto d : spec.shape) numel *= static_cast<std::uint64_t>(d);
        const bool sum = rule->second.kind == init_kind::codebook_sum;
        jobs.push_back({&spec, &rule->second, stream_key(o.seed, spec.name),
                        sum ? stream_key(o.seed, rule->second.usage_tensor) : 0, numel});
    }
    auto writer = safetensors_writer::create(
        path.string(), specs,
        {{"megatts_synthetic_shape", std::string(checkpoint_shape_name(o.shape))},
         {"megatts_synthetic_seed", std::to_string(o.seed)}});
    if (!writer) return writer.err();

    const std::uint64_t threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<float> values(threads * k_chunk);
    std::vector<std::byte> bytes(threads * k_chunk * sizeof(float));
    for (const auto& job : jobs) {
        const std::size_t element_size = dtype_size(job.spec->type);
        for (std::uint64_t first = 0; first < job.numel; first += threads * k_chunk) {
            const std::uint64_t n = std::min(job.numel - first, threads * k_chunk);
            auto task = [&](std::uint64_t t) {
                const std::uint64_t lo = t * k_chunk, hi = std::min(n, lo + k_chunk);
                const std::span<float> chunk(values.data() + lo, hi - lo);
                generate(job, first + lo, chunk);
                encode(chunk, job.spec->type, bytes.data() + lo * element_size);
            };
            {
                std::vector<std::jthread> helpers;
                for (std::uint64_t t = 1; t * k_chunk < n; ++t) {
                    try {
                        helpers.emplace_back(task, t);
                    } catch (const std::system_error&) {  // no thread to be had: do the work here
                        task(t);
                    }
                }
                task(0);
            }
            MEGATTS_TRY(writer->append({bytes.data(), n * element_size}));
        }
    }
    return writer->finish();
}

}  // namespace

std::optional<checkpoint_shape> parse_checkpoint_shape(std::string_view name) {
    for (auto shape : {checkpoint_shape::tiny, checkpoint_shape::cv_0b6, checkpoint_shape::cv_1b7})
        if (checkpoint_shape_name(shape) == name) return shape;
    return std::nullopt;
}

std::string_view checkpoint_shape_name(checkpoint_shape shape) {
    switch (shape) {
    case checkpoint_shape::tiny: return "tiny";
    case checkpoint_shape::cv_0b6: return "0.6b-customvoice";
    case checkpoint_shape::cv_1b7: return "1.7b-customvoice";
    }
    return "tiny";
}

result<model_config> write_checkpoint_configs(const random_checkpoint_options& options) {
    return in_empty_dir<model_config>(options.out_dir, [&] { return write_configs(options); });
}

result<void> make_random_checkpoint(const random_checkpoint_options& options) {
    return in_empty_dir<void>(options.out_dir, [&]() -> result<void> {
        auto config = write_configs(options);
        if (!config) return config.err();
        const fs::path out(options.out_dir);
        MEGATTS_TRY(write_weights(out / "model.safetensors", model_tensor_specs(*config), model_rules(*config), options));
        return write_weights(out / "speech_tokenizer/model.safetensors", vocoder_tensor_specs(*config),
                             vocoder_rules(*config), options);
    });
}

}  // namespace megatts
