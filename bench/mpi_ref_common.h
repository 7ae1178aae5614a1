/* What the MPI reference sweeps (mpi_allreduce_ref.c, mpi_alltoall_ref.c) share: the clock and
 * the size parser, so both read sizes exactly as ibscope does. Header-only: each reference is
 * one C file built by its MPI's mpicc (bench/CMakeLists.txt, bench/alltoall_vs_mpi.sh), which
 * defines _POSIX_C_SOURCE 200809L before any include (clock_gettime under -std=c11). */
#ifndef IBSCOPE_BENCH_MPI_REF_COMMON_H
#define IBSCOPE_BENCH_MPI_REF_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "1K" -> 1024, "256M" -> 268435456, "64KB" (binary suffixes, like ibscope's -b/-e/--sizes).
 * 0 on success, -1 for anything else. */
static inline int parse_size(const char* s, uint64_t* out) {
  char* end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return -1;
  uint64_t mult = 1;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      mult = 1ULL << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      mult = 1ULL << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      mult = 1ULL << 30;
      ++end;
      break;
    default:
      return -1;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return -1;
  *out = (uint64_t)v * mult;
  return 0;
}

#endif
