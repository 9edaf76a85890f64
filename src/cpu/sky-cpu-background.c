/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The background mesh: each box's statistics, the blank boxes filled in,
 * the median filter and the global figures, as SExtractor defines them
 * (Bertin & Arnouts 1996, section 3.1) and SEP computes them.
 *
 * The arithmetic follows SEP's types step by step (double sums, float cuts,
 * histogram bins computed in float and truncated toward zero), because the
 * mode is read off a histogram: a pixel moved into the next bin by a
 * different rounding moves the estimate, and the goal is SEP's maps, not
 * maps like them. */
#include "sky-cpu.h"
#include "sky-cpu-background-private.h"
#include "sky-background-math.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BAD_BOX (-1e30f)          /* raw statistics of an unusable box */
#define MIN_GOOD_FRACTION 0.5     /* usable pixels a box needs */
#define HISTO_NSIGMA 5            /* the histogram spans mean +- 5 sigma */
#define HISTO_MAX_LEVELS SKY_BACKGROUND_MAX_LEVELS
#define HISTO_MIN_PER_LEVEL 4     /* sets the bin width from the pixel count */

static int
is_bad (float v)
{
  return (double) v <= -1e30;
}

/* ------------------------------------------------------------ one box */

/* A box: w x h pixels at x0 of rows, stride nx. */
typedef struct {
  const float *rows;
  int64_t nx, x0, w, h;
} Box;

/* Four floats, two doubles: lanes for the sums (GCC and Clang vectors,
 * one SSE register each on a baseline x86-64). */
typedef float Float4 __attribute__ ((vector_size (16)));
typedef int32_t Int4 __attribute__ ((vector_size (16)));
typedef double Double2 __attribute__ ((vector_size (16)));

/* Running sums in double of the pixels p with lcut <= p <= hcut, and of
 * p^2, and their count (NaN, a blank, is never counted), in four lanes:
 * the totals differ from SEP's sums in one sequence by about 1e-16
 * relative, far below the float rounding of the cuts and bins made from
 * them. A lane counts at most a quarter of a box's 2^28 pixels. */
typedef struct {
  Double2 s_lo, s_hi, q_lo, q_hi;
  Int4 count;
  double s, q;
  int64_t n;
} Sums;

static inline void
sums_add_row (Sums *a, const float *row, int64_t w, float lcut, float hcut)
{
  int64_t x = 0;

  for (; x + 4 <= w; x += 4)
    {
      Float4 p;
      memcpy (&p, row + x, sizeof p);
      Int4 in = (p >= lcut) & (p <= hcut);
      p = (Float4) ((Int4) p & in);
      Double2 lo = { p[0], p[1] };
      Double2 hi = { p[2], p[3] };
      a->s_lo += lo;
      a->s_hi += hi;
      a->q_lo += lo * lo;
      a->q_hi += hi * hi;
      a->count -= in;
    }
  for (; x < w; x++)
    if (row[x] >= lcut && row[x] <= hcut)
      {
        double p = row[x];
        a->s += p;
        a->q += p * p;
        a->n++;
      }
}

static inline int64_t
sums_total (const Sums *a, double *sum_out, double *sum2_out)
{
  Double2 s = a->s_lo + a->s_hi, q = a->q_lo + a->q_hi;
  int64_t n = a->n + a->count[0] + a->count[1] + a->count[2] + a->count[3];

  *sum_out = a->s + (s[0] + s[1]);
  *sum2_out = a->q + (q[0] + q[1]);
  return n;
}

static int64_t
box_sums (const Box *b, float lcut, float hcut, double *sum_out, double *sum2_out)
{
  Sums a;

  memset (&a, 0, sizeof a);
  for (int64_t y = 0; y < b->h; y++)
    sums_add_row (&a, b->rows + y * b->nx + b->x0, b->w, lcut, hcut);
  return sums_total (&a, sum_out, sum2_out);
}

