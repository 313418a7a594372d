#!/usr/bin/env bash
# Same-call A/B of gpu-sap's global-memory variants (MATCHFLOW_GPU_SAP_PREFETCH,
# MATCHFLOW_GPU_SAP_CARVEOUT) on the batched targets, each variant twice,
# alternating; run on the GPU machine after `bash benchmarks/gpu_run.sh build`.
# Writes $OUT/batched-<run>-<variant>.log.
set -u
OUT=${OUT:-$PWD/gpu-out}
cases=("208x300x300 f32" "1024x64x64 f32" "208x300x100 f32" "208x300x300 f64")
run=0
for v in "none l1" "runner-up l1" "none l1" "runner-up l1"; do
    set -- $v
    run=$((run + 1))
    log="$OUT/batched-$run-$1-$2.log"
    MATCHFLOW_GPU_SAP_PREFETCH=$1 MATCHFLOW_GPU_SAP_CARVEOUT=$2 \
        python benchmarks/bench_batched.py --out "$OUT/b-$run-$1-$2" --repeat 5 --cases "${cases[@]}" \
        > "$log" 2>&1
    echo "run $run: prefetch $1 carveout $2:"
    grep -o '"case": "[^"]*"\|"gpu_solve_s": [0-9.e-]*' "$log" | paste - -
done
