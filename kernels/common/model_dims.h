// Model dimensions: every size the model math needs, read from config.json by
// pipeline/model/model_config and handed to the reference and CUDA backends.
//
// Contract: plain data, no behaviour beyond derived sizes. Nothing here has a
// default that could stand in for a value the checkpoint must state.
#pragma once

namespace megatts {

// A Qwen3 decoder stack (pre-norm, QK-norm, RoPE, GQA, SwiGLU).
struct transformer_dims {
    int layers = 0;
    int hidden = 0;
    int intermediate = 0;
    int heads = 0;
    int kv_heads = 0;
    int head_dim = 0;
    float rms_eps = 0.f;
    float rope_theta = 0.f;

    int q_width() const { return heads * head_dim; }
    int kv_width() const { return kv_heads * head_dim; }
};

struct talker_dims {
    transformer_dims body;
    int text_vocab = 0;    // rows of the text embedding
    int text_hidden = 0;   // width of the text embedding and of text_projection.fc1
    int codec_vocab = 0;   // rows of codec_embedding / codec_head (audio codes + control ids)
    int num_code_groups = 0;  // codebooks per frame (16)
};

struct code_predictor_dims {
    transformer_dims body;
    int vocab = 0;          // audio codes per codebook (2048)
    int embed_width = 0;    // width of its codec embeddings (= talker hidden)
    bool has_projection = false;  // small_to_mtp_projection: talker hidden != body.hidden
    int num_code_groups = 0;      // codebooks per frame; it predicts the last num_code_groups - 1

    int steps() const { return num_code_groups - 1; }  // passes per frame (15)
};

struct vocoder_dims {
    int num_quantizers = 0;       // 16: 1 semantic (rvq_first) + 15 acoustic (rvq_rest)
    int codebook_size = 0;        // 2048
    int codebook_dim = 0;         // codebook vectors are codebook_dim / 2 wide
    int latent_dim = 0;           // pre_conv output channels (1024)
    int decoder_dim = 0;          // decoder.0 output channels (1536)
    transformer_dims transformer; // pre_transformer (no QK-norm, sliding window)
    int sliding_window = 0;       // keys visible to a query, itself included (72)
    float layer_scale_init = 0.f;
    int upsample_rates[4] = {};   // decoder blocks: 8, 5, 4, 3
    int upsampling_ratios[2] = {};  // ConvNeXt upsamplers: 2, 2
    int output_sample_rate = 0;   // 24000

    int codebook_vector_dim() const { return codebook_dim / 2; }
    int samples_per_frame() const {
        int n = upsampling_ratios[0] * upsampling_ratios[1];
        for (int r : upsample_rates) n *= r;
        return n;
    }
};

}  // namespace megatts
