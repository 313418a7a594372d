#!/usr/bin/env bash
# One script for the lent GPU machine: build, `matchflow info`, tests, benchmark.
#
# Run from the repository root (or from a copy of it, e.g. .wt/NAME):
#     bash benchmarks/gpu_run.sh                  # build info test bench
#     bash benchmarks/gpu_run.sh build test       # only these parts, in this order
#     bash benchmarks/gpu_run.sh build bench -- --log2 22 --families rmat
# Parts: build, info, test, sanitize, sanitize-tests, bench, lsap, flow, base, phases, preprocess,
# sparse-lap, batched, overhead, multi, solve-ab, pack
# (default: build info test bench).
# solve-ab builds each driver of AB_DRIVERS (default: tree_solve batched_solve, i.e.
# benchmarks/tree_solve.cu, gpu-tree's solve alone, and benchmarks/batched_solve.cu,
# gpu-sap's kernel alone; each names its sources on an `ab-sources:` line) against this
# tree and, when AB_BASE names another tree (e.g. from `git archive REV cuda cpp | tar -x
# -C .ab/base`, carried as an untracked folder), against that one too, and runs them
# alternately AB_ROUNDS times (default 2) into solve-ab.txt; it needs no `build` part.
# pack tars everything under $OUT into $OUT/gpu-out.tar.gz (the device tool brings
# back at most 8 files); put it last.
# sanitize runs benchmarks/sanitize.py under compute-sanitizer memcheck and
# racecheck; sanitize-tests runs pytest's -k "$SANITIZE_PYTEST_K" under them, $SANITIZE_RUNS
# times each, with the native stacks of a crash (sanitize-cores.log); test with TEST_SHARDS=N
# deals the selected tests to N pytest processes sharing the GPU; lsap runs benchmarks/bench_lsap.py (args in $LSAP_ARGS); flow runs
# benchmarks/bench_flow.py (args in $FLOW_ARGS; carry .whl for OR-Tools and igraph,
# which the build part installs, and .peers/pbbs-maxflow for its hi_pr and syncpar
# columns, which it builds); phases runs benchmarks/flow_phases.py ($PHASES_ARGS,
# e.g. a same-call A/B of a knob with --env NAME=V1,V2; several runs separated by ";;")
# into phases.txt, and with base
# before it (which builds AB_BASE, an exported tree such as `git archive REV cuda cpp pyx
# python CMakeLists.txt pyproject.toml README.md | tar -x -C .ab/base`, in the background)
# alternately for the installed build and that one, AB_ROUNDS times (summary:
# benchmarks/phases_table.py phases.txt); preprocess and
# sparse-lap run bench_preprocess.py and bench_sparse_lap.py ($PREPROCESS_ARGS,
# $SPARSE_LAP_ARGS); batched runs bench_batched.py ($BATCHED_ARGS;
# torch-linear-assignment is its optional peer when importable); multi runs
# bench_multi_gpu.py ($MULTI_ARGS: one GPU against all of them, and sizes beyond one GPU);
# overhead runs benchmarks/call_overhead.py ($OVERHEAD_ARGS; default: the matching
# whole-call targets on every graph of the 2^20 suite, from host and GPU memory) into
# overhead.txt, and with base before it alternately for the installed build and
# AB_BASE's, AB_ROUNDS times.
# Everything after `--` goes to benchmarks/bench_matching.py and replaces its default arguments ($BENCH_ARGS below).
#
# Writes under $OUT (the device tool's output folder; ./gpu-out when unset):
#     build.log, info.txt, nvidia-smi.txt, test.log, bench.log, bench/results.{md,json},
#     sanitize.log, lsap.log, lsap/lsap.{md,json}, flow.log, flow/flow.{md,json},
#     batched.log, batched/batched.{md,json},
#     flow/flow-profile.png,
#     bench/profile.png (when matplotlib is importable), summary.txt
#
# Keeps within one device call (10 minutes): the whole script has TOTAL_S
# seconds (default 570); the tests get at most TEST_TIMEOUT_S, and the
# benchmark gets what is left (minus a margin) as its --time-budget, plus a
# hard `timeout`.  The harness rewrites its results after every graph, so a
# cut-off run still leaves the graphs it finished.
#
# Carry .whl (wheels, e.g. lapx) and .data with the run tool when wanted, and the
# git-ignored .peers/ECL-MM (the bench part's ECL-MM column, built by bench_matching.py)
# and .peers/pbbs-maxflow (the flow part's hi_pr and syncpar columns).
# Environment: OUT, TOTAL_S, TEST_TIMEOUT_S, BENCH_ARGS, LSAP_ARGS, FLOW_ARGS, BATCHED_ARGS,
# OVERHEAD_ARGS, PHASES_ARGS, AB_BASE, AB_ROUNDS, PYTEST_ARGS (split on spaces), PYTEST_K (one
# pytest -k expression, spaces kept: e.g. PYTEST_K="flow or hostile"), SANITIZE_ARGS (e.g.
# --flow: the max-flow kernels only), SANITIZE_TOOLS (default "memcheck racecheck"), SANITIZE_S
# (each tool's limit, default 200),
# MATCHFLOW_DATA (default: .data in this folder or two levels up), MATCHFLOW_GIT_SHA (recorded
# in the results: write the commit into the command from the checkout that sends it; the
# device copy's .git, where it has one, is an older snapshot, not this HEAD), CUDA_ARCH
# (default 90).
set -u -o pipefail

