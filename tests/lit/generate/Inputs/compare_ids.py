"""Compares `tfc generate --json` output with a case of tests/fixtures/generation/greedy.json.

usage: compare_ids.py OUTPUT.json FIXTURE.json CASE
Prints "ok: N tokens equal" or the first position where the ids differ, and exits 1 then.
"""
import json
import sys


def main():
    output_path, fixture_path, case = sys.argv[1:4]
    with open(output_path) as f:
        got = json.loads(f.read().strip().splitlines()[-1])["generated_ids"]
    with open(fixture_path) as f:
        want = json.load(f)["cases"][case]["generated"]
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
