"""The float64 rule of tools/check-graphnet (issue 34, item 5; as tools/paddle_zoo/check.py's compare_float64 for
check-paddle-models --real): an output beyond the fixed bound still agrees when kforge's largest distance from the
same model run in float64 (tools/graphnet/float64_sample.py) is at most FACTOR times Paddle's own float32 distance
(plus SLACK, the absolute slack of the GPU check). Ill-conditioned float32 graphs (saturated sigmoids, softmaxes over
logits of 1e13) make Paddle itself as far from float64 as kforge; that is not a kforge bug.

`distances` needs numpy (the outputs); `verdict` and `describe` are standard library only (the unit test
tools/graphnet/test_float64.py runs them on canned distances).
"""

FACTOR = 1.5
SLACK = 1e-5


def distance(x, reference):
    """max |x - reference| over the elements, x float32 (Paddle's or kforge's), reference float64. Where the
    reference is not finite x must hold the same value; where x is not finite and the reference is: inf."""
    import numpy as np
    x64, r = x.astype(np.float64), reference.astype(np.float64)
    if x64.size == 0:
        return 0.0
    finite = np.isfinite(r)
    if not np.array_equal(x64[~finite], r[~finite], equal_nan=True):
        return float("inf")
    if not np.isfinite(x64[finite]).all():
        return float("inf")
    return float(np.max(np.abs(x64[finite] - r[finite]))) if finite.any() else 0.0


def beyond_bound(want, got, rtol, atol):
    """Whether kforge's output `got` misses Paddle's `want` by more than the fixed bound (check-graphnet's compare)."""
    import numpy as np
    if want.shape != got.shape:
        return True
    if want.dtype.kind != "f":
        return not np.array_equal(want.astype(np.int64), got.astype(np.int64))
    w, g = want.astype(np.float64), got.astype(np.float64)
    finite = np.isfinite(w)
    if not np.array_equal(np.isfinite(g), finite) or not np.array_equal(w[~finite], g[~finite], equal_nan=True):
        return True
    if not finite.any():
        return False
    return float(np.max(np.abs(g[finite] - w[finite]))) > rtol * float(np.max(np.abs(w[finite]))) + atol


def distances(want, got, reference, rtol, atol):
    """One dict per output beyond the fixed bound: {"output": i, "kforge": distance, "paddle": distance} (float
    outputs), or {"output": i, "why": ...} where the rule cannot apply (integers, shapes, counts)."""
    if not (len(want) == len(got) == len(reference)):
        return [{"output": -1, "why": f"outputs: Paddle {len(want)}, kforge {len(got)}, float64 {len(reference)}"}]
    rows = []
    for i, (w, g, r) in enumerate(zip(want, got, reference)):
        if not beyond_bound(w, g, rtol, atol):
            continue
        if w.dtype.kind != "f":
            rows.append({"output": i, "why": f"{w.dtype} output differs (exact outputs have no float64 rule)"})
        elif not (w.shape == g.shape == r.shape):
            rows.append({"output": i, "why": f"shapes: Paddle {list(w.shape)}, kforge {list(g.shape)}, float64 "
                                             f"{list(r.shape)}"})
        else:
            rows.append({"output": i, "kforge": distance(g, r), "paddle": distance(w, r)})
    return rows


def within(row, factor=FACTOR, slack=SLACK):
    """Whether one output's distances satisfy the rule (kforge's finite, at most factor x Paddle's + slack)."""
    if "why" in row:
        return False
    k, p = row["kforge"], row["paddle"]
    return k != float("inf") and k <= factor * p + slack


def verdict(rows, factor=FACTOR, slack=SLACK):
    """"agree-f64" when every output beyond the fixed bound satisfies the rule (and there is one), else "differ"."""
    return "agree-f64" if rows and all(within(r, factor, slack) for r in rows) else "differ"


def worst(rows):
    """The row that decides: the one failing the rule, else the largest kforge/Paddle ratio."""
    def ratio(r):
        if "why" in r:
            return float("inf")
        return r["kforge"] / max(r["paddle"], 1e-30)
    return max(rows, key=lambda r: (not within(r), ratio(r))) if rows else None


def describe(check):
    """One line for the table of a result's "float64" entry: {"status": "ok" | "failed" | "skipped", "error",
    "rows"}."""
    if not check:
        return ""
    if check.get("status") != "ok":
        return f"float64: {check.get('status', '?')} ({check.get('error', '')})"
    row = worst(check.get("rows") or [])
    if row is None:
        return "float64: no output beyond the bound"
    if "why" in row:
        return f"float64: output {row['output']}: {row['why']}"
    n = len(check["rows"])
    where = f"output {row['output']}" + (f" (worst of {n})" if n > 1 else "")
    return f"from float64: kforge {row['kforge']:.3g}, Paddle {row['paddle']:.3g} ({where})"
