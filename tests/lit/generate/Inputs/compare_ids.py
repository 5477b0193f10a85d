"""Compares `tfc generate --json` output with a case of tests/fixtures/generation/greedy.json
(generated ids; for beam search every hypothesis and its score).

usage: compare_ids.py OUTPUT.json FIXTURE.json CASE
Prints "ok: N tokens equal" or the first position where the ids differ, and exits 1 then.
"""
import json
import sys


def compare_hypotheses(case, got, want):
    """Beam search: the same hypotheses in the same order, scores within 1e-5."""
    if [h["ids"] for h in got] != [h["ids"] for h in want]:
        print(f"FAIL: {case}: hypotheses {[h['ids'] for h in got]}, "
              f"reference {[h['ids'] for h in want]}")
        return 1
    worst = max((abs(g["score"] - w["score"]) for g, w in zip(got, want)
                 if w["score"] is not None), default=0.0)
    if worst > 1e-5:
        print(f"FAIL: {case}: scores differ by {worst:.3g}")
        return 1
    print(f"ok: {case}: {len(got)} hypotheses equal, scores within 1e-5")
    return 0


def main():
    output_path, fixture_path, case = sys.argv[1:4]
    with open(output_path) as f:
        output = json.loads(f.read().strip().splitlines()[-1])
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
