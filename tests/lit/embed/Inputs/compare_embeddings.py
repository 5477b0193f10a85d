"""Compares `tfc embed` output (one "[v0, v1, ...]" line per text) with the sentence-
transformers references in tests/fixtures/embedding/minilm.json.

usage: compare_embeddings.py OUTPUT.txt FIXTURE.json MIN_COSINE
Prints the smallest cosine and largest abs difference; exits 1 below MIN_COSINE.
"""
import json
import math
import sys


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def main():
    output_path, fixture_path, min_cosine = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(output_path) as f:
        got = [json.loads(line) for line in f if line.startswith("[")]
    with open(fixture_path) as f:
        want = json.load(f)["embeddings"]
    if len(got) != len(want) or any(len(g) != len(w) for g, w in zip(got, want)):
        print(f"FAIL: {len(got)} vectors from tfc, {len(want)} references (or lengths differ)")
        return 1
    worst = min(cosine(g, w) for g, w in zip(got, want))
    diff = max(abs(x - y) for g, w in zip(got, want) for x, y in zip(g, w))
    status = "ok" if worst >= min_cosine else "FAIL"
    print(f"{status}: {len(got)} embeddings of {len(got[0])}, min cosine >= {min_cosine}: "
          f"{worst >= min_cosine} (max abs diff {diff:.2g})")
    return 0 if worst >= min_cosine else 1


if __name__ == "__main__":
    sys.exit(main())
