#!/usr/bin/env python3
"""Tensor bundles (tools/interp/tensor_bundle.h) of a Paddle fixture for tests/gpu/check_conv.sh, and the
comparison of the GPU's outputs with Paddle's. Python 3 standard library only (it runs on the GPU machine too).

  fixture_bundle.py bundle FIXTURE HEADER OUT.bin [--inputs-only]
      FIXTURE: a directory with inference.pdiparams (optional), input_<name>.npy; HEADER: the NAME.h that
      `kforge compile --target cuda` wrote, whose comment lists the inputs and parameters with dtype and dims.
      Writes feed/<input> for every input and param/<name> for every parameter: Paddle's .pdiparams holds the
      parameters one after another sorted by name (docs/parameters.md), each checked against the header. With
      --inputs-only the inputs alone (the harness reads the parameters with load_parameters: --precision).
  fixture_bundle.py compare OUT.bin FIXTURE RTOL ATOL
      Output i of the bundle (the generated class's order) against FIXTURE/expected_<i>.npy: dtype, dims, and
      |gpu - paddle| <= ATOL + RTOL * max|paddle| for every element. Where FIXTURE/float64_<i>.npy exists (the
      model run in float64 on the same weights and inputs: bench/cuda_models/export_fixtures.py's real
      architectures), an output beyond that bound still agrees when its distance from the float64 result is at
      most 1.5x Paddle's own float32 result's plus ATOL: float32 noise of an ill-conditioned model (a detector's
      sigmoid map), not a wrong result. Prints one line per output; exit 1 on a mismatch.
"""
import ast
import math
import re
import struct
import sys
from pathlib import Path

# kforge::DataType (kforge_runtime.h) <-> numpy descr / Paddle VarType codes (framework.proto).
KFORGE = {"bool": 1, "int8": 2, "uint8": 3, "int16": 4, "int32": 5, "int64": 6, "float16": 7, "bfloat16": 8,
          "float32": 9, "float64": 10}
NPY = {"|b1": "bool", "|i1": "int8", "|u1": "uint8", "<i2": "int16", "<i4": "int32", "<i8": "int64",
       "<f2": "float16", "<f4": "float32", "<f8": "float64"}
PADDLE = {0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32", 6: "float64", 20: "uint8",
          21: "int8", 22: "bfloat16"}
SIZE = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
        "float32": 4, "float64": 8}
FORMAT = {"float32": "f", "float64": "d", "int32": "i", "int64": "q", "bool": "?", "int8": "b", "uint8": "B",
          "int16": "h"}


def fail(message):
    print(f"fixture_bundle: error: {message}", file=sys.stderr)
    sys.exit(1)


def read_npy(path):
    data = Path(path).read_bytes()
    if data[:6] != b"\x93NUMPY":
        fail(f"{path} is not a .npy file")
    major = data[6]
    header_len = struct.unpack_from("<H" if major == 1 else "<I", data, 8)[0]
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    if header["fortran_order"] or header["descr"] not in NPY:
        fail(f"{path}: unsupported layout {header}")
    dtype, dims = NPY[header["descr"]], list(header["shape"])
    return dtype, dims, data[start + header_len:]


def header_tensors(header, role):
    """[(name, dtype, dims)] of the `//   input` or `//   parameter` lines of a generated header, in order."""
    out = []
    for m in re.finditer(rf"^//   {role} +([^:]+): (\w+) \[([^\]]*)\]$", Path(header).read_text(), re.M):
        dims = [d.strip() for d in m.group(3).split(",") if d.strip()]
        out.append((m.group(1), m.group(2), [int(d) if d != "?" else None for d in dims]))
    return out


def varint(buf, i):
    value, shift = 0, 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def read_pdiparams(path, count):
    """The first `count` tensors of a combined .pdiparams: [(dtype, dims, bytes)]."""
    data = Path(path).read_bytes()
    pos, out = 0, []
    for _ in range(count):
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
            key, i = varint(desc, i)
            field, wire = key >> 3, key & 7
            if field == 1 and wire == 0:
                code, i = varint(desc, i)
            elif field == 2 and wire == 0:
                d, i = varint(desc, i)
                dims.append(d - (1 << 64) if d >= 1 << 63 else d)
            elif field == 2 and wire == 2:
                n, i = varint(desc, i)
                end = i + n
                while i < end:
                    d, i = varint(desc, i)
                    dims.append(d - (1 << 64) if d >= 1 << 63 else d)
            elif wire == 0:
                _, i = varint(desc, i)
            elif wire == 2:
                n, i = varint(desc, i)
                i += n
            else:
                fail(f"{path}: unexpected protobuf wire type {wire}")
        dtype = PADDLE.get(code)
        if dtype is None:
            fail(f"{path}: parameter dtype code {code} is not supported")
        nbytes = math.prod(dims) * SIZE[dtype]
        out.append((dtype, dims, data[pos:pos + nbytes]))
        pos += nbytes
    if pos != len(data):
        fail(f"{path}: {len(data) - pos} bytes left after {count} parameters")
    return out


def write_bundle(path, tensors):
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, dtype, dims, raw in tensors:
            encoded = name.encode()
            f.write(struct.pack("<I", len(encoded)) + encoded + struct.pack("<ii", KFORGE[dtype], len(dims)))
            f.write(struct.pack(f"<{len(dims)}q", *dims) + struct.pack("<Q", len(raw)) + raw)


