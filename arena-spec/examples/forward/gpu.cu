// The step's kernels that cuBLAS does not have, compiled by NVRTC at run time (`gpu.rs`).
// Each computes what its host twin in `kernels.rs` computes, rounding to bf16 at the same
// points (where transformers' bf16 modules round), accumulating in f32. Plain and correct, not
// fast. bf16 is handled as its bits (no CUDA header needed): widening is a shift, narrowing
// rounds to nearest even, as the `half` crate and torch do.

typedef unsigned short bf16;

__device__ __forceinline__ float f(bf16 x) { return __uint_as_float(((unsigned)x) << 16); }
__device__ __forceinline__ bf16 b(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)((u >> 16) | 0x40u);  // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16)(u >> 16);
}
__device__ __forceinline__ float r(float x) { return f(b(x)); }

#define EACH(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
                        i += (long long)gridDim.x * blockDim.x)

// The sum of `v` over the block, the same value in every thread, summed in one fixed order.
__device__ float block_sum(float v, float* shared) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) total += shared[w];
    return total;
}

// The dot product of a warp's two rows of `n` values, in lane 0 (and every lane).
__device__ float warp_dot(const bf16* x, const bf16* w, int n) {
    float s = 0.0f;
    for (int k = threadIdx.x % 32; k < n; k += 32) s += f(x[k]) * f(w[k]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}

// A tensor-parallel rank holds rows `start .. start + rows` of the vocabulary: another rank's
// token is zeros here, which the all-reduce after the embedding fills in.
extern "C" __global__ void embed(const unsigned* ids, const bf16* table, bf16* out, int m, int h,
                                 long long start, long long rows) {
    EACH(i, (long long)m * h) {
        long long row = (long long)ids[i / h] - start;
        out[i] = row >= 0 && row < rows ? table[row * h + i % h] : (bf16)0;
    }
}

extern "C" __global__ void copy(const bf16* src, bf16* dst, long long n) {
    EACH(i, n) dst[i] = src[i];
}

extern "C" __global__ void add(const bf16* y, bf16* x, long long n) {
    EACH(i, n) x[i] = b(f(x[i]) + f(y[i]));
}

// A normed value `xn` (f32) scaled by its weight: as Qwen3RMSNorm, `bf16(w · bf16(xn))`; as
// Qwen3_5RMSNorm (`centred`), `bf16(xn · (1 + w))`.
__device__ __forceinline__ float scaled(float xn, float w, int centred) {
    return centred ? r(xn * (1.0f + w)) : r(w * r(xn));
}

// `out = w · bf16(x · rsqrt(mean(x²) + eps))`, as Qwen3RMSNorm (or Qwen3_5RMSNorm's
// `centred` form): one block per row.
extern "C" __global__ void rms_norm(const bf16* x, const bf16* w, bf16* out, int width, float eps,
                                    int centred) {
    __shared__ float shared[32];
    const bf16* row = x + (long long)blockIdx.x * width;
    bf16* o = out + (long long)blockIdx.x * width;
    float s = 0.0f;
    for (int i = threadIdx.x; i < width; i += blockDim.x) s += f(row[i]) * f(row[i]);
    float inv = 1.0f / sqrtf(block_sum(s, shared) / width + eps);
    for (int i = threadIdx.x; i < width; i += blockDim.x)
        o[i] = b(scaled(f(row[i]) * inv, f(w[i]), centred));
}

// Per (row, head) of q and k: RMSNorm over the head, then rotate-half RoPE over its first
// `rot` lanes at the row's position (the rest passed through, as Qwen3.5's partial rotary),
// with cos and sin rounded to bf16 and each product and the sum rounded, as
// `apply_rotary_pos_emb` in bf16. One block of `dim` threads per head.
extern "C" __global__ void qk_norm_rope(bf16* qkv, const int* positions, const bf16* q_norm,
                                        const bf16* k_norm, int heads, int dim, int width,
                                        float eps, float theta, int rot, int centred) {
    __shared__ float shared[32];
    extern __shared__ float normed[];
    int row = blockIdx.x, head = blockIdx.y, i = threadIdx.x;
    bf16* p = qkv + (long long)row * width + head * dim;  // k heads follow q heads
    const bf16* w = head < heads ? q_norm : k_norm;
    float v = f(p[i]);
    float inv = 1.0f / sqrtf(block_sum(v * v, shared) / dim + eps);
    float n = scaled(v * inv, f(w[i]), centred);
    normed[i] = n;
    __syncthreads();
    if (i >= rot) {
        p[i] = b(n);
        return;
    }
    int half = rot / 2;
    float inv_freq = 1.0f / powf(theta, (float)(2 * (i % half)) / (float)rot);
    float angle = inv_freq * (float)positions[row];
    float c = r(cosf(angle)), s = r(sinf(angle));
    float rotated = i < half ? -normed[i + half] : normed[i - half];
    p[i] = b(r(n * c) + r(rotated * s));
}

// The rows' k | v into their slots of the layer's KV pool (`[slots, 2 · kv width]`).
extern "C" __global__ void kv_append(const bf16* qkv, const long long* slots, bf16* kv, int m,
                                     int q_width, int kv_width, int width) {
    EACH(i, (long long)m * 2 * kv_width) {
        long long row = i / (2 * kv_width), c = i % (2 * kv_width);
        kv[slots[row] * 2 * kv_width + c] = qkv[row * width + q_width + c];
    }
}

// Causal GQA attention of one (row, head) over its sequence's tokens 0..=position, each read
// from the KV pool through the sequence's block table (token t: block table[s][t / block],
// row t % block): scores, softmax and the weighted sum in f32, the output rounded to bf16.
// Shared: one float per cached position.
extern "C" __global__ void attention(const bf16* qkv, const int* positions, const int* tables,
                                     const int* cu_seqlens, const bf16* kv, bf16* out,
                                     int heads, int kv_heads, int dim, int width, int seqs,
                                     int table_width, int block) {
    extern __shared__ float scores[];
    int row = blockIdx.x, h = blockIdx.y, g = h / (heads / kv_heads);
    int kv_width = kv_heads * dim, s = 0;
    while (s + 1 < seqs && row >= cu_seqlens[s + 1]) ++s;
    const int* table = tables + (long long)s * table_width;
    const bf16* q = qkv + (long long)row * width + h * dim;
    int seen = positions[row] + 1;
    float scale = 1.0f / sqrtf((float)dim);
    for (int t = threadIdx.x; t < seen; t += blockDim.x) {
        long long slot = (long long)table[t / block] * block + t % block;
        const bf16* k = kv + slot * 2 * kv_width + g * dim;
        float sc = 0.0f;
        for (int d = 0; d < dim; ++d) sc += f(q[d]) * f(k[d]);
        scores[t] = sc * scale;
    }
    __syncthreads();
    float top = __int_as_float(0xff800000), total = 0.0f;  // -inf
    for (int t = 0; t < seen; ++t) top = fmaxf(top, scores[t]);
    for (int t = 0; t < seen; ++t) total += expf(scores[t] - top);
    for (int d = threadIdx.x; d < dim; d += blockDim.x) {
        float acc = 0.0f;
        for (int t = 0; t < seen; ++t) {
            long long slot = (long long)table[t / block] * block + t % block;
            acc += expf(scores[t] - top) / total * f(kv[slot * 2 * kv_width + kv_width + g * dim + d]);
        }
        out[(long long)row * heads * dim + h * dim + d] = b(acc);
    }
}

// The router's choice for one row, as Qwen3MoeTopKRouter: softmax in f32, the K largest
// (the lowest id first among equals), their probabilities. At most 256 experts, 32 chosen.
__device__ void choose(const bf16* logits, int experts, int k, int* ids, float* probs) {
    float top = __int_as_float(0xff800000), total = 0.0f;  // -inf
    for (int e = 0; e < experts; ++e) top = fmaxf(top, f(logits[e]));
    for (int e = 0; e < experts; ++e) total += expf(f(logits[e]) - top);
    unsigned long long taken[4] = {0, 0, 0, 0};
    for (int c = 0; c < k; ++c) {
        int best = -1;
        float best_p = -1.0f;
        for (int e = 0; e < experts; ++e) {
            if ((taken[e / 64] >> (e % 64)) & 1ull) continue;
            float p = expf(f(logits[e]) - top) / total;
            if (p > best_p) { best_p = p; best = e; }
        }
        taken[best / 64] |= 1ull << (best % 64);
        ids[c] = best;
        probs[c] = best_p;
    }
}

extern "C" __global__ void top_k_ids(const bf16* logits, int* ids, int m, int experts, int k) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    int chosen[32];
    float probs[32];
    choose(logits + (long long)row * experts, experts, k, chosen, probs);
    for (int c = 0; c < k; ++c) ids[row * k + c] = chosen[c];
}

