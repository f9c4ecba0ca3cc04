#!/usr/bin/env python3
"""Extract what the PP-OCRv5 models of the zoo need from a PaddleOCR checkout (PaddleOCR's code is not part of
kforge: it stays in the build directory, never in the repository).

    python3 tools/paddle_zoo/ppocr_extract.py SOURCE DEST [--commit REV]

SOURCE is a PaddleOCR work tree (git clone https://github.com/PaddlePaddle/PaddleOCR) or a bare git directory of
it; from a git directory (or with --commit) the files are read at REV (default HEAD) with `git archive`. DEST
receives ppocr/ (the Python package: ppocr/modeling and what it imports, without ppocr/utils' large data files
except the PP-OCRv5 character dictionary) and the PP-OCRv5 configs:

    configs/det/PP-OCRv5/PP-OCRv5_mobile_det.yml, PP-OCRv5_server_det.yml, configs/rec/PP-OCRv5/PP-OCRv5_mobile_rec.yml

each also written as .json beside it (Paddle's venv need not have PyYAML; this script needs it only to convert).
The measurements of docs/dynamic-shapes-measured.md used PaddleOCR commit 79f652f5f5ccb4293f819fc8d347d5353f0c751a
(2025-05-20, the PP-OCRv5 / 3.0 release).
"""

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

CONFIGS = ["configs/det/PP-OCRv5/PP-OCRv5_mobile_det.yml", "configs/det/PP-OCRv5/PP-OCRv5_server_det.yml",
           "configs/rec/PP-OCRv5/PP-OCRv5_mobile_rec.yml"]
DICT = "ppocr/utils/dict/ppocrv5_dict.txt"


def wanted(path):
    """ppocr's Python files and the PP-OCRv5 dictionary; the configs."""
    if path in CONFIGS or path == DICT:
        return True
    return path.startswith("ppocr/") and path.endswith(".py")


def from_git(git_dir, rev, dest):
    tar = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", rev, "ppocr", *CONFIGS],
                         stdout=subprocess.PIPE, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            if m.isfile() and wanted(m.name):
                target = dest / m.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(t.extractfile(m).read())


def from_tree(tree, dest):
    for path in [*sorted((tree / "ppocr").rglob("*")), *(tree / c for c in CONFIGS)]:
        rel = path.relative_to(tree).as_posix()
        if path.is_file() and wanted(rel):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="PaddleOCR work tree or bare git directory")
    p.add_argument("dest", help="where ppocr/ and configs/ go")
    p.add_argument("--commit", help="revision to read (a git directory or a work tree's .git; default HEAD)")
    args = p.parse_args()
    source, dest = Path(args.source), Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    git_dir = source if (source / "HEAD").is_file() and (source / "objects").is_dir() else source / ".git"
    if args.commit or not (source / "ppocr").is_dir():
        from_git(git_dir, args.commit or "HEAD", dest)
    else:
        from_tree(source, dest)
    import yaml  # only to convert the configs
    for c in CONFIGS:
        cfg = yaml.safe_load((dest / c).read_text())
        (dest / c).with_suffix(".json").write_text(json.dumps(cfg, indent=1))
    n = sum(1 for _ in (dest / "ppocr").rglob("*.py"))
    print(f"ppocr_extract: {n} Python files of ppocr/ and {len(CONFIGS)} configs in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