/* SEP's test for a usable pixel is p > -1e30: the same set as
 * -1e30 < p <= +inf, NaN excluded. */
#define USABLE_LOW nextafterf (-1e30f, 0.0f)

/* From the sums of the box's non-blank pixels (n, sum, sum2), the mean
 * and sigma of those within 2 sigma of their mean: the histogram's centre
 * and bin width. Returns 0 for a box with under half its pixels non-blank. */
static int
box_clip (const Box *b, int64_t n, double sum, double sum2, double *mean_out,
          double *sigma_out, int64_t *n_out)
{
  double mean, var, sigma;
  float lcut, hcut;

  if ((float) n < (float) ((double) (b->w * b->h) * MIN_GOOD_FRACTION))
    return 0;

  mean = sum / (double) n;
  var = sum2 / (double) n - mean * mean;
  sigma = var > 0.0 ? sqrt (var) : 0.0;
  lcut = (float) (mean - 2.0 * sigma);
  hcut = (float) (mean + 2.0 * sigma);

  n = box_sums (b, lcut, hcut, &sum, &sum2);
  mean = sum / (double) n;
  var = sum2 / (double) n - mean * mean;
  *mean_out = mean;
  *sigma_out = var > 0.0 ? sqrt (var) : 0.0;
  *n_out = n;
  return 1;
}

/* Counts the box's pixels into nlevels bins of width qscale from qzero,
 * SEP's way: the bin is (int) (p / qscale + cste), computed in float and
 * truncated toward zero, so values just below the first bin land in it.
 * Bins are worked out a stretch of a row at a time (vectorised), pixels
 * outside every bin and blanks going to a spare bin nlevels; histo holds
 * nlevels + 1. */
static void
box_histogram (const Box *b, float qzero, float qscale, int nlevels, int32_t *histo)
{
  const float cste = (float) (0.499999 - (double) (qzero / qscale));
  const float top = (float) nlevels;
  int32_t bins[1024];

  memset (histo, 0, (size_t) (nlevels + 1) * sizeof *histo);
  for (int64_t y = 0; y < b->h; y++)
    for (int64_t x0 = 0; x0 < b->w; x0 += 1024)
      {
        const float *restrict row = b->rows + y * b->nx + b->x0 + x0;
        int n = b->w - x0 < 1024 ? (int) (b->w - x0) : 1024;
        for (int x = 0; x < n; x++)
          {
            float f = row[x] / qscale + cste;
            /* (int) f lies in 0 .. nlevels - 1 exactly when -1 < f < nlevels;
             * NaN fails both. */
            bins[x] = (int32_t) ((f > -1.0f && f < top) ? f : top);
          }
        for (int x = 0; x < n; x++)
          histo[bins[x]]++;
      }
}

/* Prefix sums over the occupied bins first..last of a histogram: the
 * pixels, and the pixels times their bin and bin squared, below bin k. */
static inline int
prefix_index (const SkyHistogramWork *w, int k)
{
  return k <= w->first ? 0 : (k > w->last + 1 ? w->last + 1 - w->first : k - w->first);
}

static inline int64_t
count_below (const SkyHistogramWork *w, int k)
{
  return w->count[prefix_index (w, k)];
}

/* The end of SExtractor's median walk over bins lcut..hcut: the walk takes
 * a bin from the low end while the low sum is below the high sum, else from
 * the high end, until the ends meet. That is a merge of the two ascending
 * sequences of partial sums (low a_i, high b_j; ties go high), so after
 * n = hcut - lcut + 1 steps it has taken the largest i for which i = 0 or
 * a_(i-1) < b_(n-i), that is, with P the prefix counts and k = lcut + i,
 * P(k - 1) + P(k) < P(lcut) + P(hcut + 1): a binary search finds it
 * without walking. Returns i; *lowsum = a_i, *highsum = b_(n-i). */
