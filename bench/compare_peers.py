#!/usr/bin/env python3
"""tfc against the CPU inference engines people pick, same weights, one run.

Engines (fp32 unless named):
  tfc          `tfc bench MODEL --serve` (compiled once, warmed up)
  tfc-before   with --tfc-before BIN: that other tfc binary (e.g. a build of
               an older commit), the same `tfc bench --serve`, alternated in
               the same rounds (fp32; its models from --tfc-before-root)
  tfc-before-bf16 with --tfc-before BIN and tfc-bf16 timed: that binary
               with `--dtype bf16`, alternated likewise
  tfc-bf16     the same with `--dtype bf16` (bf16 matmul/linear weights,
               AVX512_BF16 dot products, f32 accumulation)
  ort          ONNX Runtime: torch.onnx.export, then onnxruntime.transformers'
               optimizer (fused attention/LayerNorm/GELU for BERT and GPT-2;
               the Transformer base has no model type there and runs the plain
               export), ORT_ENABLE_ALL, intra-op threads = the case's threads
  ov           OpenVINO on the same ONNX file, INFERENCE_PRECISION_HINT f32,
               PERFORMANCE_HINT LATENCY, one stream
  ov-bf16      the same with INFERENCE_PRECISION_HINT bf16 (not fp32: listed
               apart, never in the "best fp32 peer"; compared with tfc-bf16)
  torch        PyTorch eager (torch.inference_mode)
  torch-compile torch.compile(model) (inductor; compiled during warm-up)

Weights: `tfc run --random-weights --seed 0 --save-weights` writes the
parameters tfc bench draws (Hugging Face / nn.Transformer names); the PyTorch
models load them (strict, but for buffers), and ORT and OpenVINO get them
through the export. Numerics: every engine's outputs on the case's inputs
against PyTorch eager's (max |diff|), tfc's through `tfc run --inputs`.

Timing: per case and thread count, rounds of one run per engine, the order
rotated each round, all in this process (tfc in its server process), so
that every engine sees the same machine noise; medians and min-max of wall
time, and of process CPU time (all threads; ORT's pool does not spin), which
on a shared machine shows what each run cost when the scheduler took the
CPU away from all of them. The
fp32 FMA peak (best short burst), the sustained FMA rate (all threads busy
at once) and read bandwidth are measured by `tfc bench --profile` on the
same threads at the start and the end, and tfc's model FLOP/s is given as a
share of the peak and of the sustained rate.

Cases: bert-b1, bert-b8 (BERT-base, seq 128, entry encode), gpt2 (GPT-2
small prefill of 128 tokens, all logits, no KV cache), transformer
(Transformer base, src = tgt = 32), as in bench/compare_pytorch.py.

Usage (the venv: bench/setup-peers.sh):
  .venv-peers/bin/python bench/compare_peers.py [--cases bert-b1,gpt2]
      [--threads 1,2] [--repeat 8] [--warmup 2] [--engines tfc,ort,...]
      [--json out.json] [--markdown] [--tfc-before OLD/build/bin/tfc]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_pytorch import (REPO, CASES, TfcServer, build_transformer,  # noqa
                             machine)

ENGINES = ["tfc", "tfc-before", "tfc-bf16", "tfc-before-bf16", "ort", "ov",
           "ov-bf16", "torch", "torch-compile"]
TFC_ENGINES = {"tfc": (), "tfc-bf16": ("--dtype", "bf16")}
FP32_PEERS = ["ort", "ov", "torch", "torch-compile"]
COMPILED = {}  # case -> torch.compile(model)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Inputs, weights, PyTorch models
# ---------------------------------------------------------------------------

def case_inputs(np, name, case):
    """The case's inputs by tfc input name (fixed seed), all tokens real."""
    rng = np.random.default_rng(1)
    b, s = case["batch"], case["seq"]
    if name.startswith("bert"):
        return dict(ids=rng.integers(0, 30522, (b, s)).astype(np.int32),
                    mask=np.ones((b, s), dtype=bool))
    if name == "gpt2":
        return dict(ids=rng.integers(0, 50257, (b, s)).astype(np.int32))
    return dict(src=rng.integers(0, 37000, (b, s)).astype(np.int32),
                tgt=rng.integers(0, 37000, (b, s)).astype(np.int32),
                src_mask=np.ones((b, s), dtype=bool))


