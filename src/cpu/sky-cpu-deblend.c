/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Multi-threshold deblending, in the manner SExtractor describes it.
 *
 * Each island is cut at nthresh levels spaced exponentially between the
 * flood level and its peak (in units of the detection rms). Going up the
 * levels, an island splits where at least two of its parts above a level
 * each hold more than mincont of the whole island's flux and at least
 * min_area pixels, and rises at least deblend_sigma (in rms) above that
 * level: noise on extended emission makes parts with a share of the flux
 * but not that height, a source on it makes both; each such part is then deblended the same way from the
 * next level up. The parts that split no further are the cores of the
 * island's sources; the island's other pixels go to the core they drain
 * to, visiting pixels from the brightest down (a watershed from the cores).
 *
 * Islands are independent, each read from its own box, so they are
 * deblended in parallel; a tiled run only has to deblend each whole island
 * once. Afterwards the labels are renumbered in raster order of each
 * source's first pixel, the order the rest of the pipeline and its tests
 * rely on. */
#include "sky-cpu.h"
#include "sky-cpu-renumber.h"
#include "sky-deblend-common.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* What a split island leaves for the renumbering: its pixels (image
 * indices, raster order) and the part each went to (1-based). */
typedef struct {
  int64_t npix;
  int64_t *pixels;
  int32_t *part;
  int32_t *label;   /* part -> final label */
} Split;

typedef struct {
  const SkySnrSource *src;
  int64_t nx, ny;
  int32_t *labels;
  SkyDeblendParams par;
  const SkyIslands *islands;
  int32_t *nsub;           /* per island (0-based): sources it split into */
  Split *split;            /* per island (0-based) */
  atomic_int failed;
} Deblend;

/* One island's working set, in its bounding box. */
typedef struct {
  int64_t w, h, npix;
  int32_t *at;      /* box pixel -> island pixel index, -1 outside */
  int32_t *where;   /* island pixel -> box pixel */
  float *val;       /* island pixel -> detection value */
  int32_t *owner;   /* island pixel -> core (1-based), 0 unassigned */
  int32_t *mark, *seen;
  int32_t stamp;
  int32_t *queue;
  int32_t ncores;
  double total;
  const double *levels;
  int nlevels;
  const Deblend *d;
} Island;

static const int dx8[8] = { 1, -1, 0, 0, 1, 1, -1, -1 };
static const int dy8[8] = { 0, 0, 1, -1, 1, -1, 1, -1 };

/* The island neighbours of island pixel j into out; returns how many. */
static int
neighbours (const Island *is, int32_t j, int32_t *out)
{
  int64_t b = is->where[j], x = b % is->w, y = b / is->w;
  int nn = is->d->par.connectivity == 8 ? 8 : 4, count = 0;

  for (int k = 0; k < nn; k++)
    {
      int64_t xx = x + dx8[k], yy = y + dy8[k];
      if (xx < 0 || yy < 0 || xx >= is->w || yy >= is->h)
        continue;
      int32_t q = is->at[yy * is->w + xx];
      if (q >= 0)
        out[count++] = q;
    }
  return count;
}

/* Finds the cores in set[0..count) from level index lev up; writes core
 * numbers into owner. Returns 0, or -1 when out of memory. */
