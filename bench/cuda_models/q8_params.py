#!/usr/bin/env python3
"""Carries a Paddle .pdiparams whose float32 tensors hold values q * 2^-k (|q| <= 127, one k per tensor:
bench/cuda_models/export_fixtures.py makes them so) as one byte per value, and rebuilds it bit for bit.
Python 3 standard library only (pack runs on the build machine, unpack on the GPU machine).

  q8_params.py pack IN.pdiparams OUT.q8     every tensor's header bytes verbatim, then its data: float32 tensors
                                            whose values all are q * 2^-k as the exponent k and int8 q, any other
                                            tensor as its raw bytes
  q8_params.py unpack IN.q8 OUT.pdiparams   the original file
  q8_params.py inputs FIXTURE               FIXTURE/input_NAME.npy from each input_NAME.seed (reseed_input: the
                                            large float32 inputs of GraphNet samples travel as seeds too)

Weights too large to carry even as bytes (vgg16: 138 M values) are made on both machines instead: reseed(), called
by export_fixtures.py before Paddle computes the expected outputs, replaces the values of every float32 tensor of a
.pdiparams by integers q drawn from a counter-based generator (splitmix64 of the tensor's seed and the element's
index) in a range that keeps the tensor's spread and sign, times the tensor's 2^-k, and writes the .q8 file with just
(k, range, seed) for each: unpack regenerates the same bytes. Those two need numpy (vectorised; the GPU machine's
PyTorch has it).
"""
import math
import struct
import sys
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "gpu"))
import fixture_bundle as fb  # noqa: E402  (the .pdiparams reader's protobuf helpers)

MAGIC = b"KFQ8\x01"


def scale_exponent(top):
    """k of the smallest scale 2^-k under which a tensor whose largest |value| is `top` (> 0) fits |q| <= 127."""
    return -math.ceil(math.log2(top / 127))


def tensors(data):
    """(header bytes, dtype, element count, data bytes) of every tensor of a combined .pdiparams."""
    pos = 0
    while pos < len(data):
        start = pos
        _, lod_level = struct.unpack_from("<IQ", data, pos)
        pos += 12
        for _ in range(lod_level):
            (n,) = struct.unpack_from("<Q", data, pos)
            pos += 8 + n
        _, desc_size = struct.unpack_from("<Ii", data, pos)
        pos += 8
        desc, i, code, dims = data[pos:pos + desc_size], 0, None, []
        pos += desc_size
        while i < len(desc):
            key, i = fb.varint(desc, i)
            field, wire = key >> 3, key & 7
            if field == 1 and wire == 0:
                code, i = fb.varint(desc, i)
            elif field == 2 and wire == 0:
                d, i = fb.varint(desc, i)
                dims.append(d)
            elif field == 2 and wire == 2:
                n, i = fb.varint(desc, i)
                end = i + n
                while i < end:
                    d, i = fb.varint(desc, i)
                    dims.append(d)
            elif wire == 0:
                _, i = fb.varint(desc, i)
            elif wire == 2:
                n, i = fb.varint(desc, i)
                i += n
            else:
                fb.fail(f"unexpected protobuf wire type {wire}")
        dtype = fb.PADDLE.get(code)
        if dtype is None:
            fb.fail(f"unsupported Paddle dtype code {code}")
        count = math.prod(dims)
        size = count * fb.SIZE[dtype]
        yield data[start:pos], dtype, count, data[pos:pos + size]
        pos += size


def pack(src, dst):
    data = Path(src).read_bytes()
    out = bytearray(MAGIC)
    raw = quantized = 0
    for header, dtype, count, body in tensors(data):
        out += struct.pack("<I", len(header)) + header
        values = array("f", body) if dtype == "float32" else None
        q = None
        top = max(abs(v) for v in values) if values is not None and count > 0 else None
        if top is not None and math.isfinite(top):  # inf / NaN (RT-DETR's invalid anchors): the tensor stays raw
            k = scale_exponent(top) if top > 0 else 0
            scale = 2.0 ** k
            ints = [v * scale for v in values]
            if all(x == int(x) and -127 <= x <= 127 for x in ints):
                small = array("b", (int(x) for x in ints))
                # Exact, -0.0 included (it would come back as +0.0): else the tensor stays raw.
                if array("f", (x * 2.0 ** -k for x in small)).tobytes() == body:
                    q = (k, small.tobytes())
        if q is None:
            out += struct.pack("<bI", 0, len(body)) + body
            raw += len(body)
        else:
            out += struct.pack("<bi", 1, q[0]) + q[1]
            quantized += count
    Path(dst).write_bytes(bytes(out))
    print(f"q8_params: {src}: {quantized} values as bytes, {raw} raw bytes -> {len(out)} bytes")


