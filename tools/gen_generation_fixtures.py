"""Writes tests/fixtures/generation/greedy.json: generation references from Hugging Face.

For each case, GPT2LMHeadModel.generate(do_sample=False) continues a prompt, plainly and with
HF's repetition penalty 1.3 (greedy still: the penalty only reshapes the logits; random-init
models otherwise repeat one token); tfc generate --greedy must produce the same ids token
for token.

  * gpt2_tiny_*: the weights of tests/fixtures/gpt2_tiny.safetensors (2 layers, d 64,
    vocab 512, 64 positions).
  * gpt2_small_seed7_*: GPT-2 small (HF's default GPT2Config) with the weights that
    `tfc run --random-weights --seed 7` draws, written by `tfc run --save-weights` (the
    runtime's generator is the same on every machine, so the test draws them again).

  * seed_tiny_beams<N>_*: greedy and beam search (HF's generate driving the seed
    Transformer's decoder over a fixed source, each beam with batch 1).
  * gpt2_tiny_<sampler>_seed<N>: seeded sampling, HF's logits through the Python
    reimplementation of tfc's sampler and RNG.

The smallest margin between the chosen and the runner-up logit along each greedy path is
stored too: a margin near fp32 noise would make the comparison fragile.

Run: scripts/setup-python.sh && build/bin/tfc ... (built) &&
     .venv/bin/python tools/gen_generation_fixtures.py
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
import transformers
from safetensors.torch import load_file
from transformers import GPT2Config, GPT2LMHeadModel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# generate() asks whether the model is FSDP-managed, which imports torch.distributed.fsdp;
# Debian's torch 1.13 cannot import it under Python 3.11. Nothing here is distributed.
transformers.generation.utils.is_fsdp_managed_module = lambda module: False


def hf_greedy(model, prompt, new_tokens, eos, penalty=1.0):
    ids = torch.tensor([prompt])
    with torch.no_grad():
        out = model.generate(ids, do_sample=False, num_beams=1, max_new_tokens=new_tokens,
                             min_new_tokens=0, eos_token_id=eos, pad_token_id=0,
                             repetition_penalty=penalty,
                             output_scores=True, return_dict_in_generate=True)
    generated = out.sequences[0, len(prompt):].tolist()
    margin = min(float((s[0].topk(2).values[0] - s[0].topk(2).values[1])) for s in out.scores)
    return generated, margin


def tiny_case():
    path = os.path.join(REPO, "tests", "fixtures", "gpt2_tiny.safetensors")
    tensors = load_file(path)
    weights = {k: v for k, v in tensors.items() if not k.startswith(("input.", "expected."))}
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(cfg).eval()
    model.transformer.load_state_dict(weights, strict=True)
    prompt = [17, 301, 5, 88]
    cases = {}
    for penalty in (1.0, 1.3):
        generated, margin = hf_greedy(model, prompt, 60, None, penalty)
        cases[f"gpt2_tiny_penalty{penalty}"] = {
            "model": "examples/tiny/gpt2-tiny.tfm", "weights": "gpt2_tiny.safetensors",
            "prompt": prompt, "max_new_tokens": 60, "eos_id": None,
            "repetition_penalty": penalty, "generated": generated, "min_margin": margin}
    return cases


def small_case(tfc):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt2-small-seed7.safetensors")
        subprocess.run([tfc, "run", os.path.join(REPO, "examples", "gpt2", "gpt2-small.tfm"),
                        "--random-weights", "--seed", "7", "--save-weights", path,
                        "--entry", "forward", "--ids", "1"], check=True,
                       stdout=subprocess.DEVNULL)
        weights = load_file(path)
    model = GPT2LMHeadModel(GPT2Config()).eval()
    model.transformer.load_state_dict(weights, strict=True)
    prompt = [464, 3139, 286, 4881, 318, 257]
    cases = {}
    for penalty in (1.0, 1.3):
        generated, margin = hf_greedy(model, prompt, 64, 50256, penalty)
        cases[f"gpt2_small_seed7_penalty{penalty}"] = {
            "model": "examples/gpt2/gpt2-small.tfm", "random_weights_seed": 7,
            "prompt": prompt, "max_new_tokens": 64, "eos_id": 50256,
            "repetition_penalty": penalty, "generated": generated, "min_margin": margin}
    return cases


def sampled_cases():
    """Seeded sampling on the tiny GPT-2: HF's logits step by step (its KV cache), fed to
    the numpy reimplementation of tfc's sampler and RNG (tools/gen_sampler_fixtures.py,
    itself checked against HF's warpers)."""
    import gen_sampler_fixtures as ref
    path = os.path.join(REPO, "tests", "fixtures", "gpt2_tiny.safetensors")
    weights = {k: v for k, v in load_file(path).items()
               if not k.startswith(("input.", "expected."))}
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(cfg).eval()
    model.transformer.load_state_dict(weights, strict=True)
    settings = {"t0.8_k40_p0.95_seed5": ref.opts(temperature=0.8, top_k=40, top_p=0.95, seed=5),
                "t1_seed9": ref.opts(seed=9),
                "minp0.05_penalty1.2_seed3": ref.opts(min_p=0.05, repetition_penalty=1.2,
                                                      seed=3)}
    prompt, new_tokens = [17, 301, 5, 88], 40
    cases = {}
    for name, opts in settings.items():
        rng, sequence, past = ref.Rng(opts["seed"]), list(prompt), None
        step_ids = torch.tensor([prompt])
        for _ in range(new_tokens):
            with torch.no_grad():
                out = model(step_ids, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1].numpy().astype("float32")
            cand, w = ref.filter_reference(logits, opts, sequence)
            token = ref.draw_reference(cand, w, rng)
            sequence.append(token)
            step_ids = torch.tensor([[token]])
        cases[f"gpt2_tiny_{name}"] = {
            "prompt": prompt, "max_new_tokens": new_tokens, "options": opts,
            "generated": sequence[len(prompt):]}
    return cases


