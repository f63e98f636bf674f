//! [`linear`]: a linear layer's GEMM on cuBLAS, its dimensions read from the views' shapes, so
//! an engine runs `y = x · wᵀ` over arena buffers without an `unsafe` call whose `m`, `n`, `k`
//! and leading dimensions it works out by hand.

use crate::dtype::bf16;
use crate::view::{View, ViewMut};
use crate::CudaDevice;
use cudarc::cublas::{sys as blas_sys, CudaBlas, Gemm, GemmConfig};

/// Why [`linear`] refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinearError {
    /// The three views do not make one product: names each buffer with its shape.
    #[error("linear: {shapes}: {why}")]
    Shapes {
        x: &'static str,
        w: &'static str,
        y: &'static str,
        /// `` x `name` [m, k], w `name` (n values), y `name` [m, n] ``.
        shapes: String,
        why: String,
    },
    /// cuBLAS refused the call.
    #[error("linear: cuBLAS: {0}")]
    Cublas(String),
}

/// `y[m, n] = x[m, k] · w[n, k]ᵀ` in BF16 (cuBLAS's GEMM, accumulating in f32), the product
/// of a linear layer whose weight is stored `[out, in]` as transformers' `nn.Linear` stores
/// it. `m` and `k` are `x`'s shape (its rows, and the product of the rest); `n` is `y`'s last
/// dimension, and `y` must have `m` rows; `w` holds exactly `n · k` values (a weight place
/// read as `bf16` with `View::cast` is flat: its count is what is checked). Narrow `x` and `y`
/// to the step's rows first (`rows(m)`): a buffer sized for `max_batch_tokens` multiplies
/// all of them. Runs on `blas`'s stream, which must be the one the views' work is ordered on.
pub fn linear(
    blas: &CudaBlas,
    x: &View<'_, bf16, CudaDevice>,
    w: &View<'_, bf16, CudaDevice>,
    y: &mut ViewMut<'_, bf16, CudaDevice>,
) -> Result<(), LinearError> {
    let (xs, ys) = (x.shape(), y.shape());
    let refuse = |why: String| LinearError::Shapes {
        x: x.name(),
        w: w.name(),
        y: y.name(),
        shapes: format!(
            "x `{}` {:?}, w `{}` ({} values), y `{}` {:?}",
            x.name(),
            &*xs,
            w.name(),
            w.len(),
            y.name(),
            &*ys
        ),
        why,
    };
    if xs.len() < 2 || ys.len() < 2 {
        return Err(refuse("x and y need rows and columns".into()));
    }
    let (m, k) = (xs[0], xs[1..].iter().product::<usize>());
    let (y_rows, n) = (ys[0], ys[1..].iter().product::<usize>());
    if y_rows != m {
        return Err(refuse(format!("{m} rows in, {y_rows} out")));
    }
    if w.len() != n * k {
        return Err(refuse(format!("w holds {} values, not {n} × {k}", w.len())));
    }
    if x.len() < m * k || y.len() < m * n {
        return Err(refuse("a view holds fewer values than its shape".into()));
    }
    if m == 0 || n == 0 || k == 0 {
        return Ok(());
    }
    let int = |v: usize| i32::try_from(v).map_err(|_| refuse(format!("{v} exceeds cuBLAS's i32")));
    let (m32, n32, k32) = (int(m)?, int(n)?, int(k)?);
    // Row-major y = x · wᵀ is column-major yᵀ = w · xᵀ: cuBLAS's first operand is `w` read
    // transposed from its `[k, n]` column-major storage, its second `x` as `[k, m]`.
    let config = GemmConfig {
        transa: blas_sys::cublasOperation_t::CUBLAS_OP_T,
        transb: blas_sys::cublasOperation_t::CUBLAS_OP_N,
        m: n32,
        n: m32,
        k: k32,
        alpha: half::bf16::ONE,
        lda: k32,
        ldb: k32,
        beta: half::bf16::ZERO,
        ldc: n32,
    };
    // SAFETY: `w` holds n·k values, `x` at least m·k and `y` at least m·n, each read or
    // written at leading dimension k, k and n (checked above); all three are device memory.
    unsafe { blas.gemm(config, w, x, y) }.map_err(|e| LinearError::Cublas(e.to_string()))
}
