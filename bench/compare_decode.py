#!/usr/bin/env python3
"""GPT-2 small decode (one new token after a KV cache of `past` tokens): tfc,
ONNX Runtime and PyTorch eager side by side, in one run.

fp32, batch 1, CPU. For each past length P (default 16,128,512,1000):

  tfc          `tfc bench examples/gpt2/gpt2-small.tfm --entry decode --seq 1
               --dim past=P --threads T --serve` (compiled once, warmed up,
               then timed one run per request; reports wall and CPU ms).
  onnxruntime  Hugging Face GPT2LMHeadModel(GPT2Config()) exported with
               torch.onnx.export (torch 1.13, opset 14) as one decode step
               (input_ids[1,1], past_key_i/past_value_i [1,12,P,64] for
               12 layers) -> (logits, present_key_i/present_value_i), past
               length dynamic; InferenceSession with ORT_ENABLE_ALL,
               intra_op_num_threads=T, inter_op_num_threads=1, sequential
               execution, CPUExecutionProvider.
  pytorch      the same HF model, eager (torch 1.13 from Debian: PyTorch 2.x
               is not installed, so no torch.compile), past_key_values
               tuples, torch.set_num_threads(T), torch.inference_mode().

All three run the same weights: `tfc run --random-weights --seed 0
--save-weights W` writes tfc's weights (seed 0 is what `tfc bench` uses), and
the HF model loads them with model.transformer.load_state_dict(..,
strict=True) before the export. Numerics are checked first, on one decode
step with the same ids and cache (past = --check-past): ORT logits against
PyTorch, and `tfc run --entry decode --weights W --inputs ...` logits
against PyTorch (max abs diff <= 1e-3 each, and the present k/v).

Timing: after --warmup untimed runs each, --repeat rounds; each round runs
every engine once, the order rotating per round (A B C, B C A, C A B, ...).
Wall time (perf_counter) and CPU time (time.process_time for the in-process
peers; tfc bench's own process CPU time) per run. The memory bandwidth is
measured in the same run (bench/membw.c compiled to the work folder, run
before and after the timings, single thread, same CPU affinity), and each
engine's time is compared with the streaming floor of its past length:
(494.6 MB of weights + the K and V read, 2 x 12 layers x 12 heads x P x
64 x 4 B = 73.7 kB x P) / read bandwidth (before session 9 the weights
alone, `floor_ms` of the JSON).

Environment: as bench/compare_pytorch.py (OMP_WAIT_POLICY=passive,
OPENBLAS_CORETYPE unset, OpenBLAS from bench/.deps if bench/setup-openblas.sh
was run). ONNX Runtime: bench/setup-peers.sh --decode. With --cpus (default: CPU 1
when --threads 1) the script pins itself and its children (tfc, membw) with
sched_setaffinity, as `taskset -c 1` would.

Usage:
  .venv/bin/python bench/compare_decode.py [--threads 1] [--past 16,128,512,1000]
      [--repeat 15] [--warmup 3] [--json bench/results/decode-DATE.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_pytorch import (REPO, TfcServer, blas_in_use, machine,  # noqa: E402
                             reexec_with_clean_env)

MODEL = "examples/gpt2/gpt2-small.tfm"
WEIGHT_BYTES = 494.6e6  # docs/benchmarks.md "Decode": weights read per step
LAYERS, HEADS, HEAD_DIM, VOCAB = 12, 12, 64, 50257


def kv_bytes(past):
    """The K and V a decode step after `past` positions reads (f32)."""
    return 2 * LAYERS * HEADS * past * HEAD_DIM * 4


def run_membw(work, threads=1):
    exe = os.path.join(work, "membw")
    src = os.path.join(REPO, "bench", "membw.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run(["cc", "-O3", "-march=native", "-o", exe, src,
                        "-lpthread"], check=True)
    out = subprocess.run([exe, str(threads), "512", "20"], capture_output=True,
                         text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 7 and parts[1] == "best":
            res[parts[0]] = dict(best=float(parts[2]), median=float(parts[4]),
                                 worst=float(parts[6]))
    return res


def uptime():
    return subprocess.run(["uptime"], capture_output=True,
                          text=True).stdout.strip()


# ---------------------------------------------------------------------------
# Weights, models, inputs
# ---------------------------------------------------------------------------

def tfc_weights(tfc, work, seed):
    path = os.path.join(work, f"gpt2-small-seed{seed}.safetensors")
    if not os.path.exists(path):
        # A 1-token forward is the cheapest way to get tfc to write them.
        subprocess.run([tfc, "run", os.path.join(REPO, MODEL), "--entry",
                        "forward", "--random-weights", "--seed", str(seed),
                        "--ids", "464", "--save-weights", path], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def hf_model(torch, weights):
    from safetensors.torch import load_file
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config()).eval()
    model.transformer.load_state_dict(load_file(weights), strict=True)
    model.tie_weights()
    assert model.lm_head.weight.data_ptr() == \
        model.transformer.wte.weight.data_ptr()
    return model


def decode_step(torch, model):
    """(input_ids, past_key_0, past_value_0, ...) -> (logits, present_key_0,
    present_value_0, ...): the HF model with the cache as flat tensors."""
    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, *past):
            pkv = tuple((past[2 * i], past[2 * i + 1])
                        for i in range(LAYERS))
            out = self.model(input_ids=input_ids, past_key_values=pkv,
                             use_cache=True, return_dict=False)
            flat = []
            for k, v in out[1]:
                flat += [k, v]
            return (out[0],) + tuple(flat)
    return Step().eval()


def io_names():
    ins = ["input_ids"]
    outs = ["logits"]
    for i in range(LAYERS):
        ins += [f"past_key_{i}", f"past_value_{i}"]
        outs += [f"present_key_{i}", f"present_value_{i}"]
    return ins, outs


def export_onnx(torch, step, path, opset):
    ins, outs = io_names()
    ids = torch.tensor([[464]], dtype=torch.long)
    past = [torch.zeros(1, HEADS, 4, HEAD_DIM) for _ in range(2 * LAYERS)]
    dyn = {n: {2: "past"} for n in ins[1:]}
    dyn.update({n: {2: "past_plus_1"} for n in outs[1:]})
    with torch.no_grad():
        torch.onnx.export(step, (ids, *past), path, input_names=ins,
                          output_names=outs, dynamic_axes=dyn,
                          opset_version=opset, do_constant_folding=True)


def ort_session(ort, path, threads, spin):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning",
                                "1" if spin else "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def make_inputs(np, past, seed):
    rng = np.random.default_rng(seed)
    ids = np.array([[int(rng.integers(0, VOCAB))]], dtype=np.int64)
    k = rng.standard_normal((LAYERS, 1, HEADS, past, HEAD_DIM)).astype(
        np.float32)
    v = rng.standard_normal((LAYERS, 1, HEADS, past, HEAD_DIM)).astype(
        np.float32)
    return ids, k, v


def ort_feed(ids, k, v):
    feed = {"input_ids": ids}
    for i in range(LAYERS):
        feed[f"past_key_{i}"] = k[i]
        feed[f"past_value_{i}"] = v[i]
    return feed


def torch_args(torch, ids, k, v):
    args = [torch.from_numpy(ids)]
    for i in range(LAYERS):
        args += [torch.from_numpy(k[i]).contiguous(),
                 torch.from_numpy(v[i]).contiguous()]
    return args


def check_numerics(np, torch, tfc, work, weights, step, sess, past):
    from safetensors.numpy import load_file, save_file
    ids, k, v = make_inputs(np, past, seed=1)
    with torch.inference_mode():
        ref = [t.numpy() for t in step(*torch_args(torch, ids, k, v))]
    got = sess.run(None, ort_feed(ids, k, v))
    inp = os.path.join(work, f"check-in-{past}.safetensors")
    out = os.path.join(work, f"check-out-{past}.safetensors")
    save_file({"ids": ids.astype(np.int32), "past_k": k, "past_v": v}, inp)
    subprocess.run([tfc, "run", os.path.join(REPO, MODEL), "--entry",
                    "decode", "--weights", weights, "--inputs", inp, "-o",
                    out], check=True, stdout=subprocess.DEVNULL)
    t = load_file(out)
    ref_k = np.stack(ref[1::2]).reshape(LAYERS, 1, HEADS, past + 1, HEAD_DIM)
    ref_v = np.stack(ref[2::2]).reshape(LAYERS, 1, HEADS, past + 1, HEAD_DIM)
    res = dict(
        past=past, ids=ids.tolist(),
        logits_absmax=float(np.abs(ref[0]).max()),
        ort_vs_pytorch_logits=float(np.abs(got[0] - ref[0]).max()),
        ort_vs_pytorch_present=float(max(
            np.abs(a - b).max() for a, b in zip(got[1:], ref[1:]))),
        tfc_vs_pytorch_logits=float(np.abs(
            t["logits"].reshape(ref[0].shape) - ref[0]).max()),
        tfc_vs_pytorch_present=float(max(
            np.abs(t["present_k"] - ref_k).max(),
            np.abs(t["present_v"] - ref_v).max())),
        argmax_agree=bool(int(ref[0].argmax()) == int(got[0].argmax()) ==
                          int(t["logits"].argmax())))
    res["ok"] = (res["ort_vs_pytorch_logits"] <= 1e-3 and
                 res["tfc_vs_pytorch_logits"] <= 1e-3)
    return res


# ---------------------------------------------------------------------------

def stats(wall, cpu):
    return dict(median_ms=statistics.median(wall), min_ms=min(wall),
                max_ms=max(wall), cpu_median_ms=statistics.median(cpu),
                cpu_min_ms=min(cpu), cpu_max_ms=max(cpu),
                tokens_per_s=1e3 / statistics.median(wall),
                tokens_per_s_cpu=1e3 / statistics.median(cpu),
                times_ms=wall, cpu_ms=cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfc", default=os.path.join(REPO, "build", "bin", "tfc"))
    ap.add_argument("--tfc-before", default=None,
                    help="a second tfc binary, timed as engine 'tfc-before' "
                    "in the same rotation (before/after comparisons)")
    ap.add_argument("--past", default="16,128,512,1000")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpus", default=None,
                    help="CPU list to pin to, e.g. 1 or 0,1 (default: 1 for "
                         "--threads 1, no pinning otherwise); 'none' = none")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0,
                    help="tfc --random-weights seed (tfc bench uses 0)")
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--check-past", type=int, default=16)
    ap.add_argument("--ort-spin", action="store_true",
                    help="let ORT's intra-op threads spin (default off: they "
                         "would burn the CPU the next engine runs on)")
    ap.add_argument("--blas", choices=["auto", "openblas", "system"],
                    default="auto")
    ap.add_argument("--work", default="/tmp/tfc-compare-decode",
                    help="folder for weights, the ONNX file, membw")
    ap.add_argument("--json", help="write all results to this file")
    args = ap.parse_args()

    cpus = args.cpus if args.cpus is not None else (
        "1" if args.threads == 1 else "none")
    if cpus != "none":
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    reexec_with_clean_env(args)

    import numpy as np
    import onnxruntime as ort
    import torch
    import transformers

    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(args.threads)
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731

    results = dict(machine=machine(), uptime_start=uptime(),
                   affinity=sorted(os.sched_getaffinity(0)),
                   threads=args.threads, repeat=args.repeat,
                   warmup=args.warmup, torch=torch.__version__,
                   transformers=transformers.__version__,
                   onnxruntime=ort.__version__, numpy=np.__version__,
                   opset=args.opset, ort_spin=args.ort_spin,
                   weight_bytes=WEIGHT_BYTES, cases=[],
                   git_head=subprocess.run(
                       ["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True).stdout.strip(),
                   tfc_binary_mtime=time.strftime(
                       "%Y-%m-%dT%H:%M:%S",
                       time.localtime(os.path.getmtime(args.tfc))))

    log("== weights (tfc run --random-weights --seed %d)" % args.seed)
    weights = tfc_weights(args.tfc, args.work, args.seed)
    model = hf_model(torch, weights)
    step = decode_step(torch, model)
    onnx_path = os.path.join(args.work, f"gpt2-small-decode-seed{args.seed}"
                             f"-opset{args.opset}.onnx")
    if not os.path.exists(onnx_path) or \
            os.path.getmtime(onnx_path) < os.path.getmtime(weights):
        log("== torch.onnx.export")
        export_onnx(torch, step, onnx_path, args.opset)
    sess = ort_session(ort, onnx_path, args.threads, args.ort_spin)
    results["blas"] = blas_in_use()

    log("== numerics (past = %d)" % args.check_past)
    chk = check_numerics(np, torch, args.tfc, args.work, weights, step, sess,
                         args.check_past)
    results["check"] = chk
    log("   " + json.dumps(chk))
    if not chk["ok"]:
        log("   WARNING: numerics check failed")

    log("== membw (before)")
    results["membw_before"] = run_membw(args.work)
    log("   " + json.dumps(results["membw_before"]))

    for past in [int(p) for p in args.past.split(",")]:
        log(f"== past = {past}: {uptime()}")
        case = dict(model=MODEL, entry="decode", batch=1, seq=1,
                    dims={"past": past})
        tfc = TfcServer(args.tfc, case, args.warmup, args.threads)
        assert tfc.info["threads"] == args.threads, tfc.info
        servers = {"tfc": tfc}
        if args.tfc_before:
            servers["tfc-before"] = TfcServer(args.tfc_before, case,
                                              args.warmup, args.threads)
        ids, k, v = make_inputs(np, past, seed=2)
        feed = ort_feed(ids, k, v)
        targs = torch_args(torch, ids, k, v)

        def run_ort():
            sess.run(None, feed)

        def run_torch():
            with torch.inference_mode():
                step(*targs)

        peers = {"onnxruntime": run_ort, "pytorch": run_torch}
        for f in peers.values():
            for _ in range(args.warmup):
                f()
        wall = {n: [] for n in [*servers, *peers]}
        cpu = {n: [] for n in wall}
        order = list(wall)
        load_start = os.getloadavg()
        for i in range(args.repeat):
            rot = order[i % len(order):] + order[:i % len(order)]
            for who in rot:
                if who in servers:
                    w, c = servers[who].run(1)
                    wall[who] += w
                    cpu[who] += c
                else:
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    peers[who]()
                    wall[who].append((time.perf_counter() - t0) * 1e3)
                    cpu[who].append((time.process_time() - c0) * 1e3)
        for server in servers.values():
            server.close()
        bw_case = run_membw(args.work)
        entry = dict(past=past, load_start=load_start, membw_after=bw_case,
                     load_end=os.getloadavg(), uptime_end=uptime(),
                     engines={n: stats(wall[n], cpu[n]) for n in wall})
        t = entry["engines"]["tfc"]
        for n in [n for n in wall if n != "tfc"]:
            e = entry["engines"][n]
            entry[f"ratio_{n}_over_tfc"] = e["median_ms"] / t["median_ms"]
            entry[f"ratio_cpu_{n}_over_tfc"] = (e["cpu_median_ms"] /
                                                t["cpu_median_ms"])
        results["cases"].append(entry)
        log("   " + "; ".join(
            f"{n} {s['median_ms']:.1f} ({s['min_ms']:.1f}-{s['max_ms']:.1f})"
            f" ms, CPU {s['cpu_median_ms']:.1f}"
            for n, s in entry["engines"].items()))

    log("== membw (after)")
    results["membw_after"] = run_membw(args.work)
    log("   " + json.dumps(results["membw_after"]))
    results["uptime_end"] = uptime()

    # Floor: the best single-thread read or read8 figure of this run (the
    # GEMV reads a weight as one stream, once as 8; see bench/membw.c).
    # membw times wall clock: a run the scheduler interrupts reads low, so
    # the best run of the session (before, after each case, after) is taken.
    runs = ([results["membw_before"], results["membw_after"]] +
            [e["membw_after"] for e in results["cases"]])
    bw = {kind: max(r[kind]["best"] for r in runs)
          for kind in ("read", "read8")}
    bw["best"] = max(bw["read"], bw["read8"])
    floor = {kind: WEIGHT_BYTES / (g * 1e9) * 1e3 for kind, g in bw.items()}
    results["bandwidth_gbs"] = bw
    results["floor_ms"] = floor
    for entry in results["cases"]:
        step_bytes = WEIGHT_BYTES + kv_bytes(entry["past"])
        entry["step_bytes"] = step_bytes
        entry["floor_ms"] = step_bytes / (bw["best"] * 1e9) * 1e3
        for n, s in entry["engines"].items():
            s["floor_fraction_wall"] = entry["floor_ms"] / s["median_ms"]
            s["floor_fraction_cpu"] = entry["floor_ms"] / s["cpu_median_ms"]

    m = results["machine"]
    print(f"machine: {m['cpu']}, nproc {m['nproc']}, {m['date']}; "
          f"threads {args.threads}, CPUs {results['affinity']}; "
          f"{args.repeat} rotated rounds after {args.warmup} warm-up; "
          f"torch {results['torch']} (eager, BLAS {results['blas']}), "
          f"onnxruntime {results['onnxruntime']}, opset {args.opset}")
    print(f"start: {results['uptime_start']}")
    print(f"end:   {results['uptime_end']}")
    print(f"bandwidth (1 thread, best of {len(runs)} membw runs x 20): read "
          f"{bw['read']:.1f} GB/s, read8 {bw['read8']:.1f} GB/s -> floor "
          f"{floor['best']:.1f} ms for the weights (494.6 MB / "
          f"{bw['best']:.1f} GB/s), + 73.7 kB x past of K and V: "
          + ", ".join(f"{e['floor_ms']:.1f} ms at {e['past']}"
                      for e in results["cases"]))
    print(f"numerics (past {chk['past']}): |ORT - PyTorch| logits "
          f"{chk['ort_vs_pytorch_logits']:.2e}, |tfc - PyTorch| logits "
          f"{chk['tfc_vs_pytorch_logits']:.2e} (|logits| max "
          f"{chk['logits_absmax']:.2f}), argmax agree {chk['argmax_agree']}")
    cols = ["past", "engine", "wall ms median (min–max)", "tok/s",
            "CPU ms median (min–max)", "peer/tfc wall", "peer/tfc CPU",
            "floor/time wall, CPU", "load"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for entry in results["cases"]:
        for n, s in entry["engines"].items():
            r = ("" if n == "tfc" else
                 f"{entry[f'ratio_{n}_over_tfc']:.2f}")
            rc = ("" if n == "tfc" else
                  f"{entry[f'ratio_cpu_{n}_over_tfc']:.2f}")
            print(f"| {entry['past']} | {n} | {s['median_ms']:.1f} "
                  f"({s['min_ms']:.1f}–{s['max_ms']:.1f}) | "
                  f"{s['tokens_per_s']:.1f} | {s['cpu_median_ms']:.1f} "
                  f"({s['cpu_min_ms']:.1f}–{s['cpu_max_ms']:.1f}) | {r} | "
                  f"{rc} | {s['floor_fraction_wall']:.2f}, "
                  f"{s['floor_fraction_cpu']:.2f} | "
                  f"{entry['load_start'][0]:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
