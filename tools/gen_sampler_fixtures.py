#!/usr/bin/env python3
"""Reference fixtures for the runtime sampler and beam search.

Writes tests/fixtures/sampler/sampler.safetensors and beam.safetensors, read by
tests/unit/runtime/SamplerTest.cpp and BeamSearchTest.cpp (which need no
Python). Run it in the project venv (scripts/setup-python.sh):

    .venv/bin/python tools/gen_sampler_fixtures.py

Sampler: the RNG (SplitMix64-seeded xoshiro256**) and the sampling pipeline of
runtime/Sampler.cpp are reimplemented here with the same double-precision
arithmetic (exp through math.exp, i.e. the same libm as std::exp), and the
kept sets are asserted equal to Hugging Face's own RepetitionPenalty/
Temperature/TopK/TopP/MinP processors on the same logits.

Beam search: a synthetic "model" whose logits depend only on (step, last
token) through a fixed random table runs through transformers 4.47
`generate()` (beam search for num_beams > 1, greedy for 1); the best
sequences and HF's sequence scores are stored with the model's log-softmax
table, which the C++ test's step callback looks up. docs/generation.md states
the semantics.
"""

import argparse
import math
import os
import sys

import numpy as np
import torch
from safetensors.numpy import save_file

import transformers
from transformers import GenerationMixin, LogitsProcessor, LogitsProcessorList, PretrainedConfig, PreTrainedModel
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.modeling_outputs import CausalLMOutput

assert transformers.__version__ == "4.47.1", transformers.__version__

# generate() asks whether the model is FSDP-managed, which imports
# torch.distributed.fsdp; Debian's torch 1.13 fails to import that module under
# Python 3.11 (a dataclass with a mutable default). Nothing here is
# distributed, so answer the question directly.
transformers.generation.utils.is_fsdp_managed_module = lambda module: False

MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# RNG: SplitMix64 seeding + xoshiro256** (runtime/Sampler.h)
# ---------------------------------------------------------------------------


