// Times the fp32 reference vocoder on a checkpoint: random codes decoded one frame
// per call, as a live stream feeds it, then the same frames in one call. Prints
// wall and CPU milliseconds per frame (they differ on a shared machine) and the
// real-time factor (audio time / wall time).
// Usage: bench_vocoder_reference CHECKPOINT_DIR [FRAMES]
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/reference/vocoder/vocoder_stream.h"
#include "tests/support/vocoder_inputs.h"

using namespace megatts;

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

struct stopwatch {
    clock_type::time_point wall = clock_type::now();
    std::clock_t cpu = std::clock();
};

void report(const char* what, const stopwatch& start, int frames, const vocoder_dims& d) {
    const double wall = ms_since(start.wall) / frames;
    const double cpu = 1000.0 * static_cast<double>(std::clock() - start.cpu) / CLOCKS_PER_SEC / frames;
    const double audio_ms = 1000.0 * d.samples_per_frame() / d.output_sample_rate;
    std::printf("%-22s %9.1f ms/frame wall %9.1f ms/frame cpu  real-time factor %.3f\n", what, wall, cpu,
                audio_ms / wall);
}

}  // namespace

int main(int argc, char** argv) {
    int frames = 8;
    const std::string_view frames_arg = argc == 3 ? argv[2] : "8";
    const auto parsed = std::from_chars(frames_arg.data(), frames_arg.data() + frames_arg.size(), frames);
    if (argc < 2 || argc > 3 || parsed.ec != std::errc{} || parsed.ptr != frames_arg.data() + frames_arg.size() ||
        frames < 1) {
        std::fprintf(stderr, "usage: %s CHECKPOINT_DIR [FRAMES >= 1]\n", argv[0]);
        return 2;
    }

    const auto load_start = clock_type::now();
    const auto w = test::load_vocoder_or_report(argv[1]);
    if (!w) return 1;
    const auto& d = w->dims;
    std::printf("vocoder: latent %d, decoder %d, %d transformer layers; weights loaded in %.0f ms\n",
                d.latent_dim, d.decoder_dim, d.transformer.layers, ms_since(load_start));

    const std::vector<std::int32_t> codes = test::random_codes(d, 0, frames);

    ref::vocoder_stream streamed(*w);
    stopwatch start;
    for (int f = 0; f < frames; ++f) {
        const auto frame = std::span(codes).subspan(static_cast<std::size_t>(f) * d.num_quantizers,
                                                    static_cast<std::size_t>(d.num_quantizers));
        if (!streamed.decode(frame, 1)) return 1;
    }
    report("1 frame per call", start, frames, d);

    ref::vocoder_stream whole(*w);
    start = stopwatch{};
    if (!whole.decode(codes, frames)) return 1;
    report("all frames in 1 call", start, frames, d);
    return 0;
}
