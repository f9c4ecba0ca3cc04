#!/usr/bin/env bash
# Benchmark: `kforge ops` on Paddle's refdata ops.yaml + op_compat.yaml, as a whole process (load both YAML
# files, derive every op's API, render the templates, compare with the files on disk), median of several runs.
# Builds kforge `release` first. Target (issue 3): <= 0.3 s on the 2-core development machine.
#
#   tools/bench_ops.sh [RUNS]       (default 15)
# Environment: KFORGE_BENCH_BUILD_DIR (default: build-release), KFORGE_PADDLE_REFDATA (default:
# ../shared/refdata/paddle), KFORGE_BENCH_ARGS (extra flags for kforge ops, e.g. "--shards 8").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KFORGE_BENCH_BUILD_DIR:-$root/build-release}"
refdata="${KFORGE_PADDLE_REFDATA:-$root/../shared/refdata/paddle}"
runs="${1:-15}"

if [ ! -f "$refdata/ops.yaml" ] || [ ! -f "$refdata/op_compat.yaml" ]; then
  echo "SKIPPED: Paddle's refdata is absent ($refdata)" >&2
  exit 0
fi
if [ ! -f "$build/build.ninja" ]; then
  # werror off: GCC 12 at -O3 reports false -Wrestrict positives inside libstdc++ (GCC PR 105329), which
  # only matter for -Werror, not for the timing.
  meson setup "$build" "$root" --buildtype=release -Dwerror=false >/dev/null
fi
ninja -C "$build" src/kforge >/dev/null

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2206
cmd=("$build/src/kforge" ops --ops "$refdata/ops.yaml" --op-compat "$refdata/op_compat.yaml" -o "$out/gen"
     --no-version-stamp --color never ${KFORGE_BENCH_ARGS:-})
"${cmd[@]}" 2>/dev/null  # the first run writes the files; the timed runs find them unchanged (a rebuild)
echo "command: ${cmd[*]}"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"

if command -v hyperfine >/dev/null 2>&1; then
  hyperfine --warmup 2 --runs "$runs" --style basic "${cmd[*]} 2>/dev/null"
  exit 0
fi

# No hyperfine: time the runs here, wall clock and CPU (user + sys) of the process, and print the medians.
/usr/bin/python3 - "$runs" "${cmd[@]}" <<'PY'
import resource, statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
walls, cpus = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    walls.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
ms = lambda xs: f"{statistics.median(xs) * 1000:.1f} ms (min {min(xs) * 1000:.1f}, max {max(xs) * 1000:.1f})"
print(f"{runs} runs: wall median {ms(walls)}; CPU median {ms(cpus)}")
PY
