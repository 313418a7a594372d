// What one OpenMP barrier costs on this host, for ppr's level-synchronous
// BFS (cpp/src/maxflow/parallel_bfs.hpp: one barrier a wide level).
//   g++ -O2 -fopenmp benchmarks/omp_barrier.cpp -o /tmp/omp_barrier && /tmp/omp_barrier 16
#include <omp.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  const int rounds = 200000;
  for (int trial = 0; trial < 3; ++trial) {
    double start = 0, stop = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
#pragma omp master
      start = omp_get_wtime();
      for (int r = 0; r < rounds; ++r) {
#pragma omp barrier
      }
#pragma omp master
      stop = omp_get_wtime();
    }
    std::printf("%d threads: %.3f us a barrier\n", threads, (stop - start) / rounds * 1e6);
  }
}
