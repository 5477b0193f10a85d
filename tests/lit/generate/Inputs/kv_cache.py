"""Inputs and comparisons for kv-cache.test, in plain Python (no numpy).

usage:
  kv_cache.py make OUT PAST TOKEN      decode inputs of the tiny GPT-2: ids [[TOKEN]],
                                       past_k/past_v f32[2, 1, 4, PAST, 16], seeded normal
  kv_cache.py same A B NAME...         the tensors NAME of A and B are bit for bit equal
  kv_cache.py close A B NAME_A NAME_B  max |A.NAME_A - B.NAME_B| <= 1e-5 (same element count)
Files are .safetensors; prints "ok: ..." or "FAIL: ..." (exit 1).
"""
import json
import random
import struct
import sys

LAYERS, HEADS, HEAD_DIM = 2, 4, 16


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    body = raw[8 + size:]
    return {name: (info["dtype"], info["shape"],
                   body[info["data_offsets"][0]:info["data_offsets"][1]])
            for name, info in header.items() if name != "__metadata__"}


def make(out, past, token):
    rng = random.Random(1234 + past)
    shape = [LAYERS, 1, HEADS, past, HEAD_DIM]
    count = LAYERS * HEADS * past * HEAD_DIM

    def normal():
        return struct.pack(f"<{count}f", *(rng.gauss(0, 1) for _ in range(count)))

    write(out, {"ids": ("I32", [1, 1], struct.pack("<i", token)),
                "past_k": ("F32", shape, normal()),
                "past_v": ("F32", shape, normal())})


def floats(tensor):
    return struct.unpack(f"<{len(tensor[2]) // 4}f", tensor[2])


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        make(args[0], int(args[1]), int(args[2]))
        return 0
    a, b = read(args[0]), read(args[1])
    if cmd == "same":
        for name in args[2:]:
            if a[name][:2] != b[name][:2] or a[name][2] != b[name][2]:
                print(f"FAIL: {name} differs")
                return 1
            print(f"ok: {name} {a[name][1]} identical")
        return 0
    x, y = floats(a[args[2]]), floats(b[args[3]])
    worst = max(abs(p - q) for p, q in zip(x, y)) if x else 0.0
    if len(x) != len(y) or worst > 1e-5:
        print(f"FAIL: {args[2]} vs {args[3]}: {len(x)}/{len(y)} values, "
              f"max diff {worst:.3g}")
        return 1
    print(f"ok: {args[2]} vs {args[3]}: {len(x)} values within 1e-5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
