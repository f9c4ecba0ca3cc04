"""The float64 rule of tools/check-graphnet and of check-paddle-models --real (tools/paddle_zoo/check.py; issue 34,
item 5): an output beyond the fixed bound still agrees when kforge is at most FACTOR times as far from the same model
run in float64 (tools/graphnet/float64_sample.py) as Paddle's own float32 result is (plus SLACK, the absolute slack of
the GPU check). Ill-conditioned float32 graphs (saturated sigmoids, softmaxes over logits of 1e13) make Paddle itself
as far from float64 as kforge; that is not a kforge bug.

What is compared (branch prec34d, docs/model-zoo.md "The float64 rule over draws and images"): one draw's largest
element over a whole batch is luck, not arithmetic (a network that amplifies float32 noise ~1e4x moves that figure
0.03x-34x between one-ulp redraws of the same input). So the distance is measured
  - per image: each slice along dim 0 of an output that has the batch as its dim 0 (`per_image`: the largest
    |x - float64| of that image), the whole output as one "image" otherwise;
  - over DRAWS draws: the sample's own inputs, then DRAWS-1 copies with every float input element moved one ulp
    up or down at random (`perturb`, seeded), each run by Paddle, kforge and float64 alike;
and a model's figure is the median over the draws of the mean over the images (`figure`: the mean, not the median,
because a median over images would ignore errors on fewer than half of them, and is 0 on outputs whose typical image
is exact, PicoDet's saturated scores and distribution-focal bins, where a few images differ by a bin). The rule:
kforge's figure <= FACTOR x Paddle's figure + SLACK, on every output beyond the bound (`within`); a figure is
infinite when most draws have an image with a non-finite value where float64 has a finite one. The old single-draw
figure (draw 0's largest element over the batch) stays in each row ("kforge", "paddle") for the table, and decides
alone when no draws were run.

`distances`, `per_image`, `perturb` and `with_draws` need numpy (the outputs); `figure`, `within`, `verdict` and
`describe` are standard library only (the unit test tools/graphnet/test_float64.py runs them on canned distances).
"""

import statistics

FACTOR = 1.5
SLACK = 1e-5
DRAWS = 5  # the sample's inputs and four one-ulp redraws


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
    """Whether one output's distances satisfy the rule (kforge's finite, at most factor x Paddle's + slack): the
    figures over draws and images when the row has them ("draws"), else draw 0's largest element."""
    if "why" in row:
        return False
    k, p = figures(row)
    return k != float("inf") and k <= factor * p + slack


def figures(row):
    """(kforge's, Paddle's) distance that the rule compares for one output row."""
    d = row.get("draws")
    return (d["kforge"], d["paddle"]) if d else (row["kforge"], row["paddle"])


def figure(table):
    """A model's distance from float64 over draws and images: `table` holds one list per draw of the per-image
    distances; the median over the draws of each draw's mean over its images (an image non-finite where float64
    is finite makes its draw's mean inf; the median over draws then decides whether that is typical)."""
    return float(statistics.median(sum(images) / len(images) for images in table))


def verdict(rows, factor=FACTOR, slack=SLACK):
    """"agree-f64" when every output beyond the fixed bound satisfies the rule (and there is one), else "differ"."""
    return "agree-f64" if rows and all(within(r, factor, slack) for r in rows) else "differ"


def worst(rows):
    """The row that decides: the one failing the rule, else the largest kforge/Paddle ratio."""
    def ratio(r):
        if "why" in r:
            return float("inf")
        k, p = figures(r)
        return float("inf") if k == float("inf") else k / max(p, 1e-30)
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
    d = row.get("draws")
    if not d:
        return f"from float64: kforge {row['kforge']:.3g}, Paddle {row['paddle']:.3g} ({where})"
    inf = float("inf")
    ratio = "both non-finite where float64 is not" if d["kforge"] == d["paddle"] == inf else \
        f"{d['kforge'] / d['paddle'] if d['paddle'] > 0 else inf if d['kforge'] > 0 else 1.0:.2f}x"
    return (f"from float64, median of {d['count']} draw{'s' if d['count'] > 1 else ''} x {d['images']} "
            f"image{'s' if d['images'] > 1 else ''}: "
            f"kforge {d['kforge']:.3g}, Paddle {d['paddle']:.3g} ({ratio}; {where}); draw 0's largest: "
            f"kforge {row['kforge']:.3g}, Paddle {row['paddle']:.3g}")


def batch_of(feeds):
    """The batch of a sample's inputs (name -> array): dim 0 of the float input of the highest rank (of those, the
    one with the most elements: the images, not PicoDet's anchors [4789, 2] beside its [8, 3, 480, 480]) when it
    is over 1, else None (nothing to split)."""
    floats = [v for v in feeds.values() if v.dtype.kind == "f" and v.ndim >= 1]
    if not floats:
        return None
    main = max(floats, key=lambda v: (v.ndim, v.size))
    return main.shape[0] if main.shape[0] > 1 else None


def per_image(x, reference, batch):
    """The distance (`distance`) of each image of x from the float64 reference: slices along dim 0 when both
    have `batch` there, else the whole output as one."""
    if batch and x.ndim >= 1 and x.shape[0] == batch and reference.shape == x.shape:
        return [distance(x[b], reference[b]) for b in range(batch)]
    return [distance(x, reference)]


def perturb(x, rng):
    """x with every float element moved one ulp up or down, the direction drawn per element (integers and bools
    as they are): the same input, float32's rounding of it drawn again."""
    import numpy as np
    if x.dtype.kind != "f":
        return x
    up = rng.integers(0, 2, size=x.shape).astype(bool)
    return np.where(up, np.nextafter(x, x.dtype.type(np.inf)), np.nextafter(x, x.dtype.type(-np.inf))).astype(x.dtype)


def draw_inputs(feeds, draw, seed):
    """The inputs of draw `draw`: draw 0 the feeds themselves, draw d every float element one ulp off (seeded by
    (seed, d), so that every implementation and a rerun see the same copy)."""
    import numpy as np
    if draw == 0:
        return dict(feeds)
    rng = np.random.default_rng([seed, draw])
    return {name: perturb(value, rng) for name, value in feeds.items()}


def with_draws(rows, draws, batch):
    """rows (`distances` of draw 0) with "draws" added to each float row: {"kforge", "paddle": `figure`s, "count":
    draws used, "images": per draw, "kforge_images", "paddle_images": the per-draw, per-image distances}. `draws`:
    one (Paddle's, kforge's, float64's outputs) per draw that ran, draw 0 first."""
    for row in rows:
        if "why" in row:
            continue
        i = row["output"]
        k_table, p_table = [], []
        for want, got, reference in draws:
            r = reference[i] if i < len(reference) else None
            if r is None or not (want[i].shape == got[i].shape == r.shape):
                continue
            k_table.append(per_image(got[i], r, batch))
            p_table.append(per_image(want[i], r, batch))
        if k_table:
            row["draws"] = {"kforge": figure(k_table), "paddle": figure(p_table), "count": len(k_table),
                            "images": len(k_table[0]), "kforge_images": k_table, "paddle_images": p_table}
    return rows