static int
find_cores (Island *is, int32_t *set, int64_t count, int lev)
{
  int32_t *comp = malloc ((size_t) count * sizeof *comp);
  int64_t *comp_start = malloc ((size_t) (count + 1) * sizeof *comp_start);
  int32_t nb[8];
  int ret = 0;

  if (comp == NULL || comp_start == NULL)
    {
      ret = -1;
      goto exit;
    }
  for (; lev < is->nlevels; lev++)
    {
      double t = is->levels[lev];
      int32_t s = ++is->stamp;
      int64_t ncomp = 0, used = 0, nsig = 0;

      for (int64_t k = 0; k < count; k++)
        if (is->val[set[k]] > t)
          is->mark[set[k]] = s;
      /* Breadth-first components of the marked pixels, each kept
       * contiguous in comp. */
      for (int64_t k = 0; k < count; k++)
        {
          int32_t j = set[k];
          double flux = 0;
          float top = -INFINITY;
          int64_t head;

          if (is->mark[j] != s || is->seen[j] == s)
            continue;
          comp_start[ncomp] = used;
          head = used;
          is->seen[j] = s;
          comp[used++] = j;
          while (head < used)
            {
              int32_t p = comp[head++];
              int m = neighbours (is, p, nb);
              flux += is->val[p];
              top = is->val[p] > top ? is->val[p] : top;
              for (int q = 0; q < m; q++)
                if (is->mark[nb[q]] == s && is->seen[nb[q]] != s)
                  {
                    is->seen[nb[q]] = s;
                    comp[used++] = nb[q];
                  }
            }
          if (flux > is->d->par.mincont * is->total
              && used - comp_start[ncomp] >= is->d->par.min_area
              && top - t >= is->d->par.prominence)
            {
              /* Significant: keep it in place; others are overwritten. */
              nsig++;
              ncomp++;
            }
          else
            used = comp_start[ncomp];
        }
      comp_start[ncomp] = used;
      if (nsig == 0)
        break;
      if (nsig == 1)
        {
          /* The other parts only shrink at higher levels: only the one
           * significant part can still split. */
          memmove (set, comp, (size_t) used * sizeof *set);
          count = used;
          continue;
        }
      for (int64_t c = 0; c < ncomp && ret == 0; c++)
        ret = find_cores (is, comp + comp_start[c], comp_start[c + 1] - comp_start[c], lev + 1);
      goto exit;
    }
  /* No further split: this set is one core. */
  is->ncores++;
  for (int64_t k = 0; k < count; k++)
    is->owner[set[k]] = is->ncores;

exit:
  free (comp);
  free (comp_start);
  return ret;
}

/* Gives every island pixel the core it drains to. */
static void
watershed (Island *is)
{
  int64_t n = 0;
  int32_t nb[8];

  for (int32_t j = 0; j < is->npix; j++)
    if (is->owner[j] != 0)
      sky_value_heap_push (is->queue, &n, is->val, j);
  while (n > 0)
    {
      int32_t p = sky_value_heap_pop (is->queue, &n, is->val);
      int m = neighbours (is, p, nb);
      for (int q = 0; q < m; q++)
        if (is->owner[nb[q]] == 0)
          {
            is->owner[nb[q]] = is->owner[p];
            sky_value_heap_push (is->queue, &n, is->val, nb[q]);
          }
    }
}

/* Pixels no lower than any of their island neighbours and at least top:
 * a part that splits off has its own such pixel (its brightest), so an
 * island with fewer than two above flood + prominence cannot split. Plateau
 * pixels all count: the count can only be too high, never too low. */
static int64_t
local_maxima (const Island *is, double top)
{
  int32_t nb[8];
  int64_t count = 0;

  for (int32_t j = 0; j < is->npix && count < 2; j++)
    {
      int m, highest = 1;
      if (!(is->val[j] >= top))
        continue;
      m = neighbours (is, j, nb);
      for (int q = 0; q < m && highest; q++)
        highest = is->val[nb[q]] <= is->val[j];
      count += highest;
    }
  return count;
}

