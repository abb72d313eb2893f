"""Small neural-network kernels: SGD training step, batch norm, an RNN and an LSTM cell.

Written as for real Triton; every size may be smaller than its block.
"""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def linreg_grad_kernel(
    x_ptr, y_ptr, w_ptr, grad_ptr, B, D, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr
):
    """Accumulate ``grad += sum_b (x_b . w - y_b) x_b`` over this program's samples.

    Programs add their partial gradients with ``tl.atomic_add``.
    """
    pid = tl.program_id(0)
    rows = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    cols = tl.arange(0, BLOCK_D)
    row_mask = rows < B
    col_mask = cols < D
    x = tl.load(
        x_ptr + rows[:, None] * D + cols[None, :],
        mask=row_mask[:, None] & col_mask[None, :],
        other=0.0,
    )
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0)
    y = tl.load(y_ptr + rows, mask=row_mask, other=0.0)
    residual = tl.sum(x * w[None, :], axis=1) - y
    partial = tl.sum(residual[:, None] * x, axis=0)
    tl.atomic_add(grad_ptr + cols, partial, mask=col_mask)


@triton.jit
def sgd_momentum_kernel(w_ptr, v_ptr, grad_ptr, n, lr, momentum, scale, BLOCK: tl.constexpr):
    """``v = momentum * v + scale * grad``; ``w -= lr * v``; then zero ``grad``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask)
    v = tl.load(v_ptr + offs, mask=mask)
    g = tl.load(grad_ptr + offs, mask=mask)
    v = momentum * v + scale * g
    w = w - lr * v
    tl.store(v_ptr + offs, v, mask=mask)
    tl.store(w_ptr + offs, w, mask=mask)
    tl.store(grad_ptr + offs, tl.zeros_like(g), mask=mask)


@triton.jit
def batch_norm_fwd_kernel(
    x_ptr, y_ptr, gamma_ptr, beta_ptr, mean_ptr, var_ptr, run_mean_ptr, run_var_ptr,
    N, C, eps, momentum,
    BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr,
):
    """Training-mode batch norm of x (N, C) over the batch, one block of channels per program.

    Writes y, the batch mean and biased variance, and updates the running
    statistics (with the unbiased variance, as PyTorch does).
    """
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    total = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < N) & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=mask, other=0.0)
        total += tl.sum(x, axis=0)
    mean = total / N
    sq = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < N) & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=mask, other=0.0)
        diff = tl.where(mask, x - mean[None, :], 0.0)
        sq += tl.sum(diff * diff, axis=0)
    var = sq / N
    rstd = 1.0 / tl.sqrt(var + eps)
    gamma = tl.load(gamma_ptr + cols, mask=col_mask, other=1.0)
    beta = tl.load(beta_ptr + cols, mask=col_mask, other=0.0)
    for start in range(0, N, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < N) & col_mask[None, :]
        offs = rows[:, None] * C + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = (x - mean[None, :]) * rstd[None, :] * gamma[None, :] + beta[None, :]
        tl.store(y_ptr + offs, y, mask=mask)
    tl.store(mean_ptr + cols, mean, mask=col_mask)
    tl.store(var_ptr + cols, var, mask=col_mask)
    run_mean = tl.load(run_mean_ptr + cols, mask=col_mask)
    run_var = tl.load(run_var_ptr + cols, mask=col_mask)
    unbiased = sq / (N - 1)
    tl.store(run_mean_ptr + cols, (1 - momentum) * run_mean + momentum * mean, mask=col_mask)
    tl.store(run_var_ptr + cols, (1 - momentum) * run_var + momentum * unbiased, mask=col_mask)


@triton.jit
def tanh(x):
    """``tanh`` from ``exp``, stable for large ``|x|``."""
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x >= 0, t, -t)


@triton.jit
def rnn_fwd_kernel(
    x_ptr, h0_ptr, wx_ptr, wh_ptr, b_ptr, out_ptr,
    T, B, D_IN, H,
    BLOCK_B: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_H: tl.constexpr,
):
    """Elman RNN over T steps in one kernel: ``h_t = tanh(x_t Wx + h_{t-1} Wh + b)``.

    x is (T, B, D_IN), Wx (D_IN, H), Wh (H, H), out (T, B, H). Each program owns
    BLOCK_B sequences and keeps the weights and its hidden state on chip.
    """
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_i = tl.arange(0, BLOCK_I)
    offs_h = tl.arange(0, BLOCK_H)
    row_mask = rows < B
    i_mask = offs_i < D_IN
    h_mask = offs_h < H
    # Padding rows and columns of the weights are zero, so padding never leaks.
    wx = tl.load(
        wx_ptr + offs_i[:, None] * H + offs_h[None, :],
        mask=i_mask[:, None] & h_mask[None, :],
        other=0.0,
    )
    wh = tl.load(
        wh_ptr + offs_h[:, None] * H + offs_h[None, :],
        mask=h_mask[:, None] & h_mask[None, :],
        other=0.0,
    )
    bias = tl.load(b_ptr + offs_h, mask=h_mask, other=0.0)
    bh_mask = row_mask[:, None] & h_mask[None, :]
    h = tl.load(h0_ptr + rows[:, None] * H + offs_h[None, :], mask=bh_mask, other=0.0)
    for t in range(0, T):
        x = tl.load(
            x_ptr + (t * B + rows[:, None]) * D_IN + offs_i[None, :],
            mask=row_mask[:, None] & i_mask[None, :],
            other=0.0,
        )
        pre = tl.dot(x, wx, input_precision="ieee")
        pre = tl.dot(h, wh, pre, input_precision="ieee")
        h = tanh(pre + bias[None, :])
        tl.store(out_ptr + (t * B + rows[:, None]) * H + offs_h[None, :], h, mask=bh_mask)


@triton.jit
def _gate(x, h, wx_ptr, wh_ptr, b_ptr, gate, D_IN, H, offs_i, offs_h):
    """Pre-activation of one LSTM gate: columns ``gate * H ...`` of Wx (D_IN, 4H) and Wh (H, 4H)."""
    i_mask = offs_i < D_IN
    h_mask = offs_h < H
    col = gate * H + offs_h
    wx = tl.load(
        wx_ptr + offs_i[:, None] * (4 * H) + col[None, :],
        mask=i_mask[:, None] & h_mask[None, :],
        other=0.0,
    )
    wh = tl.load(
        wh_ptr + offs_h[:, None] * (4 * H) + col[None, :],
        mask=h_mask[:, None] & h_mask[None, :],
        other=0.0,
    )
    b = tl.load(b_ptr + col, mask=h_mask, other=0.0)
    acc = tl.dot(x, wx, input_precision="ieee")
    acc = tl.dot(h, wh, acc, input_precision="ieee")
    return acc + b[None, :]


@triton.jit
def lstm_cell_kernel(
    x_ptr, h_ptr, c_ptr, wx_ptr, wh_ptr, b_ptr, h_out_ptr, c_out_ptr,
    B, D_IN, H,
    BLOCK_B: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_H: tl.constexpr,
):
    """One LSTM step with gates in PyTorch's order (input, forget, cell, output)."""
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_i = tl.arange(0, BLOCK_I)
    offs_h = tl.arange(0, BLOCK_H)
    row_mask = rows < B
    x_mask = row_mask[:, None] & (offs_i[None, :] < D_IN)
    bh_mask = row_mask[:, None] & (offs_h[None, :] < H)
    x = tl.load(x_ptr + rows[:, None] * D_IN + offs_i[None, :], mask=x_mask, other=0.0)
    h = tl.load(h_ptr + rows[:, None] * H + offs_h[None, :], mask=bh_mask, other=0.0)
    c = tl.load(c_ptr + rows[:, None] * H + offs_h[None, :], mask=bh_mask, other=0.0)
    i_gate = tl.sigmoid(_gate(x, h, wx_ptr, wh_ptr, b_ptr, 0, D_IN, H, offs_i, offs_h))
    f_gate = tl.sigmoid(_gate(x, h, wx_ptr, wh_ptr, b_ptr, 1, D_IN, H, offs_i, offs_h))
    g_gate = tanh(_gate(x, h, wx_ptr, wh_ptr, b_ptr, 2, D_IN, H, offs_i, offs_h))
    o_gate = tl.sigmoid(_gate(x, h, wx_ptr, wh_ptr, b_ptr, 3, D_IN, H, offs_i, offs_h))
    c_new = f_gate * c + i_gate * g_gate
    h_new = o_gate * tanh(c_new)
    tl.store(c_out_ptr + rows[:, None] * H + offs_h[None, :], c_new, mask=bh_mask)
    tl.store(h_out_ptr + rows[:, None] * H + offs_h[None, :], h_new, mask=bh_mask)
