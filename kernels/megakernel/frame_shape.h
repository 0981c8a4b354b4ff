// frame_shape: the compile-time dimensions one megakernel instantiation is built for.
// The kernel is a template over a shape; the 0.6B and 1.7B checkpoints are two
// instantiations (talker width 1024 vs 2048, the 1.7B code predictor behind a
// 2048 -> 1024 projection), not two code paths. The host checks a checkpoint's
// config.json against the shape before uploading (megakernel.cu).
#pragma once

namespace megatts::mk {

template <int Hidden, int Intermediate, int CpHidden, int CpIntermediate>
struct frame_shape {
    // Talker.
    static constexpr int hidden = Hidden;
    static constexpr int intermediate = Intermediate;
    static constexpr int layers = 28;
    static constexpr int heads = 16;
    static constexpr int kv_heads = 8;
    static constexpr int head_dim = 128;
    static constexpr int q_width = heads * head_dim;      // 2048
    static constexpr int kv_width = kv_heads * head_dim;  // 1024
    static constexpr int qkv_width = q_width + 2 * kv_width;
    static constexpr int codec_vocab = 3072;
    static constexpr int text_hidden = 2048;
    // Code predictor.
    static constexpr int cp_hidden = CpHidden;
    static constexpr int cp_intermediate = CpIntermediate;
    static constexpr int cp_layers = 5;
    static constexpr int cp_vocab = 2048;
    static constexpr int groups = 16;                     // codebooks per frame
    static constexpr int cp_passes = groups - 1;
    static constexpr int cp_positions = groups;           // KV positions per frame
    static constexpr bool cp_projection = CpHidden != Hidden;
    // Widest activation any matvec reads (down-proj input).
    static constexpr int max_k = Intermediate > text_hidden ? Intermediate : text_hidden;
};

using shape_0b6 = frame_shape<1024, 3072, 1024, 3072>;
using shape_1b7 = frame_shape<2048, 6144, 1024, 3072>;

}  // namespace megatts::mk