static void
island_task (void *ctx, int task)
{
  Deblend *d = ctx;
  int64_t k = task + 1;
  const int32_t *box = d->islands->box + 4 * k;
  Island is = { 0 };
  double peak = d->islands->peak[k], *levels = NULL;
  int32_t *set = NULL;
  int64_t *pixels = NULL;
  float *row = NULL;

  is.npix = d->islands->area[k];
  d->nsub[k - 1] = 1;
  /* A split needs two parts that each rise prominence above a level over
   * the flood level, and min_area pixels each. */
  if (is.npix < 2 * d->par.min_area || is.npix < 2 || d->par.nthresh < 2 || is.npix > INT32_MAX
      || !(peak > d->par.flood + d->par.prominence))
    return;
  is.w = box[1] - box[0] + 1;
  is.h = box[3] - box[2] + 1;
  is.d = d;
  is.at = malloc ((size_t) (is.w * is.h) * sizeof *is.at);
  is.where = malloc ((size_t) is.npix * sizeof *is.where);
  is.val = malloc ((size_t) is.npix * sizeof *is.val);
  is.owner = calloc ((size_t) is.npix, sizeof *is.owner);
  is.mark = calloc ((size_t) is.npix, sizeof *is.mark);
  is.seen = calloc ((size_t) is.npix, sizeof *is.seen);
  is.queue = malloc ((size_t) is.npix * sizeof *is.queue);
  set = malloc ((size_t) is.npix * sizeof *set);
  pixels = malloc ((size_t) is.npix * sizeof *pixels);
  levels = malloc ((size_t) d->par.nthresh * sizeof *levels);
  row = malloc ((size_t) (3 * is.w) * sizeof *row);
  if (!is.at || !is.where || !is.val || !is.owner || !is.mark || !is.seen || !is.queue || !set
      || !pixels || !levels || !row)
    {
      atomic_store (&d->failed, 1);
      goto exit;
    }
  /* The island's pixels from its box, in raster order. */
  int32_t j = 0;
  for (int64_t y = box[2]; y <= box[3]; y++)
    {
      sky_snr_row (d->src, y, box[0], box[1] + 1, row + is.w, row);
      for (int64_t x = box[0]; x <= box[1]; x++)
        {
          int64_t i = y * d->nx + x, b = (y - box[2]) * is.w + (x - box[0]);
          float v = row[x - box[0]];
          if (d->labels[i] != (int32_t) k || j >= is.npix)
            {
              is.at[b] = -1;
              continue;
            }
          is.at[b] = j;
          is.where[j] = (int32_t) b;
          is.val[j] = v;
          is.total += v;
          pixels[j] = i;
          set[j] = j;
          j++;
        }
    }
  /* Every level lies above the flood level, so a part rises above
   * flood + prominence (by far more than rounding). */
  if (local_maxima (&is, d->par.flood + d->par.prominence) < 2)
    goto exit;
  for (int l = 1; l < d->par.nthresh; l++)
    levels[l - 1] = d->par.flood * pow (peak / d->par.flood, (double) l / d->par.nthresh);
  is.levels = levels;
  is.nlevels = d->par.nthresh - 1;
  if (find_cores (&is, set, is.npix, 0) != 0)
    {
      atomic_store (&d->failed, 1);
      goto exit;
    }
  if (is.ncores > 1)
    {
      watershed (&is);
      d->nsub[k - 1] = is.ncores;
      d->split[k - 1].npix = is.npix;
      d->split[k - 1].pixels = pixels;
      d->split[k - 1].part = is.owner;
      pixels = NULL;
      is.owner = NULL;
    }

exit:
  free (is.at);
  free (is.where);
  free (is.val);
  free (is.owner);
  free (is.mark);
  free (is.seen);
  free (is.queue);
  free (set);
  free (pixels);
  free (levels);
  free (row);
}

/* A final source: the raster index of its first pixel, and which island
 * and part it is. */
typedef struct {
  int64_t first;
  int64_t island;   /* 1-based */
  int32_t part;     /* 1-based; 0 for an island that did not split */
} Source;

static int
compare_sources (const void *a, const void *b)
{
  const Source *x = a, *y = b;
  return (x->first > y->first) - (x->first < y->first);
}

int
sky_cpu_deblend (const float *snr, int64_t nx, int64_t ny, const SkyParams *params,
                 const SkyIslands *islands, int32_t *labels, int64_t *nlabels, int64_t *nsplit,
                 uint8_t **deblended)
{
  SkySnrSource src = { nx, snr, NULL, NULL };

  return sky_cpu_deblend_source (&src, nx, ny, params, islands, labels, nlabels, nsplit,
                                 deblended);
}

