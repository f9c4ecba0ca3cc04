#!/usr/bin/env python3
"""`kforge lint --print-signatures` over Paddle's 9 op files equals Paddle's own pir_op_signatures.json.

Runs the binary the way a user would (repeated --ops, --sparse-ops for the two sparse files, --op-compat)
and compares its JSON with the oracle: the same 1483 PIR op names; per YAML file the same ops in the same
order (the oracle groups its entries by the .cc file Paddle generates them into, sorted by that name);
and every field of every op except "file" (the oracle names the generated .cc, kforge the YAML line).

The oracle has null for infer_meta and kernel of exactly the sparse ops whose infer_meta is namespaced
(sparse::CastInferMeta): Paddle's generator writes a string there, so null is the dump's gap. For those
ops every other field must agree and kforge's infer_meta must be namespaced, with a kernel.

Reads ../shared/refdata/paddle (or --refdata, $KFORGE_PADDLE_REFDATA); exits 77 (meson's SKIP) saying so
when the files are absent.
Usage: signatures_oracle.py --kforge BUILD/src/kforge [--refdata DIR]
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = 77
# (YAML file under the refdata, its flag, the .cc files Paddle generates its ops into)
FILES = [
    ("ops.yaml", "--ops", r"pd_op[0-9]+\.cc\.tmp"),
    ("yaml/backward.yaml", "--ops", r"pd_op_bwd[0-9]+\.cc\.tmp"),
    ("yaml/fused_ops.yaml", "--ops", r"pd_op_fused\.cc\.tmp"),
    ("yaml/fused_backward.yaml", "--ops", r"pd_op_fused_bwd\.cc\.tmp"),
    ("yaml/static_ops.yaml", "--ops", r"pd_pir_op\.cc\.tmp"),
    ("yaml/static_backward.yaml", "--ops", r"pd_pir_op_bwd\.cc\.tmp"),
    ("yaml/update_ops.yaml", "--ops", r"pd_pir_op_update\.cc\.tmp"),
    ("yaml/sparse_ops.yaml", "--sparse-ops", r"pd_op_sparse\.cc\.tmp"),
    ("yaml/sparse_backward.yaml", "--sparse-ops", r"pd_op_sparse_bwd\.cc\.tmp"),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--refdata", default=os.environ.get("KFORGE_PADDLE_REFDATA",
                                                            str(ROOT.parent / "shared" / "refdata" / "paddle")))
    args = parser.parse_args()
    refdata = Path(args.refdata)
    needed = [refdata / f for f, _, _ in FILES] + [refdata / "op_compat.yaml", refdata / "pir_op_signatures.json"]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        print("SKIPPED: Paddle's refdata is absent (" + ", ".join(missing) + "); the signature oracle did not run")
        return SKIP

    command = [args.kforge, "lint", "--print-signatures", "--color", "never", "--op-compat",
               str(refdata / "op_compat.yaml")]
    for path, flag, _ in FILES:
        command += [flag, str(refdata / path)]
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or " error: " in proc.stderr:
        print(proc.stderr)
        print(f"FAIL: kforge lint exited {proc.returncode}")
        return 1
    ours = json.loads(proc.stdout)
    oracle = json.loads((refdata / "pir_op_signatures.json").read_text())

    failures = []
    if sorted(ours) != sorted(oracle):
        failures.append(f"op names differ: only kforge {sorted(set(ours) - set(oracle))[:20]}, "
                        f"only the oracle {sorted(set(oracle) - set(ours))[:20]}")
    for path, _, generated in FILES:
        yaml_name = Path(path).name
        our_order = [k for k, v in ours.items() if Path(v["file"].rsplit(":", 1)[0]).name == yaml_name]
        oracle_order = [k for k, v in oracle.items() if re.fullmatch(generated, v["file"])]
        if not oracle_order or our_order != oracle_order:
            failures.append(f"{yaml_name}: {len(our_order)} ops from kforge, {len(oracle_order)} in the oracle, "
                            "or a different order")

    exact = unrecorded = 0
    for name, expected in oracle.items():
        got = ours.get(name)
        if got is None:
            continue
        expected = {k: v for k, v in expected.items() if k != "file"}
        got = {k: v for k, v in got.items() if k != "file"}
        gap = expected["infer_meta"] is None and expected["kernel"] is None
        if gap:
            if "::" not in got["infer_meta"] or not got["kernel"]:
                failures.append(f"{name}: the oracle records no infer_meta; kforge has {got['infer_meta']!r}")
                continue
            for key in ("infer_meta", "kernel"):
                del expected[key], got[key]
        if got != expected:
            field = next(k for k in expected if got.get(k) != expected[k])
            failures.append(f"{name}.{field}: kforge {json.dumps(got.get(field))} vs oracle {json.dumps(expected[field])}")
        elif gap:
            unrecorded += 1
        else:
            exact += 1

    print(f"{exact + unrecorded} of {len(oracle)} signatures equal ({exact} in every field, {unrecorded} in every "
          "field the oracle records)")
    for f in failures[:50]:
        print("FAIL:", f)
    if failures or exact + unrecorded != len(oracle):
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
