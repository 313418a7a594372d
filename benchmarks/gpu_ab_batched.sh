#!/usr/bin/env bash
# Same-call A/B of gpu-sap's global-memory variants (MATCHFLOW_GPU_SAP_PREFETCH,
# MATCHFLOW_GPU_SAP_CARVEOUT) on the batched targets; run on the GPU machine
# after `bash benchmarks/gpu_run.sh build`.  Writes $OUT/batched-<variant>.log.
set -u
OUT=${OUT:-$PWD/gpu-out}
cases=("208x300x300 f32" "1024x64x64 f32" "208x300x100 f32")
for v in "l1 l1" "l2 l1" "none l1" "none driver"; do
    set -- $v
    MATCHFLOW_GPU_SAP_PREFETCH=$1 MATCHFLOW_GPU_SAP_CARVEOUT=$2 \
        python benchmarks/bench_batched.py --out "$OUT/b-$1-$2" --repeat 5 --cases "${cases[@]}" \
        > "$OUT/batched-$1-$2.log" 2>&1
    echo "prefetch $1 carveout $2:"
    grep -o '"case": "[^"]*"\|"gpu_solve_s": [0-9.e-]*' "$OUT/batched-$1-$2.log" | paste - - 
done
