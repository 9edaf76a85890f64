/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Display limits, equalisation, the zoom-out pyramid and the orientation. */
#include "sky-display-stats.h"
#include "sky-colormap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const limits_names[SKY_N_LIMITS] = { "minmax", "99.5", "99.9", "zscale" };

const char *
sky_limits_name (SkyLimits l)
{
  return l >= 0 && l < SKY_N_LIMITS ? limits_names[l] : "";
}

int
sky_limits_from_name (const char *name)
{
  for (int i = 0; name && i < SKY_N_LIMITS; i++)
    if (strcmp (name, limits_names[i]) == 0)
      return i;
  return -1;
}

/* ------------------------------------------------------------- histogram */

int
sky_display_counts_init (SkyDisplayCounts *c)
{
  c->min = INFINITY;
  c->max = -INFINITY;
  c->n = c->nvalid = 0;
  c->hist = calloc (SKY_DISPLAY_NBUCKETS, sizeof *c->hist);
  return c->hist != NULL ? SKY_OK
                         : sky_fail (SKY_ERR_MEMORY, "no memory for the display histogram");
}

void
sky_display_counts_add (SkyDisplayCounts *c, const float *p, int64_t n)
{
  uint32_t *h = c->hist;
  float mn = c->min, mx = c->max;
  int64_t nvalid = 0;

  for (int64_t i = 0; i < n; i++)
    {
      float v = p[i];
      if (isnan (v))
        continue;
      h[sky_float_key (v) >> 16]++;
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
      nvalid++;
    }
  c->min = mn;
  c->max = mx;
  c->n += nvalid;
  c->nvalid += nvalid;
}

/* The extremes and the non-blank count of n pixels (n < 2^33), written
 * for GCC's vectorizer: sixteen independent lanes, whose lane loop
 * (kept a loop: unrolled, its lanes become scalars the vectorizer cannot
 * take) becomes MINPS, MAXPS and CMPEQPS. MINPS returns its second
 * operand where either is NaN, as v < lo ? v : lo does, so a blank leaves
 * the extremes as they are. Compiled twice, chosen at load time: eight
 * floats a register with AVX2, four without. On the app's read of a big
 * image this pass is most of the time the read spends beyond the core's
 * load; with the chunk in cache it takes 0.96x the time of the same loop
 * written in AVX2 intrinsics, and 1.05x that of SSE2 intrinsics where
 * there is no AVX2 (2 cores, GCC 12, -O3). */
enum { EXTREMES_LANES = 16 };

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__ ((target_clones ("avx2", "default")))
#endif
static void
extremes (const float *p, int64_t n, float *mn, float *mx, int64_t *nvalid)
{
  float lo[EXTREMES_LANES], hi[EXTREMES_LANES];
  int32_t count[EXTREMES_LANES];
  float l = *mn, h = *mx;
  int64_t i = 0, valid = 0;

  for (int k = 0; k < EXTREMES_LANES; k++)
    {
      lo[k] = l;
      hi[k] = h;
      count[k] = 0;
    }
  for (; i + EXTREMES_LANES <= n; i += EXTREMES_LANES)
#pragma GCC unroll 1
    for (int k = 0; k < EXTREMES_LANES; k++)
      {
        float v = p[i + k];
        lo[k] = v < lo[k] ? v : lo[k];
        hi[k] = v > hi[k] ? v : hi[k];
        count[k] += v == v;
      }
  for (int k = 0; k < EXTREMES_LANES; k++)
    {
      l = lo[k] < l ? lo[k] : l;
      h = hi[k] > h ? hi[k] : h;
      valid += count[k];
    }
  for (; i < n; i++)
    {
      float v = p[i];
      if (isnan (v))
        continue;
      l = v < l ? v : l;
      h = v > h ? v : h;
      valid++;
    }
  *mn = l;
  *mx = h;
  *nvalid += valid;
}

void
sky_display_counts_add_extremes (SkyDisplayCounts *c, const float *p, int64_t n)
{
  for (int64_t at = 0; at < n; at += (int64_t) 1 << 30)
    extremes (p + at, n - at < ((int64_t) 1 << 30) ? n - at : (int64_t) 1 << 30, &c->min,
              &c->max, &c->nvalid);
}

