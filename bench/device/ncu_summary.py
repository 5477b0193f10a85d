"""Sums an `ncu --metrics gpu__time_duration.sum --csv` log per kernel.

Usage: ncu_summary.py LOG.csv. Prints the total GPU time, the kernel count,
the time per kernel class (the op in a tfc kernel's name, e.g. `linear` in
`_kernel_tfc_bert_base_k21_linear_s0_...`) and the 15 kernels (by name) that
took longest, with their share.
"""

import collections
import csv
import re
import sys

KERNEL_CLASS = re.compile(r"_k\d+_([a-z_]+?)_s\d")


def main(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    header = next((r for r in rows if "Kernel Name" in r), None)
    if header is None:
        print(f"ncu_summary: no kernel rows in {path}")
        return 1
    name_col = header.index("Kernel Name")
    value_col = header.index("Metric Value")
    per_kernel = collections.defaultdict(lambda: [0, 0.0])
    for r in rows:
        if r is header or r[name_col] == "Kernel Name":
            continue
        try:
            ns = float(r[value_col].replace(",", ""))
        except ValueError:
            continue
        per_kernel[r[name_col]][0] += 1
        per_kernel[r[name_col]][1] += ns
    total = sum(v[1] for v in per_kernel.values())
    launches = sum(v[0] for v in per_kernel.values())
    print(f"ncu: {launches} launches, {len(per_kernel)} kernels, "
          f"{total / 1e6:.3f} ms GPU time")
    per_class = collections.defaultdict(lambda: [0, 0.0])
    for name, (count, ns) in per_kernel.items():
        m = KERNEL_CLASS.search(name)
        c = per_class[m.group(1) if m else "other"]
        c[0] += count
        c[1] += ns
    print("  per class:")
    for name, (count, ns) in sorted(per_class.items(), key=lambda kv: -kv[1][1]):
        print(f"  {ns / 1e6:9.3f} ms  {100 * ns / total:5.1f}%  "
              f"{count:4d}x  {name}")
    print("  per kernel:")
    for name, (count, ns) in sorted(per_kernel.items(),
                                    key=lambda kv: -kv[1][1])[:15]:
        print(f"  {ns / 1e6:9.3f} ms  {100 * ns / total:5.1f}%  "
              f"{count:4d}x  {name[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
