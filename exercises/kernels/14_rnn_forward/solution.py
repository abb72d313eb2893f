"""Exercise 14, reference solution: a persistent RNN forward pass."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def rnn_forward_kernel(
    x_ptr, h0_ptr, wx_ptr, wh_ptr, b_ptr, out_ptr, B, T,
    stride_xb, stride_xt, stride_ob, stride_ot,
    D: tl.constexpr, H: tl.constexpr, BLOCK_B: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    rows = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    row_mask = rows[:, None] < B
    ds = tl.arange(0, D)
    hs = tl.arange(0, H)
    # The weights are loaded once and stay on chip for all T steps.
    wx = tl.load(wx_ptr + ds[:, None] * H + hs[None, :])
    wh = tl.load(wh_ptr + hs[:, None] * H + hs[None, :])
    bias = tl.load(b_ptr + hs)
    h = tl.load(h0_ptr + rows[:, None] * H + hs[None, :], mask=row_mask, other=0.0)
    for t in range(0, T):
        x_ptrs = x_ptr + rows[:, None] * stride_xb + t * stride_xt + ds[None, :]
        x = tl.load(x_ptrs, mask=row_mask, other=0.0)
        z = tl.dot(x, wx) + tl.dot(h, wh) + bias[None, :]
        h = 2.0 * tl.sigmoid(2.0 * z) - 1.0  # tanh(z)
        o_ptrs = out_ptr + rows[:, None] * stride_ob + t * stride_ot + hs[None, :]
        tl.store(o_ptrs, h, mask=row_mask)
