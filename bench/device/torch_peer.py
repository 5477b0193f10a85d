"""PyTorch CUDA peer of the GPU runs (scripts/device/run.sh peer).

The shapes tfc is timed at (scripts/device/models.txt): BERT-base b1 and b8
at seq 128, GPT-2 small prefill of 128 tokens and one decode step after 128
cached tokens. fp32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 =
False, cudnn too), random weights (Hugging Face configs, no download),
eval mode. Each case runs eager and under torch.compile; times are CUDA
events around one forward, 20 timed runs after 5 warm-ups (compile's
warm-ups include compiling), printed as median (min-max) ms.

Runs where PyTorch with CUDA and transformers are installed (the device
image has both; nothing is installed by this script).
"""

import statistics
import sys

import torch


def timed(fn, warmup=5, repeat=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times), max(times)


def bert_case(batch, seq):
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig()).cuda().eval()
    ids = torch.randint(0, 30522, (batch, seq), device="cuda")
    mask = torch.ones(batch, seq, dtype=torch.long, device="cuda")
    return model, lambda m: m(input_ids=ids, attention_mask=mask)


def gpt2_cases():
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    ids = torch.randint(0, 50257, (1, 128), device="cuda")
    with torch.no_grad():
        past = model(input_ids=ids, use_cache=True).past_key_values
    step = torch.randint(0, 50257, (1, 1), device="cuda")

    def decode(m):
        # One step after the 128 cached tokens; the step appends to the
        # cache, so its token is removed after (in the timed region: a
        # view change, no copy).
        out = m(input_ids=step, past_key_values=past, use_cache=True)
        past.crop(-1)
        return out

    return model, [
        ("gpt2_prefill s128", lambda m: m(input_ids=ids, use_cache=True)),
        ("gpt2_decode past128", decode),
    ]


def main():
    if not torch.cuda.is_available():
        print("torch_peer: no CUDA device")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          "fp32, TF32 off")
    cases = []
    for batch in (1, 8):
        model, fn = bert_case(batch, 128)
        cases.append((f"bert_base_b{batch} s128", model, fn))
    gpt2, gpt2_fns = gpt2_cases()
    cases += [(name, gpt2, fn) for name, fn in gpt2_fns]
    for name, model, fn in cases:
        for mode in ("eager", "compile"):
            m = model if mode == "eager" else torch.compile(model)
            try:
                with torch.no_grad():
                    med, lo, hi = timed(lambda: fn(m))
                print(f"peer   {name} {mode}: median {med:.3f} ms "
                      f"(min {lo:.3f}, max {hi:.3f}, 20 runs)")
            except Exception as e:  # report and go on with the next case
                print(f"peer   {name} {mode}: failed: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
