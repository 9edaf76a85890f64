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

/* SEP's mode estimate of a box from its histogram: clip at 3 sigma around
 * the median (in bins) until sigma changes by under 1e-4 relative or falls
 * below 0.1 bin, 100 passes at most. How a pass finds its median and sums
 * is each backend's own; the rest is here:
 *
 *   SkyBackgroundClip clip = sky_background_clip_start (top, box_mean);
 *   while (sky_background_clip_next_pass (&clip))
 *     {
 *       (bins clip.lcut..clip.hcut: their pixel count sum, the sums of bin
 *        and bin^2 into clip.mea and clip.sig, the median med)
 *       sky_background_clip_end_pass (&clip, med, sum);
 *     }
 *   sky_background_clip_estimate (&clip, qzero, qscale, &back, &rms);
 */
#define SKY_BACKGROUND_CLIP_MAX_PASSES 100

typedef struct SkyBackgroundClip {
  int lcut, hcut;  /* the bins this pass keeps */
  int top;         /* the last bin */
  int passes_left;
  double mea, sig; /* mean and sigma in bins (sums during a pass) */
  double sig1;     /* sigma of the pass before */
  double med;      /* median in bins */
} SkyBackgroundClip;

static inline SKY_HOST_DEVICE SkyBackgroundClip
sky_background_clip_start (int top, double box_mean)
{
  SkyBackgroundClip clip;

  clip.lcut = 0;
  clip.hcut = top;
  clip.top = top;
  clip.passes_left = SKY_BACKGROUND_CLIP_MAX_PASSES;
  clip.sig = 10.0 * top;
  clip.sig1 = 1.0;
  clip.mea = clip.med = box_mean;
  return clip;
}

/* 1 and the sums zeroed where another pass is due, 0 once settled. */
static inline SKY_HOST_DEVICE int
sky_background_clip_next_pass (SkyBackgroundClip *clip)
{
  if (!(clip->passes_left-- && clip->sig >= 0.1 && fabs (clip->sig / clip->sig1 - 1.0) > 1e-4))
    return 0;
  clip->sig1 = clip->sig;
  clip->mea = clip->sig = 0.0;
  return 1;
}

/* The median in bins, interpolated within bin hi (the bin where the walk
 * from both ends met; lowsum and highsum pixels lie below and above it,
 * peak is the larger count of bin hi and its neighbour). */
static inline SKY_HOST_DEVICE double
sky_background_histogram_median (int hi, int64_t lowsum, int64_t highsum, int32_t peak)
{
  return hi + 0.5 + ((double) highsum - (double) lowsum) / (2.0 * (double) peak);
}

/* The end of a pass over sum pixels: mea and sig from sums to mean and
 * sigma, and the next pass's cuts 3 sigma either side of the median med,
 * rounded to the nearest bin and kept within 0..top. */
static inline SKY_HOST_DEVICE void
sky_background_clip_end_pass (SkyBackgroundClip *clip, double med, int64_t sum)
{
  double ftemp;

  clip->med = med;
  if (sum)
    {
      clip->mea /= (double) sum;
      clip->sig = clip->sig / (double) sum - clip->mea * clip->mea;
    }
  clip->sig = clip->sig > 0.0 ? sqrt (clip->sig) : 0.0;
  ftemp = med - 3.0 * clip->sig;
  clip->lcut = ftemp > 0.0 ? sky_x86_d2i (ftemp + 0.5) : 0;
  ftemp = med + 3.0 * clip->sig;
  clip->hcut = ftemp < clip->top ? sky_x86_d2i (ftemp > 0.0 ? ftemp + 0.5 : ftemp - 0.5)
                                 : clip->top;
}

/* The box's background and rms (a bin's value is qzero + bin * qscale):
 * the mode 2.5 median - 1.5 mean, or the median where |mean - median| >=
 * 0.3 sigma (a crowded box), or the mean where sigma is 0. */
static inline SKY_HOST_DEVICE void
sky_background_clip_estimate (const SkyBackgroundClip *clip, float qzero, float qscale,
                              float *back, float *rms)
{
  const double mea = clip->mea, med = clip->med, sig = clip->sig;

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
