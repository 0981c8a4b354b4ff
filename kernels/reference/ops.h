// Reference ops: the fp32 building blocks of the Qwen3 decoder layers (talker, code
// predictor) on raw float arrays. The spec the CUDA kernels are tested against.
//
// Contract: pure functions; inputs and outputs are caller-owned arrays of the stated
// lengths; output arrays may not alias inputs unless stated. Accumulation is f32 in
// a fixed order (eight interleaved partial sums), so results are deterministic and
// vectorisable. No allocation and no errors; matvec may use OpenMP threads.
#pragma once

namespace megatts::ref {

float dot(const float* a, const float* b, int n);

// y[r] = sum_c w[r * cols + c] * x[c] for r < rows (a row-major [rows, cols] weight).
// Large products run on OpenMP threads (OMP_NUM_THREADS), bit-identically.
void matvec(const float* w, int rows, int cols, const float* x, float* y);

// y = x / sqrt(mean(x^2) + eps) * weight; y may alias x.
void rms_norm(const float* x, const float* weight, int n, float eps, float* y);

// LayerNorm over n channels with affine weight and bias; y may alias x.
void layer_norm(const float* x, const float* weight, const float* bias, int n, float eps, float* y);

// Rotary embedding in the rotate_half layout: pairs (i, i + head_dim/2) rotate by
// pos * theta^(-2i/head_dim), with the angle formed in f32 as PyTorch forms it.
void apply_rope(float* v, int head_dim, int pos, float theta);

float silu(float x);
float gelu_erf(float x);  // exact GELU, 0.5 x (1 + erf(x / sqrt 2))

// In-place softmax over n entries (-inf entries become 0).
void softmax(float* x, int n);

}  // namespace megatts::ref
