"""Writes tests/fixtures/index_ops.safetensors: inputs and PyTorch outputs of
argmax, topk, cumsum and arange for tests/lit/run/Inputs/index-ops.tfm.

    .venv/bin/python tools/gen_index_ops.py

Deterministic (a fixed seed, no download). `x` has ties (values rounded to a
quarter) so that argmax/topk's order among equal values is exercised: both
take the lower index first, as PyTorch's argmax does; topk's reference is a
stable descending sort, which PyTorch's topk matches on distinct values.
"""

import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "index_ops.safetensors")


def main():
    g = torch.Generator().manual_seed(11)
    batch, seq = 2, 5
    x = torch.round(torch.randn(batch, seq, 12, generator=g) * 4) / 4
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], dtype=torch.int32)
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
    }
    tensors = {"input.x": x, "input.mask": mask}
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
