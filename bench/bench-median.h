/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The median the benchmark drivers report. A header, not a library: each
 * driver is one file, built by meson or by the Python script that runs it. */
#ifndef SKY_BENCH_MEDIAN_H
#define SKY_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int
sky_bench_compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The median of v[0 .. n), n >= 1; sorts v. */
static inline double
sky_bench_median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, sky_bench_compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* SKY_BENCH_MEDIAN_H */