void
sky_display_counts_add_sampled (SkyDisplayCounts *c, const float *p, int64_t n, int64_t first,
                                int64_t stride)
{
  uint32_t *h = c->hist;
  int64_t counted = 0;

  sky_display_counts_add_extremes (c, p, n);
  for (int64_t i = first; i < n; i += stride)
    if (!isnan (p[i]))
      {
        h[sky_float_key (p[i]) >> 16]++;
        counted++;
      }
  c->n += counted;
}

void
sky_display_counts_clear (SkyDisplayCounts *c)
{
  free (c->hist);
  c->hist = NULL;
}

int
sky_display_stats_finish (const SkyImage *img, const SkyDisplayCounts *counts, int ncounts,
                          SkyDisplayStats *out)
{
  memset (out, 0, sizeof *out);
  out->cum = calloc (SKY_DISPLAY_NBUCKETS + 1, sizeof *out->cum);
  if (out->cum == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the display histogram");
  out->min = INFINITY;
  out->max = -INFINITY;
  for (int b = 0; b < ncounts; b++)
    {
      out->sampled |= counts[b].n != counts[b].nvalid;
      out->nvalid += counts[b].n;
      out->min = counts[b].min < out->min ? counts[b].min : out->min;
      out->max = counts[b].max > out->max ? counts[b].max : out->max;
    }
  for (int k = 0; k < SKY_DISPLAY_NBUCKETS; k++)
    {
      uint64_t c = 0;
      for (int b = 0; b < ncounts; b++)
        c += counts[b].hist != NULL ? counts[b].hist[k] : 0;
      out->cum[k + 1] = out->cum[k] + c;
    }
  if (!(out->min <= out->max))
    out->min = out->max = 0;   /* no pixel at all that is not blank */

  out->lo[SKY_LIMITS_MINMAX] = out->min;
  out->hi[SKY_LIMITS_MINMAX] = out->max;
  out->lo[SKY_LIMITS_99_5] = sky_display_stats_quantile (out, 0.0025);
  out->hi[SKY_LIMITS_99_5] = sky_display_stats_quantile (out, 0.9975);
  out->lo[SKY_LIMITS_99_9] = sky_display_stats_quantile (out, 0.0005);
  out->hi[SKY_LIMITS_99_9] = sky_display_stats_quantile (out, 0.9995);
  sky_zscale (img, 1000, &out->lo[SKY_LIMITS_ZSCALE], &out->hi[SKY_LIMITS_ZSCALE]);
  return SKY_OK;
}

/* One band's share of the image: its histogram, extremes and count of
 * values (not NaN). */
typedef struct {
  const SkyImage *img;
  int nbands;
  SkyDisplayCounts *band;
} HistJob;

static void
hist_band (void *ctx, int band)
{
  HistJob *job = ctx;
  int64_t npix = job->img->nx * job->img->ny;
  int64_t start = npix * band / job->nbands, end = npix * (band + 1) / job->nbands;

  sky_display_counts_add (&job->band[band], job->img->pixels + start, end - start);
}

int
sky_display_stats_compute (const SkyImage *img, int nthreads, SkyDisplayStats *out)
{
  HistJob job = { img, 0, NULL };
  int threads = nthreads > 0 ? nthreads : sky_default_threads ();
  int ret = SKY_OK;

  memset (out, 0, sizeof *out);
  job.nbands = threads < 1 ? 1 : threads > 64 ? 64 : threads;
  job.band = calloc ((size_t) job.nbands, sizeof *job.band);
  if (!job.band)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for the display histogram");
      goto exit;
    }
  for (int b = 0; b < job.nbands; b++)
    if ((ret = sky_display_counts_init (&job.band[b])) != SKY_OK)
      goto exit;

  sky_parallel_for (job.nbands, threads, hist_band, &job);
  ret = sky_display_stats_finish (img, job.band, job.nbands, out);

exit:
  for (int b = 0; job.band != NULL && b < job.nbands; b++)
    sky_display_counts_clear (&job.band[b]);
  free (job.band);
  if (ret != SKY_OK)
    sky_display_stats_clear (out);
  return ret;
}

