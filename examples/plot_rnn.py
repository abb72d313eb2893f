"""
RNN, GRU and LSTM forward
=========================

The forward pass of three recurrent cells over a whole sequence. Each program
owns a block of ``BLOCK_B`` sequences of the batch and keeps their hidden
state in registers for the whole time loop; the weights are loaded once, and
every step is two ``tl.dot`` products per gate::

    RNN:  h = tanh(x W + h U + b)
    GRU:  r = sigmoid(x W_r + h U_r + b_r)       z = sigmoid(x W_z + h U_z + b_z)
          n = tanh(x W_n + r * (h U_n) + b_n)    h = (1 - z) * n + z * h
    LSTM: i, f, o = sigmoid(...)   g = tanh(...)   c = f * c + i * g   h = o * tanh(c)

The gate weights are stored side by side (``W`` is ``IN x (G*H)`` for ``G``
gates), as in PyTorch. Triton has no ``tl.tanh``, so ``tanh`` is a ``@jit``
helper built on ``tl.sigmoid``.
"""

# sphinx_gallery_thumbnail_path = "_static/thumbs/plot_rnn.png"

import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def load_gate(w_ptr, gate, rows, cols, ROW_LEN: tl.constexpr, H: tl.constexpr):
    """Gate ``gate``'s block ``w[rows, gate*H + cols]`` of a side-by-side weight."""
    return tl.load(w_ptr + rows[:, None] * ROW_LEN + gate * H + cols[None, :])


@triton.jit
def rnn_fwd(
    x_ptr, w_ptr, u_ptr, b_ptr, h_ptr, T, IN: tl.constexpr, H: tl.constexpr, BLOCK_B: tl.constexpr
):
    batch = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    ri, rh = tl.arange(0, IN), tl.arange(0, H)
    w = load_gate(w_ptr, 0, ri, rh, H, H)
    u = load_gate(u_ptr, 0, rh, rh, H, H)
    b = tl.load(b_ptr + rh)
    h = tl.zeros((BLOCK_B, H), dtype=tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + (t * tl.num_programs(0) * BLOCK_B + batch[:, None]) * IN + ri[None, :])
        h = tanh(tl.dot(x, w) + tl.dot(h, u) + b[None, :])
    tl.store(h_ptr + batch[:, None] * H + rh[None, :], h)


@triton.jit
def gru_fwd(
    x_ptr, w_ptr, u_ptr, b_ptr, h_ptr, T, IN: tl.constexpr, H: tl.constexpr, BLOCK_B: tl.constexpr
):
    batch = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    ri, rh = tl.arange(0, IN), tl.arange(0, H)
    w_r, w_z, w_n = (
        load_gate(w_ptr, 0, ri, rh, 3 * H, H),
        load_gate(w_ptr, 1, ri, rh, 3 * H, H),
        load_gate(w_ptr, 2, ri, rh, 3 * H, H),
    )
    u_r, u_z, u_n = (
        load_gate(u_ptr, 0, rh, rh, 3 * H, H),
        load_gate(u_ptr, 1, rh, rh, 3 * H, H),
        load_gate(u_ptr, 2, rh, rh, 3 * H, H),
    )
    b_r = tl.load(b_ptr + rh)[None, :]
    b_z = tl.load(b_ptr + H + rh)[None, :]
    b_n = tl.load(b_ptr + 2 * H + rh)[None, :]
    h = tl.zeros((BLOCK_B, H), dtype=tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + (t * tl.num_programs(0) * BLOCK_B + batch[:, None]) * IN + ri[None, :])
        r = tl.sigmoid(tl.dot(x, w_r) + tl.dot(h, u_r) + b_r)
        z = tl.sigmoid(tl.dot(x, w_z) + tl.dot(h, u_z) + b_z)
        n = tanh(tl.dot(x, w_n) + r * tl.dot(h, u_n) + b_n)
        h = (1 - z) * n + z * h
    tl.store(h_ptr + batch[:, None] * H + rh[None, :], h)


