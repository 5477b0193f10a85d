"""Compares two `tfc generate --json` outputs of a beam search (seq2seq-cache.test).

usage: same_hypotheses.py A.json B.json
The generated ids and every hypothesis' ids must be equal; the scores (sums of
log-probabilities) equal within 1e-6 relative: the two runs compute the same
values with different kernels (one query row per step against whole targets),
whose sums may round differently in the last bits. Prints "ok: ..." or
"FAIL: ..." (exit 1).
"""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        a = json.load(f)
    with open(sys.argv[2]) as f:
        b = json.load(f)
    if a["generated_ids"] != b["generated_ids"]:
        print(f"FAIL: generated_ids {a['generated_ids']} != {b['generated_ids']}")
        return 1
    ha, hb = a["hypotheses"], b["hypotheses"]
    if [h["ids"] for h in ha] != [h["ids"] for h in hb]:
        print("FAIL: hypotheses' ids differ")
        return 1
    worst = max(abs(x["score"] - y["score"]) / max(abs(y["score"]), 1e-30)
                for x, y in zip(ha, hb))
    if worst > 1e-6:
        print(f"FAIL: scores differ by {worst:.3g} relative")
        return 1
    print(f"ok: {len(ha)} hypotheses, same ids, scores within 1e-6 relative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
