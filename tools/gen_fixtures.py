"""Writes the numeric reference fixtures in tests/fixtures/*.safetensors.

Each file holds
  * the model's weights under the model's own state_dict / Hugging Face checkpoint names
    (so tfc can load the file directly as a checkpoint),
  * the inputs under ``input.*`` (integer tensors as int32, activations as float32),
  * the reference outputs under ``expected.*`` (float32),
  * a ``__metadata__`` with the configuration (all values are strings; ``config`` is JSON).

Deterministic: fixed seeds, eval mode, dropout 0, fp32, CPU. Random-init models only,
nothing is downloaded. After construction every 1-D parameter (LayerNorm gains/biases and
Linear/Conv1D biases) is redrawn (gains 1 + 0.1*N(0,1), biases 0.05*N(0,1)) so that a
loader that drops a bias or a LayerNorm gain fails the comparison instead of passing
because the value happened to be 0 or 1.

Run: scripts/setup-python.sh && .venv/bin/python tools/gen_fixtures.py [--out DIR]
"""

import argparse
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_transformer  # noqa: E402

import safetensors  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import (BertConfig, BertModel, DistilBertConfig, DistilBertModel,  # noqa: E402
                          GPT2Config, GPT2LMHeadModel)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSIONS = {"torch": torch.__version__, "transformers": transformers.__version__,
            "safetensors": safetensors.__version__}


def randomize_1d(model, gen):
    """Redraws every 1-D parameter: '*weight' -> 1 + 0.1 N, '*bias' -> 0.05 N."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() != 1:
                continue
            noise = torch.randn(p.shape, generator=gen)
            if name.endswith("bias"):
                p.copy_(0.05 * noise)
            else:
                p.copy_(1.0 + 0.1 * noise)


def random_ids(gen, shape, low, high):
    return torch.randint(low, high, shape, generator=gen)


def canonicalize_header(path):
    """safetensors writes __metadata__ in hash-map order, which changes from run to run.
    Rewrite the JSON header with the metadata keys sorted (tensor entries and data
    untouched; offsets are relative to the data, so the header length may change) so that
    regenerating gives byte-identical files."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    header["__metadata__"] = dict(sorted(header["__metadata__"].items()))
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob[8 + n:])


def write(path, weights, inputs, expected, meta):
    tensors = {}
    for k, v in weights.items():
        tensors[k] = v.detach().to(torch.float32).contiguous().clone()
    for k, v in inputs.items():
        v = v.detach()
        v = v.to(torch.int32) if not v.is_floating_point() else v.to(torch.float32)
        tensors["input." + k] = v.contiguous().clone()
    for k, v in expected.items():
        tensors["expected." + k] = v.detach().to(torch.float32).contiguous().clone()
    metadata = {"generator": "tools/gen_fixtures.py", **{k: str(v) for k, v in VERSIONS.items()}}
    for k, v in meta.items():
        metadata[k] = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    save_file(tensors, path, metadata=metadata)
    canonicalize_header(path)
    # Read back: names, dtypes and values survive the round trip.
    back = load_file(path)
    assert back.keys() == tensors.keys()
    for k in tensors:
        assert back[k].dtype == tensors[k].dtype and torch.equal(back[k], tensors[k]), k
    size = os.path.getsize(path)
    print(f"{os.path.relpath(path, os.getcwd())}: {size:,} bytes, {len(tensors)} tensors")
    for k, v in expected.items():
        print(f"  expected.{k:18} {list(v.shape)!s:16} max|x| = {v.abs().max().item():.6g}")
    return size


# ---- a. seed 000's post-LN encoder block, as torch's TransformerEncoderLayer x 2 ----------

def encoder_block(out):
    torch.manual_seed(1000)
    gen = torch.Generator().manual_seed(1001)
    d_model, nhead, d_ff, layers = 32, 4, 64, 2
    layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=d_ff,
                                       dropout=0.0, activation="relu", batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).eval()
    randomize_1d(model, gen)
    x = torch.randn(2, 5, d_model, generator=gen)
    # With autograd on, torch takes the plain (reference) path, not the fused fast path.
    y = model(x).detach()
    with torch.no_grad():
        y_fast = model(x)
    assert (y - y_fast).abs().max() < 1e-5
    return write(os.path.join(out, "encoder_block.safetensors"), model.state_dict(),
                 {"x": x}, {"y": y}, {
                     "model": "torch.nn.TransformerEncoder(nn.TransformerEncoderLayer(...), "
                              "num_layers=2, enable_nested_tensor=False)",
                     "config": dict(d_model=d_model, nhead=nhead, dim_feedforward=d_ff,
                                    num_layers=layers, dropout=0.0, activation="relu",
                                    batch_first=True, norm_first=False, layer_norm_eps=1e-5,
                                    final_norm=False),
                     "semantics": "post-LN: x = norm1(x + self_attn(x)); "
                                  "x = norm2(x + linear2(relu(linear1(x)))); no mask; "
                                  "in_proj_weight rows are [W_q; W_k; W_v] (3*d_model x "
                                  "d_model), Linear weights are [out, in]",
                 })


