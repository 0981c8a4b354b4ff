#include "kernels/reference/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace megatts::ref {

float dot(const float* a, const float* b, int n) {
    // Eight independent partial sums: the compiler keeps them in one vector register
    // without -ffast-math, and the summation order is fixed by the source.
    float acc[8] = {};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
    for (; i < n; ++i) acc[i & 7] += a[i] * b[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void matvec(const float* w, int rows, int cols, const float* x, float* y) {
    // Rows are independent and each is one thread's fixed-order dot, so threads change
    // the speed, never the bits. Small products stay on one thread.
#pragma omp parallel for schedule(static) if (static_cast<long>(rows) * cols >= (1L << 20))
    for (int r = 0; r < rows; ++r) y[r] = dot(w + static_cast<long>(r) * cols, x, cols);
}

void rms_norm(const float* x, const float* weight, int n, float eps, float* y) {
    float ms = dot(x, x, n) / static_cast<float>(n);
    float inv = 1.0f / std::sqrt(ms + eps);
    for (int i = 0; i < n; ++i) y[i] = x[i] * inv * weight[i];
}

void layer_norm(const float* x, const float* weight, const float* bias, int n, float eps, float* y) {
    float mean = 0.f;
    for (int i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<float>(n);
    float var = 0.f;
    for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<float>(n);
    float inv = 1.0f / std::sqrt(var + eps);
    for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * weight[i] + bias[i];
}

void apply_rope(float* v, int head_dim, int pos, float theta) {
    const int half = head_dim / 2;
    for (int i = 0; i < half; ++i) {
        // PyTorch: inv_freq = 1 / theta^(2i/d) as f32, angle = f32(pos) * inv_freq in f32.
        float inv_freq = static_cast<float>(1.0 / std::pow(static_cast<double>(theta),
                                                           (2.0 * i) / head_dim));
        float angle = static_cast<float>(pos) * inv_freq;
        float c = std::cos(angle), s = std::sin(angle);
        float a = v[i], b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
    }
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

void softmax(float* x, int n) {
    float m = -std::numeric_limits<float>::infinity();
    for (int i = 0; i < n; ++i) m = std::max(m, x[i]);
    float sum = 0.f;
    for (int i = 0; i < n; ++i) {
        x[i] = std::isinf(x[i]) && x[i] < 0 ? 0.f : std::exp(x[i] - m);
        sum += x[i];
    }
    for (int i = 0; i < n; ++i) x[i] /= sum;
}

}  // namespace megatts::ref