static int64_t
median_walk_end (const SkyHistogramWork *w, int lcut, int hcut, int64_t *lowsum,
                 int64_t *highsum)
{
  const int64_t ends = count_below (w, lcut) + count_below (w, hcut + 1);
  int64_t lo = 0, hi = hcut - lcut + 1; /* the answer lies in lo..hi */

  while (lo < hi)
    {
      int64_t i = lo + (hi - lo + 1) / 2;
      int k = lcut + (int) i;
      if (count_below (w, k - 1) + count_below (w, k) < ends)
        lo = i;
      else
        hi = i - 1;
    }
  *lowsum = count_below (w, lcut + (int) lo) - count_below (w, lcut);
  *highsum = count_below (w, hcut + 1) - count_below (w, lcut + (int) lo);
  return lo;
}

/* SExtractor's mode from the histogram: clip at 3 sigma around the median
 * (in bins) until sigma changes by under 1e-4 relative or falls below 0.1
 * bin (100 passes at most); then mode = 2.5 median - 1.5 mean, or the
 * median where |mean - median| >= 0.3 sigma (a crowded box).
 *
 * SEP sums count * bin and count * bin^2 over the clipped bins in double,
 * one bin at a time; those are integers below 2^53 (fewer than 2^29 pixels
 * in a box), so every partial sum is exact and equal to the difference of
 * two 64-bit prefix sums: a pass costs a few lookups instead of a walk over
 * thousands of bins, with the same doubles. The prefix sums cover only the
 * occupied bins (a box's pixels rarely reach the histogram's ends). */
void
sky_background_histogram_mode (const int32_t *histo, int nlevels, float qzero, float qscale,
                               float box_mean, SkyHistogramWork *w, float *back, float *rms)
{
  const int top = nlevels - 1;
  SkyBackgroundClip clip = sky_background_clip_start (top, box_mean);

  w->first = 0;
  w->last = top;
  while (w->first <= top && histo[w->first] == 0)
    w->first++;
  while (w->last >= w->first && histo[w->last] == 0)
    w->last--;
  if (w->first > w->last)
    {
      w->first = 0;
      w->last = -1;
    }
  {
    int64_t c = 0, m1 = 0, m2 = 0;
    w->count[0] = 0;
    w->moment1[0] = w->moment2[0] = 0;
    for (int i = w->first; i <= w->last; i++)
      {
        int64_t h = histo[i];
        c += h;
        m1 += h * i;
        m2 += h * i * (int64_t) i;
        w->count[i - w->first + 1] = (int32_t) c;
        w->moment1[i - w->first + 1] = m1;
        w->moment2[i - w->first + 1] = m2;
      }
  }

  while (sky_background_clip_next_pass (&clip))
    {
      int64_t lowsum = 0, highsum = 0, sum = 0;
      int hi = clip.hcut;
      double med = 0.0;

      if (clip.hcut >= clip.lcut)
        {
          int a = prefix_index (w, clip.lcut), b = prefix_index (w, clip.hcut + 1);
          hi = clip.lcut + (int) median_walk_end (w, clip.lcut, clip.hcut, &lowsum, &highsum) - 1;
          sum = w->count[b] - w->count[a];
          clip.mea = (double) (w->moment1[b] - w->moment1[a]);
          clip.sig = (double) (w->moment2[b] - w->moment2[a]);
        }
      if (hi >= 0)
        {
          int lo = clip.hcut >= clip.lcut ? hi + 1 : clip.lcut;
          int32_t peak = histo[lo] > histo[hi] ? histo[lo] : histo[hi];
          med = sky_background_histogram_median (hi, lowsum, highsum, peak);
        }
      sky_background_clip_end_pass (&clip, med, sum);
    }
  sky_background_clip_estimate (&clip, qzero, qscale, back, rms);
}

