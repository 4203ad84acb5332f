//! The arguments of a batched matrix product on a device's BLAS ([`super::Runtime::gemm`]).

use super::memory::Buffer;
use crate::dtype::DType;
use crate::layout::Layout;

/// One operand: its memory and layout (`[..batch, rows, cols]`, elements of the product's dtype).
#[derive(Copy, Clone, Debug)]
pub struct GemmOperand<'a> {
    /// The memory.
    pub buffer: &'a Buffer,
    /// The layout in elements; its last two axes have a [`Layout::matrix_form`].
    pub layout: &'a Layout,
}

/// `out = a @ b` for `a: [..batch, m, k]`, `b: [..batch, k, n]` with batch axes already
/// broadcast to `out`'s, every operand of `dtype`, `out` contiguous and `k > 0`.
#[derive(Copy, Clone, Debug)]
pub struct Gemm<'a> {
    /// The left operand.
    pub a: GemmOperand<'a>,
    /// The right operand.
    pub b: GemmOperand<'a>,
    /// The result.
    pub out: GemmOperand<'a>,
    /// The dtype of all three.
    pub dtype: DType,
}

impl Gemm<'_> {
    /// `(m, n, k)`.
    pub fn dims(&self) -> (usize, usize, usize) {
        let nd = self.out.layout.ndim();
        let (m, n) = (
            self.out.layout.shape()[nd - 2],
            self.out.layout.shape()[nd - 1],
        );
        (m, n, self.a.layout.shape()[nd - 1])
    }

    /// Splits the batch axes into an outer part looped over and an inner run that all three
    /// operands step through with one stride each: `(outer shape, inner count, strides)`.
    pub fn batch_plan(&self) -> (Vec<usize>, usize, [i64; 3]) {
        let layouts = [self.a.layout, self.b.layout, self.out.layout];
        let nb = self.out.layout.ndim() - 2;
        let shape = &self.out.layout.shape()[..nb];
        let stride = |i: usize, ax: usize| layouts[i].strides()[ax] as i64;
        let mut split = nb;
        let mut count = 1usize;
        let mut strides = [0i64; 3];
        while split > 0 {
            let ax = split - 1;
            let len = shape[ax];
            if len == 1 {
                split -= 1;
                continue;
            }
            if count == 1 {
                strides = [stride(0, ax), stride(1, ax), stride(2, ax)];
            } else if (0..3).any(|i| stride(i, ax) != strides[i] * count as i64) {
                break;
            }
            count *= len;
            split -= 1;
        }
        (shape[..split].to_vec(), count, strides)
    }
}