class SeedConfig(transformers.PretrainedConfig):
    model_type = "tfc_seed_step"


class SeedStep(transformers.PreTrainedModel, transformers.GenerationMixin):
    """The seed Transformer's decoder as a Hugging Face causal LM over a fixed source, so
    that HF's own beam search drives it. Every row (beam) runs alone with batch 1, as tfc
    runs it: the seed's positional encoding depends on the batch index."""

    config_class = SeedConfig

    def __init__(self, config, seed, src):
        super().__init__(config)
        self.seed = seed
        self.src_mask = (src != 0).unsqueeze(1).unsqueeze(2)
        with torch.no_grad():
            self.memory = seed.encoder(src, self.src_mask)
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids, **kwargs):
        rows = []
        for row in input_ids:
            t = row.shape[0]
            causal = torch.tril(torch.ones(1, 1, t, t)).bool()
            rows.append(self.seed.fc_out(
                self.seed.decoder(row[None], self.memory, self.src_mask, causal)))
        return transformers.modeling_outputs.CausalLMOutput(logits=torch.cat(rows, 0))

    def prepare_inputs_for_generation(self, input_ids, **kwargs):
        return {"input_ids": input_ids}


def seq2seq_cases():
    """Greedy and beam search (HF 4.47 generate) over the seed Transformer fixture."""
    import seed_transformer
    path = os.path.join(REPO, "tests", "fixtures", "seed_transformer_tiny.safetensors")
    weights = {k: v for k, v in load_file(path).items()
               if not k.startswith(("input.", "expected."))}
    seed = seed_transformer.Transformer(d_model=32, num_heads=4, d_ff=64, num_layers=2,
                                        vocab_size=100, max_len=16, dropout=0.0).eval()
    seed.load_state_dict(weights, strict=True)
    # EOS is a token the model favours, so hypotheses end at different lengths.
    src, start, eos, vocab = [12, 7, 55, 31, 9], 1, 73, 100
    model = SeedStep(SeedConfig(vocab_size=vocab), seed, torch.tensor([src])).eval()
    cases = {}
    for beams, lp, es in ((1, 1.0, False), (3, 1.0, False), (4, 0.6, "never"), (4, 2.0, True)):
        with torch.no_grad():
            out = model.generate(torch.tensor([[start]]), num_beams=beams,
                                 num_return_sequences=beams, do_sample=False,
                                 max_new_tokens=12, length_penalty=lp, early_stopping=es,
                                 eos_token_id=eos, pad_token_id=vocab, use_cache=False,
                                 return_dict_in_generate=True, output_scores=True)
        hyps = []
        for row, seq in enumerate(out.sequences.tolist()):
            gen = seq[1:]
            while gen and gen[-1] == vocab:
                gen.pop()
            score = float(out.sequences_scores[row]) if beams > 1 else None
            hyps.append({"ids": gen, "score": score})
        name = f"seed_tiny_beams{beams}_lp{lp}_es{es}"
        cases[name] = {"src": src, "start_id": start, "eos_id": eos, "beams": beams,
                       "length_penalty": lp, "early_stopping": str(es).lower(),
                       "max_new_tokens": 12, "hypotheses": hyps,
                       "generated": hyps[0]["ids"]}
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tfc", default=os.path.join(REPO, "build", "bin", "tfc"))
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "generation",
                                                      "greedy.json"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    cases = {**tiny_case(), **small_case(args.tfc), **sampled_cases(), **seq2seq_cases()}
    for name, case in cases.items():
        print(f"{name}: {len(case['generated'])} tokens, min margin "
              f"{case.get('min_margin', float('nan')):.3g}", file=sys.stderr)
    doc = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__},
           "cases": cases}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
