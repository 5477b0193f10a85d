"""Compares `tfc generate --json` output with a reference: a case of
tests/fixtures/generation/greedy.json (generated ids; for beam search every
hypothesis and its score), or a second `tfc generate --json` output.

usage: compare_ids.py OUTPUT.json FIXTURE.json CASE
       compare_ids.py --same-run OUTPUT.json OTHER.json
The second form (seq2seq-cache.test) wants the same generated ids and
hypotheses, scores (sums of log-probabilities) within 1e-6 relative: the two
runs compute the same values with different kernels (one query row per step
against whole targets), whose sums may round differently in the last bits.
Prints "ok: ..." or "FAIL: ..." (exit 1).
"""
import json
import sys


def compare_hypotheses(case, got, want, tolerance=1e-5, relative=False):
    """Beam search: the same hypotheses in the same order, scores within
    `tolerance` (absolute, or relative to the reference's)."""
    if [h["ids"] for h in got] != [h["ids"] for h in want]:
        print(f"FAIL: {case}: hypotheses {[h['ids'] for h in got]}, "
              f"reference {[h['ids'] for h in want]}")
        return 1
    scale = (lambda w: max(abs(w), 1e-30)) if relative else (lambda w: 1.0)
    worst = max((abs(g["score"] - w["score"]) / scale(w["score"])
                 for g, w in zip(got, want) if w["score"] is not None),
                default=0.0)
    kind = " relative" if relative else ""
    if worst > tolerance:
        print(f"FAIL: {case}: scores differ by {worst:.3g}{kind}")
        return 1
    limit = f"{tolerance:.0e}".replace("e-0", "e-")  # 1e-5, not 1e-05
    print(f"ok: {case}: {len(got)} hypotheses equal, scores within {limit}{kind}")
    return 0


def load_output(path):
    with open(path) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def compare_runs(path_a, path_b):
    a, b = load_output(path_a), load_output(path_b)
    if a["generated_ids"] != b["generated_ids"]:
        print(f"FAIL: generated_ids {a['generated_ids']} != {b['generated_ids']}")
        return 1
    return compare_hypotheses("same run", a["hypotheses"], b["hypotheses"],
                              tolerance=1e-6, relative=True)


def main():
    if sys.argv[1] == "--same-run":
        return compare_runs(sys.argv[2], sys.argv[3])
    output_path, fixture_path, case = sys.argv[1:4]
    output = load_output(output_path)
    with open(fixture_path) as f:
        reference = json.load(f)["cases"][case]
    if "hypotheses" in reference:
        return compare_hypotheses(case, output["hypotheses"], reference["hypotheses"])
    got, want = output["generated_ids"], reference["generated"]
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            print(f"FAIL: {case}: token {i}: tfc {g}, reference {w}")
            return 1
    if len(got) != len(want):
        print(f"FAIL: {case}: tfc made {len(got)} tokens, the reference {len(want)}")
        return 1
    print(f"ok: {case}: {len(got)} tokens equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
