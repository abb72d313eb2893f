"""
Image data augmentation
=======================

A data-augmentation kernel for a batch of RGB images, stored channel-first
(``N x C x H x W``): each image gets its own random crop and a random
horizontal flip, then each channel is normalized with its mean and standard
deviation, all in one pass over the pixels. One program handles one channel
of one image: a ``CROP x CROP`` block of 2-D offsets gathers the source
pixels, with ``tl.where`` choosing flipped or straight columns.
"""

import matplotlib.pyplot as plt
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def augment_kernel(
    src_ptr,
    dst_ptr,
    tops_ptr,
    lefts_ptr,
    flips_ptr,
    mean_ptr,
    std_ptr,
    C: tl.constexpr,
    H: tl.constexpr,
    W: tl.constexpr,
    CROP: tl.constexpr,
):
    image = tl.program_id(0)
    channel = tl.program_id(1)
    top = tl.load(tops_ptr + image)
    left = tl.load(lefts_ptr + image)
    flip = tl.load(flips_ptr + image) != 0
    rows = tl.arange(0, CROP)
    cols = tl.arange(0, CROP)
    src_cols = tl.where(flip, CROP - 1 - cols, cols) + left
    plane = (image * C + channel) * H * W
    pixels = tl.load(src_ptr + plane + (top + rows)[:, None] * W + src_cols[None, :])
    mean = tl.load(mean_ptr + channel)
    std = tl.load(std_ptr + channel)
    out = (pixels - mean) / std
    dst_plane = (image * C + channel) * CROP * CROP
    tl.store(dst_ptr + dst_plane + rows[:, None] * CROP + cols[None, :], out)


def augment(images, tops, lefts, flips, mean, std, crop):
    """Crop, flip and normalize a batch of ``N x C x H x W`` float32 images."""
    N, C, H, W = images.shape
    out = np.empty((N, C, crop, crop), dtype=np.float32)
    augment_kernel[(N, C)](images, out, tops, lefts, flips, mean, std, C=C, H=H, W=W, CROP=crop)
    return out


# %%
# Synthetic 48 x 48 pictures: a colored disc and a stripe on a gradient
# background, so that crops and flips are easy to see.


def picture(k, size=48):
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.stack([xx, yy, 0.5 * (1 - xx)]).astype(np.float32)
    disc = (xx - 0.3 - 0.1 * k) ** 2 + (yy - 0.4) ** 2 < 0.04
    img[k % 3][disc] = 1.0
    img[:, :, 6 + 4 * k : 9 + 4 * k] = 0.9
    return img


N, C, SIZE, CROP = 4, 3, 48, 32
images = np.stack([picture(k, SIZE) for k in range(N)])
rng = np.random.default_rng(0)
tops = rng.integers(0, SIZE - CROP + 1, N).astype(np.int32)
lefts = rng.integers(0, SIZE - CROP + 1, N).astype(np.int32)
flips = np.array([0, 1, 0, 1], dtype=np.int32)
mean = images.mean(axis=(0, 2, 3)).astype(np.float32)
std = images.std(axis=(0, 2, 3)).astype(np.float32)
out = augment(images, tops, lefts, flips, mean, std, CROP)

# %%
# Check against the same augmentation written with NumPy slicing.

expected = np.empty_like(out)
for k in range(N):
    crop = images[k, :, tops[k] : tops[k] + CROP, lefts[k] : lefts[k] + CROP]
    crop = crop[:, :, ::-1] if flips[k] else crop
    expected[k] = (crop - mean[:, None, None]) / std[:, None, None]
np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
print("max error:", np.abs(out - expected).max())

# %%
# Originals (top) and augmented crops (bottom; flipped ones are marked),
# un-normalized for display.

fig, axes = plt.subplots(2, N, figsize=(2.2 * N, 4.6))
for k in range(N):
    shown = out[k] * std[:, None, None] + mean[:, None, None]
    axes[0, k].imshow(images[k].transpose(1, 2, 0).clip(0, 1))
    axes[1, k].imshow(shown.transpose(1, 2, 0).clip(0, 1))
    axes[1, k].set_title("flipped" if flips[k] else "", fontsize=9)
    for ax in axes[:, k]:
        ax.set_axis_off()
fig.suptitle("random crop + flip + normalize")
plt.show()