void
sky_cpu_background_box_row (SkyBackgroundMesh *mesh, int64_t by, const float *rows)
{
  const double step = sqrt (2.0 / M_PI) * HISTO_NSIGMA / HISTO_MIN_PER_LEVEL;
  const int64_t nbx = mesh->nbx, box = mesh->box;
  int32_t histo[HISTO_MAX_LEVELS + 1];
  SkyHistogramWork work;
  int64_t h = mesh->ny - by * box;
  Sums *acc = malloc ((size_t) nbx * sizeof (Sums)); /* 16-byte aligned */

  if (h > box)
    h = box;
  /* The first pass runs along the rows through every box at once: the
   * band streams from memory in order and stays in cache for the boxes'
   * second pass and histogram. (Without the work space, box by box.) */
  if (acc != NULL)
    {
      memset (acc, 0, (size_t) nbx * sizeof (Sums));
      for (int64_t y = 0; y < h; y++)
        for (int64_t bx = 0; bx < nbx; bx++)
          sums_add_row (&acc[bx], rows + y * mesh->nx + bx * box,
                        bx * box + box <= mesh->nx ? box : mesh->nx - bx * box, USABLE_LOW,
                        INFINITY);
    }

  for (int64_t bx = 0; bx < nbx; bx++)
    {
      Box b = { rows, mesh->nx, bx * box, box, h };
      float *back = &mesh->back[by * nbx + bx], *rms = &mesh->rms[by * nbx + bx];
      double mean, sigma, sum, sum2;
      int64_t n;
      int nlevels;
      float qscale, qzero;

      if (b.x0 + b.w > mesh->nx)
        b.w = mesh->nx - b.x0;
      if (acc != NULL)
        n = sums_total (&acc[bx], &sum, &sum2);
      else
        n = box_sums (&b, USABLE_LOW, INFINITY, &sum, &sum2);
      if (!box_clip (&b, n, sum, sum2, &mean, &sigma, &n))
        {
          *back = *rms = BAD_BOX;
          continue;
        }
      nlevels = step * (double) n + 1 > HISTO_MAX_LEVELS ? HISTO_MAX_LEVELS
                                                         : (int) (step * (double) n + 1);
      qscale = (float) (sigma > 0.0 ? 2 * HISTO_NSIGMA * sigma / nlevels : 1.0);
      qzero = (float) (mean - HISTO_NSIGMA * sigma);
      box_histogram (&b, qzero, qscale, nlevels, histo);
      sky_background_histogram_mode (histo, nlevels, qzero, qscale, (float) mean, &work, back,
                                     rms);
    }
  free (acc);
}

/* ------------------------------------------------------------- the mesh */

int
sky_background_mesh_init (SkyBackgroundMesh *mesh, int64_t nx, int64_t ny,
                          const SkyParams *params)
{
  int ret;
  size_t nb;

  memset (mesh, 0, sizeof *mesh);
  if ((ret = sky_params_check (params)) != SKY_OK)
    return ret;
  if (nx < 1 || ny < 1)
    return sky_fail (SKY_ERR_SIZE, "background of an empty image (%lld x %lld)",
                     (long long) nx, (long long) ny);
  mesh->nx = nx;
  mesh->ny = ny;
  mesh->box = params->bkg_box;
  mesh->filter = params->bkg_filter;
  mesh->nbx = (nx - 1) / mesh->box + 1;
  mesh->nby = (ny - 1) / mesh->box + 1;
  nb = (size_t) (mesh->nbx * mesh->nby);
  mesh->back = malloc (nb * sizeof (float));
  mesh->rms = malloc (nb * sizeof (float));
  mesh->dback = malloc (nb * sizeof (float));
  mesh->drms = malloc (nb * sizeof (float));
  if (!mesh->back || !mesh->rms || !mesh->dback || !mesh->drms)
    {
      sky_background_mesh_clear (mesh);
      return sky_fail (SKY_ERR_MEMORY, "no memory for a background mesh of %lld x %lld boxes",
                       (long long) ((nx - 1) / params->bkg_box + 1),
                       (long long) ((ny - 1) / params->bkg_box + 1));
    }
  return SKY_OK;
}

