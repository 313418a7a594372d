export MATCHFLOW_GIT_SHA=$(cat .sha 2>/dev/null || echo c605602)
TOTAL_S=200 bash benchmarks/gpu_run.sh build > $OUT/build-run.log 2>&1; tail -2 $OUT/build-run.log
export PYTHONPATH=/tmp/site
g++ -O2 -fopenmp benchmarks/omp_barrier.cpp -o /tmp/omp_barrier
{
lscpu | head -20
for t in 2 4 8 16; do /tmp/omp_barrier $t | tail -1; done
echo "OMP_PROC_BIND=close OMP_PLACES=cores"; for t in 4 16; do OMP_PROC_BIND=close OMP_PLACES=cores /tmp/omp_barrier $t | tail -1; done
echo "OMP_WAIT_POLICY=active"; for t in 4 16; do OMP_WAIT_POLICY=active /tmp/omp_barrier $t | tail -1; done
} > $OUT/barrier.txt 2>&1
cat $OUT/barrier.txt
{
echo "== default"; python benchmarks/flow_phases.py --instances grids gl --methods ppr@4 ppr@8 ppr@16 --repeat 2
echo "== OMP_PROC_BIND=close OMP_PLACES=cores"; OMP_PROC_BIND=close OMP_PLACES=cores python benchmarks/flow_phases.py --instances grids gl --methods ppr@16 --repeat 2
echo "== OMP_WAIT_POLICY=active"; OMP_WAIT_POLICY=active python benchmarks/flow_phases.py --instances grids gl --methods ppr@16 --repeat 2
} > $OUT/bfs-scaling.txt 2>&1
grep -v "^#" $OUT/bfs-scaling.txt | cut -c1-60,75-200
