#include "tests/e2e/client/opus_decoding.h"

#include <opus/opus.h>

#include <memory>
#include <string>

namespace megatts::e2e {

result<std::vector<float>> decode_opus_packets(const std::vector<std::vector<std::uint8_t>>& packets, int rate,
                                               int pre_skip_48k) {
    int err = 0;
    std::unique_ptr<OpusDecoder, decltype(&opus_decoder_destroy)> decoder(opus_decoder_create(rate, 1, &err),
                                                                          &opus_decoder_destroy);
    if (err != OPUS_OK) return make_error(error_kind::invalid_input, std::string("opus_decoder_create: ") + opus_strerror(err));
    std::vector<float> pcm;
    std::vector<float> frame(static_cast<std::size_t>(rate) * 120 / 1000);  // the longest Opus frame
    for (const auto& packet : packets) {
        const int n = opus_decode_float(decoder.get(), packet.data(), static_cast<opus_int32>(packet.size()),
                                        frame.data(), static_cast<int>(frame.size()), 0);
        if (n < 0) return make_error(error_kind::invalid_input, std::string("opus_decode: ") + opus_strerror(n));
        pcm.insert(pcm.end(), frame.begin(), frame.begin() + n);
    }
    const auto skip = static_cast<std::size_t>(static_cast<long>(pre_skip_48k) * rate / 48000);
    pcm.erase(pcm.begin(), pcm.begin() + static_cast<std::ptrdiff_t>(std::min(skip, pcm.size())));
    return pcm;
}

}  // namespace megatts::e2e