void
sky_background_mesh_clear (SkyBackgroundMesh *mesh)
{
  free (mesh->back);
  free (mesh->rms);
  free (mesh->dback);
  free (mesh->drms);
  memset (mesh, 0, sizeof *mesh);
}

static int
compare_float (const void *a, const void *b)
{
  double x = *(const float *) a, y = *(const float *) b;
  return x > y ? 1 : (x < y ? -1 : 0);
}

/* The median as SEP's fqmedian takes it: the middle value, or the mean of
 * the two middle values (their float sum halved in double). Reorders v. */
static float
median_of (float *v, int64_t n)
{
  float hi, lo;

  if (n < 2)
    return v[0];
  hi = sky_select_kth (v, n, n / 2);
  if (n & 1)
    return hi;
  lo = v[0];                   /* the largest of the lower half */
  for (int64_t i = 1; i < n / 2; i++)
    lo = v[i] > lo ? v[i] : lo;
  return (float) ((lo + hi) / 2.0);
}

typedef struct {
  const SkyBackgroundMesh *m;
  const float *back, *rms;
  float *back_out, *rms_out;
  int ntasks;
  atomic_int failed;
} Filter;

/* The median filter over the rows of boxes of one task. */
static void
filter_task (void *ctx, int task)
{
  Filter *f = ctx;
  const SkyBackgroundMesh *m = f->m;
  const int64_t half = m->filter / 2;
  const int64_t y0 = m->nby * task / f->ntasks, y1 = m->nby * (task + 1) / f->ntasks;
  const size_t win = (size_t) m->filter * (size_t) m->filter;
  float *bwin = malloc (win * 2 * sizeof (float)), *swin;

  if (bwin == NULL)
    {
      atomic_store (&f->failed, 1);
      return;
    }
  swin = bwin + win;
  for (int64_t py = y0; py < y1; py++)
    for (int64_t px = 0; px < m->nbx; px++)
      {
        /* Near an edge the window shrinks on both sides, so it stays
         * centred: a corner box keeps its own value. */
        int64_t hx = half, hy = half, n = 0, i = py * m->nbx + px;
        float med;
        if (hx > px) hx = px;
        if (hx > m->nbx - 1 - px) hx = m->nbx - 1 - px;
        if (hy > py) hy = py;
        if (hy > m->nby - 1 - py) hy = m->nby - 1 - py;
        for (int64_t y = py - hy; y <= py + hy; y++)
          for (int64_t x = px - hx; x <= px + hx; x++)
            {
              bwin[n] = f->back[y * m->nbx + x];
              swin[n++] = f->rms[y * m->nbx + x];
            }
        /* n is odd: the median is the middle value. SEP replaces a box by
         * the medians where they differ from it by fthresh (0) or more. */
        med = sky_select_kth (bwin, n, n / 2);
        if (fabs (med - f->back[i]) >= 0.0)
          {
            f->back_out[i] = med;
            f->rms_out[i] = sky_select_kth (swin, n, n / 2);
          }
        else
          {
            f->back_out[i] = f->back[i];
            f->rms_out[i] = f->rms[i];
          }
      }
  free (bwin);
}

/* Second derivatives of the natural cubic spline through each column of
 * the mesh (unit spacing, scaled as SExtractor's evaluation expects). */
static void
spline_columns (const SkyBackgroundMesh *m, const float *map, float *dmap, float *u)
{
  const int64_t nbx = m->nbx, nby = m->nby;

  for (int64_t x = 0; x < nbx; x++)
    {
      dmap[x] = 0.0f;
      if (nby < 2)
        continue;
      u[0] = 0.0f;
      for (int64_t y = 1; y < nby - 1; y++)
        {
          float t = -1.0f / (dmap[(y - 1) * nbx + x] + 4.0f);
          dmap[y * nbx + x] = t;
          t *= u[y - 1] - 6.0f * (map[(y + 1) * nbx + x] + map[(y - 1) * nbx + x]
                                  - 2.0f * map[y * nbx + x]);
          u[y] = t;
        }
      dmap[(nby - 1) * nbx + x] = 0.0f;
      for (int64_t y = nby - 2; y >= 1; y--)
        dmap[y * nbx + x] = (float) ((dmap[y * nbx + x] * dmap[(y + 1) * nbx + x] + u[y]) / 6.0);
    }
}

