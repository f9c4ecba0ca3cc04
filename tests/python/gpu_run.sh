#!/bin/bash
# GPU check and timing of the module of `kforge compile --target cuda --python` (docs/python.md), and the Python
# per-call benchmark (bench/python/bench_python.py) with torch eager, on the GPU machine's own python3.
#
#   tests/python/gpu_run.sh prepare BUILD   here, where kforge is built (BUILD: a build with tests on, whose
#                                           python suite built the CPU module wsn): writes BUILD/python-gpu
#                                           (generated sources, CPU references); carry that folder
#   tests/python/gpu_run.sh run BUILD       GPU machine: builds the CUDA module for its python3 (nvcc, that
#                                           python's headers), runs tests/python/gpu_check.py (torch, cupy,
#                                           numpy inputs against the CPU module's results and Paddle's; errors;
#                                           DLPack streams) and times run() from Python against the C++ call
#                                           (tests/python/gpu_cpp_timing.cu); exit 1 when a check fails
#   tests/python/gpu_run.sh bench BUILD     GPU machine: builds the CPU modules refops and wsn and the reference
#                                           kernels (without oneDNN) for its python3 and runs
#                                           bench/python/bench_python.py: kforge, numpy, torch eager (paddle and
#                                           pybind11 where installed) in one process
#
# The GPU machine has no kforge (its build needs yaml-cpp, fmt, CLI11), hence `prepare` here. Python headers
# there: sysconfig's include directory (the interpreter's own, also under a venv); python3-dev is not needed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
PYTHON="${PYTHON:-python3}"
WSN="$ROOT/tests/paddle/weights_sorted_names"
KERNELS="$ROOT/kernels"

python_headers() {
  local inc
  inc="$("$PYTHON" -c "import sysconfig; print(sysconfig.get_paths()['include'])")"
  if [[ ! -f "$inc/Python.h" ]]; then
    inc="$("$PYTHON" -c "import sysconfig; print(sysconfig.get_config_var('INCLUDEPY') or '')")"
  fi
  if [[ ! -f "$inc/Python.h" ]]; then
    echo "gpu_run.sh: no Python.h for $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')" \
         "(looked in sysconfig's include and INCLUDEPY): install that python's headers" >&2
    exit 1
  fi
  echo "$inc"
}

prepare() {
  local build out
  build="$(cd "$1" && pwd)"
  out="$build/python-gpu"
  rm -rf "$out" && mkdir -p "$out/ref"
  local k=("$build/src/kforge")
  local ops=(--ops "$KERNELS/ops.yaml" --ops "$KERNELS/fusion.yaml" --op-compat "$KERNELS/op_compat.yaml")
  "${k[@]}" compile "$WSN/inference.json" "${ops[@]}" -o "$out/wsn_cuda" --name wsn_cuda_model --target cuda \
    --python wsn_cuda
  # An elementwise chain whose output has its inputs' shape: outputs fed back as inputs (DeviceTensor in).
  "${k[@]}" compile "$ROOT/tests/e2e/fused/chain.yaml" "${ops[@]}" -o "$out/chain_cuda" --name chain_cuda_model \
    --target cuda --python chain_cuda
  # The CPU modules of the benchmark (tests/python builds the same with meson here).
  "${k[@]}" ops --ops "$KERNELS/ops.yaml" --op-compat "$KERNELS/op_compat.yaml" -o "$out/refops" --prefix ref \
    --namespace ref --python refops
  "${k[@]}" compile "$WSN/inference.json" "${ops[@]}" -o "$out/wsn" --name wsn_model --python wsn
  cp "$WSN/inference.pdiparams" "$WSN/input_x.npy" "$WSN"/expected_*.npy "$out/ref/"
  # The CPU results of the same program (kforge --target cpu, the python suite's module wsn).
  local module_dir="$build/tests/python/model"
  ls "$module_dir"/wsn*.so >/dev/null 2>&1 || ninja -C "$build" tests/python/model/wsn"$(/usr/bin/python3-config --extension-suffix)"
  /usr/bin/python3 - "$module_dir" "$out/ref" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import wsn
ref = sys.argv[2]
outs = wsn.wsn_model(ref + "/inference.pdiparams").run(np.load(ref + "/input_x.npy"))
for i, o in enumerate(outs):
    np.save(f"{ref}/cpu_out_{i}.npy", np.array(o))
PY
  echo "prepared $out: carry it to the GPU machine, then: tests/python/gpu_run.sh run $1"
}

