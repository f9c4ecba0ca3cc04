#!/bin/bash
# The hostile-file measurements of docs/fuzzing.md ("Hostile files"): one line per class, with the exit status,
# wall time and peak memory of KFORGE under /usr/bin/time -v, a 4 GiB address-space cap (prlimit) and a 15 s
# timeout, and the first line of what it printed.
#   tools/measure-hostile.sh KFORGE [LABEL]
set -u
KF=$(realpath "$1"); LABEL=${2:-$1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=$ROOT/tests/golden/compile-static
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; cd "$W"
mkdir d.yaml dep.d; mkfifo fifo.yaml fifo.j2; truncate -s 2G big.yaml
printf '{{ x }}\n' > t.j2; printf 'x: 1\n' > data.yaml
python3 - "$S/program.yaml" <<'PY'
import sys
# Ten levels of ten aliases: 10^10 strings once expanded.
flow = ['&a0 [' + ', '.join(['"lol"'] * 10) + ']'] + [f'&a{i} [' + ', '.join([f'*a{i-1}'] * 10) + ']' for i in range(1, 10)]
open('bomb.yaml', 'w').write(''.join(f'a{i}: {f}\n' for i, f in enumerate(flow)))
prog = open(sys.argv[1]).read().replace('attrs: {value: [1, 2, 3, 4], dtype: float32}',
                                        'attrs: {value: [' + ', '.join(flow) + '], dtype: float32}')
open('prog.yaml', 'w').write(prog)
PY
run() {
  local name=$1; shift
  rm -rf gen out.txt
  prlimit --as=4294967296 -- /usr/bin/time -v -o time.txt timeout 15 "$@" > /dev/null 2> err.txt; local rc=$?
  local wall; [ $rc = 124 ] && wall="15 s (killed)" || wall=$(grep "Elapsed (wall" time.txt | awk '{print $NF}')
  local rss; rss=$(grep "Maximum resident" time.txt | awk '{printf "%.0f", $NF/1024}')
  local extra=""; [ -e out.txt ] && extra=" [out.txt written]"
  echo "$LABEL | $name | exit $rc | $wall | $rss MiB | $(grep -a -m1 -E 'error' err.txt | cut -c1-150)$extra"
}
run "directory as --ops" "$KF" lint --ops d.yaml --color never
run "/dev/zero as program" "$KF" compile /dev/zero --ops "$S/ops.yaml" -o gen --name n --color never
run "FIFO as program" "$KF" compile fifo.yaml --ops "$S/ops.yaml" -o gen --name n --color never
run "FIFO as --ops" "$KF" lint --ops fifo.yaml --color never
run "FIFO as render template" "$KF" render fifo.j2 --data data.yaml -o out.txt --color never
run "2 GiB sparse file as --data" "$KF" render t.j2 --data big.yaml -o out.txt --color never
run "alias bomb in program YAML" "$KF" compile prog.yaml --ops "$S/ops.yaml" -o gen --name n --color never
run "alias bomb in --data YAML" "$KF" render t.j2 --data bomb.yaml -o out.txt --color never
run "depfile is a directory" "$KF" render t.j2 --data data.yaml -o out.txt --depfile dep.d --color never
run "control: compile-static" "$KF" compile "$S/program.yaml" --ops "$S/ops.yaml" --op-compat "$S/op_compat.yaml" -o gen --name n --color never
