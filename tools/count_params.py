"""Parameter counts computed by PyTorch / Hugging Face transformers from configs alone
(random init, nothing downloaded). Prints a table and writes tests/fixtures/param_counts.json.

Counting rule (the one Hugging Face's ``model.num_parameters()`` uses): the number of
elements of ``model.parameters()``, which yields a shared (tied) tensor once. Buffers --
positional-encoding tables, GPT-2's causal mask, BERT's position_ids -- are not parameters
and are not counted.

Run: .venv/bin/python tools/count_params.py [--out PATH]
"""

import argparse
import gc
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_transformer  # noqa: E402

from transformers import (BertConfig, BertModel, DistilBertConfig, DistilBertModel,  # noqa: E402
                          GPT2Config, GPT2LMHeadModel, GPT2Model)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The totals Hugging Face reports, as listed in docs/design.md ("Numbers the tests
# hold"); checked against what is computed here.
PUBLISHED = {
    "gpt2-small": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "bert-base-uncased": 109_482_240,
    "bert-large-uncased": 335_141_888,
    "distilbert-base-uncased": 66_362_880,
    "all-MiniLM-L6-v2": 22_713_216,
}


def count(model):
    return sum(p.numel() for p in model.parameters())


def count_buffers(model):
    return sum(b.numel() for b in model.buffers())


class VaswaniBase(nn.Module):
    """Transformer base of Vaswani et al. 2017, as parameterized here: one shared BPE
    vocabulary of 37000 for source and target; ONE embedding matrix used for the encoder
    input, the decoder input and the pre-softmax projection (paper section 3.4; the
    projection has no bias); sinusoidal positions (no parameters); post-LN sublayers
    (LayerNorm with weight and bias, eps 1e-5); every Linear with bias; ReLU FFN;
    6 encoder + 6 decoder layers, d_model 512, 8 heads, d_ff 2048; no LayerNorm after the
    last layer of either stack (the paper has none; torch's nn.Transformer adds one to each,
    +2 * 2 * 512 parameters)."""

    def __init__(self, vocab=37000, d_model=512, nhead=8, d_ff=2048, layers=6):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.encoder_layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.1, batch_first=True)
            for _ in range(layers))
        self.decoder_layers = nn.ModuleList(
            nn.TransformerDecoderLayer(d_model, nhead, d_ff, dropout=0.1, batch_first=True)
            for _ in range(layers))
        self.out = nn.Linear(d_model, vocab, bias=False)
        self.out.weight = self.embedding.weight  # tied


def hf(cls, cfg):
    return cls(cfg)  # full __init__ incl. post_init(), which ties lm_head to wte