def splitmix64(state):
    """Returns (new_state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK64


class Rng:
    def __init__(self, seed):
        state = seed & MASK64
        self.s = []
        for _ in range(4):
            state, out = splitmix64(state)
            self.s.append(out)

    def next_u64(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def next_double(self):
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))


# ---------------------------------------------------------------------------
# Sampler reference (runtime/Sampler.cpp, step by step)
# ---------------------------------------------------------------------------


def f32(x):
    """The double value of a float32 option, as C++ sees it."""
    return float(np.float32(x))


def seq_sum(values):
    """Left-to-right double sum starting at 0, like the C++ loops."""
    total = 0.0
    for v in values:
        total += v
    return total


def filter_reference(logits, opts, prev):
    """Survivor ids (ascending) and their weights exp(s - max)."""
    s = [float(x) for x in logits]
    assert not any(math.isnan(x) for x in s)
    pen = f32(opts["repetition_penalty"])
    if pen != 1.0:
        for i in sorted(set(prev)):
            s[i] = s[i] * pen if s[i] < 0 else s[i] / pen
    temp = 1.0 if opts["greedy"] else f32(opts["temperature"])
    if temp != 1.0:
        s = [x / temp for x in s]
    mx = max(s)
    cand = [i for i, x in enumerate(s) if x != -math.inf]
    if opts["greedy"]:
        best = cand[0]
        for i in cand:
            if s[i] > s[best]:
                best = i
        return [best], [1.0]
    k = opts["top_k"]
    if 0 < k < len(cand):
        kth = sorted((s[i] for i in cand), reverse=True)[k - 1]
        cand = [i for i in cand if s[i] >= kth]
    if math.isinf(mx):
        w = [1.0 if s[i] == mx else 0.0 for i in cand]
    else:
        w = [math.exp(s[i] - mx) for i in cand]
    top_p = f32(opts["top_p"])
    if top_p < 1.0:
        limit = top_p * seq_sum(w)
        # descending score, ties: higher id first
        order = sorted(range(len(cand)), key=lambda j: (-s[cand[j]], -j))
        mass, kept = 0.0, set()
        for r, j in enumerate(order):
            if r > 0 and mass >= limit:
                break
            mass += w[j]
            kept.add(j)
        cand = [c for j, c in enumerate(cand) if j in kept]
        w = [x for j, x in enumerate(w) if j in kept]
    min_p = f32(opts["min_p"])
    if min_p > 0:
        keep = [x >= min_p for x in w]
        cand = [c for c, k_ in zip(cand, keep) if k_]
        w = [x for x, k_ in zip(w, keep) if k_]
    return cand, w


def draw_reference(cand, w, rng):
    total = seq_sum(w)
    target = rng.next_double() * total
    cum, last_positive = 0.0, cand[0]
    for c, x in zip(cand, w):
        cum += x
        if x > 0:
            last_positive = c
        if cum > target:
            return c
    return last_positive


def hf_kept(logits, opts, prev):
    """Ids HF's processors leave finite, and HF's softmax over them."""
    scores = torch.tensor(np.asarray(logits, dtype=np.float32))[None, :]
    ids = torch.tensor([prev], dtype=torch.long)
    if opts["repetition_penalty"] != 1.0 and prev:
        scores = RepetitionPenaltyLogitsProcessor(float(opts["repetition_penalty"]))(ids, scores)
    if opts["greedy"]:
        return [int(torch.argmax(scores[0]))], np.array([1.0])
    if opts["temperature"] != 1.0:
        scores = TemperatureLogitsWarper(float(opts["temperature"]))(ids, scores)
    if opts["top_k"]:
        scores = TopKLogitsWarper(top_k=opts["top_k"])(ids, scores)
    if opts["top_p"] < 1.0:
        scores = TopPLogitsWarper(top_p=float(opts["top_p"]))(ids, scores)
    if opts["min_p"] > 0:
        scores = MinPLogitsWarper(min_p=float(opts["min_p"]))(ids, scores)
    kept = torch.nonzero(scores[0] != -math.inf).flatten().tolist()
    probs = torch.softmax(scores[0].double(), dim=-1)[kept].numpy()
    return kept, probs


def make_logits():
    rng = np.random.default_rng(20240607)
    v = 50257
    # GPT-2-like: a normal bulk plus a gamma-distributed boost for 2,000
    # ids. The top token has p ~ 0.07, half the mass is in ~35 tokens and
    # 90% in ~8,700 (a long tail, as GPT-2's next-token distributions have).
    gpt2 = rng.normal(-2.0, 1.5, v)
    head = rng.choice(v, 2000, replace=False)
    gpt2[head] += rng.gamma(3.0, 0.8, 2000)
    ties = np.array([3, 1, 3, 0, 3, 1, 2, 2, 1, 0, -1, 2, 3, 0, 1, -2])
    neg = rng.normal(0.0, 1.0, 32)
    neg[[0, 5, 6, 17, 31]] = -np.inf
    peaked = rng.normal(0.0, 1.0, 1000)
    peaked[417] = 40.0
    flat = rng.normal(0.0, 1e-3, 1000)
    posinf = rng.normal(0.0, 1.0, 10)
    posinf[[3, 7]] = np.inf
    small = np.array([2.5, -1.0, 0.5, -3.0, 1.5, 0.0, -0.5, 3.0])
    return {name: np.asarray(x, dtype=np.float32) for name, x in [
        ("gpt2", gpt2), ("ties", ties), ("neginf", neg), ("peaked", peaked),
        ("flat", flat), ("posinf", posinf), ("small", small)]}


def opts(**kw):
    o = dict(greedy=False, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0,
             repetition_penalty=1.0, seed=0)
    o.update(kw)
    return o


SAMPLER_CASES = [
    # (logits, options, previous ids, draws)
    ("gpt2", opts(seed=1), [], 200),
    ("gpt2", opts(temperature=0.7, top_k=50, seed=2), [], 200),
    ("gpt2", opts(temperature=1.3, top_p=0.9, seed=3), [], 200),
    ("gpt2", opts(temperature=0.8, top_k=40, top_p=0.95, seed=4), [], 200),
    ("gpt2", opts(top_p=0.5, min_p=0.05, seed=5), [], 200),
    ("gpt2", opts(greedy=True, seed=6), [], 3),
    ("gpt2", opts(repetition_penalty=1.3, top_k=20, seed=7),
     [10, 99, 50000, 10, 1234], 200),
    ("ties", opts(top_k=2, seed=11), [], 300),
    ("ties", opts(top_k=5, seed=12), [], 300),
    ("ties", opts(top_p=0.5, seed=13), [], 300),
    ("ties", opts(top_p=0.75, seed=14), [], 300),
    ("ties", opts(greedy=True), [], 2),
    ("ties", opts(min_p=0.3, temperature=2.0, seed=15), [], 300),
    ("neginf", opts(seed=21), [], 300),
    ("neginf", opts(top_k=30, top_p=0.8, seed=22), [], 300),
    ("neginf", opts(greedy=True, repetition_penalty=2.0), [1, 2, 3], 2),
    ("peaked", opts(seed=31), [], 300),
    ("peaked", opts(temperature=20.0, top_p=0.9, seed=32), [], 300),
    ("flat", opts(seed=41), [], 300),
    ("flat", opts(top_k=10, seed=0xFFFFFFFFFFFFFFFF), [], 300),
    ("flat", opts(top_p=0.3, seed=43), [], 300),
    ("posinf", opts(seed=51), [], 300),
    ("posinf", opts(top_k=1, seed=52), [], 300),
    ("small", opts(repetition_penalty=1.5, seed=61), [0, 1, 7, 7], 300),
    ("small", opts(repetition_penalty=0.5, temperature=0.5, seed=62), [3, 5], 300),
    ("small", opts(greedy=True, repetition_penalty=4.0), [7], 2),
]

MAX_STORED_KEPT = 4096
RNG_SEEDS = [0, 1, 42, 0x123456789ABCDEF0, 0xFFFFFFFFFFFFFFFF]
RNG_COUNT = 64


def u64_as_i64(values):
    return np.array(values, dtype=np.uint64).view(np.int64)


def gen_sampler(path):
    logits = make_logits()
    tensors = {f"logits.{k}": v for k, v in logits.items()}
    # One metadata key only: safetensors writes metadata in hash order, and a
    # single key keeps the file byte-identical from run to run.
    meta = {"case_logits": ",".join(f"logits.{c[0]}" for c in SAMPLER_CASES)}
    for n, (name, o, prev, draws) in enumerate(SAMPLER_CASES):
        x = logits[name]
        cand, w = filter_reference(x, o, prev)
        if name != "posinf":  # HF's softmax of +inf is NaN: no reference
            hf_ids, hf_probs = hf_kept(x, o, prev)
            assert hf_ids == cand, (n, name, o, len(hf_ids), len(cand))
            probs = np.array(w) / seq_sum(w)
            assert np.allclose(probs, hf_probs, rtol=1e-5, atol=1e-9), (n, name)
        rng = Rng(o["seed"])
        ids = [cand[0] if o["greedy"] else draw_reference(cand, w, rng)
               for _ in range(draws)]
        c = f"case{n:02d}"
        tensors[f"{c}.opts_f"] = np.array(
            [f32(o["temperature"]), f32(o["top_p"]), f32(o["min_p"]),
             f32(o["repetition_penalty"])], dtype=np.float64)
        tensors[f"{c}.opts_i"] = np.concatenate([
            np.array([int(o["greedy"]), o["top_k"]], dtype=np.int64),
            u64_as_i64([o["seed"]])])
        tensors[f"{c}.prev"] = np.array(prev, dtype=np.int32)
        tensors[f"{c}.expected"] = np.array(ids, dtype=np.int32)
        tensors[f"{c}.kept_count"] = np.array([len(cand)], dtype=np.int64)
        if len(cand) <= MAX_STORED_KEPT:  # keeps the file small
            tensors[f"{c}.kept"] = np.array(cand, dtype=np.int32)
            tensors[f"{c}.probs"] = np.array(w, dtype=np.float64) / seq_sum(w)
        print(f"sampler {c}: {name:7s} kept {len(cand):6d}  distinct ids drawn "
              f"{len(set(ids)):4d}  first {ids[:6]}")
    tensors["rng.seeds"] = u64_as_i64(RNG_SEEDS)
    u64s, doubles = [], []
    for seed in RNG_SEEDS:
        r = Rng(seed)
        u64s.append([r.next_u64() for _ in range(RNG_COUNT)])
        r = Rng(seed)
        doubles.append([r.next_double() for _ in range(RNG_COUNT)])
    tensors["rng.u64"] = u64_as_i64(u64s)
    tensors["rng.double"] = np.array(doubles, dtype=np.float64)
    save_file(tensors, path, metadata=meta)


# ---------------------------------------------------------------------------
# Beam search reference: HF generate() on a table-driven model
# ---------------------------------------------------------------------------

BEAM_V = 10
BEAM_T = 8
BEAM_EOS = 9
BEAM_PROMPT = [4, 2, 7]


class TableConfig(PretrainedConfig):
    model_type = "tfc_table"


class TableModel(PreTrainedModel, GenerationMixin):
    """Next-token logits = table[step, last token]; step counts generated
    tokens (input length minus prompt length)."""

    config_class = TableConfig

    def __init__(self, config, table, prompt_len):
        super().__init__(config)
        self.table = table
        self.prompt_len = prompt_len
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids, **kwargs):
        step = input_ids.shape[1] - self.prompt_len
        last = self.table[step][input_ids[:, -1]]
        logits = torch.zeros(input_ids.shape[0], input_ids.shape[1], BEAM_V)
        logits[:, -1, :] = last
        return CausalLMOutput(logits=logits)

    def prepare_inputs_for_generation(self, input_ids, **kwargs):
        return {"input_ids": input_ids}


class CheckLogProbs(LogitsProcessor):
    """Asserts that what HF's beam search feeds its processors (its
    log_softmax of the model logits) is bit-equal to the stored table."""

    def __init__(self, logp, prompt_len, active, eos, min_new):
        self.logp, self.prompt_len, self.active = logp, prompt_len, active
        self.eos, self.min_new = eos, min_new

    def __call__(self, input_ids, scores):
        if self.active:
            step = input_ids.shape[1] - self.prompt_len
            want = self.logp[step][input_ids[:, -1]].clone()
            if self.eos >= 0 and step < self.min_new:  # HF's processor ran first
                want[:, self.eos] = -math.inf
            assert torch.equal(scores, want), step
        return scores


ES = {"heuristic": (0, False), "immediate": (1, True), "never": (2, "never")}

BEAM_CASES = [
    # (numBeams, maxNewTokens, lengthPenalty, earlyStopping, eos, minNewTokens)
    (1, 8, 1.0, "heuristic", BEAM_EOS, 0),
    (1, 8, 1.0, "heuristic", BEAM_EOS, 3),
    (1, 6, 1.0, "heuristic", -1, 0),
    (2, 8, 1.0, "heuristic", BEAM_EOS, 0),
    (3, 8, 1.0, "immediate", BEAM_EOS, 0),
    (4, 8, 1.0, "never", BEAM_EOS, 0),
    (4, 8, 0.5, "heuristic", BEAM_EOS, 0),
    (4, 8, 2.0, "heuristic", BEAM_EOS, 0),
    (4, 8, 2.0, "never", BEAM_EOS, 0),
    (5, 8, -0.5, "never", BEAM_EOS, 0),
    (5, 8, -0.5, "heuristic", BEAM_EOS, 0),
    (3, 8, 1.0, "heuristic", BEAM_EOS, 2),
    (4, 6, 1.0, "heuristic", -1, 0),
    (2, 5, 0.0, "immediate", BEAM_EOS, 0),
    (3, 8, 1.5, "immediate", BEAM_EOS, 4),
]


def make_table():
    rng = np.random.default_rng(777)
    logits = rng.normal(0.0, 1.5, (BEAM_T, BEAM_V, BEAM_V))
    # EOS grows likelier with the step, so hypotheses finish at various times.
    logits[:, :, BEAM_EOS] += np.linspace(-1.0, 1.5, BEAM_T)[:, None]
    logits = torch.tensor(logits, dtype=torch.float32)
    return logits, torch.log_softmax(logits, dim=-1)


def greedy_score(tokens, logp, lp, eos, min_new):
    last, total = BEAM_PROMPT[-1], np.float32(0)
    for step, tok in enumerate(tokens):
        row = logp[step][last].clone()
        if eos >= 0 and step < min_new:
            row[eos] = -math.inf
        total = np.float32(total + np.float32(row[tok].item()))
        last = tok
    return float(total) / (len(tokens) ** lp), float(total)


def run_hf_beam(model, logp, case):
    nb, max_new, lp, es, eos, min_new = case
    prompt = torch.tensor([BEAM_PROMPT])
    check = CheckLogProbs(logp, len(BEAM_PROMPT), nb > 1, eos, min_new)
    out = model.generate(
        prompt, num_beams=nb, num_return_sequences=nb, do_sample=False,
        max_new_tokens=max_new, length_penalty=lp, early_stopping=ES[es][1],
        eos_token_id=eos if eos >= 0 else None, pad_token_id=BEAM_V,
        min_new_tokens=min_new or None, return_dict_in_generate=True,
        output_scores=True, logits_processor=LogitsProcessorList([check]),
        use_cache=False)
    hyps = []
    for row, seq in enumerate(out.sequences.tolist()):
        gen = seq[len(BEAM_PROMPT):]
        while gen and gen[-1] == BEAM_V:
            gen.pop()
        if nb == 1:
            score, _ = greedy_score(gen, logp, lp, eos, min_new)
        else:
            score = float(out.sequences_scores[row])
        hyps.append((gen, score))
    return hyps


def gen_beam(path):
    torch.manual_seed(0)
    logits, logp = make_table()
    model = TableModel(TableConfig(), logits, len(BEAM_PROMPT)).eval()
    tensors = {"table.logp": logp.numpy(),
               "prompt": np.array(BEAM_PROMPT, dtype=np.int32)}
    meta = {"num_cases": str(len(BEAM_CASES))}
    for n, case in enumerate(BEAM_CASES):
        nb, max_new, lp, es, eos, min_new = case
        with torch.no_grad():
            hyps = run_hf_beam(model, logp, case)
        c = f"case{n:02d}"
        tensors[f"{c}.opts"] = np.array(
            [nb, max_new, lp, ES[es][0], eos, min_new], dtype=np.float64)
        tensors[f"{c}.scores"] = np.array([h[1] for h in hyps], dtype=np.float64)
        tensors[f"{c}.lengths"] = np.array([len(h[0]) for h in hyps], dtype=np.int32)
        flat = [t for h in hyps for t in h[0]]
        tensors[f"{c}.tokens"] = np.array(flat, dtype=np.int32)
        ends = sum(1 for h in hyps if h[0] and h[0][-1] == eos)
        print(f"beam {c}: beams {nb} lp {lp:4} {es:9s} eos {eos:2d} min {min_new} "
              f"-> {len(hyps)} hyps, {ends} end with EOS, best {hyps[0][0]} "
              f"{hyps[0][1]:.6f}")
    save_file(tensors, path, metadata=meta)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(root, "tests", "fixtures", "sampler"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    gen_sampler(os.path.join(args.out, "sampler.safetensors"))
    gen_beam(os.path.join(args.out, "beam.safetensors"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