run() {
  local out inc suffix gen="$1/python-gpu/wsn_cuda" name=wsn_cuda_model
  out="$(cd "$1" && pwd)/python-gpu"
  [[ -d "$gen" ]] || { echo "gpu_run.sh: $gen is missing: run 'tests/python/gpu_run.sh prepare $1' where kforge is built and carry $1/python-gpu" >&2; exit 1; }
  inc="$(python_headers)"
  suffix="$("$PYTHON" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  echo "python: $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])'), headers $inc; $("$NVCC" --version | tail -1)"
  local libs=()
  [[ -f "$gen/kforge_cublaslt.cuh" ]] && libs=(-lcublasLt)
  local strict=(-std=c++17 -arch=sm_90 -O2 --Werror all-warnings -Xcompiler "-Wall,-Wextra,-Werror")
  local common=("${strict[@]}" -I "$gen")
  # cuBLASLt found at run time where nvcc's toolkit has it (also when torch has loaded its own copy first).
  local rpath=(-Xlinker "-rpath=$(dirname "$(dirname "$(readlink -f "$NVCC")")")/lib64")
  "$NVCC" "${common[@]}" -shared -Xcompiler -fPIC -I "$inc" "$gen/$name.cu" "$gen/${name}_kernels.cu" \
    "$gen/${name}_python.cc" "${libs[@]}" "${rpath[@]}" -o "$out/wsn_cuda$suffix" &
  local module_pid=$!
  local chain="$out/chain_cuda"
  "$NVCC" "${strict[@]}" -I "$chain" -shared -Xcompiler -fPIC -I "$inc" "$chain/chain_cuda_model.cu" \
    "$chain/chain_cuda_model_kernels.cu" "$chain/chain_cuda_model_python.cc" -o "$out/chain_cuda$suffix" &
  local chain_pid=$!
  "$NVCC" "${common[@]}" -DKFORGE_PROGRAM_HEADER="\"$name.h\"" -DKFORGE_PROGRAM_CLASS="$name" \
    "$ROOT/tests/python/gpu_cpp_timing.cu" "$gen/$name.cu" "$gen/${name}_kernels.cu" "${libs[@]}" "${rpath[@]}" -o "$out/gpu_cpp_timing"
  wait "$module_pid" && wait "$chain_pid"
  # The C++ call: an input of input_x.npy's dims, the parameters by name in file order (sorted by name).
  local dims params timing
  dims="$("$PYTHON" -c "import numpy, sys; print(','.join(map(str, numpy.load(sys.argv[1]).shape)))" "$out/ref/input_x.npy")"
  mapfile -t params < <(sed -nE 's#^//   parameter +([^:]+): .*#\1#p' "$gen/$name.h" | LC_ALL=C sort)
  # shellcheck disable=SC2086  # dims: one word per input
  timing="$("$out/gpu_cpp_timing" "$out/ref/inference.pdiparams" 20000 $dims -- "${params[@]}")" ||
    echo "gpu_run.sh: the C++ timing failed; the Python checks run without it" >&2
  echo "$timing"
  local cpp=()
  [[ "$timing" == *cpp_run_us* ]] && cpp=(--cpp-us "$(awk '$1 == "cpp_run_us" {print $2}' <<<"$timing")"
                                        --cpp-sync-us "$(awk '$1 == "cpp_run_sync_us" {print $2}' <<<"$timing")")
  PYTHONUNBUFFERED=1 "$PYTHON" "$ROOT/tests/python/gpu_check.py" "$out" "$out/ref" "${cpp[@]}"
}

# The CPU modules for the benchmark, built for $PYTHON: the reference kernels (reference loops: no oneDNN there),
# refops and wsn, and the C++ runner of tools/run-model for the model's C++ call.
bench() {
  local out inc suffix obj
  out="$(cd "$1" && pwd)/python-gpu"
  [[ -d "$out/refops" ]] || { echo "gpu_run.sh: $out/refops is missing: run 'tests/python/gpu_run.sh prepare $1' where kforge is built" >&2; exit 1; }
  inc="$(python_headers)"
  suffix="$("$PYTHON" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")"
  obj="$out/kernels-obj" && mkdir -p "$obj" "$out/modules"
  local cxx=(g++ -std=c++17 -O2 -fPIC -I "$KERNELS" -I "$ROOT/templates/runtime")
  # shellcheck disable=SC2016
  printf '%s\n' "$KERNELS"/*.cc | xargs -P "$(nproc)" -I{} sh -c '"$@" -c {} -o "'"$obj"'/$(basename {} .cc).o"' _ "${cxx[@]}"
  ar rcs "$out/libkforge_kernels.a" "$obj"/*.o
  g++ -std=c++17 -O2 -fPIC -shared -I "$out/refops" -I "$KERNELS" -I "$inc" "$out/refops"/*.cc \
    "$out/libkforge_kernels.a" -o "$out/modules/refops$suffix" &
  local refops_pid=$!
  g++ -std=c++17 -O2 -fPIC -shared -I "$out/wsn" -I "$KERNELS" -I "$inc" "$out/wsn"/*.cc \
    "$out/libkforge_kernels.a" -o "$out/modules/wsn$suffix" &
  local wsn_pid=$!
  g++ -std=c++17 -O2 -I "$out/wsn" -I "$KERNELS" -I "$ROOT/tools/run_model" -DKFORGE_PROGRAM_HEADER='"wsn_model.h"' \
    -DKFORGE_PROGRAM_CLASS=wsn_model "$ROOT/tools/run_model/runner.cc" "$ROOT/tools/run_model/model_adapter.cc" \
    "$out/wsn/wsn_model.cc" "$out/libkforge_kernels.a" -o "$out/wsn_runner"
  wait "$refops_pid" && wait "$wsn_pid"
  # The same add bound with pybind11, where that python has it (its pip package carries the headers).
  local pybind
  if pybind="$("$PYTHON" -c "import pybind11; print(pybind11.get_include())" 2>/dev/null)"; then
    g++ -std=c++17 -O2 -fPIC -shared -I "$out/refops" -I "$KERNELS" -I "$inc" -I "$pybind" \
      "$ROOT/bench/python/pybind11_add.cc" "$out/refops/ref_api.cc" "$out/refops/ref_args_info.cc" \
      "$out/libkforge_kernels.a" -o "$out/modules/pybind11_add$suffix" ||
      echo "gpu_run.sh: the pybind11 bind did not build; the benchmark reports it as missing" >&2
  fi
  PYTHONUNBUFFERED=1 "$PYTHON" "$ROOT/bench/python/bench_python.py" --module-dir "$out/modules" \
    --cpp-runner "$out/wsn_runner"
}

case "${1:-}" in
  prepare) prepare "${2:?BUILD}" ;;
  run) run "${2:?BUILD}" ;;
  bench) bench "${2:?BUILD}" ;;
  *) echo "usage: tests/python/gpu_run.sh prepare|run|bench BUILD" >&2; exit 2 ;;
esac
