/* Reference all-reduce sweep with MPI, measured the way ibscope measures its own:
 *   per size: fill verifiable input, one checked MPI_Allreduce, MPI_Barrier, warm-up,
 *   then the timed loop of ITERS MPI_Allreduce calls between two clock reads; each rank's
 *   loop time / ITERS, averaged over ranks, is the reported time (nccl-tests' time with its
 *   default -a 1, and ibscope's time_us with its default -a 1; docs/methodology.md).
 *   algbw = size_bytes / time (GB = 1e9 B); busbw = algbw * 2(p-1)/p.
 * Sizes: -b/-e/-f (geometric), or -s LIST (comma list, like ibscope's --sizes).
 * MPI_FLOAT, MPI_SUM, out-of-place. Output on rank 0, one line per size:
 *   size_bytes time_us algbw_GBps busbw_GBps wrong
 * Lines starting with '#' are comments (parameters, column names).
 * Exit status: 0 success, 1 some element wrong, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_ref_common.h"

/* Small integers, so the float sum is exact in any reduction order (< 2^24). */
static float input_value(size_t i, int rank) {
  return (float)((i * 7u + (size_t)rank * 3u) % 16u);
}

static float expected_value(size_t i, int nranks) {
  uint64_t s = 0;
  for (int r = 0; r < nranks; ++r) s += (i * 7u + (size_t)r * 3u) % 16u;
  return (float)s;
}

/* "8,1K,4K" -> up to MAX_LIST sizes; -1 on a bad or empty entry or too many. */
#define MAX_LIST 4096
static int parse_list(const char* s, uint64_t* out, int* n) {
  char buf[32];
  *n = 0;
  while (*s != '\0') {
    const char* comma = strchr(s, ',');
    size_t len = comma != NULL ? (size_t)(comma - s) : strlen(s);
    if (len == 0 || len >= sizeof buf || *n >= MAX_LIST) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (parse_size(buf, &out[*n]) != 0) return -1;
    ++*n;
    s += len;
    if (*s == ',') {
      ++s;
      if (*s == '\0') return -1;
    }
  }
  return *n > 0 ? 0 : -1;
}

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [-b MINBYTES] [-e MAXBYTES] [-f FACTOR | -s SIZE,SIZE,...] [-n ITERS]\n"
          "          [-w WARMUP] [-c 0|1]\n"
          "  sizes take K/M/G (binary) suffixes; defaults -b 8 -e 128M -f 2 -n 20 -w 5 -c 1;\n"
          "  -s measures exactly the listed sizes, in order, instead of -b/-e/-f\n",
          prog);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  uint64_t min_bytes = 8, max_bytes = 128ULL << 20;
  double factor = 2.0;
  long iters = 20, warmup = 5, check = 1;
  uint64_t list[MAX_LIST];
  int nlist = 0;
  for (int a = 1; a < argc; ++a) {
    const char* flag = argv[a];
    const char* val = a + 1 < argc ? argv[a + 1] : NULL;
    int ok = val != NULL;
    if (ok && strcmp(flag, "-b") == 0) ok = parse_size(val, &min_bytes) == 0;
    else if (ok && strcmp(flag, "-e") == 0) ok = parse_size(val, &max_bytes) == 0;
    else if (ok && strcmp(flag, "-f") == 0) ok = (factor = atof(val)) > 1.0;
    else if (ok && strcmp(flag, "-s") == 0) ok = parse_list(val, list, &nlist) == 0;
    else if (ok && strcmp(flag, "-n") == 0) ok = (iters = atol(val)) >= 1;
    else if (ok && strcmp(flag, "-w") == 0) ok = (warmup = atol(val)) >= 0;
    else if (ok && strcmp(flag, "-c") == 0) ok = (check = atol(val)) == 0 || check == 1;
    else ok = 0;
    if (!ok) {
      if (rank == 0) usage(argv[0]);
      MPI_Finalize();
      return 2;
    }
    ++a;
  }
  if (min_bytes < sizeof(float)) min_bytes = sizeof(float);
  if (max_bytes < min_bytes) max_bytes = min_bytes;
  if (nlist > 0) {
    max_bytes = 0;
    for (int i = 0; i < nlist; ++i) {
      if (list[i] < sizeof(float)) list[i] = sizeof(float);
      if (list[i] > max_bytes) max_bytes = list[i];
    }
  } else {
    /* The geometric sweep, as a list. */
    for (double b = (double)min_bytes; b <= (double)max_bytes * 1.0000001 && nlist < MAX_LIST;
         b *= factor) {
      list[nlist++] = (uint64_t)b;
    }
  }

  const size_t max_count = (size_t)(max_bytes / sizeof(float));
  float* send = NULL;
  float* recv = NULL;
  if (posix_memalign((void**)&send, 4096, max_count * sizeof(float)) != 0 ||
      posix_memalign((void**)&recv, 4096, max_count * sizeof(float)) != 0) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %llu bytes\n", rank,
            (unsigned long long)max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Touch every page before timing anything. */
  memset(send, 0, max_count * sizeof(float));
  memset(recv, 0, max_count * sizeof(float));

  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char* nl = strchr(lib, '\n');
    if (nl != NULL) *nl = '\0';
    printf("# mpi_allreduce_ref: %s\n", lib);
    printf("# ranks %d float sum out-of-place iters %ld warmup %ld check %ld\n", nranks, iters,
           warmup, check);
    printf("# size_bytes time_us algbw_GBps busbw_GBps wrong\n");
    fflush(stdout);
  }

  const double bus_factor = nranks > 1 ? 2.0 * (nranks - 1) / nranks : 0.0;
  uint64_t total_wrong = 0;
  uint64_t last = 0;
  for (int li = 0; li < nlist; ++li) {
    size_t count = (size_t)(list[li] / sizeof(float));
    uint64_t bytes = (uint64_t)count * sizeof(float);
    if (bytes == last) continue;
    last = bytes;
    const int icount = (int)count;

    long long wrong = -1;
    if (check) {
      for (size_t i = 0; i < count; ++i) send[i] = input_value(i, rank);
      for (size_t i = 0; i < count; ++i) recv[i] = -1.0f;
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Allreduce(send, recv, icount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      long long bad = 0;
      for (size_t i = 0; i < count; ++i) bad += recv[i] != expected_value(i, nranks);
      MPI_Allreduce(&bad, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      total_wrong += (uint64_t)wrong;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 0; it < warmup; ++it) {
      MPI_Allreduce(send, recv, icount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    const double t0 = now_s();
    for (long it = 0; it < iters; ++it) {
      MPI_Allreduce(send, recv, icount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
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