extern "C" __global__ void top_k_weights(const bf16* logits, float* weights, int m, int experts,
                                         int k, int normalize) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    int chosen[32];
    float probs[32], sum = 0.0f;
    choose(logits + (long long)row * experts, experts, k, chosen, probs);
    for (int c = 0; c < k; ++c) sum += probs[c];
    for (int c = 0; c < k; ++c) weights[row * k + c] = r(normalize ? probs[c] / sum : probs[c]);
}

// Row r (token r / k, choice r % k) through expert ids[r]'s gate_up_proj `[2w, h]`: the first
// w outputs into `gate`, the rest into `up`. One warp per output value.
extern "C" __global__ void experts_gate_up(const bf16* x, const int* ids, const bf16* gate_w,
                                           const bf16* up_w, bf16* gate, bf16* up, int rows,
                                           int k, int h, int w) {
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    if (warp >= (long long)rows * 2 * w) return;
    int r = warp / (2 * w), j = warp % (2 * w);
    // Expert ids[r]'s gate (j < w) or up row, each `[experts, w, h]`.
    const bf16* weight = (j < w ? gate_w : up_w) + ((long long)ids[r] * w + j % w) * h;
    float s = warp_dot(x + (long long)(r / k) * h, weight, h);
    if (threadIdx.x % 32 == 0) {
        if (j < w) gate[(long long)r * w + j] = b(s);
        else up[(long long)r * w + j - w] = b(s);
    }
}

