# Sourced by the GPU scripts under bench/: which cuDNN 9 their nvcc builds link and their runs load.
#
# use_wheel_cudnn: where PyTorch's wheel is installed (site-packages/nvidia/cudnn, as on the GPU machine), exports
# CUDNN_DIR (its include/ and lib/, which has libcudnn.so.9 but no unversioned name: link with -l:libcudnn.so.9)
# and puts its lib/ and its sibling NVIDIA libraries' first on LD_LIBRARY_PATH; else leaves both alone (builds then
# link the toolkit's -lcudnn). Prints which one it is. nvidia.cudnn is a namespace package: it has a __path__, and
# its __file__ is None.
use_wheel_cudnn() {
  local dir lib paths=()
  dir="$(python3 -c 'import nvidia.cudnn as c; print(next(iter(c.__path__)))' 2>/dev/null || true)"
  if [[ -z "$dir" || ! -d "$dir/lib" ]]; then
    echo "cuDNN from: the CUDA toolkit"
    return 0
  fi
  paths=("$dir/lib")
  for lib in "$(dirname "$dir")"/*/lib; do [[ "$lib" != "$dir/lib" ]] && paths+=("$lib"); done
  LD_LIBRARY_PATH="$(IFS=:; echo "${paths[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  CUDNN_DIR="$dir"
  export LD_LIBRARY_PATH CUDNN_DIR
  echo "cuDNN from: $dir"
}