void
sky_display_stats_clear (SkyDisplayStats *st)
{
  free (st->cum);
  memset (st, 0, sizeof *st);
}

/* The range of values a bucket can hold, narrowed to the image's. */
static void
bucket_range (const SkyDisplayStats *st, int b, double *lo, double *hi)
{
  double a = sky_key_float ((uint32_t) b << 16), z = sky_key_float (((uint32_t) b << 16) | 0xffffu);
  *lo = a < st->min ? st->min : a;
  *hi = z > st->max ? st->max : z;
  if (*hi < *lo)
    *hi = *lo;
}

double
sky_display_stats_quantile (const SkyDisplayStats *st, double q)
{
  double rank, lo, hi, frac;
  int a = 0, z = SKY_DISPLAY_NBUCKETS - 1;

  if (st->nvalid == 0 || st->cum == NULL)
    return 0;
  q = q < 0 ? 0 : q > 1 ? 1 : q;
  rank = q * (double) (st->nvalid - 1);
  /* The first bucket whose running count passes the rank. */
  while (a < z)
    {
      int mid = a + (z - a) / 2;
      if ((double) st->cum[mid + 1] > rank)
        z = mid;
      else
        a = mid + 1;
    }
  bucket_range (st, a, &lo, &hi);
  frac = (rank - (double) st->cum[a] + 0.5) / (double) (st->cum[a + 1] - st->cum[a]);
  frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
  return lo + frac * (hi - lo);
}

double
sky_display_stats_cdf (const SkyDisplayStats *st, double x)
{
  double lo, hi, frac;
  int b;

  if (st->nvalid == 0 || st->cum == NULL || isnan (x))
    return 0;
  if (x <= st->min)
    return 0;
  if (x >= st->max)
    return 1;
  b = (int) (sky_float_key ((float) x) >> 16);
  bucket_range (st, b, &lo, &hi);
  frac = hi > lo ? (x - lo) / (hi - lo) : 1;
  frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
  return ((double) st->cum[b] + frac * (double) (st->cum[b + 1] - st->cum[b])) / (double) st->nvalid;
}

void
sky_display_stats_fill_eq (const SkyDisplayStats *st, double lo, double hi, float *eq)
{
  double c0 = sky_display_stats_cdf (st, lo), c1 = sky_display_stats_cdf (st, hi);

  for (int i = 0; i < SKY_EQ_SIZE; i++)
    {
      double v = (double) i / (SKY_EQ_SIZE - 1);
      eq[i] = (float) (c1 > c0 ? (sky_display_stats_cdf (st, lo + v * (hi - lo)) - c0) / (c1 - c0) : v);
    }
}

/* ----------------------------------------------------------------- zscale */