// Row r of `act` through expert ids[r]'s down_proj `[h, w]`. One warp per output value.
extern "C" __global__ void experts_down(const bf16* act, const int* ids, const bf16* down,
                                        bf16* out, int rows, int h, int w) {
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    if (warp >= (long long)rows * h) return;
    int r = warp / h, j = warp % h;
    float s = warp_dot(act + (long long)r * w, down + ((long long)ids[r] * h + j) * w, w);
    if (threadIdx.x % 32 == 0) out[(long long)r * h + j] = b(s);
}

// SwiGLU over the gate output in place: `gate = bf16(bf16(silu(gate)) · up)`.
extern "C" __global__ void swiglu(const bf16* up, bf16* gate, long long n) {
    EACH(i, n) {
        float g = f(gate[i]);
        gate[i] = b(r(g / (1.0f + expf(-g))) * f(up[i]));
    }
}

// Each token's K expert outputs, each scaled by its weight and rounded, added into a bf16 sum
// in ascending expert id, as Qwen3MoeExperts accumulates them.
extern "C" __global__ void combine(const bf16* down, const int* ids, const float* weights,
                                   bf16* out, int m, int k, int h) {
    EACH(i, (long long)m * h) {
        long long t = i / h, col = i % h;
        const int* chosen = ids + t * k;
        float acc = 0.0f;
        int last = -1;
        for (int n = 0; n < k; ++n) {
            int next = -1;  // the choice with the smallest id above `last`
            for (int c = 0; c < k; ++c)
                if (chosen[c] > last && (next < 0 || chosen[c] < chosen[next])) next = c;
            last = chosen[next];
            long long row = t * k + next;
            acc = r(acc + r(f(down[row * h + col]) * weights[row]));
        }
        out[i] = b(acc);
    }
}