def tfc_weights_and_outputs(tfc, work, name, case, inputs, extra=()):
    """Runs the case once in tfc with bench's weights (random, seed 0):
    saves the weights and tfc's outputs on `inputs` (`extra`: more tfc run
    options, e.g. --dtype bf16)."""
    from safetensors.numpy import load_file, save_file
    tag = "-".join(a.lstrip("-") for a in extra)
    weights = os.path.join(work, f"{name}-weights.safetensors")
    inp = os.path.join(work, f"{name}-inputs.safetensors")
    out = os.path.join(work, f"{name}-tfc{tag}-out.safetensors")
    save_file(inputs, inp)
    subprocess.run([tfc, "run", os.path.join(REPO, case["model"]), "--entry",
                    case["entry"], "--random-weights", "--seed", "0",
                    "--inputs", inp, "--save-weights", weights, "-o", out,
                    *extra], check=True, stdout=subprocess.DEVNULL)
    return weights, load_file(out)


def torch_model(torch, name, case, weights):
    """(module, args, output names): the PyTorch model with tfc's weights,
    called as module(*args), returning a tuple in tfc's output order."""
    from safetensors.torch import load_file
    state = load_file(weights)

    class Wrap(torch.nn.Module):
        def __init__(self, inner, call):
            super().__init__()
            self.inner, self.call = inner, call

        def forward(self, *args):
            return self.call(self.inner, *args)

    if name.startswith("bert"):
        from transformers import BertConfig, BertModel
        inner = BertModel(BertConfig()).eval()
        inner.load_state_dict(state, strict=True)
        call = lambda m, ids, mask: tuple(  # noqa: E731
            m(input_ids=ids, attention_mask=mask, return_dict=False)[:2])
        outputs = ["last_hidden_state", "pooler_output"]
    elif name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        inner = GPT2LMHeadModel(GPT2Config()).eval()
        inner.transformer.load_state_dict(state, strict=True)
        inner.tie_weights()
        # An explicit all-ones mask: without one, transformers 5.x looks for
        # packed sequences in the position ids with torch.diff, which the
        # TorchScript ONNX exporter cannot export (aten::diff).
        call = lambda m, ids: (  # noqa: E731
            m(input_ids=ids, attention_mask=torch.ones_like(ids),
              use_cache=False, return_dict=False)[0],)
        outputs = ["logits"]
    else:
        inner, _ = build_transformer(torch, case["batch"], case["seq"])
        # tfc's encoder.layers.N / decoder.layers.N are VaswaniBase's
        # encoder_layers.N / decoder_layers.N.
        state = {k.replace("encoder.layers.", "encoder_layers.")
                  .replace("decoder.layers.", "decoder_layers."): v
                 for k, v in state.items()}
        missing, unexpected = inner.load_state_dict(state, strict=False)
        if unexpected or any(k != "pe" for k in missing):
            raise RuntimeError(f"transformer weights: {len(missing)} missing "
                               f"(e.g. {missing[:3]}), {len(unexpected)} "
                               f"unexpected (e.g. {unexpected[:3]})")
        call = lambda m, src, tgt, mask: (m(src, tgt, mask),)  # noqa: E731
        outputs = ["logits"]
    return Wrap(inner, call).eval(), outputs


def torch_args(torch, name, inputs):
    if name.startswith("bert"):
        return (torch.from_numpy(inputs["ids"]).long(),
                torch.from_numpy(inputs["mask"].astype("int64")))
    if name == "gpt2":
        return (torch.from_numpy(inputs["ids"]).long(),)
    return (torch.from_numpy(inputs["src"]).long(),
            torch.from_numpy(inputs["tgt"]).long(),
            torch.from_numpy(inputs["src_mask"]))


