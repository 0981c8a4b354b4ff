// opus_decoding: raw Opus packets back to PCM with libopus, as a client without an Ogg
// container (a WebCodecs AudioDecoder without description) would decode them.
//
// Contract: decode_opus_packets decodes mono packets at `rate` (8/12/16/24/48 kHz) and drops
// the first `pre_skip` samples (given at 48 kHz, as the protocol's `started.pre_skip`), so that
// output sample i is the server's sample i. Errors: invalid_input for a packet libopus refuses.
// Pure; any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::e2e {

result<std::vector<float>> decode_opus_packets(const std::vector<std::vector<std::uint8_t>>& packets, int rate,
                                               int pre_skip_48k);

}  // namespace megatts::e2e
