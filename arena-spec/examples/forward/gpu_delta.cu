// Qwen3.5's kernels (`gpu_delta.rs`), compiled after `gpu.cu` in one NVRTC program (its
// bf16 helpers and `block_sum`): each computes what its host twin in `delta_net.rs`
// computes, in the same order, rounding at the same points. Plain and correct, not fast: a
// real engine runs the delta rule chunked (FLA's kernels) over every sequence at once.

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// `out ← bf16(out · bf16(sigmoid(gate)))`, the gate the last `qw` columns of each qkv row.
extern "C" __global__ void output_gate(const bf16* qkv, bf16* out, int m, int qw, int width) {
    EACH(i, (long long)m * qw) {
        long long row = i / qw, c = i % qw;
        float g = f(qkv[row * width + width - qw + c]);
        out[i] = b(f(out[i]) * r(sigmoid(g)));
    }
}

// `[β | g]` a row from `[b | a]`: β = bf16(sigmoid(b)), g = −exp(A_log)·softplus(a + dt_bias)
// (softplus's threshold 20, as torch's), `dt_a` the layer's `[dt_bias | A_log]`.
extern "C" __global__ void gdn_gates(const bf16* ba, const bf16* dt_a, float* gates, int m, int hv) {
    EACH(i, (long long)m * hv) {
        long long row = i / hv;
        int j = i % hv;
        float bb = f(ba[row * 2 * hv + j]), a = f(ba[row * 2 * hv + hv + j]);
        float x = a + f(dt_a[j]);
        float sp = x > 20.0f ? x : log1pf(expf(x));
        gates[row * 2 * hv + j] = r(sigmoid(bb));
        gates[row * 2 * hv + hv + j] = -expf(f(dt_a[hv + j])) * sp;
    }
}

// One sequence's causal conv, a thread a channel: input `i` of the history (counted from the
// state's oldest row) is state row `i` (zeros when `fresh`) or row `i − (K − 1)` of `qkvz`;
// output row `r` is `bf16(silu(bf16(Σ_j w[j] · input(r + j))))`, in f32. Then the state
// takes the last K − 1 inputs, in ascending rows: row `k` reads input `t + k`, a row not yet
// written (t ≥ 1).
extern "C" __global__ void gdn_conv(const bf16* qkvz, const bf16* w, bf16* state, float* out,
                                    int t, int c, int kernel, int width, int fresh) {
    int back = kernel - 1;
    EACH(ch, c) {
        for (int row = 0; row < t; ++row) {
            float sum = 0.0f;
            for (int j = 0; j < kernel; ++j) {
                int i = row + j;
                float x = i < back ? (fresh ? 0.0f : f(state[(long long)i * c + ch]))
                                   : f(qkvz[(long long)(i - back) * width + ch]);
                sum += f(w[ch * kernel + j]) * x;
            }
            float y = r(sum);
            out[(long long)row * c + ch] = r(y * sigmoid(y));
        }
        for (int k = 0; k < back; ++k) {
            int i = t + k;
            float x = i < back ? (fresh ? 0.0f : f(state[(long long)i * c + ch]))
                               : f(qkvz[(long long)(i - back) * width + ch]);
            state[(long long)k * c + ch] = b(x);
        }
    }
}

// One sequence's gated delta rule, a block a value head `j`, thread `vi` its state's row `vi`
// (`[Hv, Dv, Dk]`, zeroed first when `fresh`); q and k (head `j / (Hv / Hk)`) L2-normed from
// shared memory, q scaled by 1/√Dk; per token: the row decayed by exp(g), `kv = row · k`,
// `row += k · (v − kv) · β`, `o = row · q`, the output in bf16. Shared: q and k, 2·Dk floats.
extern "C" __global__ void gdn_delta_rule(const float* conv, const float* gates, float* state,
                                          bf16* out, int t, int hk, int hv, int dk, int dv,
                                          int fresh) {
    extern __shared__ float qk[];
    int j = blockIdx.x, vi = threadIdx.x, kh = j / (hv / hk);
    int c = 2 * hk * dk + hv * dv;
    float scale = 1.0f / sqrtf((float)dk);
    float* row = state + ((long long)j * dv + vi) * dk;
    if (vi < dv && fresh)
        for (int k = 0; k < dk; ++k) row[k] = 0.0f;
    for (int tok = 0; tok < t; ++tok) {
        const float* x = conv + (long long)tok * c;
        __syncthreads();
        for (int k = threadIdx.x; k < dk; k += blockDim.x) {
            qk[k] = x[kh * dk + k];
            qk[dk + k] = x[hk * dk + kh * dk + k];
        }
        __syncthreads();
        if (vi >= dv) continue;
        float sq = 0.0f, sk = 0.0f;
        for (int k = 0; k < dk; ++k) sq += qk[k] * qk[k];
        for (int k = 0; k < dk; ++k) sk += qk[dk + k] * qk[dk + k];
        float iq = 1.0f / sqrtf(sq + 1e-6f), ik = 1.0f / sqrtf(sk + 1e-6f);
        float beta = gates[(long long)tok * 2 * hv + j];
        float decay = expf(gates[(long long)tok * 2 * hv + hv + j]);
        float kv = 0.0f;
        for (int k = 0; k < dk; ++k) {
            row[k] *= decay;
            kv += row[k] * (qk[dk + k] * ik);
        }
        float delta = (x[2 * hk * dk + j * dv + vi] - kv) * beta;
        float o = 0.0f;
        for (int k = 0; k < dk; ++k) row[k] += qk[dk + k] * ik * delta;
        for (int k = 0; k < dk; ++k) o += row[k] * (qk[k] * iq * scale);
        out[(long long)tok * hv * dv + j * dv + vi] = b(o);
    }
}

// The gated RMSNorm in place, a block a (row, value head) of `dv` threads:
// `bf16(bf16(w · bf16(o · rsqrt(mean(o²) + eps))) · silu(z))`, z the last `hv · dv` columns of
// each qkvz row.
extern "C" __global__ void gdn_gated_norm(const bf16* qkvz, const bf16* w, bf16* out, int hv,
                                          int dv, int width, float eps) {
    __shared__ float shared[32];
    int row = blockIdx.x, head = blockIdx.y, i = threadIdx.x;
    bf16* o = out + ((long long)row * hv + head) * dv;
    float v = f(o[i]);
    float inv = 1.0f / sqrtf(block_sum(v * v, shared) / dv + eps);
    float y = r(f(w[i]) * r(v * inv));
    float z = f(qkvz[(long long)row * width + width - hv * dv + head * dv + i]);
    o[i] = b(y * (z * sigmoid(z)));
}