# ---------------------------------------------------------------------------
# ONNX Runtime and OpenVINO
# ---------------------------------------------------------------------------

def export_onnx(torch, model, args, names, work, name):
    path = os.path.join(work, f"{name}.onnx")
    if os.path.exists(path):
        return path
    in_names = [f"in{i}" for i in range(len(args))]
    # With gradients on: nn.TransformerEncoderLayer's inference fast path
    # (aten::_transformer_encoder_layer_fwd) has no ONNX export.
    with torch.inference_mode(False), torch.enable_grad():
        torch.onnx.export(model, args, path, input_names=in_names,
                          output_names=names, opset_version=17,
                          dynamo=False)
    return path


def optimize_onnx(path, name, work):
    """onnxruntime.transformers' fusions for BERT and GPT-2."""
    if name == "transformer":
        return path
    from onnxruntime.transformers import optimizer
    out = os.path.join(work, f"{name}-opt.onnx")
    if not os.path.exists(out):
        model_type = "bert" if name.startswith("bert") else "gpt2"
        opt = optimizer.optimize_model(path, model_type=model_type,
                                       num_heads=12, hidden_size=768,
                                       opt_level=1, use_gpu=False)
        opt.save_model_to_file(out)
    return out


def ort_session(ort, path, threads):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # No spinning between runs: the machine is shared (and the CPU time of a
    # run must not include a pool spinning for the next one).
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ov_model(path, threads, precision):
    import openvino as ov
    core = ov.Core()
    return core.compile_model(core.read_model(path), "CPU", {
        "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": precision,
        "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})


def feeds(inputs_np, args):
    return {f"in{i}": a.numpy() for i, a in enumerate(args)}


# ---------------------------------------------------------------------------
# Limits (tfc bench --profile measures them on the given threads)
# ---------------------------------------------------------------------------

def limits(tfc, threads):
    out = subprocess.run([tfc, "bench", os.path.join(REPO, "bench", "micro",
                                                     "matmul.tfm"),
                          "--profile", "--json", "--repeat", "1", "--warmup",
                          "0", "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    return dict(fma_gflops=j["fma_peak_gflops"],
                fma_sustained_gflops=j.get("fma_sustained_gflops", 0),
                read_gbs=j["read_bandwidth_gbs"], fma_kind=j["fma_kind"])


# ---------------------------------------------------------------------------

def stats(wall, cpu):
    return dict(median_ms=statistics.median(wall), min_ms=min(wall),
                max_ms=max(wall), times_ms=wall,
                cpu_median_ms=statistics.median(cpu), cpu_min_ms=min(cpu),
                cpu_max_ms=max(cpu), cpu_ms=cpu)


def max_diff(np, got, ref):
    return float(max(np.abs(np.asarray(g, dtype=np.float32).reshape(r.shape) -
                            r).max() for g, r in zip(got, ref)))


def build_engines(torch, ort, np, args, name, case, model, targs, outputs,
                  onnx_path, threads):
    """name -> zero-argument callable returning the outputs (as arrays)."""
    engines = {}
    want = args.engines.split(",")
    if onnx_path is None:
        want = [w for w in want if w not in ("ort", "ov", "ov-bf16")]
    if "ort" in want:
        sess = ort_session(ort, optimize_onnx(onnx_path, name, args.work),
                           threads)
        fd = feeds(None, targs)
        engines["ort"] = lambda: sess.run(None, fd)
    for eng, prec in (("ov", "f32"), ("ov-bf16", "bf16")):
        if eng in want:
            compiled = ov_model(onnx_path, threads, prec)
            req = compiled.create_infer_request()
            fd = feeds(None, targs)
            engines[eng] = (lambda req=req, fd=fd: [
                req.infer(fd)[o] for o in req.model_outputs])
    if "torch" in want:
        def eager():
            with torch.inference_mode():
                return [t.numpy() for t in model(*targs)]
        engines["torch"] = eager
    if "torch-compile" in want:
        # One compiled model per case (compiled at its first warm-up).
        compiled_model = COMPILED.setdefault(name, torch.compile(model))

        def compiled():
            with torch.inference_mode():
                return [t.numpy() for t in compiled_model(*targs)]
        engines["torch-compile"] = compiled
    return engines


def run_case(torch, ort, np, args, name, threads_list):
    case = CASES[name]
    log(f"== {name}: {case['title']}")
    inputs = case_inputs(np, name, case)
    weights, tfc_out = tfc_weights_and_outputs(args.tfc, args.work, name,
                                               case, inputs)
    model, outputs = torch_model(torch, name, case, weights)
    targs = torch_args(torch, name, inputs)
    with torch.inference_mode():
        ref = [t.numpy().copy() for t in model(*targs)]
    result = dict(case=name, title=case["title"], threads={})
    try:
        onnx_path = export_onnx(torch, model, targs, outputs, args.work, name)
    except Exception as e:  # noqa: BLE001 - an exporter gap skips ORT/OV
        onnx_path = None
        result["export_error"] = f"{type(e).__name__}: {e}"[:300]
        log(f"   ONNX export failed, no ORT/OpenVINO: {result['export_error']}")
    numerics = dict(tfc=max_diff(np, [tfc_out[o] for o in outputs], ref))
    tfc_engines = ["tfc"] + [e for e in TFC_ENGINES
                             if e != "tfc" and e in args.engines.split(",")]
    for eng in tfc_engines[1:]:
        _, out = tfc_weights_and_outputs(args.tfc, args.work, name, case,
                                         inputs, TFC_ENGINES[eng])
        numerics[eng] = max_diff(np, [out[o] for o in outputs], ref)
    for threads in threads_list:
        torch.set_num_threads(threads)
        log(f"   {threads} thread(s): building engines "
            f"(load {os.getloadavg()[0]:.1f})")
        engines = build_engines(torch, ort, np, args, name, case, model,
                                targs, outputs, onnx_path, threads)
        for eng, fn in engines.items():
            t0 = time.time()
            for _ in range(args.warmup):
                got = fn()
            numerics.setdefault(eng, max_diff(np, got, ref))
            log(f"   {eng}: warm-up {time.time() - t0:.1f} s, max |diff| "
                f"vs torch eager {numerics[eng]:.2e}")
        servers = {e: TfcServer(args.tfc, case, args.warmup, threads,
                                TFC_ENGINES[e]) for e in tfc_engines}
        timed_tfc = list(tfc_engines)
        if args.tfc_before:
            # The same case, the model file from the other binary's tree
            # (an absolute path: TfcServer joins it to REPO unchanged).
            before = dict(case, model=os.path.join(
                os.path.abspath(args.tfc_before_root), case["model"]))
            servers["tfc-before"] = TfcServer(args.tfc_before, before,
                                              args.warmup, threads)
            timed_tfc.append("tfc-before")
            if "tfc-bf16" in tfc_engines:
                servers["tfc-before-bf16"] = TfcServer(
                    args.tfc_before, before, args.warmup, threads,
                    TFC_ENGINES["tfc-bf16"])
                timed_tfc.append("tfc-before-bf16")
        gflop = servers["tfc"].info["gflop"]
        names = timed_tfc + list(engines)
        times = {n: [] for n in names}
        cpu = {n: [] for n in names}
        load = [os.getloadavg()[0]]
        for r in range(args.repeat):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                if n in servers:
                    wall, cpu_ms = servers[n].run(1)
                    times[n] += wall
                    cpu[n] += cpu_ms
                else:
                    # Process CPU time: every thread of this process.
                    c0, t0 = time.process_time(), time.perf_counter()
                    engines[n]()
                    times[n].append(1e3 * (time.perf_counter() - t0))
                    cpu[n].append(1e3 * (time.process_time() - c0))
            load.append(os.getloadavg()[0])
        for server in servers.values():
            server.close()
        entry = dict(gflop=gflop, load=load,
                     engines={n: stats(times[n], cpu[n]) for n in names})
        result["threads"][threads] = entry
        log("   " + ", ".join(f"{n} {s['median_ms']:.1f}"
                              for n, s in entry["engines"].items()))
    result["numerics"] = numerics
    return result


def before_after(results, threads):
    """tfc-before / tfc (and their bf16 runs) per case, CPU time and wall,
    when timed."""
    rows = []
    for c in results["cases"]:
        e = c["threads"][threads]["engines"]
        for now, then in (("tfc", "tfc-before"),
                          ("tfc-bf16", "tfc-before-bf16")):
            if now not in e or then not in e:
                continue
            a, b = e[now], e[then]
            rows.append(f"| {c['title']} | {now} | {b['cpu_median_ms']:.1f} "
                        f"({b['cpu_min_ms']:.1f}–{b['cpu_max_ms']:.1f}) | "
                        f"{a['cpu_median_ms']:.1f} ({a['cpu_min_ms']:.1f}–"
                        f"{a['cpu_max_ms']:.1f}) | "
                        f"{b['cpu_median_ms'] / a['cpu_median_ms']:.3f} | "
                        f"{b['median_ms'] / a['median_ms']:.3f} |")
    if not rows:
        return []
    return ["\ntfc-before against tfc, CPU ms per run, median (min–max)\n",
            "| case | engine | before | now | before / now (CPU) | "
            "before / now (wall) |", "|---|---|---|---|---|---|"] + rows


def table(results, lim):
    lines = []
    for threads in results["threads_list"]:
        peak = lim[threads]["fma_gflops"]
        sustained = lim[threads].get("fma_sustained_gflops", 0)
        lines.append(f"\n{threads} thread(s); FMA peak {peak:.0f} GFLOP/s "
                     f"({sustained:.0f} sustained on all threads), "
                     f"read bandwidth {lim[threads]['read_gbs']:.1f} GB/s "
                     "(measured in this run); ms, median (min–max)\n")
        engines = [e for e in ENGINES if any(
            e in c["threads"][threads]["engines"] for c in results["cases"])]
        lines.append("| case | " + " | ".join(engines) +
                     " | best fp32 peer / tfc | CPU time: best fp32 peer / "
                     "tfc | tfc % of FMA peak (wall; CPU) | tfc % of "
                     "sustained FMA (wall) | ov-bf16 / tfc-bf16 (wall; "
                     "CPU) |")
        lines.append("|---" * (len(engines) + 6) + "|")
        for c in results["cases"]:
            e = c["threads"][threads]["engines"]
            cells = []
            for n in engines:
                s = e.get(n)
                cells.append("–" if not s else
                             f"{s['median_ms']:.1f} ({s['min_ms']:.1f}–"
                             f"{s['max_ms']:.1f})")
            peers = [(e[n]["median_ms"], n) for n in FP32_PEERS if n in e]
            best = min(peers) if peers else None
            cpu_peers = [(e[n]["cpu_median_ms"], n) for n in FP32_PEERS
                         if n in e]
            cpu_best = min(cpu_peers) if cpu_peers else None
            tfc_ms = e["tfc"]["median_ms"]
            tfc_cpu = e["tfc"]["cpu_median_ms"]
            ratio = f"{best[0] / tfc_ms:.2f} ({best[1]})" if best else "–"
            cpu_ratio = (f"{cpu_best[0] / tfc_cpu:.2f} ({cpu_best[1]})"
                         if cpu_best else "–")
            gflop = c["threads"][threads]["gflop"]
            pct = 100 * gflop / (tfc_ms * 1e-3) / peak
            # CPU time spans all threads: against one thread's peak (the
            # 1-thread measurement when there is one: less exposed to load).
            per_thread = lim[1]["fma_gflops"] if 1 in lim else peak / threads
            pct_cpu = 100 * gflop / (tfc_cpu * 1e-3) / per_thread
            pct_sustained = (f"{100 * gflop / (tfc_ms * 1e-3) / sustained:.0f}"
                             " %" if sustained else "–")
            bf16 = "–"
            if "tfc-bf16" in e and "ov-bf16" in e:
                ov, tb = e["ov-bf16"], e["tfc-bf16"]
                bf16 = (f"{ov['median_ms'] / tb['median_ms']:.2f}; "
                        f"{ov['cpu_median_ms'] / tb['cpu_median_ms']:.2f}")
            lines.append(f"| {c['title']} | " + " | ".join(cells) +
                         f" | {ratio} | {cpu_ratio} | {pct:.0f} %; "
                         f"{pct_cpu:.0f} % | {pct_sustained} | {bf16} |")
        lines += before_after(results, threads)
        lines.append("\nCPU ms per run, median: " + "; ".join(
            f"{c['case']}: " + ", ".join(
                f"{n} {s['cpu_median_ms']:.0f}"
                for n, s in c["threads"][threads]["engines"].items())
            for c in results["cases"]))
    lines.append("\nnumerics, max |output − PyTorch eager|: " + "; ".join(
        f"{c['case']}: " + ", ".join(f"{k} {v:.1e}"
                                     for k, v in c["numerics"].items())
        for c in results["cases"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfc", default=os.path.join(REPO, "build", "bin", "tfc"))
    ap.add_argument("--tfc-before", default=None,
                    help="a second tfc binary, timed as engine 'tfc-before' "
                    "in the same rounds (e.g. a build of an older commit)")
    ap.add_argument("--tfc-before-root", default=REPO,
                    help="the tree whose examples/ the --tfc-before binary "
                    "reads (default: this repository's)")
    ap.add_argument("--cases", default="bert-b1,bert-b8,gpt2,transformer")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES[1:]))
    ap.add_argument("--work", default="/tmp/tfc-compare-peers")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--table-from", help="print the table of a --json file "
                    "and exit")
    args = ap.parse_args()
    if args.table_from:
        with open(args.table_from) as f:
            results = json.load(f)
        results["threads_list"] = [int(t) for t in results["threads_list"]]
        for c in results["cases"]:
            c["threads"] = {int(t): v for t, v in c["threads"].items()}
        lim = results.get("limits", results["limits_before"])
        print(table(results, {int(t): v for t, v in lim.items()}))
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    os.makedirs(args.work, exist_ok=True)

    import numpy as np
    import onnxruntime as ort
    import openvino
    import torch
    threads_list = [int(t) for t in args.threads.split(",")]
    lim_before = {t: limits(args.tfc, t) for t in threads_list}
    results = dict(machine=machine(), torch=torch.__version__,
                   onnxruntime=ort.__version__,
                   openvino=openvino.__version__, repeat=args.repeat,
                   warmup=args.warmup, threads_list=threads_list,
                   limits_before=lim_before, cases=[])
    for name in args.cases.split(","):
        results["cases"].append(run_case(torch, ort, np, args, name,
                                         threads_list))
        if args.json:  # after every case: a later failure keeps these
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    lim_after = {t: limits(args.tfc, t) for t in threads_list}
    results["limits_after"] = lim_after
    # The higher of the two measurements is the closer to the machine's.
    lim = {t: {k: max(lim_before[t].get(k, 0), lim_after[t].get(k, 0))
               for k in ("fma_gflops", "fma_sustained_gflops", "read_gbs")}
           for t in threads_list}
    results["limits"] = lim
    results["machine"]["load_end"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(table(results, lim))


if __name__ == "__main__":
    main()
