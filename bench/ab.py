#!/usr/bin/env python3
"""Two tfc variants, alternated run by run: the ratio of their times.

Each variant is a `tfc bench ... --serve` process (compiled and warmed up
once), optionally with its own binary and environment. Rounds alternate the
order (A then B, then B then A), each timing PER runs of one variant, so that
both see the same minutes of a noisy host. Prints each variant's median, 25th
percentile and fastest run (ms), and A / B of each: above 1 means B is
faster. Standard library only (with compare_pytorch.TfcServer,
the serving tfc the peer drivers use too).

  bench/ab.py --rounds 12 --per 10 \\
      --a 'BIN=/tmp/tfc-before' --b 'BIN=build/bin/tfc' \\
      -- examples/bert/bert-base.tfm --entry encode --threads 1 --repeat 1

  # one binary, an environment switch against the default:
  bench/ab.py --a 'TFC_HOST_NO_ATTENTION_STAGE=1' --b '' \\
      -- bench/micro/attention.tfm --entry padded --threads 1

A variant is space-separated NAME=VALUE pairs: BIN= names its tfc binary
(default build/bin/tfc), ARGS= adds bench arguments of its own (commas for
spaces: ARGS=--dtype,bf16), anything else is an environment variable. With
--cpus the processes run under `taskset -c CPUS`. Each variant keeps its
own kernel cache (--cache-dir under --work).
"""

import argparse
import json
import os
import statistics
import sys

from compare_pytorch import REPO, TfcServer


def parse_variant(spec):
    """(binary, extra bench args, environment) of a variant's spec."""
    binary, extra, env = os.path.join(REPO, "build", "bin", "tfc"), [], {}
    for pair in spec.split():
        name, sep, value = pair.partition("=")
        if not sep:
            sys.exit(f"ab.py: '{pair}' in '{spec}' is not NAME=VALUE")
        if name == "BIN":
            binary = value
        elif name == "ARGS":
            extra += value.split(",")
        else:
            env[name] = value
    return binary, extra, env


def start(spec, index, bench_args, cpus, work):
    """The variant's serving tfc (compare_pytorch.TfcServer)."""
    binary, extra, env = parse_variant(spec)
    cmd = [binary, "bench", *bench_args, *extra, "--serve", "--cache-dir",
           os.path.join(work, f"cache-{index}")]
    if cpus:
        cmd = ["taskset", "-c", cpus, *cmd]
    try:
        return TfcServer.from_command(cmd, {**os.environ, **env})
    except (OSError, RuntimeError) as e:
        sys.exit(f"ab.py: cannot start '{spec}': {e}")


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="variant A (see below)")
    ap.add_argument("--b", required=True, help="variant B")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--per", type=int, default=10,
                    help="runs per variant and round")
    ap.add_argument("--cpus", default="", help="taskset -c list, e.g. 1 or 0,1")
    ap.add_argument("--work", default="/tmp/tfc-ab",
                    help="folder of the variants' kernel caches")
    ap.add_argument("--json", help="also write the times here")
    ap.add_argument("bench_args", nargs=argparse.REMAINDER,
                    help="-- then the tfc bench arguments both share")
    args = ap.parse_args()
    bench_args = [a for a in args.bench_args if a != "--"]
    if not bench_args or args.rounds < 1 or args.per < 1:
        ap.error("give the model and its bench arguments after --, "
                 "and positive --rounds and --per")
    os.makedirs(args.work, exist_ok=True)
    specs = {"A": args.a, "B": args.b}
    servers = {}
    try:
        for i, (name, spec) in enumerate(specs.items()):
            servers[name] = start(spec, i, bench_args, args.cpus, args.work)
        times = {n: [] for n in specs}
        for r in range(args.rounds):
            for name in (["A", "B"] if r % 2 == 0 else ["B", "A"]):
                try:
                    times[name] += servers[name].run(args.per)[0]
                except RuntimeError as e:
                    sys.exit(f"ab.py: variant {name}: {e}")
    finally:
        for server in servers.values():
            if server.proc.poll() is None:
                server.close()
    stats = {n: (statistics.median(t), quantile(t, 0.25), min(t))
             for n, t in times.items()}
    for name, (med, p25, low) in stats.items():
        print(f"{name} [{specs[name]}]: median {med:.3f} ms, p25 {p25:.3f}, "
              f"min {low:.3f} (n = {len(times[name])})")
    a, b = stats["A"], stats["B"]
    print(f"A / B: median {a[0] / b[0]:.3f}, p25 {a[1] / b[1]:.3f}, "
          f"min {a[2] / b[2]:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"variants": specs, "bench_args": bench_args,
                       "rounds": args.rounds, "per": args.per,
                       "times_ms": times}, f, indent=1)


if __name__ == "__main__":
    main()
