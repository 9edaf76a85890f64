/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-background-math.h: the arithmetic of the background maps that the
 * CPU (src/cpu/sky-cpu-background*.c) and the GPU's kernels
 * (src/gpu/sky-gpu-background*.cu) must do alike, operation for operation,
 * to give SEP's maps bit for bit, written once for host and device.
 *
 * Include it only where a multiply and an add stay two roundings: src/cpu
 * is built with -ffp-contract=off, the GPU's map files with -fmad=false. */
#ifndef SKY_BACKGROUND_MATH_H
#define SKY_BACKGROUND_MATH_H

#include <math.h>
#include <stdint.h>

#include "sky-core.h"

/* Conversions as the CPU's C makes them on x86-64 (cvttss2si, cvttsd2si):
 * truncation toward zero, and the "integer indefinite" INT_MIN for NaN and
 * anything out of range. On the host that is the plain cast; on a device
 * CUDA's own conversions would saturate, so the range is checked. */
static inline SKY_HOST_DEVICE int
sky_x86_d2i (double v)
{
#ifdef __CUDA_ARCH__
  return (v > -2147483649.0 && v < 2147483648.0) ? __double2int_rz (v) : INT32_MIN;
#else
  return (int) v;
#endif
}

static inline SKY_HOST_DEVICE int
sky_x86_f2i (float v)
{
#ifdef __CUDA_ARCH__
  return (v > -2147483904.0f && v < 2147483648.0f) ? __float2int_rz (v) : INT32_MIN;
#else
  return (int) v;
#endif
}

static inline SKY_HOST_DEVICE int64_t
sky_x86_f2ll (float v)
{
#ifdef __CUDA_ARCH__
  return (v > -9.3e18f && v < 9.2e18f) ? __float2ll_rz (v) : INT64_MIN;
#else
  return (int64_t) v;
#endif
}

/* int additions that wrap, as the CPU's do in practice */
static inline SKY_HOST_DEVICE int
sky_wrap_add (int a, int b)
{
  return (int) ((unsigned) a + (unsigned) b);
}

/* The end of one pass of a box's histogram clip (SEP's mode estimate):
 * mea and sig come in as the sums of bin and bin^2 over the sum pixels of
 * bins lcut..hcut and leave as their mean and sigma (in bins); the next
 * pass's cuts are 3 sigma either side of the median med, rounded to the
 * nearest bin and kept within 0..top. */
static inline SKY_HOST_DEVICE void
sky_background_clip_next_cuts (double med, int64_t sum, int top, double *mea, double *sig,
                               int *lcut, int *hcut)
{
  double ftemp;

  if (sum)
    {
      *mea /= (double) sum;
      *sig = *sig / (double) sum - *mea * *mea;
    }
  *sig = *sig > 0.0 ? sqrt (*sig) : 0.0;
  ftemp = med - 3.0 * *sig;
  *lcut = ftemp > 0.0 ? sky_x86_d2i (ftemp + 0.5) : 0;
  ftemp = med + 3.0 * *sig;
  *hcut = ftemp < top ? sky_x86_d2i (ftemp > 0.0 ? ftemp + 0.5 : ftemp - 0.5) : top;
}

/* A box's background and rms from its clipped histogram's mean, median
 * and sigma (in bins; a bin's value is qzero + bin * qscale): the mode
 * 2.5 median - 1.5 mean, or the median where |mean - median| >= 0.3 sigma
 * (a crowded box), or the mean where sigma is 0. */
static inline SKY_HOST_DEVICE void
sky_background_box_estimate (double mea, double med, double sig, float qzero, float qscale,
                             float *back, float *rms)
{
  if (fabs (sig) > 0.0)
    {
      if (fabs ((mea - med) / sig) < 0.3)
        *back = (float) (qzero + (2.5 * med - 1.5 * mea) * qscale);
      else
        *back = (float) (qzero + med * qscale);
    }
  else
    *back = (float) (qzero + mea * qscale);
  *rms = (float) (sig * qscale);
}

/* Where pixel row y falls on the mesh's column splines (nby >= 2 rows of
 * boxes of box pixels, nodes at (k + 1/2) box as SEP puts them): the lower
 * node's row yl and the cubic weights of the two nodes' values (lo, hi)
 * and second derivatives (dlo, dhi). Past the last node the end cubic
 * extrapolates. */
typedef struct SkySplineRow {
  int64_t yl;
  float lo, hi, dlo, dhi;
} SkySplineRow;

static inline SKY_HOST_DEVICE SkySplineRow
sky_background_spline_row (int64_t y, int box, int64_t nby)
{
  SkySplineRow r;
  float dy = (float) y / (float) box - 0.5;

  r.yl = sky_x86_f2ll (dy);
  dy -= (float) r.yl;
  if (r.yl >= nby - 1)
    {
      r.yl = nby - 2;
      dy += 1.0f;
    }
  const float cdy = 1 - dy;
  r.lo = cdy;
  r.hi = dy;
  r.dlo = cdy * cdy * cdy - cdy;
  r.dhi = dy * dy * dy - dy;
  return r;
}

#endif /* SKY_BACKGROUND_MATH_H */
