#!/usr/bin/env python3
"""A reference interpreter of the tfc dialect, for checking the passes.

Runs every function of a module printed in MLIR's generic form
(`tfc-opt --mlir-print-op-generic`) with numpy in float64, on inputs and
weights drawn from seeded generators (a weight's values depend only on its
checkpoint name and shape), so that two versions of a model, before and
after a pass, can be compared: they must compute the same function.

    tfc_interp.py compare before.mlir after.mlir [--tol 1e-9]

prints one line per function output and exits 1 if any differs by more than
the tolerance (relative to the output's largest magnitude). The semantics of
each op follow docs/ir.md; the fused ops follow its "Fused ops" section.
"""

import argparse
import hashlib
import math
import re
import sys

import numpy as np

DIM_SIZES = {"batch": 2, "seq": 5, "src_seq": 6, "tgt_seq": 4, "past": 3}


# --------------------------------------------------------------------------
# Parsing the generic form
# --------------------------------------------------------------------------

def split_top(text, sep=","):
    """Splits at `sep` outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, False, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_type(text):
    m = re.fullmatch(r"tensor<(.*)>", text.strip())
    if not m:
        return None
    parts = m.group(1).split("x")
    dtype = parts[-1]
    dims = [None if p == "?" else int(p) for p in parts[:-1]]
    return dims, dtype


def parse_value(text):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text[1:-1]
    m = re.fullmatch(r"array<i(?:64|32)(?::(.*))?>", text)
    if m:
        body = m.group(1) or ""
        return [int(v) for v in body.split(",") if v.strip()]
    m = re.fullmatch(r"dense<(.*)>\s*:\s*(tensor<.*>)", text, re.S)
    if m:
        dims, dtype = parse_type(m.group(2))
        body = m.group(1).strip()
        conv = {"f32": float, "i1": lambda s: s.strip() == "true"}.get(
            dtype, lambda s: int(s))
        if body.startswith("["):
            nested = eval(body.replace("true", "True").replace("false", "False"))
            arr = np.array(nested, dtype=object)
            flat = [conv(str(v)) if not isinstance(v, bool) else v
                    for v in arr.reshape(-1)]
            return np.array(flat).reshape(dims).astype(np_dtype(dtype))
        return np.full(dims, conv(body)).astype(np_dtype(dtype))
    m = re.fullmatch(r"(-?[0-9.eE+\-]+|0x[0-9A-Fa-f]+)\s*:\s*(f64|f32|i64|i32)", text)
    if m:
        v = m.group(1)
        if m.group(2).startswith("f"):
            if v.startswith("0x"):
                return np.frombuffer(bytes.fromhex(v[2:])[::-1], np.float64)[0]
            return float(v)
        return int(v)
    return text


def np_dtype(dtype):
    return {"f32": np.float64, "i32": np.int64, "i64": np.int64,
            "i1": np.bool_}[dtype]


def parse_props(text):
    props = {}
    for entry in split_top(text):
        if "=" not in entry:
            continue
        key, value = entry.split("=", 1)
        props[key.strip()] = parse_value(value)
    return props


OP_RE = re.compile(
    r'^\s*(?:(?P<results>%[\w]+(?::\d+)?)\s*=\s*)?"(?P<name>[\w.]+)"'
    r'\((?P<operands>[^)]*)\)\s*(?:<\{(?P<props>.*)\}>)?\s*(?:\{(?P<attrs>.*)\})?'
    r'\s*:\s*\((?P<intypes>.*?)\)\s*->\s*(?P<outtypes>.*)$')


class Func:
    def __init__(self, name):
        self.name = name
        self.args = []      # (name, type, dims names)
        self.ops = []


def parse_module(text):
    funcs = []
    current = None
    for line in text.splitlines():
        line = re.sub(r"\s*loc\(.*\)\s*$", "", line)
        if '"func.func"' in line:
            name = re.search(r'sym_name = "([^"]+)"', line).group(1)
            current = Func(name)
            funcs.append(current)
            dims_list = []
            m = re.search(r"arg_attrs = \[(.*?)\]\s*,\s*function_type", line)
            if m:
                for entry in split_top(m.group(1)):
                    d = re.search(r"tfc\.dims = \[([^\]]*)\]", entry)
                    dims_list.append(
                        [s.strip().strip('"') for s in d.group(1).split(",")]
                        if d else None)
            current.arg_dims = dims_list
            continue
        if line.strip().startswith("^bb0("):
            body = line.strip()[5:line.strip().rindex(")")]
            for i, arg in enumerate(split_top(body)):
                name, ty = arg.split(":", 1)
                dims = current.arg_dims[i] if i < len(current.arg_dims) else None
                current.args.append((name.strip(), parse_type(ty), dims))
            continue
        m = OP_RE.match(line)
        if not m or current is None:
            continue
        results = m.group("results")
        if results:
            if ":" in results:
                base, count = results.split(":")
                results = ["%s#%d" % (base, i) for i in range(int(count))]
            else:
                results = [results]
        else:
            results = []
        operands = [o.strip() for o in m.group("operands").split(",")
                    if o.strip()]
        props = parse_props(m.group("props") or "")
        outtypes = m.group("outtypes").strip()
        if outtypes.startswith("("):
            outtypes = outtypes[1:-1]
        types = [parse_type(t) for t in split_top(outtypes)] if outtypes else []
        intypes = m.group("intypes").strip()
        intypes = [parse_type(t) for t in split_top(intypes)] if intypes else []
        props["$intypes"] = intypes
        current.ops.append((m.group("name"), results, operands, props, types))
    return funcs


# --------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------

def seeded(name, salt=""):
    digest = hashlib.sha256((salt + name).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


erf = np.vectorize(math.erf)


def gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                      (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def activation(x, act):
    if act == "none":
        return x
    if act == "relu":
        return np.maximum(x, 0)
    if act == "gelu":
        return gelu(x, "none")
    if act == "gelu_tanh":
        return gelu(x, "tanh")
    if act == "silu":
        return x / (1 + np.exp(-x))
    raise ValueError(act)


def evaluate(func):
    env = {}
    for name, (dims, dtype), dim_names in func.args:
        shape = []
        for i, d in enumerate(dims):
            if d is not None:
                shape.append(d)
            else:
                key = dim_names[i] if dim_names else "seq"
                shape.append(DIM_SIZES.get(key, 4))
        rng = seeded(func.name + name, "input")
        if dtype == "f32":
            env[name] = rng.standard_normal(shape)
        elif dtype == "i1":
            v = rng.random(shape) > 0.3
            v[..., 0] = True
            env[name] = v
        else:
            env[name] = rng.integers(0, 50, shape)
    for name, results, operands, props, types in func.ops:
        args = [env[o] for o in operands]
        short = name.split(".", 1)[1]
        if name == "func.return":
            return args
        out = run_op(short, args, props, types)
        if not isinstance(out, tuple):
            out = (out,)
        for r, v in zip(results, out):
            env[r] = v
    raise ValueError("no return in " + func.name)


def run_op(op, a, p, types):
    binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
              "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
              "and": np.logical_and, "or": np.logical_or}
    unary = {"neg": np.negative, "exp": np.exp, "log": np.log,
             "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
             "tanh": np.tanh, "erf": erf, "relu": lambda x: np.maximum(x, 0),
             "silu": lambda x: x / (1 + np.exp(-x)),
             "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin,
             "cos": np.cos, "not": np.logical_not}
    if op == "param":
        dims, dtype = types[0]
        return seeded(p["name"], "param").standard_normal(dims) * 0.5
    if op == "constant":
        return p["value"]
    if op in binary:
        return binary[op](a[0], a[1])
    if op == "div":
        if a[0].dtype.kind in "iu":
            return np.trunc(a[0] / a[1]).astype(a[0].dtype)
        return a[0] / a[1]
    if op in unary:
        return unary[op](a[0])
    if op == "cmp":
        return {"eq": np.equal, "ne": np.not_equal, "lt": np.less,
                "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal}[p["predicate"]](a[0], a[1])
    if op == "where":
        return np.where(a[0], a[1], a[2])
    if op == "gelu":
        return gelu(a[0], p.get("approximate", "none"))
    if op == "cast":
        dims, dtype = types[0]
        if dtype == "i1":
            return a[0] != 0
        if dtype in ("i32", "i64"):
            return np.trunc(a[0]).astype(np.int64)
        return a[0].astype(np.float64)
    if op == "matmul":
        b = np.swapaxes(a[1], -1, -2) if p.get("transpose_b") else a[1]
        if "packed_n" in p:
            b = unpack_panels(a[1], p["packed_n"])
        return np.matmul(a[0], b)
    if op == "pack_panels":
        w = a[0].T if p.get("transpose_b") else a[0]
        k, n = w.shape
        panels = -(-n // 48)
        padded = np.zeros((k, panels * 48))
        padded[:, :n] = w
        out = padded.reshape(k, panels, 48).transpose(1, 0, 2)
        if out.ndim == 3 and len(types[0][0]) == 4:  # bf16 pairs of K
            out = out.reshape(panels, k // 2, 2, 48).transpose(0, 1, 3, 2)
        return out
    if op == "transpose":
        return np.transpose(a[0], p["perm"])
    if op == "reshape":
        # The input's dynamic dims are carried, in order, to the -1 entries.
        in_dims = p["$intypes"][0][0]
        carried = [a[0].shape[i] for i, d in enumerate(in_dims) if d is None]
        shape = list(p["shape"])
        dyn = [i for i, s in enumerate(shape) if s == -1]
        for i, v in zip(dyn, carried):
            shape[i] = v
        return a[0].reshape(shape)
    if op == "slice":
        idx = [slice(None)] * a[0].ndim
        idx[p["axis"]] = slice(p["start"], p["end"])
        return a[0][tuple(idx)]
    if op == "concat":
        return np.concatenate(a, axis=p["axis"])
    if op == "gather":
        return a[0][a[1]]
    if op in ("reduce_sum", "reduce_mean", "reduce_max"):
        fn = {"reduce_sum": np.sum, "reduce_mean": np.mean,
              "reduce_max": np.max}[op]
        return fn(a[0], axis=p["axis"], keepdims=bool(p.get("keepdim")))
    if op == "softmax":
        return softmax(a[0], p["axis"])
    if op == "layer_norm":
        return layer_norm(a[0], a[1], a[2], p["epsilon"])
    if op == "rms_norm":
        x = a[0]
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + p["epsilon"]) * a[1]
    if op == "positions":
        n = a[0].shape[p["axis"]]
        off = a[1].shape[p["offset_axis"]] if len(a) > 1 else 0
        return np.arange(n, dtype=np.int64) + off
    if op == "causal_mask":
        q = a[0].shape[p["q_axis"]]
        k = a[1].shape[p["k_axis"]]
        i = np.arange(q)[:, None]
        j = np.arange(k)[None, :]
        return j <= i + (k - q)
    if op == "fused_attention":
        seg = p.get("operandSegmentSizes", [1, 1, 1, 0, 0])
        q, k, v = a[0], a[1], a[2]
        rest = a[3:]
        keep = rest.pop(0) if seg[3] else None
        bias = rest.pop(0) if seg[4] else None
        s = np.matmul(q, np.swapaxes(k, -1, -2)) * p["scale"]
        if bias is not None:
            s = s + bias
        allowed = np.ones(s.shape, dtype=bool)
        if keep is not None:
            allowed = np.logical_and(allowed, keep)
        if p.get("causal"):
            sq, sk = q.shape[2], k.shape[2]
            i = np.arange(sq)[:, None]
            j = np.arange(sk)[None, :]
            allowed = np.logical_and(allowed, j <= i + (sk - sq))
        s = np.where(allowed, s, p.get("fill", -1e9))
        return np.matmul(softmax(s, -1), v)
    if op == "add_layer_norm":
        total = a[0] + a[1]
        return layer_norm(total, a[2], a[3], p["epsilon"]), total
    if op == "linear":
        w = a[1].T if p.get("transpose_b") else a[1]
        if "packed_n" in p:
            w = unpack_panels(a[1], p["packed_n"])
        y = np.matmul(a[0], w)
        if len(a) > 2:
            y = y + a[2]
        return activation(y, p.get("activation", "none"))
    raise NotImplementedError(op)


def unpack_panels(packed, n):
    """[K, N] from tfc.pack_panels' [P, K, 48] (bf16: [P, K/2, 48, 2])."""
    if packed.ndim == 4:
        panels, k2, cols, _ = packed.shape
        packed = packed.transpose(0, 1, 3, 2).reshape(panels, 2 * k2, cols)
    return np.concatenate(list(packed), axis=1)[:, :n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["compare"])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tol", type=float, default=1e-9)
    args = ap.parse_args()
    before = {f.name: f for f in parse_module(open(args.before).read())}
    after = {f.name: f for f in parse_module(open(args.after).read())}
    bad = 0
    for name, f in before.items():
        ref = evaluate(f)
        got = evaluate(after[name])
        for i, (r, g) in enumerate(zip(ref, got)):
            r = np.asarray(r, dtype=np.float64)
            g = np.asarray(g, dtype=np.float64)
            if r.shape != g.shape:
                print("@%s output %d: shape %s vs %s" % (name, i, r.shape,
                                                         g.shape))
                bad += 1
                continue
            scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
            err = float(np.abs(r - g).max()) / scale if r.size else 0.0
            ok = err <= args.tol
            bad += not ok
            print("@%s output %d %s: %s" % (name, i, "x".join(map(str, r.shape)),
                                          "equal" if ok else
                                          "DIFFERS (rel err %g)" % err))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