int
sky_cpu_deblend_source (const SkySnrSource *src, int64_t nx, int64_t ny,
                        const SkyParams *params, const SkyIslands *islands, int32_t *labels,
                        int64_t *nlabels, int64_t *nsplit, uint8_t **deblended)
{
  Deblend d = { 0 };
  int64_t n = islands->n, nout = 0;
  int32_t *renumber = NULL;
  uint8_t *flag = NULL;
  Source *sources = NULL;
  int ret = SKY_OK;

  *nsplit = 0;
  *deblended = NULL;
  *nlabels = n;
  d.nsub = malloc ((size_t) (n > 0 ? n : 1) * sizeof *d.nsub);
  d.split = calloc ((size_t) (n > 0 ? n : 1), sizeof *d.split);
  if (d.nsub == NULL || d.split == NULL)
    goto oom;
  d.src = src;
  d.nx = nx;
  d.ny = ny;
  d.labels = labels;
  d.par = sky_deblend_params (params);
  d.islands = islands;
  atomic_init (&d.failed, 0);
  if (n > INT32_MAX)
    {
      ret = sky_fail (SKY_ERR_SIZE, "%lld islands are more than labels hold", (long long) n);
      goto exit;
    }
  sky_parallel_for ((int) n, params->nthreads, island_task, &d);
  if (atomic_load (&d.failed))
    goto oom;

  for (int64_t k = 0; k < n; k++)
    {
      nout += d.nsub[k];
      *nsplit += d.nsub[k] > 1;
    }
  if (nout > INT32_MAX)
    {
      ret = sky_fail (SKY_ERR_SIZE, "deblending made %lld sources, more than labels hold",
                      (long long) nout);
      goto exit;
    }
  flag = calloc ((size_t) nout + 1, 1);
  if (flag == NULL)
    goto oom;
  if (*nsplit > 0)
    {
      /* Number the sources in raster order of their first pixels: the
       * islands' first pixels are known, a split island's parts' first
       * pixels come from its pixel list (raster order). */
      int64_t m = 0;
      sources = malloc ((size_t) nout * sizeof *sources);
      renumber = calloc ((size_t) n + 1, sizeof *renumber);
      if (sources == NULL || renumber == NULL)
        goto oom;
      for (int64_t k = 1; k <= n; k++)
        {
          const Split *sp = &d.split[k - 1];
          if (d.nsub[k - 1] == 1)
            {
              sources[m++] = (Source) { islands->first[k], k, 0 };
              continue;
            }
          for (int32_t part = 1; part <= d.nsub[k - 1]; part++)
            sources[m + part - 1] = (Source) { INT64_MAX, k, part };
          for (int64_t p = 0; p < sp->npix; p++)
            {
              Source *s = &sources[m + sp->part[p] - 1];
              s->first = sp->pixels[p] < s->first ? sp->pixels[p] : s->first;
            }
          m += d.nsub[k - 1];
        }
      qsort (sources, (size_t) nout, sizeof *sources, compare_sources);
      for (int64_t s = 0; s < nout; s++)
        if (sources[s].part == 0)
          renumber[sources[s].island] = (int32_t) (s + 1);
      sky_cpu_renumber (labels, NULL, nx, ny, renumber, params->nthreads);
      /* The split islands' pixels (renumbered to 0 above) get their parts'. */
      for (int64_t k = 0; k < n; k++)
        if (d.nsub[k] > 1
            && (d.split[k].label = malloc ((size_t) (d.nsub[k] + 1) * sizeof (int32_t))) == NULL)
          goto oom;
      for (int64_t s = 0; s < nout; s++)
        if (sources[s].part != 0)
          {
            d.split[sources[s].island - 1].label[sources[s].part] = (int32_t) (s + 1);
            flag[s + 1] = 1;
          }
      for (int64_t k = 0; k < n; k++)
        for (int64_t p = 0; p < d.split[k].npix; p++)
          labels[d.split[k].pixels[p]] = d.split[k].label[d.split[k].part[p]];
    }
  *nlabels = nout;
  *deblended = flag;
  flag = NULL;
  goto exit;

oom:
  ret = sky_fail (SKY_ERR_MEMORY, "no memory to deblend %lld islands", (long long) n);
exit:
  for (int64_t k = 0; d.split != NULL && k < n; k++)
    {
      free (d.split[k].pixels);
      free (d.split[k].part);
      free (d.split[k].label);
    }
  free (d.split);
  free (d.nsub);
  free (renumber);
  free (sources);
  free (flag);
  return ret;
}
