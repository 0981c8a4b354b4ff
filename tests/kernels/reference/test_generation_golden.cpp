// The CPU reference talker and code predictor against the official implementation's
// oracle data: every golden case, free-running greedy, at 1e-4 relative.
#include <algorithm>
#include <cctype>
#include <map>

#include <catch2/catch.hpp>

#include "kernels/reference/generator.h"
#include "kernels/reference/talker.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/model/reference_loader.h"
#include "tests/support/golden_case.h"
#include "tests/support/tensor_compare.h"

using namespace megatts;
using megatts::test::check_close;

namespace {

constexpr double k_tol = 1e-4;

struct loaded_model {
    checkpoint ckpt;
    ref::talker_weights talker;
    ref::code_predictor_weights cp;
};

const loaded_model& model(const std::string& dir) {
    static std::map<std::string, loaded_model> cache;
    auto it = cache.find(dir);
    if (it == cache.end()) {
        auto c = checkpoint::open(dir);
        INFO((c ? "" : c.err().message));
        REQUIRE(c.ok());
        auto talker = load_talker_weights(*c);
        auto cp = load_code_predictor_weights(*c);
        it = cache.emplace(dir, loaded_model{std::move(c.value()), std::move(talker), std::move(cp)}).first;
    }
    return it->second;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return s;
}

// Row-concatenates one field of every layer-0 trace.
std::vector<float> rows_of(const std::vector<ref::layer_trace>& t, std::vector<float> ref::layer_trace::*field) {
    std::vector<float> out;
    for (const auto& row : t) out.insert(out.end(), (row.*field).begin(), (row.*field).end());
    return out;
}

}  // namespace

TEST_CASE("reference generation matches the official implementation on every golden case", "[golden]") {
    for (const auto& [ckpt_name, case_name] : test::all_golden_cases()) {
        DYNAMIC_SECTION(case_name) {
            test::golden_case g(ckpt_name, case_name);
            const auto& m = model(g.checkpoint_dir());
            const auto& config = m.ckpt.config();

            auto layout = g.meta("non_streaming_mode") == "true" ? text_layout::non_streaming : text_layout::streaming;
            auto plan = build_prompt(config, g.ints("text_ids"), g.meta("speaker"), lower(g.meta("language")), layout);
            INFO((plan ? "" : plan.err().message));
            REQUIRE(plan.ok());
            CHECK(plan->codec_prefix == g.ints("codec_prefix_ids"));
            CHECK(plan->rows.size() == static_cast<std::size_t>(std::stoi(g.meta("prompt_length"))));

            const int h = config.talker.body.hidden;
            std::vector<float> pad(static_cast<std::size_t>(h));
            ref::project_text(m.talker, config.text_ids.tts_pad, pad.data());
            check_close("tts_pad_embed", pad, g.floats("tts_pad_embed"), k_tol);

            ref::generation_trace trace;
            ref::generator gen(m.talker, m.cp, make_generation_options(config, {.greedy = true}), &trace);
            gen.prefill(plan->rows);
            check_close("prefill_embeds", trace.prefill_embeds, g.floats("prefill_embeds"), k_tol);
            using lt = ref::layer_trace;
            check_close("prefill_l0_input_norm", rows_of(trace.prefill_layer0, &lt::input_norm), g.floats("prefill_l0_input_norm"), k_tol);
            check_close("prefill_l0_q", rows_of(trace.prefill_layer0, &lt::q), g.floats("prefill_l0_q"), k_tol);
            check_close("prefill_l0_k", rows_of(trace.prefill_layer0, &lt::k), g.floats("prefill_l0_k"), k_tol);
            check_close("prefill_l0_v", rows_of(trace.prefill_layer0, &lt::v), g.floats("prefill_l0_v"), k_tol);
            check_close("prefill_l0_attn_ctx", rows_of(trace.prefill_layer0, &lt::attn_ctx), g.floats("prefill_l0_attn_ctx"), k_tol);
            check_close("prefill_l0_attn_o", rows_of(trace.prefill_layer0, &lt::attn_o), g.floats("prefill_l0_attn_o"), k_tol);
            check_close("prefill_l0_after_attn_residual", rows_of(trace.prefill_layer0, &lt::after_attn_residual),
                        g.floats("prefill_l0_after_attn_residual"), k_tol);
            check_close("prefill_l0_mlp_out", rows_of(trace.prefill_layer0, &lt::mlp_out), g.floats("prefill_l0_mlp_out"), k_tol);
            check_close("prefill_l0_out", rows_of(trace.prefill_layer0, &lt::out), g.floats("prefill_l0_out"), k_tol);

            const int max_frames = std::stoi(g.meta("max_frames"));
            std::vector<std::int32_t> codes, c0;
            std::vector<float> trailing;
            for (int t = 0; t < max_frames; ++t) {
                auto frame = gen.next_frame(plan->text_track(t));
                if (!frame) {
                    c0.push_back(config.codec_ids.eos);
                    break;
                }
                c0.push_back((*frame)[0]);
                codes.insert(codes.end(), frame->begin(), frame->begin() + config.talker.num_code_groups);
                std::vector<float> text(static_cast<std::size_t>(h));
                ref::project_text(m.talker, plan->text_track(t), text.data());
                trailing.insert(trailing.end(), text.begin(), text.end());
            }

            CHECK(c0 == g.ints("c0"));
            CHECK(codes == g.ints("codes"));
            CHECK(gen.frames() == std::stoi(g.meta("num_frames")));
            check_close("talker_hidden", trace.talker_hidden, g.floats("talker_hidden"), k_tol);
            check_close("talker_logits_raw", trace.logits_raw, g.floats("talker_logits_raw"), k_tol);
            check_close("talker_logits_processed", trace.logits_processed, g.floats("talker_logits_processed"), k_tol);
            check_close("frame_input_embeds", trace.frame_input_embeds, g.floats("frame_input_embeds"), k_tol);
            REQUIRE(trace.cp_logits.size() >= 2);
            check_close("cp_logits_f0", trace.cp_logits[0], g.floats("cp_logits_f0"), k_tol);
            check_close("cp_logits_f1", trace.cp_logits[1], g.floats("cp_logits_f1"), k_tol);
            // Non-streaming cases store only [pad]; streaming ones the text track of every frame.
            auto golden_trailing = g.floats("trailing_text_embeds");
            trailing.resize(std::min(trailing.size(), golden_trailing.size()));
            check_close("trailing_text_embeds", trailing, golden_trailing, k_tol);
        }
    }
}