def read_bundle(path):
    data = Path(path).read_bytes()
    if data[:4] != b"KFTB":
        fail(f"{path} is not a tensor bundle")
    _, count = struct.unpack_from("<II", data, 4)
    pos, out = 12, []
    names = {v: k for k, v in KFORGE.items()}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        code, ndim = struct.unpack_from("<ii", data, pos)
        pos += 8
        dims = list(struct.unpack_from(f"<{ndim}q", data, pos))
        pos += 8 * ndim
        (nbytes,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        out.append((name, names.get(code, str(code)), dims, data[pos:pos + nbytes]))
        pos += nbytes
    return out


def bundle(fixture, header, out, with_params=True):
    fixture = Path(fixture)
    tensors = []
    for name, dtype, dims in header_tensors(header, "input"):
        npy_dtype, npy_dims, raw = read_npy(fixture / f"input_{name}.npy")
        # A class compiled with --io-precision compute takes a 16-bit input: the float32 values go as they are and
        # the harness rounds them (gpu_harness.cu).
        narrowed = npy_dtype == "float32" and dtype in ("float16", "bfloat16")
        if (npy_dtype != dtype and not narrowed) or len(npy_dims) != len(dims) or any(d is not None and d != e for d, e in zip(dims, npy_dims)):
            fail(f"input_{name}.npy is {npy_dtype} {npy_dims}, the program wants {dtype} {dims}")
        tensors.append((f"feed/{name}", npy_dtype, npy_dims, raw))
    params = header_tensors(header, "parameter") if with_params else []
    if params:
        by_name = sorted(params, key=lambda p: p[0].encode())
        for (name, dtype, dims), (file_dtype, file_dims, raw) in zip(by_name, read_pdiparams(fixture / "inference.pdiparams", len(params))):
            if file_dtype != dtype or file_dims != dims:
                fail(f"parameter {name}: the .pdiparams has {file_dtype} {file_dims}, the program wants {dtype} {dims}")
            tensors.append((f"param/{name}", dtype, dims, raw))
    write_bundle(out, tensors)


def element_error(g, w):
    """|g - w| for finite values; 0 where both are NaN or the same infinity; infinite where they differ otherwise."""
    if math.isfinite(g) and math.isfinite(w):
        return abs(g - w)
    return 0.0 if (math.isnan(g) and math.isnan(w)) or g == w else math.inf


def worst_elements(got, want, dims, bound, count=4):
    """The `count` elements farthest beyond `bound` (index, gpu, Paddle), for a mismatch's report: where a
    non-finite value or a flipped comparison sits says more than the largest error alone."""
    bad = sorted(((element_error(g, w), i) for i, (g, w) in enumerate(zip(got, want)) if element_error(g, w) > bound),
                 reverse=True)
    def index(flat):
        out = []
        for d in reversed(dims):
            out.append(flat % d if d else 0)
            flat = flat // d if d else 0
        return list(reversed(out))
    shown = ", ".join(f"{index(i)}: gpu {got[i]:.6g}, Paddle {want[i]:.6g}" for _, i in bad[:count])
    return f"    {len(bad)} element(s) beyond the bound; the worst: {shown}"


def compare(out, fixture, rtol, atol):
    ok = True
    for i, (name, dtype, dims, raw) in enumerate(read_bundle(out)):
        want_dtype, want_dims, want_raw = read_npy(Path(fixture) / f"expected_{i}.npy")
        if dtype != want_dtype or dims != want_dims:
            print(f"  output {i} ({name}): {dtype} {dims}, Paddle {want_dtype} {want_dims}")
            ok = False
            continue
        fmt = FORMAT[dtype]
        got = struct.unpack(f"<{len(raw) // SIZE[dtype]}{fmt}", raw)
        want = struct.unpack(f"<{len(want_raw) // SIZE[dtype]}{fmt}", want_raw)
        # NaN where Paddle has NaN agrees (argsort's sorted values), and so does an infinity where Paddle has the
        # same one; NaN or an infinity in one only is a mismatch. The bound comes from the finite values (an infinite
        # one would make it infinite, and nothing could fail).
        scale = max((abs(w) for w in want if math.isfinite(w)), default=0.0)
        bound = atol + rtol * scale
        worst = max((element_error(g, w) for g, w in zip(got, want)), default=0.0)
        good = worst <= bound
        rel = worst / scale if scale > 0 else (0.0 if worst == 0 else math.inf)
        line = (f"  output {i} ({name}) {dtype} {dims}: max|gpu - paddle| {worst:.3g}, bound {bound:.3g} "
                f"(max|paddle| {scale:.3g}, relative {rel:.2e})")
        reference = Path(fixture) / f"float64_{i}.npy"
        if not good and reference.exists():
            ref_dtype, ref_dims, ref_raw = read_npy(reference)
            if ref_dtype != "float64" or ref_dims != dims:
                fail(f"{reference}: {ref_dtype} {ref_dims}, not float64 {dims}")
            ref = struct.unpack(f"<{len(ref_raw) // 8}d", ref_raw)
            gpu_err = max((abs(g - r) if not math.isnan(g) else math.inf for g, r in zip(got, ref)), default=0.0)
            paddle_err = max((abs(w - r) for w, r in zip(want, ref)), default=0.0)
            good = gpu_err <= 1.5 * paddle_err + atol
            line += f"; from float64: gpu {gpu_err:.3g}, Paddle {paddle_err:.3g} (at most 1.5x)"
        ok &= good
        print(f"{line} {'ok' if good else 'MISMATCH'}")
        if not good:
            print(worst_elements(got, want, dims, bound))
    return ok


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "bundle" and sys.argv[5:] in ([], ["--inputs-only"]):
        bundle(sys.argv[2], sys.argv[3], sys.argv[4], with_params=len(sys.argv) == 5)
        return 0
    if len(sys.argv) == 6 and sys.argv[1] == "compare":
        return 0 if compare(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