static int
cmp_float (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

void
sky_zscale (const SkyImage *img, int nsamples, double *lo, double *hi)
{
  const double contrast = 0.25, krej = 2.5, max_reject = 0.5;
  const int max_iterations = 5, min_npixels = 5;
  int64_t npixels = img->nx * img->ny, nvalid = npixels - img->nblank, stride;
  float *s = malloc ((size_t) nsamples * sizeof *s);
  unsigned char *bad = NULL, *grown = NULL;
  int n = 0, minpix, ngrow, ngood, last_ngood;
  double slope = 0, median;

  *lo = *hi = 0;
  if (s == NULL || nvalid <= 0)
    goto exit;
  /* Every stride-th non-blank pixel, as astropy samples image[finite][::stride].
   * Without blanks those are the pixels at multiples of stride, read
   * directly; else a scan, k counting down to the next sample (a division
   * per pixel made the scan of a 16384 x 16384 image take 1.3 to 1.6 s). */
  stride = nvalid / nsamples > 1 ? nvalid / nsamples : 1;
  if (img->nblank == 0)
    {
      int64_t i = 0;
      for (; i < npixels && n < nsamples && !isnan (img->pixels[i]); i += stride)
        s[n++] = img->pixels[i];
      if (i < npixels && n < nsamples)
        n = 0;   /* a NaN the count missed: scan as below */
    }
  if (img->nblank != 0 || n == 0)
    for (int64_t i = 0, k = 0; i < npixels && n < nsamples; i++)
      if (!isnan (img->pixels[i]))
        {
          if (k == 0)
            s[n++] = img->pixels[i];
          k = k + 1 == stride ? 0 : k + 1;
        }
  qsort (s, (size_t) n, sizeof *s, cmp_float);
  *lo = s[0];
  *hi = s[n - 1];

  minpix = (int) (n * max_reject) > min_npixels ? (int) (n * max_reject) : min_npixels;
  ngrow = (int) (n * 0.01) > 1 ? (int) (n * 0.01) : 1;
  bad = calloc ((size_t) n, 1);
  grown = calloc ((size_t) n, 1);
  if (bad == NULL || grown == NULL)
    goto exit;
  ngood = n;
  last_ngood = n + 1;
  for (int iter = 0; iter < max_iterations; iter++)
    {
      double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, intercept, mean = 0, var = 0;
      int ng = 0;

      if (ngood >= last_ngood || ngood < minpix)
        break;
      for (int i = 0; i < n; i++)
        if (!bad[i])
          {
            sw += 1;
            sx += i;
            sy += s[i];
            sxx += (double) i * i;
            sxy += (double) i * s[i];
          }
      slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
      intercept = (sy - slope * sx) / sw;
      for (int i = 0; i < n; i++)
        if (!bad[i])
          {
            mean += s[i] - (intercept + slope * i);
            ng++;
          }
      mean /= ng;
      for (int i = 0; i < n; i++)
        if (!bad[i])
          {
            double d = s[i] - (intercept + slope * i) - mean;
            var += d * d;
          }
      double threshold = krej * sqrt (var / ng);
      for (int i = 0; i < n; i++)
        {
          double flat = s[i] - (intercept + slope * i);
          if (flat < -threshold || flat > threshold)
            bad[i] = 1;
        }
      /* Grow each rejected sample over its neighbours (astropy convolves
       * the flags with ngrow ones, mode "same"). */
      memset (grown, 0, (size_t) n);
      for (int i = 0; i < n; i++)
        if (bad[i])
          for (int j = i - ngrow / 2; j < i - ngrow / 2 + ngrow; j++)
            if (j >= 0 && j < n)
              grown[j] = 1;
      memcpy (bad, grown, (size_t) n);
      last_ngood = ngood;
      ngood = 0;
      for (int i = 0; i < n; i++)
        ngood += !bad[i];
    }
  if (ngood >= minpix)
    {
      int center = (n - 1) / 2;
      median = n % 2 ? s[n / 2] : 0.5 * ((double) s[n / 2 - 1] + s[n / 2]);
      slope /= contrast;
      if (median - (center - 1) * slope > *lo)
        *lo = median - (center - 1) * slope;
      if (median + (n - center) * slope < *hi)
        *hi = median + (n - center) * slope;
    }

exit:
  free (s);
  free (bad);
  free (grown);
}

/* ---------------------------------------------------------------- pyramid */

typedef struct {
  const float *src;
  int64_t snx, sny;
  float *dst;
  int64_t dnx, dny;
  int nbands;
} HalveJob;

static void
halve_band (void *ctx, int band)
{
  HalveJob *job = ctx;
  int64_t j0 = job->dny * band / job->nbands, j1 = job->dny * (band + 1) / job->nbands;

  for (int64_t j = j0; j < j1; j++)
    {
      /* The last row and column also take an odd one out. */
      int64_t ya = 2 * j, yb = j == job->dny - 1 ? job->sny : 2 * j + 2;
      if (yb > job->sny)
        yb = job->sny;
      for (int64_t i = 0; i < job->dnx; i++)
        {
          int64_t xa = 2 * i, xb = i == job->dnx - 1 ? job->snx : 2 * i + 2;
          double sum = 0;
          int n = 0;
          if (xb > job->snx)
            xb = job->snx;
          for (int64_t y = ya; y < yb; y++)
            for (int64_t x = xa; x < xb; x++)
              {
                float v = job->src[y * job->snx + x];
                if (!isnan (v))
                  {
                    sum += v;
                    n++;
                  }
              }
          job->dst[j * job->dnx + i] = n ? (float) (sum / n) : NAN;
        }
    }
}

int
sky_pyramid_build (const SkyImage *img, int nthreads, SkyPyramid *pyr)
{
  if (img->pixels == NULL)
    return sky_fail (SKY_ERR_ARGUMENT, "no pixels to make zoom-out levels of");
  memset (pyr, 0, sizeof *pyr);
  pyr->nx[0] = img->nx;
  pyr->ny[0] = img->ny;
  pyr->pixels[0] = img->pixels;
  pyr->nlevels = 1;
  while ((pyr->nx[pyr->nlevels - 1] > 1 || pyr->ny[pyr->nlevels - 1] > 1)
         && pyr->nlevels < SKY_PYRAMID_MAX_LEVELS)
    {
      int k = pyr->nlevels;
      HalveJob job;
      pyr->nx[k] = pyr->nx[k - 1] > 1 ? pyr->nx[k - 1] / 2 : 1;
      pyr->ny[k] = pyr->ny[k - 1] > 1 ? pyr->ny[k - 1] / 2 : 1;
      pyr->pixels[k] = malloc ((size_t) (pyr->nx[k] * pyr->ny[k]) * sizeof (float));
      if (pyr->pixels[k] == NULL)
        {
          sky_pyramid_clear (pyr);
          return sky_fail (SKY_ERR_MEMORY, "no memory for the zoom-out levels");
        }
      job = (HalveJob) { pyr->pixels[k - 1], pyr->nx[k - 1], pyr->ny[k - 1],
                         pyr->pixels[k], pyr->nx[k], pyr->ny[k], 0 };
      job.nbands = pyr->ny[k] < 64 ? 1 : 16;
      sky_parallel_for (job.nbands, nthreads, halve_band, &job);
      pyr->nlevels++;
    }
  return SKY_OK;
}

void
sky_pyramid_init_base (const SkyImage *img, SkyPyramid *pyr)
{
  memset (pyr, 0, sizeof *pyr);
  pyr->nx[0] = img->nx;
  pyr->ny[0] = img->ny;
  pyr->pixels[0] = img->pixels;
  pyr->nlevels = 1;
}

void
sky_pyramid_publish (SkyPyramid *pyr, SkyPyramid *levels)
{
  for (int k = 1; k < levels->nlevels; k++)
    {
      pyr->nx[k] = levels->nx[k];
      pyr->ny[k] = levels->ny[k];
      pyr->pixels[k] = levels->pixels[k];
    }
  /* Whoever reads nlevels (acquire) then finds the levels below it. */
  __atomic_store_n (&pyr->nlevels, levels->nlevels, __ATOMIC_RELEASE);
  memset (levels, 0, sizeof *levels);
}

void
sky_pyramid_clear (SkyPyramid *pyr)
{
  for (int k = 1; k < pyr->nlevels; k++)
    free (pyr->pixels[k]);
  memset (pyr, 0, sizeof *pyr);
}

/* ------------------------------------------------------------ orientation */

static int
card_value (const char *header, int ncards, const char *key, double *value)
{
  size_t klen = strlen (key);
  for (int c = 0; c < ncards; c++)
    {
      const char *card = header + 80 * (size_t) c;
      char buf[72];
      char *end;
      if (strncmp (card, key, klen) != 0 || (klen < 8 && card[klen] != ' ') || card[8] != '='
          || card[9] != ' ')
        continue;
      memcpy (buf, card + 10, 70);
      buf[70] = '\0';
      *value = strtod (buf, &end);
      if (end != buf)
        return 1;
    }
  return 0;
}

int
sky_header_flip_x (const char *header, int ncards, int *has_wcs)
{
  double cd, cdelt, pc = 1;

  *has_wcs = 1;
  if (header != NULL && card_value (header, ncards, "CD1_1", &cd) && cd != 0)
    return cd > 0;
  if (header != NULL && card_value (header, ncards, "CDELT1", &cdelt) && cdelt != 0)
    {
      card_value (header, ncards, "PC1_1", &pc);
      return cdelt * pc > 0;
    }
  *has_wcs = 0;
  return 0;
}