START=$SECONDS
OUT=${OUT:-$PWD/gpu-out}
TOTAL_S=${TOTAL_S:-570}
TEST_TIMEOUT_S=${TEST_TIMEOUT_S:-480}
CUDA_ARCH=${CUDA_ARCH:-90}
BENCH_ARGS=${BENCH_ARGS:---log2 18 20 --scipy-timeout 30 --repeat 3}
PYTEST_ARGS=${PYTEST_ARGS:--q -ra}
export PYTHONUNBUFFERED=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

if [ -z "${MATCHFLOW_DATA:-}" ]; then
    for d in "$PWD/.data" "$PWD/../../.data" "$PWD/../shared/data"; do
        if [ -d "$d" ]; then export MATCHFLOW_DATA=$(cd "$d" && pwd); break; fi
    done
fi

parts=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --) shift; extra=("$@"); break ;;
        build|info|test|sanitize|sanitize-tests|bench|lsap|flow|base|phases|preprocess|sparse-lap|batched|overhead|multi|solve-ab|pack) parts+=("$1"); shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "gpu_run.sh: unknown part '$1' (build, info, test, sanitize, sanitize-tests, bench, lsap, flow, base, phases, preprocess, sparse-lap, batched, overhead, multi, solve-ab, pack; bench args after --)" >&2
           exit 2 ;;
    esac
