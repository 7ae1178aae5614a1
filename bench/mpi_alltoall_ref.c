/* Reference all-to-all sweep with MPI, measured the way ibscope measures its own
 * (bench/mpi_allreduce_ref.c's method, bench/README.md):
 *   per size: fill verifiable input, one checked MPI_Alltoall, MPI_Barrier, warm-up, then the
 *   timed loop of ITERS MPI_Alltoall calls between two clock reads; each rank's loop time /
 *   ITERS, averaged over ranks, is the reported time (ibscope's time_us with its default -a).
 *   size = one rank's whole send buffer (count floats, count/p to each rank, count rounded
 *   down to a multiple of p, as ibscope and nccl-tests do); algbw = size / time (GB = 1e9 B);
 *   busbw = algbw * (p-1)/p.
 * Sizes: -s LIST (comma list with K/M/G binary suffixes, like ibscope's --sizes).
 * MPI_FLOAT, out-of-place. Output on rank 0, one line per size:
 *   size_bytes time_us algbw_GBps busbw_GBps wrong
 * Lines starting with '#' are comments. Exit status: 0 success, 1 some element wrong, 2 usage.
 * Built by bench/alltoall_vs_mpi.sh with each MPI's own mpicc (Open MPI and MPICH).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_ref_common.h"

/* Element i of the block rank `from` sends to rank `to`: an exact small-integer float. */
static float input_value(size_t i, int from, int to) {
  return (float)((i * 7u + (size_t)from * 131u + (size_t)to * 17u) % 4096u);
}

#define MAX_LIST 256

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  uint64_t list[MAX_LIST];
  int nlist = 0;
  long iters = 20, warmup = 5;
  int ok = 1;
  for (int a = 1; a < argc; a += 2) {
    const char* flag = argv[a];
    const char* val = a + 1 < argc ? argv[a + 1] : NULL;
    if (val == NULL) { ok = 0; break; }
    if (strcmp(flag, "-s") == 0) {
      char buf[4096];
      snprintf(buf, sizeof buf, "%s", val);
      for (char* tok = strtok(buf, ","); tok != NULL && ok; tok = strtok(NULL, ",")) {
        ok = nlist < MAX_LIST && parse_size(tok, &list[nlist++]) == 0;
      }
    } else if (strcmp(flag, "-n") == 0) {
      ok = (iters = atol(val)) >= 1;
    } else if (strcmp(flag, "-w") == 0) {
      ok = (warmup = atol(val)) >= 0;
    } else {
      ok = 0;
    }
    if (!ok) break;
  }
  if (!ok || nlist == 0) {
    if (rank == 0) fprintf(stderr, "usage: %s -s SIZE,SIZE,... [-n ITERS] [-w WARMUP]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  uint64_t max_bytes = 0;
  for (int i = 0; i < nlist; ++i) max_bytes = list[i] > max_bytes ? list[i] : max_bytes;
  const size_t max_count = (size_t)(max_bytes / sizeof(float)) + 1;
  float* send = NULL;
  float* recv = NULL;
  if (posix_memalign((void**)&send, 4096, max_count * sizeof(float)) != 0 ||
      posix_memalign((void**)&recv, 4096, max_count * sizeof(float)) != 0) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %llu bytes\n", rank,
            (unsigned long long)max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(send, 0, max_count * sizeof(float));
  memset(recv, 0, max_count * sizeof(float));
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char* nl = strchr(lib, '\n');
    if (nl != NULL) *nl = '\0';
    printf("# mpi_alltoall_ref: %s\n", lib);
    printf("# ranks %d float out-of-place iters %ld warmup %ld\n", nranks, iters, warmup);
    printf("# size_bytes time_us algbw_GBps busbw_GBps wrong\n");
    fflush(stdout);
  }
  const double bus_factor = nranks > 1 ? (double)(nranks - 1) / nranks : 0.0;
  long long total_wrong = 0;
  for (int li = 0; li < nlist; ++li) {
    const size_t block = (size_t)(list[li] / sizeof(float)) / (size_t)nranks;
    const uint64_t bytes = (uint64_t)block * (uint64_t)nranks * sizeof(float);
    if (block == 0) continue;
    const int iblock = (int)block;
    for (int to = 0; to < nranks; ++to) {
      for (size_t i = 0; i < block; ++i) send[(size_t)to * block + i] = input_value(i, rank, to);
    }
    for (size_t i = 0; i < block * (size_t)nranks; ++i) recv[i] = -1.0f;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Alltoall(send, iblock, MPI_FLOAT, recv, iblock, MPI_FLOAT, MPI_COMM_WORLD);
    long long bad = 0, wrong = 0;
    for (int from = 0; from < nranks; ++from) {
      for (size_t i = 0; i < block; ++i) {
        bad += recv[(size_t)from * block + i] != input_value(i, from, rank);
      }
    }
    MPI_Allreduce(&bad, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += wrong;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 0; it < warmup; ++it) {
      MPI_Alltoall(send, iblock, MPI_FLOAT, recv, iblock, MPI_FLOAT, MPI_COMM_WORLD);
    }
    const double t0 = now_s();
    for (long it = 0; it < iters; ++it) {
      MPI_Alltoall(send, iblock, MPI_FLOAT, recv, iblock, MPI_FLOAT, MPI_COMM_WORLD);
    }
    const double loop_s = (now_s() - t0) / (double)iters;
    double sum = 0.0;
    MPI_Reduce(&loop_s, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double mean_s = sum / (double)nranks;
      const double algbw = (double)bytes / mean_s / 1e9;
      printf("%12llu %12.2f %11.4f %11.4f %6lld\n", (unsigned long long)bytes, mean_s * 1e6,
             algbw, algbw * bus_factor, wrong);
      fflush(stdout);
    }
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
