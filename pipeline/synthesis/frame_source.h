// frame_source: where an utterance's codec frames come from, one frame at a time:
// the CPU reference generator or the CUDA megakernel behind one interface, so the
// utterance loop (utterance.h) and its timing are the same for both backends.
//
// Contract: prefill() once with the prompt rows, then next_frame() with each frame's
// text-track id until it returns no frame (EOS). Blocking (CPU or GPU work); one
// thread at a time. Errors are values (a CUDA failure, a refused setting).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "kernels/common/prompt_row.h"
#include "kernels/common/result.h"
#include "kernels/reference/generator.h"

namespace megatts {

class frame_source {
public:
    virtual ~frame_source() = default;
    virtual result<void> prefill(std::span<const prompt_row> rows) = 0;
    virtual result<std::optional<ref::frame_codes>> next_frame(std::int32_t text_track_id) = 0;
};

// The CPU reference (kernels/reference/generator.h); the weights must outlive it.
std::unique_ptr<frame_source> make_reference_frame_source(const ref::talker_weights& talker,
                                                          const ref::code_predictor_weights& cp,
                                                          const ref::generation_options& options);

}  // namespace megatts