# ---- b. GPT-2 --------------------------------------------------------------------------

def gpt2_tiny(out):
    torch.manual_seed(2000)
    gen = torch.Generator().manual_seed(2001)
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(cfg).eval()
    randomize_1d(model, gen)
    assert model.lm_head.weight is model.transformer.wte.weight
    ids = random_ids(gen, (2, 7), 0, cfg.vocab_size)
    with torch.no_grad():
        o = model(input_ids=ids, output_hidden_states=True)
    weights = model.transformer.state_dict()
    assert not any(k.split(".")[-2:] in (["attn", "bias"], ["attn", "masked_bias"])
                   for k in weights), \
        "non-persistent causal-mask buffers must not be saved"
    return write(os.path.join(out, "gpt2_tiny.safetensors"), weights, {"ids": ids},
                 {"logits": o.logits, "last_hidden_state": o.hidden_states[-1]}, {
                     "model": "transformers.GPT2LMHeadModel",
                     "config": json.loads(cfg.to_json_string(use_diff=False)),
                     "semantics": "names as HF gpt2 model.safetensors (no 'transformer.' "
                                  "prefix); lm_head tied to wte.weight, not stored; Conv1D "
                                  "weights are [in, out]; c_attn packs q,k,v along out; "
                                  "gelu_new (tanh form); layer_norm_epsilon 1e-5; causal; "
                                  "positions 0..T-1; last_hidden_state is after ln_f",
                 })


# ---- c. BERT ---------------------------------------------------------------------------

def bert_tiny(out):
    torch.manual_seed(3000)
    gen = torch.Generator().manual_seed(3001)
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, vocab_size=512, max_position_embeddings=64,
                     type_vocab_size=2)
    model = BertModel(cfg).eval()  # add_pooling_layer=True
    randomize_1d(model, gen)
    lengths = [7, 4]
    ids = random_ids(gen, (2, 7), 1, cfg.vocab_size)
    mask = torch.zeros(2, 7, dtype=torch.long)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
        ids[b, n:] = cfg.pad_token_id  # 0
    tt = torch.zeros_like(ids)
    with torch.no_grad():
        o = model(input_ids=ids, attention_mask=mask, token_type_ids=tt)
    weights = model.state_dict()
    assert "embeddings.position_ids" not in weights
    return write(os.path.join(out, "bert_tiny.safetensors"), weights,
                 {"ids": ids, "mask": mask, "token_type_ids": tt},
                 {"last_hidden_state": o.last_hidden_state, "pooler_output": o.pooler_output},
                 {
                     "model": "transformers.BertModel (add_pooling_layer=True)",
                     "config": json.loads(cfg.to_json_string(use_diff=False)),
                     "lengths": lengths,
                     "semantics": "names as BertModel.state_dict() (no 'bert.' prefix); "
                                  "mask 1 = attend, 0 = padding: HF adds "
                                  "(1 - mask) * finfo(f32).min to the scores of padded KEYS; "
                                  "padded query rows are still computed and compared; gelu = "
                                  "exact erf form; layer_norm_eps 1e-12; pooler = "
                                  "tanh(dense(h[:, 0]))",
                 })


# ---- d. the seed Transformer ---------------------------------------------------------

def seed_transformer_tiny(out):
    torch.manual_seed(4000)
    gen = torch.Generator().manual_seed(4001)
    cfg = dict(d_model=32, num_heads=4, d_ff=64, num_layers=2, vocab_size=100, max_len=16,
               dropout=0.0)
    model = seed_transformer.Transformer(**cfg).eval()
    randomize_1d(model, gen)
    pad = 0
    src = random_ids(gen, (2, 6), 1, cfg["vocab_size"])
    tgt = random_ids(gen, (2, 5), 1, cfg["vocab_size"])
    src_len, tgt_len = [6, 4], [5, 3]
    for b in range(2):
        src[b, src_len[b]:] = pad
        tgt[b, tgt_len[b]:] = pad
    src_mask, tgt_mask = seed_transformer.make_masks(src, tgt, pad)
    with torch.no_grad():
        logits = model(src, tgt)  # exactly as the seed calls it: no masks
        logits_masked = model(src, tgt, src_mask, tgt_mask)
        logits_masked_pos_pe = seed_transformer.use_position_indexed_pe(model)(
            src, tgt, src_mask, tgt_mask)
    assert (logits - logits_masked).abs().max() > 1e-3
    assert (logits_masked - logits_masked_pos_pe).abs().max() > 1e-3
    return write(os.path.join(out, "seed_transformer_tiny.safetensors"), model.state_dict(),
                 {"src": src, "tgt": tgt, "src_mask": src_mask, "tgt_mask": tgt_mask},
                 {"logits": logits, "logits_masked": logits_masked,
                  "logits_masked_pos_pe": logits_masked_pos_pe}, {
                     "model": "tools/seed_transformer.py Transformer (the seed article's "
                              "encoder-decoder)",
                     "config": cfg,
                     "pad_id": str(pad),
                     "src_lengths": src_len,
                     "tgt_lengths": tgt_len,
                     "semantics": "state_dict names of the seed code, incl. the persistent "
                                  "buffers encoder/decoder.pos_encoding.pe [max_len, 1, d]. "
                                  "logits = model(src, tgt) as the seed calls it: no masks, "
                                  "and the seed's PositionalEncoding adds pe[batch index] "
                                  "(x + pe[:x.size(0)] on batch-first x) to every position. "
                                  "logits_masked = model(src, tgt, src_mask, tgt_mask) with the "
                                  "input.* masks (broadcast against [B, H, Tq, Tk]; 0 -> score "
                                  "replaced by -1e9; src_mask = key padding [B,1,1,S]; tgt_mask "
                                  "= (tgt != pad) on query rows & causal [B,1,T,T], so padded "
                                  "target rows attend uniformly). logits_masked_pos_pe = same "
                                  "masks with x + pe[position] instead.",
                 })