def unpack(src, dst):
    data = Path(src).read_bytes()
    if not data.startswith(MAGIC):
        fb.fail(f"{src} is not a q8_params file")
    pos, out = len(MAGIC), bytearray()
    while pos < len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        header = data[pos + 4:pos + 4 + n]
        pos += 4 + n
        out += header
        kind = data[pos]
        if kind == 0:
            (size,) = struct.unpack_from("<I", data, pos + 1)
            out += data[pos + 5:pos + 5 + size]
            pos += 5 + size
        elif kind == 1:
            (k,) = struct.unpack_from("<i", data, pos + 1)
            count = header_count(header)
            scale = 2.0 ** -k
            q = array("b", data[pos + 5:pos + 5 + count])
            out += array("f", (x * scale for x in q)).tobytes()
            pos += 5 + count
        else:
            k, lo, hi, seed = struct.unpack_from(SEEDED, data, pos + 1)
            out += seeded_values(seed, header_count(header), lo, hi, k)
            pos += 1 + struct.calcsize(SEEDED)
    Path(dst).write_bytes(bytes(out))


SEEDED = "<iiiQ"  # a seeded tensor's record after its kind byte 2: k, lo, hi, seed


def seeded_values(seed, count, lo, hi, k):
    """float32 bytes of q * 2^-k, q in [lo, hi] from splitmix64(seed * golden ratio + index) (exact: |q| <= 127)."""
    import numpy as np
    out = np.empty(count, np.float32)
    base = np.uint64((seed * 0x9E3779B97F4A7C15) % 2**64)
    with np.errstate(over="ignore"):
        for start in range(0, count, 1 << 22):
            z = np.arange(start, min(count, start + (1 << 22)), dtype=np.uint64) + base
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z ^= z >> np.uint64(31)
            q = (z % np.uint64(hi - lo + 1)).astype(np.int64) + lo
            out[start:start + len(q)] = q.astype(np.float32) * np.float32(2.0 ** -k)
    return out.tobytes()


def seeded_range(w, top):
    """(k, lo, hi) of the seeded values standing for the float32 values `w` (largest magnitude `top` > 0): reseed's
    scale and spread."""
    k = scale_exponent(top)
    if float(w.min()) >= 0:
        return k, 0, int(min(127, max(1, round(2 * float(w.mean()) * 2.0 ** k))))
    r = int(min(127, max(1, round(float(w.std()) * math.sqrt(3) * 2.0 ** k))))
    return k, -r, r


def seeded_array(spec):
    """The float32 array of a seeded input's spec (reseed_input)."""
    import numpy as np
    count = int(np.prod(spec["shape"], dtype=np.int64))
    values = seeded_values(spec["seed"], count, spec["lo"], spec["hi"], spec["k"])
    return np.frombuffer(values, np.float32).reshape(spec["shape"]).copy()


def reseed_input(value, seed):
    """An input of seeded values in place of float32 `value` (same shape, scale and spread, as reseed does for
    weights): (the array, its spec: what seeded_array rebuilds it from), or None where `value` cannot be (not
    float32, all zeros, not finite)."""
    import numpy as np
    if value.dtype != np.float32 or value.size == 0 or not np.all(np.isfinite(value)):
        return None
    top = float(np.max(np.abs(value)))
    if top == 0:
        return None
    k, lo, hi = seeded_range(value.reshape(-1), top)
    spec = {"shape": list(value.shape), "k": k, "lo": lo, "hi": hi, "seed": seed}
    return seeded_array(spec), spec


def rebuild_inputs(fixture):
    """Writes FIXTURE/input_NAME.npy from each FIXTURE/input_NAME.seed (a JSON spec of reseed_input)."""
    import json
    import numpy as np
    for spec_file in sorted(Path(fixture).glob("input_*.seed")):
        np.save(spec_file.with_suffix(".npy"), seeded_array(json.loads(spec_file.read_text())))


def reseed(pdiparams, seed, q8):
    """Rewrites every float32 tensor of `pdiparams` as seeded values (module docstring) and writes `q8`, the file
    unpack rebuilds it from. A tensor keeps its scale 2^-k (the smallest that holds its largest value) and its
    spread: q uniform in [-R, R] with R = std * sqrt(3) * 2^k, or in [0, 2 * mean * 2^k] where no value is negative
    (batch-norm variances), each range within [-127, 127] and at least one step wide."""
    import numpy as np
    data = Path(pdiparams).read_bytes()
    params, out = bytearray(), bytearray(MAGIC)
    for index, (header, dtype, count, body) in enumerate(tensors(data)):
        params += header
        out += struct.pack("<I", len(header)) + header
        w = np.frombuffer(body, np.float32) if dtype == "float32" and count > 0 else None
        top = float(np.max(np.abs(w))) if w is not None else 0.0
        if top == 0:
            params += body
            out += struct.pack("<bI", 0, len(body)) + body
            continue
        k, lo, hi = seeded_range(w, top)
        tensor_seed = seed * 1000003 + index
        params += seeded_values(tensor_seed, count, lo, hi, k)
        out += struct.pack("<b", 2) + struct.pack(SEEDED, k, lo, hi, tensor_seed)
    Path(pdiparams).write_bytes(bytes(params))
    Path(q8).write_bytes(bytes(out))


def header_count(header):
    """The element count of the tensor whose header bytes these are (parsed as a file of one tensor)."""
    return next(tensors(header))[2]


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("pack", "unpack"):
        (pack if sys.argv[1] == "pack" else unpack)(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "inputs":
        rebuild_inputs(sys.argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
