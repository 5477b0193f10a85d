"""Writes tests/fixtures/index_ops.safetensors: inputs and PyTorch outputs of
argmax, topk, cumsum and arange for tests/lit/run/Inputs/index-ops.tfm.

    .venv/bin/python tools/gen_index_ops.py

Deterministic (a fixed seed, no download). `x` has ties (values rounded to a
quarter) so that argmax/topk's order among equal values is exercised: both
take the lower index first, as PyTorch's argmax does; topk's reference is a
stable descending sort, which PyTorch's topk matches on distinct values.
`t` has ties on purpose in every row (all equal, a tied maximum first or
last, tied negative maxima): argmax takes the first maximal index, as
PyTorch documents and NumPy does (checked here against numpy.argmax).
"""

import os

import numpy as np
import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "index_ops.safetensors")


def tied_rows(batch, seq):
    """Rows of 12 whose maximum is tied: all equal, tied early, tied at the
    end, tied negatives; columns tie across `seq` too (argmax over dim 1)."""
    t = torch.zeros(batch, seq, 12)
    t[0, 1, [1, 2]] = 3.0                 # tied at 1 and 2 -> 1
    t[0, 2, [5, 11]] = 2.5                # tied at 5 and 11 -> 5
    t[0, 3] = -1.0
    t[0, 3, [3, 4, 9]] = -0.5             # tied negative maxima -> 3
    t[0, 4, 11] = 1.0                     # a single maximum, last -> 11
    for i in range(seq):                  # 7 at i + 1 and at 10 -> i + 1
        t[1, i] = torch.arange(12, dtype=torch.float32) * 0.25
        t[1, i, [i + 1, 10]] = 7.0
    return t


def main():
    g = torch.Generator().manual_seed(11)
    batch, seq = 2, 5
    x = torch.round(torch.randn(batch, seq, 12, generator=g) * 4) / 4
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], dtype=torch.int32)
    t = tied_rows(batch, seq)
    # Stable sort: equal values keep their order (lower index first).
    order = torch.sort(x, dim=-1, descending=True, stable=True)
    expected = {
        "am": torch.argmax(x, dim=-1),
        "am0": torch.argmax(x, dim=1, keepdim=True),
        "topv": order.values[..., :3],
        "topi": order.indices[..., :3],
        "cs": torch.cumsum(x, dim=1),
        "csm": torch.cumsum(mask, dim=-1),
        "pos": torch.cumsum(mask, dim=-1) * mask - 1,
        "ar": torch.arange(seq),
        "ar2": torch.arange(3, 3 + 5 * -2, -2),
        "amt": torch.argmax(t, dim=-1),
        "amt0": torch.argmax(t, dim=1, keepdim=True),
        "topti": torch.sort(t, dim=-1, descending=True,
                            stable=True).indices[..., :3],
    }
    # The tie-break is the first maximal index, in PyTorch and in NumPy.
    assert np.array_equal(expected["amt"].numpy(), np.argmax(t.numpy(), -1))
    assert np.array_equal(expected["amt0"].numpy(),
                          np.argmax(t.numpy(), 1)[:, None, :])
    tensors = {"input.x": x, "input.mask": mask, "input.t": t}
    for name, value in expected.items():
        # f32 (tfc check reads references as f32): the model casts its
        # integer results, all small enough to be exact.
        tensors["expected." + name] = value.to(torch.float32).contiguous()
    save_file(tensors, OUT, metadata={
        "generator": "tools/gen_index_ops.py",
        "semantics": "torch.argmax / sort(stable, descending)[:k] / cumsum "
                     "/ arange on x (ties on purpose) and a left-padding mask",
        "torch": torch.__version__,
    })


if __name__ == "__main__":
    main()
