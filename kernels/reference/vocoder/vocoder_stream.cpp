#include "kernels/reference/vocoder/vocoder_stream.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "kernels/reference/vocoder/dense_rows.h"
#include "kernels/reference/vocoder/snake_beta.h"

namespace megatts::ref {
namespace {

// A long decode() runs in passes of at most this many frames: the scratch of the
// wave stages grows with the frames of a pass (1920 rows per frame), and the states
// make the split invisible in the output.
constexpr int max_pass_frames = 8;

}  // namespace

vocoder_stream::vocoder_stream(const vocoder_weights& w)
    : w_(&w),
      pre_conv_(w.pre_conv, 1),
      pre_transformer_(w.pre_transformer, w.dims.transformer, w.dims.sliding_window),
      decoder0_(w.decoder0, 1),
      final_conv_(w.final_conv, 1) {
    for (const auto& u : w.upsamplers) upsamplers_.emplace_back(u);
    for (const auto& b : w.blocks) blocks_.emplace_back(b);
}

result<std::vector<float>> vocoder_stream::decode(std::span<const std::int32_t> codes, int frames) {
    MEGATTS_TRY(check(codes, frames));
    std::vector<float> pcm;
    pcm.reserve(static_cast<std::size_t>(frames) * w_->dims.samples_per_frame());
    const auto nq = static_cast<std::size_t>(w_->dims.num_quantizers);
    for (int f = 0; f < frames; f += max_pass_frames) {
        const int n = std::min(max_pass_frames, frames - f);
        decode_pass(codes.subspan(f * nq, n * nq), n, pcm);
    }
    return pcm;
}

result<void> vocoder_stream::check(std::span<const std::int32_t> codes, int frames) const {
    const int nq = w_->dims.num_quantizers;
    if (frames < 0 || codes.size() != static_cast<std::size_t>(frames) * nq)
        return make_error(error_kind::invalid_input,
                          "vocoder: " + std::to_string(codes.size()) + " codes do not make " +
                              std::to_string(frames) + " frames of " + std::to_string(nq));
    for (std::size_t i = 0; i < codes.size(); ++i) {
        if (codes[i] < 0 || codes[i] >= w_->dims.codebook_size)
            return make_error(error_kind::invalid_input,
                              "vocoder: code " + std::to_string(codes[i]) + " of frame " +
                                  std::to_string(frames_decoded_ + static_cast<int>(i / nq)) +
                                  ", codebook " + std::to_string(i % nq) + " is outside [0, " +
                                  std::to_string(w_->dims.codebook_size) + ")");
    }
    return {};
}

void vocoder_stream::decode_pass(std::span<const std::int32_t> codes, int frames, std::vector<float>& pcm) {
    const auto& d = w_->dims;
    std::span<const float> h = dequantize(codes, frames);
    emit(vocoder_stage::dequant, 0, d.codebook_dim, h);
    h = pre_conv_.run(h);
    emit(vocoder_stage::pre_conv, 0, d.latent_dim, h);
    h = pre_transformer_.run(h, observer_);
    emit(vocoder_stage::pre_transformer, 0, d.latent_dim, h);
    for (std::size_t k = 0; k < upsamplers_.size(); ++k) {
        h = upsamplers_[k].run(h);
        emit(vocoder_stage::upsample, static_cast<int>(k), d.latent_dim, h);
    }
    h = decoder0_.run(h);
    emit(vocoder_stage::decoder0, 0, d.decoder_dim, h);
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        h = blocks_[b].run(h);
        emit(vocoder_stage::block, static_cast<int>(b) + 1, w_->blocks[b].up.channels_out(), h);
    }
    final_act_.assign(h.begin(), h.end());
    snake_beta(w_->final_snake, final_act_);
    const std::span<float> audio = final_conv_.run(final_act_);
    for (float& s : audio) s = std::clamp(s, -1.f, 1.f);
    emit(vocoder_stage::audio, 0, 1, audio);
    pcm.insert(pcm.end(), audio.begin(), audio.end());
    frames_decoded_ += frames;
}

std::span<const float> vocoder_stream::dequantize(std::span<const std::int32_t> codes, int frames) {
    const auto& d = w_->dims;
    const std::size_t dim = static_cast<std::size_t>(d.codebook_vector_dim());
    const std::size_t nq = static_cast<std::size_t>(d.num_quantizers);
    // Row f is [codebook-0 vector, sum of the other codebooks' vectors], the input of
    // the stacked rvq_first / rvq_rest output projections.
    codebook_sums_.assign(static_cast<std::size_t>(frames) * 2 * dim, 0.f);
    for (std::size_t f = 0; f < static_cast<std::size_t>(frames); ++f) {
        float* row = codebook_sums_.data() + f * 2 * dim;
        for (std::size_t q = 0; q < nq; ++q) {
            const auto code = static_cast<std::size_t>(codes[f * nq + q]);
            const float* v = w_->codebooks.data() + (q * static_cast<std::size_t>(d.codebook_size) + code) * dim;
            float* dst = q == 0 ? row : row + dim;
            for (std::size_t i = 0; i < dim; ++i) dst[i] += v[i];
        }
    }
    dense_map(w_->dequant_proj, codebook_sums_, dequant_);
    return dequant_;
}

void vocoder_stream::emit(vocoder_stage stage, int index, int channels,
                          std::span<const float> values) const {
    if (observer_) observer_({stage, index, channels, values});
}

}  // namespace megatts::ref
