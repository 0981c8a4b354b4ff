#include "daemon/command_say.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/cli_exit.h"
#include "daemon/default_model.h"
#include "kernels/cuda/cuda_probe.h"
#include "pipeline/audio/ogg_opus_file.h"
#include "pipeline/audio/wav_writer.h"
#include "pipeline/synthesis/cuda_frame_source.h"
#include "pipeline/synthesis/cuda_frame_vocoder.h"
#include "pipeline/synthesis/utterance.h"

namespace megatts {
namespace {

struct say_options {
    std::string model = default_model_dir();
    std::string text;
    std::string voice = "ryan";
    std::string language = "auto";
    std::optional<std::uint64_t> seed;
    bool greedy = false;
    std::string backend = "cpu";
    std::string out;
    std::string codes_out;
    bool f32 = false;
    bool stream_text = false;
    int max_frames = 0;
    std::optional<float> temperature;
    std::optional<int> top_k;
    std::optional<float> top_p;
};

using ms = std::chrono::duration<double, std::milli>;

// The backend's frame source and vocoder: the reference, or the megakernel and the CUDA
// vocoder on device 0 when CUDA can run here (else the exact reason; never a silent fall-back
// to the CPU).
struct say_backend {
    std::unique_ptr<frame_source> source;
    std::unique_ptr<frame_vocoder> vocoder;
};

result<say_backend> make_backend(const std::string& backend, const reference_model& model,
                                 const utterance_request& request) {
    const auto options = make_generation_options(model.config(), request.sampling);
    if (backend == "cpu")
        return say_backend{make_reference_frame_source(model.talker, model.code_predictor, options),
                           make_reference_frame_vocoder(model.vocoder)};
    auto device = usable_device(probe_cuda(), 0);
    if (!device) return make_error(error_kind::unavailable, "--backend cuda: " + device.err().message);
    auto source = make_cuda_frame_source(model.ckpt, options);
    if (!source) return make_error(source.err().kind, "--backend cuda: " + source.err().message);
    auto vocoder = make_cuda_frame_vocoder(model.vocoder);
    if (!vocoder) return make_error(vocoder.err().kind, "--backend cuda: " + vocoder.err().message);
    return say_backend{std::move(*source), std::move(*vocoder)};
}

bool wants_ogg(const std::string& path) {
    auto ext = std::filesystem::path(path).extension().string();
    return ext == ".ogg" || ext == ".opus";
}

result<void> write_codes_json(const std::string& path, const std::vector<std::int32_t>& codes, int groups) {
    std::ofstream out(path);
    if (!out) return make_error(error_kind::io, path + ": cannot open for writing");
    out << "[";
    for (std::size_t f = 0; f * static_cast<std::size_t>(groups) < codes.size(); ++f) {
        out << (f ? ",\n [" : "\n [");
        for (int g = 0; g < groups; ++g) out << (g ? ", " : "") << codes[f * static_cast<std::size_t>(groups) + static_cast<std::size_t>(g)];
        out << "]";
    }
    out << "\n]\n";
    if (!out.flush()) return make_error(error_kind::io, path + ": write failed");
    return {};
}

int run_say(const say_options& o) {
    if (o.text.empty()) return report_error(make_error(error_kind::invalid_input, "--text is empty"));

    auto t0 = std::chrono::steady_clock::now();
    auto model = reference_model::load(o.model, /*with_reference_weights=*/o.backend == "cpu");
    if (!model) return report_error(model.err());
    auto loaded = std::chrono::steady_clock::now();
    if (is_synthetic_model(o.model))
        spdlog::warn("model {} has SYNTHETIC random weights (made by make-checkpoint): the audio is noise, not speech",
                     o.model);

    utterance_request request;
    request.text = o.text;
    request.voice = o.voice;
    request.language = o.language;
    request.layout = o.stream_text ? text_layout::streaming : text_layout::non_streaming;
    request.sampling = {.greedy = o.greedy, .seed = o.seed.value_or(0),
                        .temperature = o.temperature, .top_k = o.top_k, .top_p = o.top_p};
    request.max_frames = o.max_frames;

    auto backend = make_backend(o.backend, *model, request);
    if (!backend) return report_error(backend.err());
    std::vector<float> pcm;
    std::vector<std::int32_t> codes;
    auto summary = synthesize(*model, *backend->source, *backend->vocoder, request, [&](std::span<const std::int32_t> c, std::span<const float> p) {
        codes.insert(codes.end(), c.begin(), c.end());
        pcm.insert(pcm.end(), p.begin(), p.end());
    });
    if (!summary) return report_error(summary.err());

    auto encode_start = std::chrono::steady_clock::now();
    const int rate = model->config().vocoder.output_sample_rate;
    auto written = wants_ogg(o.out)
                       ? write_ogg_opus_file(o.out, pcm)
                       : write_wav_file(o.out, pcm, rate, o.f32 ? wav_sample_format::float32 : wav_sample_format::pcm16);
    if (!written) return report_error(written.err());
    if (!o.codes_out.empty()) {
        if (auto w = write_codes_json(o.codes_out, codes, model->config().talker.num_code_groups); !w)
            return report_error(w.err());
    }
    ms encode = std::chrono::steady_clock::now() - encode_start;

    const auto& s = *summary;
    const double audio_ms = 1000.0 * static_cast<double>(pcm.size()) / rate;
    const double per_frame = s.frames ? 1.0 / s.frames : 0.0;
    std::printf("wrote %s: %d frames, %zu samples at %d Hz (%.2f s), stopped by %s\n", o.out.c_str(), s.frames,
                pcm.size(), rate, audio_ms / 1000.0, stop_reason_name(s.stop));
    std::printf("  load model     %9.1f ms\n", ms(loaded - t0).count());
    std::printf("  tokenize       %9.1f ms  (%d text tokens, prompt %d rows)\n", s.times.tokenize.count(),
                s.text_tokens, s.prompt_rows);
    std::printf("  prefill        %9.1f ms\n", s.times.prefill.count());
    std::printf("  talker + cp    %9.1f ms  (%.1f ms/frame)\n", s.times.generate.count(),
                s.times.generate.count() * per_frame);
    std::printf("  vocoder        %9.1f ms  (%.1f ms/frame)\n", s.times.vocode.count(),
                s.times.vocode.count() * per_frame);
    std::printf("  encode + write %9.1f ms\n", encode.count());
    std::printf("  first frame    %9.1f ms after the text\n", s.times.first_frame.count());
    const double compute = s.times.prefill.count() + s.times.generate.count() + s.times.vocode.count();
    if (audio_ms > 0) std::printf("  real-time factor %.3f (compute / audio)\n", compute / audio_ms);
    return exit_ok;
}

}  // namespace

void add_say_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<say_options>();
    auto* cmd = app.add_subcommand("say", "Speak one text into a WAV or Ogg Opus file");
    cmd->add_option("--model", o->model, "Checkpoint directory")->capture_default_str();
    cmd->add_option("--text,-t", o->text, "Text to speak")->required();
    cmd->add_option("--voice", o->voice, "Built-in voice (speaker)")->capture_default_str();
    cmd->add_option("--language", o->language, "Language, or auto")->capture_default_str();
    auto* seed = cmd->add_option("--seed", o->seed, "Sampling seed (default 0)");
    cmd->add_flag("--greedy", o->greedy, "Arg-max decoding (the golden parity mode)")->excludes(seed);
    cmd->add_option("--backend", o->backend, "cpu (the reference) or cuda")
        ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
    cmd->add_option("--out,-o", o->out, "Output file: .wav, or .ogg/.opus for Ogg Opus")->required();
    cmd->add_option("--codes-out", o->codes_out, "Also write the codes as JSON (one array of 16 per frame)");
    cmd->add_flag("--f32", o->f32, "32-bit float WAV instead of 16-bit");
    cmd->add_flag("--stream-text", o->stream_text, "Streaming-text prompt layout (one text token per frame)");
    cmd->add_option("--max-frames", o->max_frames, "Stop after this many frames (default: the model's limit)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--temperature", o->temperature, "Sampling temperature (default from the model)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--top-k", o->top_k, "Top-k (default from the model)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--top-p", o->top_p, "Top-p (default from the model)")->check(CLI::Range(0.0, 1.0));
    cmd->callback([o, &exit_code] { exit_code = run_say(*o); });
}

}  // namespace megatts
