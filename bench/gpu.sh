#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the bundled corpus on every CUDA release asked for, their
# matrix, the sweep on the newest release and on the last one before 0.32.0, and the corpus
# and the sweep timed on the GPU against the CPU of the same machine (timings.txt). Every
# report lands under one folder.
#
#   bench/gpu.sh [OUT]                        # default OUT: gpu-reports/
#
# Settings (environment variables):
#   GPU_BACKEND   cuda13 (default) or cuda12: the mlx[...] extra to install
#   GPU_RELEASES  the releases, oldest first (default: every release with a CUDA 13 build)
#   GPU_SWEEP     the releases to sweep (default: the newest, and the last before 0.32.0; none)
#   GPU_CPU       0: skip the CPU timings (default 1)
#   GPU_CPU_RELEASE  the release timed on the CPU too (default: the newest; needs mlx_cpu)
#   GPU_WHEELS    a folder of wheels for a machine that reaches no package index: mlx-V-cp*.whl,
#                 mlx_cuda_13-V-*.whl and, for the CPU timing, mlx_cpu-V-*.whl of each release.
#                 The CUDA libraries (nvidia-cublas, -cuda-runtime, -cudnn...) must then be
#                 installed in this Python already; each release goes into a folder of its own
#                 beside them instead of a cached environment.
#   SWEEP_ARGS    more options for every sweep (e.g. "--ops unary --budget 300")
#   JOBS          children at once (default: the usable cores)
#   MGRADCHECK    how to start mgradcheck (default: python3 -m mgradcheck)
set -euo pipefail

out=${1:-gpu-reports}
backend=${GPU_BACKEND:-cuda13}
releases=${GPU_RELEASES:-"0.30.1 0.30.3 0.30.4 0.30.5 0.30.6 0.31.1 0.32.0 0.32.1 0.32.2 0.32.3 0.32.4"}
read -r -a all <<<"$releases"
newest=${all[-1]}
before_fix=""
for v in "${all[@]}"; do
  if python3 -c "import sys; from packaging.version import Version as V; sys.exit(V('$v') >= V('0.32.0'))"; then
    before_fix=$v
  fi
done
sweeps=${GPU_SWEEP:-"$newest${before_fix:+ $before_fix}"}
[ "$sweeps" = none ] && sweeps=""
cpu=${GPU_CPU:-1}
cpu_release=${GPU_CPU_RELEASE:-$newest}
jobs=${JOBS:-$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")}
read -r -a mgc <<<"${MGRADCHECK:-python3 -m mgradcheck}"
mkdir -p "$out"
timings="$out/timings.txt"
touch "$timings"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/gpu.txt" || true

# The environment of one release: a cached one (index reachable), or a folder beside the
# interpreter's own CUDA libraries (GPU_WHEELS). Prints the options that select it.
site() { # site RELEASE FLAVOUR(cuda|cpu) -> a folder on PYTHONPATH holding that build
  local v=$1 flavour=$2 dir
  dir="${TMPDIR:-/tmp}/mgradcheck-gpu/$flavour-$v"
  if [ ! -d "$dir/mlx" ]; then
    local companion="$GPU_WHEELS/mlx_${backend/cuda/cuda_}-$v-"*.whl
    [ "$flavour" = cpu ] && companion="$GPU_WHEELS/mlx_cpu-$v-"*.whl
    # shellcheck disable=SC2086 # the globs are meant to expand
    python3 -m pip install -q --no-deps --no-index --target "$dir" "$GPU_WHEELS/mlx-$v-"*.whl $companion
    # A CUDA build finds its libraries relative to itself (RPATH $ORIGIN/../../nvidia/...).
    local nvidia
    nvidia=$(python3 -c "import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]) + '/nvidia')" 2>/dev/null || true)
    [ -n "$nvidia" ] && [ ! -e "$dir/nvidia" ] && ln -s "$nvidia" "$dir/nvidia"
  fi
  echo "$dir"
}

run_on() { # run_on RELEASE FLAVOUR NAME -- mgradcheck arguments...
  local v=$1 flavour=$2 name=$3
  shift 4
  local start end
  start=$(date +%s.%N)
  if [ -n "${GPU_WHEELS:-}" ]; then
    local dir
    dir=$(site "$v" "$flavour")
    PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}" "${mgc[@]}" "$@" || true
  else
    local b=$backend
    [ "$flavour" = cpu ] && b=cpu
    "${mgc[@]}" "$@" --mlx "$v" --backend "$b" || true
  fi
  end=$(date +%s.%N)
  printf '%-28s %8.1f s\n' "$name" "$(python3 -c "print($end - $start)")" | tee -a "$timings"
}

for v in "${all[@]}"; do
  run_on "$v" cuda "corpus mlx $v cuda" -- run -q -j "$jobs" \
    --json "$out/run-$v-cuda.json" --junit "$out/run-$v-cuda.xml"
done
# Every CUDA run in the folder, this script's earlier ones included, merged into one report.
"${mgc[@]}" report merge "$out"/run-*-cuda.json -o "$out/corpus-cuda.json" \
  --summary "$out/corpus-cuda.md" --badge "$out/badge-cuda.svg" || true

# The same corpus on the CPU of the same machine, for the GPU/CPU ratio.
if [ "$cpu" = 1 ]; then
  run_on "$cpu_release" cpu "corpus mlx $cpu_release cpu" -- run -q -j "$jobs" \
    --json "$out/run-$cpu_release-cpu.json"
fi

for v in $sweeps; do
  # shellcheck disable=SC2086 # SWEEP_ARGS is a list of options
  run_on "$v" cuda "sweep mlx $v cuda" -- sweep -q -j "$jobs" \
    --json "$out/sweep-$v-cuda.json" --emit "$out/found-$v-cuda" ${SWEEP_ARGS:-}
done
if [ "$cpu" = 1 ]; then
  # shellcheck disable=SC2086 # SWEEP_ARGS is a list of options
  run_on "$cpu_release" cpu "sweep mlx $cpu_release cpu" -- sweep -q -j "$jobs" \
    --json "$out/sweep-$cpu_release-cpu.json" ${SWEEP_ARGS:-}
fi

# The matrix: of the reports just written (every release ran above), or, with an index,
# installed anew through the results store.
if [ -n "${GPU_WHEELS:-}" ]; then
  from=()
  for f in "$out"/run-*-cuda.json; do from+=("--from-report=$f"); done
  "${mgc[@]}" matrix -q "${from[@]}" --json "$out/matrix-cuda.json" --markdown "$out/matrix-cuda.md" || true
else
  "${mgc[@]}" matrix -q -j 2 --backend "$backend" --versions ">=${all[0]}" \
    --json "$out/matrix-cuda.json" --markdown "$out/matrix-cuda.md" || true
fi
echo "reports in $out"
cat "$timings"
