#!/usr/bin/env python3
"""tfc against PyTorch (fp32, CPU) on the same models and shapes, in one run.

For each case this starts `tfc bench MODEL ... --serve` (compiled once, random
weights, warmed up), builds the equivalent PyTorch model from a config with
random init (nothing is downloaded), warms it up, and then alternates single
timed runs: tfc, PyTorch (each variant), PyTorch, tfc, ... so that both share
the machine's noise. It prints, per case, the median and min-max of each and
the ratio PyTorch/tfc of the medians (> 1: tfc is faster).

PyTorch is run at its best on this machine:
  - OMP_WAIT_POLICY=passive and OPENBLAS_CORETYPE unset (an inherited
    OPENBLAS_CORETYPE=Haswell makes OpenBLAS 1.2-1.6x slower; see
    docs/design.md#build; the script re-executes itself with that
    environment);
  - torch.set_num_threads(the thread count tfc uses), torch.inference_mode(),
    model.eval();
  - the BLAS: Debian's python3-torch calls the system libblas.so.3, which is
    the netlib reference BLAS unless an optimized one is installed. If
    bench/.deps/openblas holds OpenBLAS (bench/setup-openblas.sh extracts
    Debian's libopenblas0-pthread there, no system change), the script puts
    it first on LD_LIBRARY_PATH, so PyTorch's matmuls run on OpenBLAS;
  - variants: `eager` (the model as is) and, where it applies, `onednn`
    (torch.utils.mkldnn.to_mkldnn: nn.Linear layers run on oneDNN's JIT
    kernels). The PyTorch column is the variant with the best median; every
    variant is listed with --verbose.

Cases (--cases, default all):
  bert-b1     BERT-base (BertModel), batch 1, seq 128, entry encode
  bert-b8     BERT-base, batch 8, seq 128
  gpt2        GPT-2 small (GPT2LMHeadModel) prefill of 128 tokens, batch 1,
              entry forward (all logits, no KV cache: use_cache=False)
  transformer Transformer base (Vaswani et al.; nn.TransformerEncoderLayer /
              DecoderLayer, post-LN, ReLU, shared embedding/LM head),
              src = tgt = 32 tokens, batch 1, entry forward

Usage:
  .venv/bin/python bench/compare_pytorch.py [--tfc build/bin/tfc]
      [--cases bert-b1,gpt2] [--repeat 10] [--warmup 3] [--threads N]
      [--tfc-arg=--no-fusion] [--json results.json] [--markdown] [--verbose]

Besides wall time, both sides' CPU time per run is recorded (process CPU
time: all threads): on a machine shared with other work it shows what each
side costs when the scheduler takes the CPU away from both.
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENBLAS_DIR = os.path.join(REPO, "bench", ".deps", "openblas", "usr", "lib",
                            "x86_64-linux-gnu", "openblas-pthread")


def reexec_with_clean_env(args):
    """OMP_WAIT_POLICY, OPENBLAS_CORETYPE and the BLAS must be set before
    torch is imported: re-execute once with the environment fixed."""
    if os.environ.get("TFC_COMPARE_ENV") == "1":
        return
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env["OMP_WAIT_POLICY"] = "passive"
    env["TFC_COMPARE_ENV"] = "1"
    if args.blas == "openblas" or (args.blas == "auto" and
                                   os.path.isdir(OPENBLAS_DIR)):
        if not os.path.isdir(OPENBLAS_DIR):
            sys.exit("error: --blas openblas needs bench/setup-openblas.sh "
                     "first (no " + OPENBLAS_DIR + ")")
        env["LD_LIBRARY_PATH"] = OPENBLAS_DIR + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


# ---------------------------------------------------------------------------
# PyTorch models
# ---------------------------------------------------------------------------

def build_bert(torch, batch, seq):
    from transformers import BertConfig, BertModel
    model = BertModel(BertConfig()).eval()
    ids = torch.randint(0, 30522, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.long)
    return model, lambda m: m(input_ids=ids, attention_mask=mask)


def build_gpt2(torch, batch, seq):
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config()).eval()
    ids = torch.randint(0, 50257, (batch, seq))
    return model, lambda m: m(input_ids=ids, use_cache=False)


def build_transformer(torch, batch, seq):
    """examples/transformer/transformer-base.tfm in PyTorch: the Transformer
    base of tools/count_params.py (VaswaniBase) with its forward pass."""
    import torch.nn as nn

    class VaswaniBase(nn.Module):
        def __init__(self, vocab=37000, d=512, heads=8, d_ff=2048, layers=6):
            super().__init__()
            self.d = d
            self.embedding = nn.Embedding(vocab, d)
            self.encoder_layers = nn.ModuleList(
                nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.1,
                                           batch_first=True)
                for _ in range(layers))
            self.decoder_layers = nn.ModuleList(
                nn.TransformerDecoderLayer(d, heads, d_ff, dropout=0.1,
                                           batch_first=True)
                for _ in range(layers))
            pos = torch.arange(512, dtype=torch.float32)[:, None]
            div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) *
                            (-math.log(10000.0) / d))
            pe = torch.zeros(512, d)
            pe[:, 0::2] = torch.sin(pos * div)
            pe[:, 1::2] = torch.cos(pos * div)
            self.register_buffer("pe", pe)

        def embed(self, ids):
            return (self.embedding(ids) * math.sqrt(self.d) +
                    self.pe[:ids.shape[1]])

        def forward(self, src, tgt, src_mask):
            pad = ~src_mask
            x = self.embed(src)
            for layer in self.encoder_layers:
                x = layer(x, src_key_padding_mask=pad)
            y = self.embed(tgt)
            n = tgt.shape[1]
            causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
            for layer in self.decoder_layers:
                y = layer(y, x, tgt_mask=causal, memory_key_padding_mask=pad)
            return y @ self.embedding.weight.t()

    model = VaswaniBase().eval()
    src = torch.randint(0, 37000, (batch, seq))
    tgt = torch.randint(0, 37000, (batch, seq))
    src_mask = torch.ones(batch, seq, dtype=torch.bool)
    return model, lambda m: m(src, tgt, src_mask)


CASES = {
    "bert-b1": dict(title="BERT-base, batch 1, seq 128",
                    model="examples/bert/bert-base.tfm", entry="encode",
                    batch=1, seq=128, build=build_bert),
    "bert-b8": dict(title="BERT-base, batch 8, seq 128",
                    model="examples/bert/bert-base.tfm", entry="encode",
                    batch=8, seq=128, build=build_bert),
    "gpt2": dict(title="GPT-2 small, prefill 128 tokens, batch 1",
                 model="examples/gpt2/gpt2-small.tfm", entry="forward",
                 batch=1, seq=128, build=build_gpt2),
    "transformer": dict(title="Transformer base, src = tgt = 32, batch 1",
                        model="examples/transformer/transformer-base.tfm",
                        entry="forward", batch=1, seq=32,
                        dims={"src_seq": 32, "tgt_seq": 32},
                        build=build_transformer),
}


def onednn_variant(torch, model):
    """nn.Linear layers on oneDNN (MkldnnLinear); None if nothing changes."""
    import copy
    from torch.utils import mkldnn as mkldnn_utils
    if not torch.backends.mkldnn.is_available():
        return None
    if not any(isinstance(m, torch.nn.Linear) for m in model.modules()):
        return None
    return mkldnn_utils.to_mkldnn(copy.deepcopy(model))


# ---------------------------------------------------------------------------
# tfc
# ---------------------------------------------------------------------------

class TfcServer:
    """`tfc bench --serve`: compiled once, then timed on request."""

    def __init__(self, tfc, case, warmup, threads, extra=()):
        cmd = [tfc, "bench", os.path.join(REPO, case["model"]),
               "--entry", case["entry"], "--batch", str(case["batch"]),
               "--seq", str(case["seq"]), "--warmup", str(warmup), "--serve"]
        for name, value in case.get("dims", {}).items():
            cmd += ["--dim", f"{name}={value}"]
        if threads:
            cmd += ["--threads", str(threads)]
        cmd += list(extra)
        self._start(cmd)

    @classmethod
    def from_command(cls, cmd, env=None):
        """A server from a whole `tfc bench ... --serve` command line, run
        with `env` (None: this process's environment)."""
        server = cls.__new__(cls)
        server._start(cmd, env)
        return server

    def _start(self, cmd, env=None):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     bufsize=1, env=env)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("tfc bench failed: " + " ".join(cmd))
        self.info = json.loads(line)

    def run(self, count=1):
        """Wall and CPU milliseconds of `count` runs."""
        self.proc.stdin.write(f"{count}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("tfc bench stopped: " + " ".join(self.cmd))
        out = json.loads(line)
        return out["times_ms"], out.get("cpu_ms", [math.nan] * count)

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        self.proc.wait(timeout=60)


# ---------------------------------------------------------------------------

def stats(times, cpu):
    return dict(median_ms=statistics.median(times), min_ms=min(times),
                max_ms=max(times), times_ms=times,
                cpu_median_ms=statistics.median(cpu), cpu_ms=cpu)


def machine():
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return dict(cpu=model or platform.processor(), nproc=os.cpu_count(),
                date=datetime.datetime.now().isoformat(timespec="seconds"),
                load=os.getloadavg())


def blas_in_use():
    with open("/proc/self/maps") as f:
        maps = f.read()
    if "openblas" in maps:
        return "OpenBLAS"
    if "mkl" in maps:
        return "MKL"
    return "system libblas.so.3 (" + os.path.realpath(
        "/usr/lib/x86_64-linux-gnu/libblas.so.3") + ")"


def fmt(s):
    return f"{s['median_ms']:.1f} ({s['min_ms']:.1f}–{s['max_ms']:.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfc", default=os.path.join(REPO, "build", "bin", "tfc"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0,
                    help="threads for both (default: tfc's default, one per "
                         "CPU)")
    ap.add_argument("--blas", choices=["auto", "openblas", "system"],
                    default="auto")
    ap.add_argument("--variants", default="eager,onednn")
    ap.add_argument("--tfc-arg", action="append", default=[],
                    help="extra argument for `tfc bench` (repeatable), e.g. "
                         "--tfc-arg=--no-fusion")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--markdown", action="store_true",
                    help="print the table as Markdown")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    reexec_with_clean_env(args)

    import torch
    torch.manual_seed(0)
    results = dict(machine=machine(), torch=torch.__version__,
                   blas=None, tfc_args=args.tfc_arg, repeat=args.repeat,
                   warmup=args.warmup, cases=[])
    rows = []
    for name in args.cases.split(","):
        case = CASES[name]
        print(f"== {name}: {case['title']}", file=sys.stderr)
        tfc = TfcServer(args.tfc, case, args.warmup, args.threads,
                        args.tfc_arg)
        threads = tfc.info["threads"]
        torch.set_num_threads(threads)
        results["blas"] = blas_in_use()
        with torch.inference_mode():
            model, call = case["build"](torch, case["batch"], case["seq"])
            variants = {}
            if "eager" in args.variants:
                variants["eager"] = model
            if "onednn" in args.variants:
                try:
                    m = onednn_variant(torch, model)
                    if m is not None:
                        ref, got = call(model), call(m)
                        a = ref[0] if isinstance(ref, (tuple, list)) else (
                            ref.last_hidden_state if hasattr(
                                ref, "last_hidden_state") else
                            ref.logits if hasattr(ref, "logits") else ref)
                        b = got[0] if isinstance(got, (tuple, list)) else (
                            got.last_hidden_state if hasattr(
                                got, "last_hidden_state") else
                            got.logits if hasattr(got, "logits") else got)
                        if (a - b).abs().max().item() < 1e-3:
                            variants["onednn"] = m
                except Exception as e:  # a variant that does not apply
                    why = str(e).strip().splitlines()[0][:120]
                    print(f"   onednn variant skipped: {why}",
                          file=sys.stderr)
            if not variants:
                variants["eager"] = model
            for m in variants.values():
                for _ in range(args.warmup):
                    call(m)
            times = {"tfc": []}
            times.update({v: [] for v in variants})
            cpu = {k: [] for k in times}
            order = ["tfc"] + list(variants)
            for i in range(args.repeat):
                # Alternate who goes first, so neither always follows the
                # other.
                for who in (order if i % 2 == 0 else order[::-1]):
                    if who == "tfc":
                        wall, used = tfc.run(1)
                        times["tfc"] += wall
                        cpu["tfc"] += used
                    else:
                        c0 = time.process_time()
                        t0 = time.perf_counter()
                        call(variants[who])
                        times[who].append((time.perf_counter() - t0) * 1e3)
                        cpu[who].append((time.process_time() - c0) * 1e3)
        tfc.close()
        entry = dict(case=name, title=case["title"], threads=threads,
                     gflop=tfc.info.get("gflop"),
                     tfc=stats(times["tfc"], cpu["tfc"]),
                     pytorch={v: stats(times[v], cpu[v]) for v in variants})
        best = min(variants, key=lambda v: entry["pytorch"][v]["median_ms"])
        entry["pytorch_best"] = best
        entry["ratio"] = (entry["pytorch"][best]["median_ms"] /
                          entry["tfc"]["median_ms"])
        results["cases"].append(entry)
        rows.append(entry)
        print(f"   tfc {fmt(entry['tfc'])} ms (CPU "
              f"{entry['tfc']['cpu_median_ms']:.1f}), PyTorch[{best}] "
              f"{fmt(entry['pytorch'][best])} ms (CPU "
              f"{entry['pytorch'][best]['cpu_median_ms']:.1f}), ratio "
              f"{entry['ratio']:.2f}", file=sys.stderr)

    m = results["machine"]
    extra = (" tfc bench " + " ".join(args.tfc_arg) + ";") if args.tfc_arg else ""
    header = (f"machine: {m['cpu']}, nproc {m['nproc']}, {m['date']}, load "
              f"{m['load'][0]:.1f}; torch {results['torch']}, BLAS "
              f"{results['blas']}; threads {rows[0]['threads'] if rows else '?'}"
              f";{extra} {args.repeat} alternated runs after {args.warmup} "
              f"warm-up")
    cols = ["case", "tfc ms median (min–max)", "PyTorch ms median (min–max)",
            "PyTorch/tfc", "CPU ms tfc / PyTorch"]
    table = []
    for r in rows:
        best = r["pytorch_best"]
        table.append([r["title"], fmt(r["tfc"]),
                      f"{fmt(r['pytorch'][best])} [{best}]",
                      f"{r['ratio']:.2f}",
                      f"{r['tfc']['cpu_median_ms']:.1f} / "
                      f"{r['pytorch'][best]['cpu_median_ms']:.1f}"])
        if args.verbose:
            for v, s in r["pytorch"].items():
                if v != best:
                    table.append(["", "", f"{fmt(s)} [{v}]",
                                  f"{s['median_ms'] / r['tfc']['median_ms']:.2f}",
                                  f"{s['cpu_median_ms']:.1f}"])
    print(header)
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "|".join("---" for _ in cols) + "|")
        for t in table:
            print("| " + " | ".join(t) + " |")
    else:
        widths = [max(len(c), *(len(t[i]) for t in table)) if table else len(c)
                  for i, c in enumerate(cols)]
        print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
        for t in table:
            print("  ".join(x.ljust(w) for x, w in zip(t, widths)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