int
sky_background_mesh_finish (SkyBackgroundMesh *m, int nthreads)
{
  const int64_t nb = m->nbx * m->nby;
  float *back2 = malloc ((size_t) nb * sizeof (float));
  float *rms2 = malloc ((size_t) nb * sizeof (float));
  float *u = malloc ((size_t) m->nby * sizeof (float));
  Filter f = { m, back2, rms2, m->back, m->rms, 1, 0 };
  int ret = SKY_OK;

  if (!back2 || !rms2 || !u)
    goto no_memory;

  m->nbad = 0;
  for (int64_t i = 0; i < nb; i++)
    m->nbad += is_bad (m->back[i]);
  if ((ret = sky_background_fill_bad (m, back2, rms2)) != SKY_OK)
    goto exit;

  f.ntasks = (nthreads <= 0 ? sky_default_threads () : nthreads) * 4;
  if (f.ntasks > m->nby)
    f.ntasks = (int) m->nby;
  sky_parallel_for (f.ntasks, nthreads, filter_task, &f);
  if (atomic_load (&f.failed))
    goto no_memory;

  /* The global figures are medians of the filtered mesh; where half the
   * boxes or more have no spread, the rms is the median of those that do. */
  memcpy (back2, m->back, (size_t) nb * sizeof (float));
  m->global_back = median_of (back2, nb);
  memcpy (rms2, m->rms, (size_t) nb * sizeof (float));
  m->global_rms = median_of (rms2, nb);
  if (m->global_rms <= 0.0f)
    {
      int64_t i = nb - 1;
      qsort (rms2, (size_t) nb, sizeof *rms2, compare_float);
      while (i >= 0 && rms2[i] > 0.0f)
        i--;
      m->global_rms = i >= 0 && i < nb - 1 ? median_of (rms2 + i + 1, nb - 1 - i) : 1.0f;
    }

  spline_columns (m, m->back, m->dback, u);
  spline_columns (m, m->rms, m->drms, u);
  goto exit;

no_memory:
  ret = sky_fail (SKY_ERR_MEMORY, "no memory to filter a background mesh of %lld boxes",
                  (long long) nb);
exit:
  free (back2);
  free (rms2);
  free (u);
  return ret;
}

typedef struct {
  const SkyImage *img;
  SkyBackgroundMesh *mesh;
} MeshJob;

static void
box_row_task (void *ctx, int task)
{
  MeshJob *job = ctx;
  sky_cpu_background_box_row (job->mesh, task,
                              job->img->pixels + (int64_t) task * job->mesh->box * job->img->nx);
}

int
sky_cpu_background_mesh (const SkyImage *img, const SkyParams *params, int nthreads,
                         SkyBackgroundMesh *mesh)
{
  MeshJob job = { img, mesh };
  int ret;

  if ((ret = sky_background_mesh_init (mesh, img->nx, img->ny, params)) != SKY_OK)
    return ret;
  if (mesh->nby > 0x7fffffff)
    {
      sky_background_mesh_clear (mesh);
      return sky_fail (SKY_ERR_SIZE, "too many rows of background boxes (%lld)",
                       (long long) mesh->nby);
    }
  sky_parallel_for ((int) mesh->nby, nthreads, box_row_task, &job);
  if ((ret = sky_background_mesh_finish (mesh, nthreads)) != SKY_OK)
    sky_background_mesh_clear (mesh);
  return ret;
}
