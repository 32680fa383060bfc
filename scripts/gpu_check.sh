#!/usr/bin/env bash
# GPU check of the engine's CUDA path, for a machine with an NVIDIA GPU (run from the repository root).
#
# What it checks: TVM sees the GPU (`main.py env`); the bundled DLight CUDA pipeline runs, builds, runs on the GPU
# and passes the numerical check against the CPU reference for the MLP and the transformer (`main.py run --build
# --bench`); its exported script builds, runs and checks on the GPU too; the build tests (the GPU-only one
# included) pass. TVM must be importable (PYTHONPATH) with apache-tvm-ffi 0.1.14.post1. Writes logs into
# "${OUT:-/tmp/gpu_check}" and prints a summary; exits non-zero when a check fails.
set -u
out="${OUT:-/tmp/gpu_check}"
mkdir -p "$out"
py="${PYTHON:-python3}"
arch="${CUDA_ARCH:-sm_90}"
target="{\"kind\": \"cuda\", \"arch\": \"$arch\"}"
fail=0
summary=()

check() {  # check NAME COMMAND...: run it, log it, remember pass/fail
    local name="$1"; shift
    if "$@" >"$out/$name.log" 2>&1; then summary+=("PASS $name"); else summary+=("FAIL $name (rc $?)"); fail=1; fi
    tail -n 4 "$out/$name.log"
}

nvidia-smi -L | tee "$out/nvidia-smi.log"
check env "$py" main.py env
for model in mlp transformer; do
    check "run_$model" "$py" main.py run builtin:dlight_cuda --model "builtin:$model" --target "$target" --build --bench
done
check export_script "$py" main.py export builtin:dlight_cuda --target "$target" --build -o "$out/dlight_cuda_script.py"
check exported_script_runs "$py" "$out/dlight_cuda_script.py" --quiet
check build_tests "$py" -m pytest -q -p no:cacheprovider -x tests/test_build.py tests/test_parallel_build.py -rs
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $fail