# ---- e. DistilBERT --------------------------------------------------------------------

def distilbert_tiny(out):
    torch.manual_seed(5000)
    gen = torch.Generator().manual_seed(5001)
    cfg = DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=512,
                           max_position_embeddings=64)
    model = DistilBertModel(cfg).eval()
    randomize_1d(model, gen)
    lengths = [6, 3]
    ids = random_ids(gen, (2, 6), 1, cfg.vocab_size)
    mask = torch.zeros(2, 6, dtype=torch.long)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
        ids[b, n:] = cfg.pad_token_id  # 0
    with torch.no_grad():
        o = model(input_ids=ids, attention_mask=mask)
    return write(os.path.join(out, "distilbert_tiny.safetensors"), model.state_dict(),
                 {"ids": ids, "mask": mask}, {"last_hidden_state": o.last_hidden_state}, {
                     "model": "transformers.DistilBertModel",
                     "config": json.loads(cfg.to_json_string(use_diff=False)),
                     "lengths": lengths,
                     "semantics": "names as DistilBertModel.state_dict() (no 'distilbert.' "
                                  "prefix); learned positions (sinusoidal_pos_embds false); "
                                  "no token types, no pooler; mask 1 = attend: padded KEYS get "
                                  "finfo(f32).min; gelu = exact erf form; LayerNorm eps 1e-12",
                 })


# ---- f. rotary position embeddings (language features: config math, step slices) -------

def rope_tiny(out):
    """GPT-J's interleaved RoPE in float64 NumPy, written from the paper's formula
    (examples/tiny/rope-tiny.tfm computes it with config math and step slices)."""
    gen = torch.Generator().manual_seed(6001)
    batch, heads, seq, dh, base = 2, 2, 7, 16, 10000.0
    q = torch.randn(batch, heads, seq, dh, generator=gen)
    k = torch.randn(batch, heads, seq, dh, generator=gen)
    inv_freq = 1.0 / base ** (np.arange(0, dh, 2, dtype=np.float64) / dh)   # [dh/2]
    angle = np.outer(np.arange(seq, dtype=np.float64), inv_freq)            # [seq, dh/2]
    cos = np.repeat(np.cos(angle), 2, axis=-1)                              # [seq, dh]
    sin = np.repeat(np.sin(angle), 2, axis=-1)

    def rotate_every_two(x):
        turned = np.stack([-x[..., 1::2], x[..., ::2]], axis=-1)
        return turned.reshape(x.shape)

    def rope(x):
        x = x.numpy().astype(np.float64)
        return x * cos + rotate_every_two(x) * sin

    q_rot, k_rot = rope(q), rope(k)
    scores = q_rot @ np.swapaxes(k_rot, -1, -2) / np.sqrt(dh)
    thirds = q.numpy().astype(np.float64)[..., 1:dh:3] ** 2
    expected = {"q_rot": q_rot, "k_rot": k_rot, "scores": scores, "inv_freq": inv_freq,
                "thirds": thirds}
    return write(os.path.join(out, "rope_tiny.safetensors"), {}, {"q": q, "k": k},
                 {name: torch.from_numpy(v) for name, v in expected.items()}, {
                     "model": "rotary position embeddings (no weights)",
                     "config": dict(heads=heads, dh=dh, rope_base=base),
                     "semantics": "GPT-J interleaved RoPE: feature pair (2i, 2i+1) at position "
                                  "p rotates by p * base^(-2i/dh); scores = q_rot k_rot^T / "
                                  "sqrt(dh); inv_freq = base^(-2i/dh); thirds = q[..., 1:dh:3]^2; "
                                  "computed in float64 NumPy",
                 })


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # identical float summation order on every machine
    torch.use_deterministic_algorithms(True)
    total = 0
    for f in (encoder_block, gpt2_tiny, bert_tiny, seed_transformer_tiny, distilbert_tiny,
              rope_tiny):
        size = f(args.out)
        assert size < 1_000_000, f"{f.__name__}: {size} bytes"
        total += size
    print(f"total {total:,} bytes ({', '.join(f'{k} {v}' for k, v in VERSIONS.items())})")


if __name__ == "__main__":
    main()