done
[ ${#parts[@]} -eq 0 ] && parts=(build info test bench)
mkdir -p "$OUT"

status=0
note() { echo "[gpu_run $(( SECONDS - START ))s] $*" | tee -a "$OUT/summary.txt"; }
left() { echo $(( TOTAL_S - (SECONDS - START) )); }

note "parts: ${parts[*]}; OUT=$OUT; MATCHFLOW_DATA=${MATCHFLOW_DATA:-unset}; $(nproc) CPUs"

# run_suite NAME SCRIPT ARGS: benchmarks/SCRIPT --out $OUT/NAME, with what is left of
# TOTAL_S as its hard limit and 60% of that as its --time-budget when it takes one
# (it then starts no new instance past the budget, and its files hold what it finished).
run_suite() {
    local name=$1 script=$2 args=$3 t budget=()
    t=$(( $(left) - 10 ))
    if [ "$t" -le 30 ]; then note "$name: skipped, no time left"; status=1; return; fi
    grep -q -- "--time-budget" "benchmarks/$script" && budget=(--time-budget $(( t * 6 / 10 )))
    note "$name: $script $args ${budget[*]} (hard limit ${t}s)"
    # shellcheck disable=SC2086
    timeout --kill-after=10 "$t" python "benchmarks/$script" --out "$OUT/$name" "${budget[@]}" \
        $args > "$OUT/$name.log" 2>&1
    local rc=$?
    tail -40 "$OUT/$name.log"
    [ $rc -eq 124 ] && note "$name: hit the hard limit (${t}s); its files hold what it finished"
    note "$name: exit code $rc"
    [ $rc -ne 0 ] && status=1
}

for part in "${parts[@]}"; do
    case "$part" in
    build)
        note "build: pip install --no-build-isolation . (CUDA arch $CUDA_ARCH)"
        if ls .whl/*.whl > /dev/null 2>&1; then
            # Optional comparison packages carried as wheels (e.g. lapx for bench_lsap.py).
            python -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
                && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} && note "wheels: $(ls .whl)"
        fi
        if python -m pip install --no-build-isolation -q . \
                -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" > "$OUT/build.log" 2>&1; then
            note "build: ok"
        else
            note "build: FAILED (last lines of build.log follow)"
            tail -50 "$OUT/build.log"
            exit 1
        fi
        ;;
    info)
        (nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
            && nvidia-smi) > "$OUT/nvidia-smi.txt" 2>&1 || true
        # Run outside the source tree so the installed package is what is imported.
        (cd /tmp && { matchflow info || python -m matchflow._cli info; }) > "$OUT/info.txt" 2>&1 \
            || status=1
        cat "$OUT/info.txt"
        ;;
    test)
        t=$(( $(left) - 60 )); [ "$t" -gt "$TEST_TIMEOUT_S" ] && t=$TEST_TIMEOUT_S
        if [ "$t" -le 10 ]; then note "test: skipped, no time left"; status=1; continue; fi
        shards=${TEST_SHARDS:-1}
        note "test: pytest tests/ in $shards process(es) (timeout ${t}s)"
        if [ "$shards" -le 1 ]; then
            # shellcheck disable=SC2086
            timeout --kill-after=10 "$t" python -m pytest tests $PYTEST_ARGS ${PYTEST_K:+-k "$PYTEST_K"} \
                > "$OUT/test.log" 2>&1
            rc=$?
        else
            # The selected tests dealt round-robin to $shards pytest processes sharing the GPU
            # (a 10-repeat run of the GPU matching tests takes ~10 min in one process).
            python -m pytest tests -q --collect-only ${PYTEST_K:+-k "$PYTEST_K"} 2>/dev/null \
                | grep '::' > /tmp/test-ids.txt
            rm -f /tmp/test-shard.*
            split -n r/"$shards" /tmp/test-ids.txt /tmp/test-shard.
            pids=()
            for f in /tmp/test-shard.*; do
                mapfile -t ids < "$f"
                # shellcheck disable=SC2086
                timeout --kill-after=10 "$t" python -m pytest $PYTEST_ARGS -p no:cacheprovider \
                    "${ids[@]}" > "$OUT/test-${f##*.}.log" 2>&1 &
                pids+=($!)
            done
            rc=0
            for p in "${pids[@]}"; do wait "$p" || rc=$?; done
            for f in "$OUT"/test-*.log; do echo "== $f"; tail -15 "$f"; done > "$OUT/test.log"
            note "test: $(wc -l < /tmp/test-ids.txt) tests; $(grep -hE '^[0-9]+ (passed|failed)|(passed|failed|error).* in ' "$OUT"/test-*.log | tr '\n' ';')"
        fi
        tail -25 "$OUT/test.log"
        [ $rc -eq 124 ] && note "test: TIMED OUT after ${t}s"
        note "test: exit code $rc ($(grep -E '(passed|failed|error)' "$OUT/test.log" | tail -1))"
        [ $rc -ne 0 ] && status=1
        ;;
    sanitize)
        note "sanitize: compute-sanitizer memcheck + racecheck on small inputs"
        rc=0
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
            PYTHONFAULTHANDLER=1 timeout --kill-after=10 "${SANITIZE_S:-200}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
                python benchmarks/sanitize.py ${SANITIZE_ARGS:-} >> "$OUT/sanitize.log" 2>&1 || rc=1
            note "sanitize: $tool $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize.log" | tail -1)"
        done
        [ $rc -ne 0 ] && { note "sanitize: FAILED"; status=1; }
        ;;
    sanitize-tests)
        # The pytest selection $SANITIZE_PYTEST_K under each of $SANITIZE_TOOLS, $SANITIZE_RUNS
        # times; a process that crashes leaves a core, whose native stacks gdb prints (when
        # the machine has it) into sanitize-cores.log.
        ulimit -c unlimited
        mkdir -p /tmp/cores && rm -f /tmp/cores/core*
        repo=$PWD
        gcc -shared -fPIC -O1 -o /tmp/segv_backtrace.so benchmarks/segv_backtrace.c || status=1
        note "sanitize-tests: -k '${SANITIZE_PYTEST_K:-}'; stack limit $(ulimit -s); core_pattern $(cat /proc/sys/kernel/core_pattern); gdb: $(command -v gdb || echo absent)"
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
            for r in $(seq "${SANITIZE_RUNS:-3}"); do
                echo "== $tool, run $r" >> "$OUT/sanitize-tests.log"
                # -s: pytest's capture of fd 2 would swallow the handler's report; and
                # pytest's faulthandler would replace the handler.
                (cd /tmp/cores && timeout --kill-after=10 "${SANITIZE_S:-200}" \
                    compute-sanitizer --tool "$tool" --error-exitcode 9 python -c \
                    "import ctypes, sys; ctypes.CDLL('/tmp/segv_backtrace.so'); import pytest; sys.exit(pytest.main(sys.argv[1:]))" \
                    "$repo/tests" -q -s -p no:cacheprovider -p no:faulthandler \
                    ${SANITIZE_PYTEST_K:+-k "$SANITIZE_PYTEST_K"}) \
                    >> "$OUT/sanitize-tests.log" 2>&1
                rc=$?
                note "sanitize-tests: $tool run $r: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-tests.log" | tail -1)"
                [ $rc -ne 0 ] && status=1
                # matchflow's frames of a crash (segv_backtrace.c) as functions and lines,
                # from the unstripped build of the installed module.
                sed -n 's|^ *#[^ ]* \(.*matchflow/[^ ]*\.so\) +\(0x[0-9a-f]*\).*|\1 \2|p' \
                    "$OUT/sanitize-tests.log" | sort -u | while read -r so offset; do
                    built=$(find build -name "$(basename "$so")" | head -1)
                    echo "$(basename "$so") $offset: $(addr2line -f -C -i -e "${built:-$so}" "$offset" | tr '\n' ' ')"
                done >> "$OUT/sanitize-cores.log"
                for c in /tmp/cores/core*; do
                    [ -e "$c" ] || continue
                    note "sanitize-tests: core $c"
                    command -v gdb > /dev/null && gdb -batch -ex "info threads" -ex "thread apply all bt 25" \
                        "$(command -v python)" "$c" >> "$OUT/sanitize-cores.log" 2>&1
                    rm -f "$c"
                done
            done
        done
        ;;
    lsap) run_suite lsap bench_lsap.py "${LSAP_ARGS:-}" ;;
    flow) run_suite flow bench_flow.py "${FLOW_ARGS:-}" ;;
    base)
        # The package of $AB_BASE (a tree exported from another revision) into
        # /tmp/ab-base, in the background while the next parts run.
        note "base: building $AB_BASE into /tmp/ab-base (background)"
        (cd "$AB_BASE" && python -m pip install --no-build-isolation --no-deps -q --target /tmp/ab-base . \
            -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH") > "$OUT/base-build.log" 2>&1 &
        base_pid=$!
        ;;
    phases)
        t=$(( $(left) - 10 ))
        if [ "$t" -le 30 ]; then note "phases: skipped, no time left"; status=1; continue; fi
        sides=(installed)
        if [ -n "${base_pid:-}" ]; then
            wait "$base_pid" && sides+=(base) || { note "base: build FAILED"; status=1; }
        fi
        note "phases: flow_phases.py ${PHASES_ARGS:-}, ${sides[*]}, ${AB_ROUNDS:-1} round(s) (hard limit ${t}s)"
        for r in $(seq "${AB_ROUNDS:-1}"); do
            for side in "${sides[@]}"; do
                echo "== $side (round $r)"
                path=$([ "$side" = base ] && echo "/tmp/ab-base:" || true)
                IFS=';' read -ra runs <<< "${PHASES_ARGS//;;/;}"
                for args in "${runs[@]:-}"; do
                    echo "# flow_phases.py $args"
                    # shellcheck disable=SC2086
                    PYTHONPATH="$path${PYTHONPATH:-}" timeout --kill-after=10 "$(left)" \
                        python benchmarks/flow_phases.py $args || status=1
                done
            done
        done > "$OUT/phases.txt" 2>&1
        tail -40 "$OUT/phases.txt"
        ;;
    preprocess) run_suite preprocess bench_preprocess.py "${PREPROCESS_ARGS:-}" ;;
    sparse-lap) run_suite sparse-lap bench_sparse_lap.py "${SPARSE_LAP_ARGS:-}" ;;
    batched) run_suite batched bench_batched.py "${BATCHED_ARGS:-}" ;;
    multi) run_suite multi bench_multi_gpu.py "${MULTI_ARGS:-}" ;;
    overhead)
        t=$(( $(left) - 10 ))
        if [ "$t" -le 30 ]; then note "overhead: skipped, no time left"; status=1; continue; fi
        read -r -a args <<< "${OVERHEAD_ARGS:---device-input --families uniform rmat delaunay rgg grid --rcp --repeat 9}"
        sides=(installed)
        if [ -n "${base_pid:-}" ]; then
            wait "$base_pid" && sides+=(base) || { note "base: build FAILED"; status=1; }
            base_pid=
        fi
        note "overhead: call_overhead.py ${args[*]}, ${sides[*]}, ${AB_ROUNDS:-1} round(s) (hard limit ${t}s)"
        rc=0
        for r in $(seq "${AB_ROUNDS:-1}"); do
            for side in "${sides[@]}"; do
                [ ${#sides[@]} -gt 1 ] && echo "== $side (round $r)"
                path=$([ "$side" = base ] && echo "/tmp/ab-base:" || true)
                PYTHONPATH="$path${PYTHONPATH:-}" timeout --kill-after=10 "$(( TOTAL_S - (SECONDS - START) - 5 ))" \
                    python benchmarks/call_overhead.py "${args[@]}" || rc=1
            done
        done > "$OUT/overhead.txt" 2>&1
        note "overhead: exit code $rc; $(grep -c MISSED "$OUT/overhead.txt") cells missed a target"
        [ $rc -ne 0 ] && status=1
        ;;
    solve-ab)
        trees=(.)
        [ -n "${AB_BASE:-}" ] && trees+=("$AB_BASE")
        read -r -a drivers <<< "${AB_DRIVERS:-tree_solve batched_solve}"
        note "solve-ab: ${drivers[*]} against ${trees[*]}, ${AB_ROUNDS:-2} rounds"
        for drv in "${drivers[@]}"; do
            read -r -a srcs <<< "$(sed -n 's|^// ab-sources: ||p' "benchmarks/$drv.cu")"
            for k in "${!trees[@]}"; do
                d=${trees[$k]}
                "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O3 -std=c++17 \
                    -arch=sm_"$CUDA_ARCH" --expt-relaxed-constexpr -Xcompiler -fopenmp \
                    -I"$d"/cuda/src -I"$d"/cpp/include \
                    -DMATCHFLOW_CUDA_ARCHITECTURES=\""$CUDA_ARCH"\" "benchmarks/$drv.cu" \
                    "${srcs[@]/#/$d/}" -lgomp -o "/tmp/${drv}_$k" > "$OUT/solve-ab-build-$drv-$k.log" 2>&1 &
            done
        done
        wait
        for drv in "${drivers[@]}"; do
            for r in $(seq "${AB_ROUNDS:-2}"); do
                for k in "${!trees[@]}"; do
                    echo "== $drv, ${trees[$k]} (round $r)"
                    timeout 300 "/tmp/${drv}_$k" || status=1
                done
            done
        done > "$OUT/solve-ab.txt" 2>&1
        cat "$OUT/solve-ab.txt"
        ;;
    bench)
        t=$(( $(left) - 10 ))
        if [ "$t" -le 30 ]; then note "bench: skipped, no time left"; status=1; continue; fi
        budget=$(( t * 6 / 10 ))   # start no new graph after this; leaves room for the last one
        if [ ${#extra[@]} -gt 0 ]; then args=("${extra[@]}"); else read -r -a args <<< "$BENCH_ARGS"; fi
        note "bench: bench_matching.py ${args[*]} (time budget ${budget}s, hard limit ${t}s)"
        timeout --kill-after=10 "$t" python benchmarks/bench_matching.py --out "$OUT/bench" \
            --time-budget "$budget" "${args[@]}" > "$OUT/bench.log" 2>&1
        rc=$?
        tail -15 "$OUT/bench.log"
        [ $rc -eq 124 ] && note "bench: hit the hard limit (${t}s); results.* hold the graphs done"
        note "bench: exit code $rc"
        [ $rc -ne 0 ] && status=1
        ;;
    pack)
        note "pack: $OUT/gpu-out.tar.gz"
        tar -C "$OUT" -czf /tmp/gpu-out.tar.gz --exclude gpu-out.tar.gz . \
            && find "$OUT" -mindepth 1 -delete && mv /tmp/gpu-out.tar.gz "$OUT/"
        ;;
    esac
done
note "done, exit status $status"
exit $status