@triton.jit
def lstm_fwd(
    x_ptr,
    w_ptr,
    u_ptr,
    b_ptr,
    h_ptr,
    c_ptr,
    T,
    IN: tl.constexpr,
    H: tl.constexpr,
    BLOCK_B: tl.constexpr,
):
    batch = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    ri, rh = tl.arange(0, IN), tl.arange(0, H)
    w_i, w_f = load_gate(w_ptr, 0, ri, rh, 4 * H, H), load_gate(w_ptr, 1, ri, rh, 4 * H, H)
    w_g, w_o = load_gate(w_ptr, 2, ri, rh, 4 * H, H), load_gate(w_ptr, 3, ri, rh, 4 * H, H)
    u_i, u_f = load_gate(u_ptr, 0, rh, rh, 4 * H, H), load_gate(u_ptr, 1, rh, rh, 4 * H, H)
    u_g, u_o = load_gate(u_ptr, 2, rh, rh, 4 * H, H), load_gate(u_ptr, 3, rh, rh, 4 * H, H)
    b_i = tl.load(b_ptr + rh)[None, :]
    b_f = tl.load(b_ptr + H + rh)[None, :]
    b_g = tl.load(b_ptr + 2 * H + rh)[None, :]
    b_o = tl.load(b_ptr + 3 * H + rh)[None, :]
    h = tl.zeros((BLOCK_B, H), dtype=tl.float32)
    c = tl.zeros((BLOCK_B, H), dtype=tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + (t * tl.num_programs(0) * BLOCK_B + batch[:, None]) * IN + ri[None, :])
        i = tl.sigmoid(tl.dot(x, w_i) + tl.dot(h, u_i) + b_i)
        f = tl.sigmoid(tl.dot(x, w_f) + tl.dot(h, u_f) + b_f)
        g = tanh(tl.dot(x, w_g) + tl.dot(h, u_g) + b_g)
        o = tl.sigmoid(tl.dot(x, w_o) + tl.dot(h, u_o) + b_o)
        c = f * c + i * g
        h = o * tanh(c)
    tl.store(h_ptr + batch[:, None] * H + rh[None, :], h)
    tl.store(c_ptr + batch[:, None] * H + rh[None, :], c)


# %%
# NumPy references, one time step at a time.


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def rnn_ref(x, w, u, b):
    h = np.zeros((x.shape[1], u.shape[0]), dtype=np.float32)
    for xt in x:
        h = np.tanh(xt @ w + h @ u + b)
    return h


def gru_ref(x, w, u, b):
    H = u.shape[0]
    h = np.zeros((x.shape[1], H), dtype=np.float32)
    for xt in x:
        gx, gh = xt @ w, h @ u
        r = sigmoid(gx[:, :H] + gh[:, :H] + b[:H])
        z = sigmoid(gx[:, H : 2 * H] + gh[:, H : 2 * H] + b[H : 2 * H])
        n = np.tanh(gx[:, 2 * H :] + r * gh[:, 2 * H :] + b[2 * H :])
        h = (1 - z) * n + z * h
    return h


def lstm_ref(x, w, u, b):
    H = u.shape[0]
    h = np.zeros((x.shape[1], H), dtype=np.float32)
    c = np.zeros_like(h)
    for xt in x:
        gates = xt @ w + h @ u + b
        i, f = sigmoid(gates[:, :H]), sigmoid(gates[:, H : 2 * H])
        g, o = np.tanh(gates[:, 2 * H : 3 * H]), sigmoid(gates[:, 3 * H :])
        c = f * c + i * g
        h = o * np.tanh(c)
    return h, c


# %%
# Run all three on a batch of 32 sequences of 12 steps, 16 inputs and 32
# hidden units, and check them against NumPy.

rng = np.random.default_rng(0)
T, B, IN, H, BLOCK_B = 12, 32, 16, 32, 16
x = rng.standard_normal((T, B, IN)).astype(np.float32)
grid = (B // BLOCK_B,)


def weights(gates):
    w = (rng.standard_normal((IN, gates * H)) / np.sqrt(IN)).astype(np.float32)
    u = (rng.standard_normal((H, gates * H)) / np.sqrt(H)).astype(np.float32)
    b = (0.1 * rng.standard_normal(gates * H)).astype(np.float32)
    return w, u, b


# The references are exact fp32, while tl.dot rounds its fp32 inputs to TF32
# (Triton's default input_precision), hence the tolerance of 1e-2.
w, u, b = weights(1)
h = np.empty((B, H), dtype=np.float32)
rnn_fwd[grid](x, w, u, b, h, T, IN=IN, H=H, BLOCK_B=BLOCK_B)
np.testing.assert_allclose(h, rnn_ref(x, w, u, b), rtol=1e-2, atol=1e-2)
print("RNN  max error:", np.abs(h - rnn_ref(x, w, u, b)).max())

w, u, b = weights(3)
gru_fwd[grid](x, w, u, b, h, T, IN=IN, H=H, BLOCK_B=BLOCK_B)
np.testing.assert_allclose(h, gru_ref(x, w, u, b), rtol=1e-2, atol=1e-2)
print("GRU  max error:", np.abs(h - gru_ref(x, w, u, b)).max())

w, u, b = weights(4)
c = np.empty((B, H), dtype=np.float32)
lstm_fwd[grid](x, w, u, b, h, c, T, IN=IN, H=H, BLOCK_B=BLOCK_B)
h_ref, c_ref = lstm_ref(x, w, u, b)
np.testing.assert_allclose(h, h_ref, rtol=1e-2, atol=1e-2)
np.testing.assert_allclose(c, c_ref, rtol=1e-2, atol=1e-2)
print("LSTM max error:", max(np.abs(h - h_ref).max(), np.abs(c - c_ref).max()))