def models():
    """(name, constructor, config summary, note)"""
    sc = seed_transformer.SEED_CONFIG
    yield ("seed-transformer", lambda: seed_transformer.Transformer(**sc), sc,
           "The seed article's encoder-decoder Transformer with its own example hyper-parameters "
           "(single vocab 10000 for source and target, max_len 100); separate encoder and "
           "decoder embeddings and an untied fc_out with bias; no final LayerNorm. The "
           "positional tables encoder/decoder.pos_encoding.pe are persistent buffers: in "
           "state_dict, not counted (2 x max_len x d_model elements).")
    sc5000 = dict(sc, max_len=5000)
    yield ("seed-transformer-max_len5000", lambda: seed_transformer.Transformer(**sc5000), sc5000,
           "same, max_len 5000 (PositionalEncoding's default): only the buffers change")
    yield ("seed000-encoder-6x512", lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True), 6,
        enable_nested_tensor=False),
        dict(d_model=512, nhead=8, dim_feedforward=2048, num_layers=6),
        "The introductory seed article's post-LN TransformerBlock stack "
        "(nn.MultiheadAttention + ReLU FFN + 2 LayerNorms) as torch "
        "nn.TransformerEncoderLayer x 6, no embeddings")
    yield ("vaswani-base", lambda: VaswaniBase(), dict(vocab=37000, d_model=512, nhead=8,
           d_ff=2048, encoder_layers=6, decoder_layers=6, tied_embeddings=True),
           VaswaniBase.__doc__.strip().replace("\n    ", " "))
    yield ("torch-nn-Transformer-base", lambda: nn.Transformer(
        512, 8, 6, 6, 2048, dropout=0.1, batch_first=True),
        dict(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
             dim_feedforward=2048),
        "check: torch.nn.Transformer alone (no embeddings, no output projection; includes "
        "the final encoder and decoder LayerNorms)")
    for name, kw in [("gpt2-small", {}),
                     ("gpt2-medium", dict(n_embd=1024, n_layer=24, n_head=16)),
                     ("gpt2-large", dict(n_embd=1280, n_layer=36, n_head=20))]:
        cfg = GPT2Config(**kw)
        yield (name, lambda cfg=cfg: hf(GPT2LMHeadModel, cfg), dict(
            n_embd=cfg.n_embd, n_layer=cfg.n_layer, n_head=cfg.n_head,
            vocab_size=cfg.vocab_size, n_positions=cfg.n_positions),
            "GPT2LMHeadModel; lm_head.weight is tied to wte.weight and counted once "
            "(equal to GPT2Model's count)")
    for name, kw in [("bert-base-uncased", {}),
                     ("bert-large-uncased", dict(hidden_size=1024, num_hidden_layers=24,
                                                 num_attention_heads=16,
                                                 intermediate_size=4096))]:
        cfg = BertConfig(**kw)
        yield (name, lambda cfg=cfg: hf(BertModel, cfg), dict(
            hidden_size=cfg.hidden_size, num_hidden_layers=cfg.num_hidden_layers,
            num_attention_heads=cfg.num_attention_heads,
            intermediate_size=cfg.intermediate_size, vocab_size=cfg.vocab_size,
            max_position_embeddings=cfg.max_position_embeddings,
            type_vocab_size=cfg.type_vocab_size),
            "BertModel with pooler (no MLM/NSP heads)")
    cfg = DistilBertConfig()
    yield ("distilbert-base-uncased", lambda: hf(DistilBertModel, cfg), dict(
        dim=cfg.dim, n_layers=cfg.n_layers, n_heads=cfg.n_heads, hidden_dim=cfg.hidden_dim,
        vocab_size=cfg.vocab_size, max_position_embeddings=cfg.max_position_embeddings),
        "DistilBertModel (no pooler, no token-type embeddings)")
    cfg = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                     intermediate_size=1536, vocab_size=30522)
    yield ("all-MiniLM-L6-v2", lambda: hf(BertModel, cfg), dict(
        hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
        vocab_size=30522, max_position_embeddings=cfg.max_position_embeddings,
        type_vocab_size=cfg.type_vocab_size),
        "BertModel with pooler (sentence-transformers' checkpoint includes the pooler)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "param_counts.json"))
    args = ap.parse_args()

    torch.manual_seed(0)
    result = {}
    gpt2_model_check = {}
    print(f"{'model':32} {'parameters':>14} {'buffers':>10}  published")
    for name, make, cfg, note in models():
        m = make()
        n, nb = count(m), count_buffers(m)
        entry = {"parameters": n, "buffer_elements": nb, "config": cfg, "note": note}
        if name in PUBLISHED:
            entry["published"] = PUBLISHED[name]
            entry["matches_published"] = n == PUBLISHED[name]
        if name.startswith("gpt2-"):
            assert m.lm_head.weight is m.transformer.wte.weight
            config = m.config
            del m
            gc.collect()
            m = hf(GPT2Model, config)
            gpt2_model_check[name] = count(m)
            entry["gpt2model_parameters"] = gpt2_model_check[name]
        result[name] = entry
        d = ""
        if name in PUBLISHED:
            d = "ok" if entry["matches_published"] else f"MISMATCH (doc: {PUBLISHED[name]:,})"
        print(f"{name:32} {n:>14,} {nb:>10,}  {d}")
        del m
        gc.collect()

    for name, n in gpt2_model_check.items():
        assert n == result[name]["parameters"], (name, n)
    # vaswani-base = nn.Transformer + one 37000x512 embedding - the 2 final LayerNorms
    assert result["vaswani-base"]["parameters"] == (
        result["torch-nn-Transformer-base"]["parameters"] + 37000 * 512 - 2 * 2 * 512)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    meta = {"_about": "Parameter counts from tools/count_params.py (torch %s, transformers %s). "
                      "parameters = elements of model.parameters() (tied tensors once); "
                      "buffer_elements = elements of model.buffers() (not counted)."
                      % (torch.__version__, __import__("transformers").__version__)}
    with open(args.out, "w") as f:
        json.dump({**meta, **result}, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.relpath(args.out, os.getcwd())}")
    bad = [k for k, v in result.items() if v.get("matches_published") is False]
    if bad:
        print("DISAGREES with docs/design.md:", ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
