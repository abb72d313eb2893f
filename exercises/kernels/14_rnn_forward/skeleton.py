"""Exercise 14: the forward pass of an Elman RNN (see README.md).

Run ``minitriton exercises check 14``.
"""

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
    wx = tl.load(wx_ptr + ds[:, None] * H + hs[None, :])  # D x H
    wh = tl.load(wh_ptr + hs[:, None] * H + hs[None, :])  # H x H
    bias = tl.load(b_ptr + hs)
    h = tl.load(h0_ptr + rows[:, None] * H + hs[None, :], mask=row_mask, other=0.0)
    for t in range(0, T):
        # TODO: load x[rows, t, :] (a BLOCK_B x D tile; use the strides),
        #       compute z = x @ wx + h @ wh + bias and the new h = tanh(z)
        #       (there is no tl.tanh: tanh(z) = 2 * sigmoid(2z) - 1),
        #       and store h into out[rows, t, :].
        pass
