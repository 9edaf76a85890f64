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
 * Islands are independent, so they are deblended in parallel; a tiled run
 * only has to deblend each whole island once. Afterwards the labels are
 * renumbered in raster order of each source's first pixel, the order the
 * rest of the pipeline and its tests rely on. */
#include "sky-cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const float *snr;
  int64_t nx, ny;
  int connectivity;
  int nthresh;
  double mincont, flood;
  double prominence;       /* a part's peak rises this much above its level */
  int64_t min_area;
  int64_t n;               /* islands */
  const int64_t *start;    /* island k's pixels: pixels[start[k - 1] .. start[k]) */
  const int64_t *pixels;   /* image indices, raster order within each island */
  const int32_t *box;      /* per island: xmin, xmax, ymin, ymax */
  int32_t *sub;            /* per island pixel: 1-based source within the island */
  int32_t *nsub;           /* per island: sources it split into */
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
  int nn = is->d->connectivity == 8 ? 8 : 4, count = 0;

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
          if (flux > is->d->mincont * is->total && used - comp_start[ncomp] >= is->d->min_area
              && top - t >= is->d->prominence)
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

/* A max-heap of island pixels keyed on their value. */
static void
heap_push (int32_t *heap, int64_t *n, const float *val, int32_t j)
{
  int64_t i = (*n)++;
  while (i > 0 && val[heap[(i - 1) / 2]] < val[j])
    {
      heap[i] = heap[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  heap[i] = j;
}

static int32_t
heap_pop (int32_t *heap, int64_t *n, const float *val)
{
  int32_t top = heap[0], last = heap[--(*n)];
  int64_t i = 0;

  for (;;)
    {
      int64_t c = 2 * i + 1;
      if (c >= *n)
        break;
      if (c + 1 < *n && val[heap[c + 1]] > val[heap[c]])
        c++;
      if (!(val[heap[c]] > val[last]))
        break;
      heap[i] = heap[c];
      i = c;
    }
  heap[i] = last;
  return top;
}

/* Gives every island pixel the core it drains to. */
static void
watershed (Island *is)
{
  int64_t n = 0;
  int32_t nb[8];

  for (int32_t j = 0; j < is->npix; j++)
    if (is->owner[j] != 0)
      heap_push (is->queue, &n, is->val, j);
  while (n > 0)
    {
      int32_t p = heap_pop (is->queue, &n, is->val);
      int m = neighbours (is, p, nb);
      for (int q = 0; q < m; q++)
        if (is->owner[nb[q]] == 0)
          {
            is->owner[nb[q]] = is->owner[p];
            heap_push (is->queue, &n, is->val, nb[q]);
          }
    }
}

static void
island_task (void *ctx, int task)
{
  Deblend *d = ctx;
  int64_t k = task + 1, first = d->start[k - 1];
  const int32_t *box = d->box + 4 * (k - 1);
  Island is = { 0 };
  double peak = -INFINITY, *levels = NULL;
  int32_t *set = NULL;

  is.npix = d->start[k] - first;
  d->nsub[k - 1] = 1;
  if (is.npix < 2 || d->nthresh < 2 || is.npix > INT32_MAX)
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
  levels = malloc ((size_t) d->nthresh * sizeof *levels);
  if (!is.at || !is.where || !is.val || !is.owner || !is.mark || !is.seen || !is.queue || !set
      || !levels)
    {
      atomic_store (&d->failed, 1);
      goto exit;
    }
  for (int64_t b = 0; b < is.w * is.h; b++)
    is.at[b] = -1;
  for (int32_t j = 0; j < is.npix; j++)
    {
      int64_t i = d->pixels[first + j];
      int64_t b = (i / d->nx - box[2]) * is.w + (i % d->nx - box[0]);
      is.at[b] = j;
      is.where[j] = (int32_t) b;
      is.val[j] = d->snr[i];
      is.total += d->snr[i];
      peak = d->snr[i] > peak ? d->snr[i] : peak;
      set[j] = j;
    }
  if (!(peak > d->flood))
    goto exit;
  for (int l = 1; l < d->nthresh; l++)
    levels[l - 1] = d->flood * pow (peak / d->flood, (double) l / d->nthresh);
  is.levels = levels;
  is.nlevels = d->nthresh - 1;
  if (find_cores (&is, set, is.npix, 0) != 0)
    {
      atomic_store (&d->failed, 1);
      goto exit;
    }
  if (is.ncores > 1)
    {
      watershed (&is);
      for (int32_t j = 0; j < is.npix; j++)
        d->sub[first + j] = is.owner[j];
      d->nsub[k - 1] = is.ncores;
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
  free (levels);
}

int
sky_cpu_deblend (const float *snr, int64_t nx, int64_t ny, const SkyParams *params,
                 int32_t *labels, int64_t *nlabels, int64_t *nsplit, uint8_t **deblended)
{
  Deblend d = { 0 };
  int64_t n = *nlabels, npixels = nx * ny, total = 0, nout = 0;
  int64_t *start = NULL, *pixels = NULL, *fill = NULL, *base = NULL;
  int32_t *box = NULL, *sub = NULL, *nsub = NULL, *renumber = NULL;
  uint8_t *flag = NULL;
  int ret = SKY_OK;

  *nsplit = 0;
  *deblended = NULL;
  if (n == 0)
    return SKY_OK;
  start = calloc ((size_t) (n + 1), sizeof *start);
  fill = malloc ((size_t) (n + 1) * sizeof *fill);
  box = malloc ((size_t) (4 * n) * sizeof *box);
  nsub = malloc ((size_t) n * sizeof *nsub);
  if (!start || !fill || !box || !nsub)
    goto oom;
  for (int64_t k = 0; k < n; k++)
    {
      box[4 * k] = box[4 * k + 2] = INT32_MAX;
      box[4 * k + 1] = box[4 * k + 3] = -1;
    }
  for (int64_t i = 0; i < npixels; i++)
    {
      int32_t l = labels[i];
      int32_t x = (int32_t) (i % nx), y = (int32_t) (i / nx);
      int32_t *b;
      if (l == 0)
        continue;
      start[l]++;
      b = box + 4 * (l - 1);
      b[0] = x < b[0] ? x : b[0];
      b[1] = x > b[1] ? x : b[1];
      b[2] = y < b[2] ? y : b[2];
      b[3] = y > b[3] ? y : b[3];
    }
  for (int64_t k = 1; k <= n; k++)
    start[k] += start[k - 1];
  total = start[n];
  pixels = malloc ((size_t) (total > 0 ? total : 1) * sizeof *pixels);
  sub = calloc ((size_t) (total > 0 ? total : 1), sizeof *sub);
  if (!pixels || !sub)
    goto oom;
  memcpy (fill, start, (size_t) (n + 1) * sizeof *fill);
  for (int64_t i = 0; i < npixels; i++)
    if (labels[i] != 0)
      pixels[fill[labels[i] - 1]++] = i;

  d.snr = snr;
  d.nx = nx;
  d.ny = ny;
  d.connectivity = params->connectivity;
  d.nthresh = params->deblend_nthresh;
  d.mincont = params->deblend_mincont;
  d.flood = params->flood_sigma;
  d.prominence = params->deblend_sigma;
  d.min_area = params->min_area;
  d.n = n;
  d.start = start;
  d.pixels = pixels;
  d.box = box;
  d.sub = sub;
  d.nsub = nsub;
  atomic_init (&d.failed, 0);
  sky_parallel_for ((int) n, params->nthreads, island_task, &d);
  if (atomic_load (&d.failed))
    goto oom;

  /* Provisional numbers: island k's sources are base[k] + 1 .. */
  base = malloc ((size_t) n * sizeof *base);
  if (base == NULL)
    goto oom;
  for (int64_t k = 0; k < n; k++)
    {
      base[k] = nout;
      nout += nsub[k];
      if (nsub[k] > 1)
        (*nsplit)++;
    }
  flag = calloc ((size_t) nout + 1, 1);
  if (flag == NULL)
    goto oom;
  if (*nsplit > 0)
    {
      if (nout > INT32_MAX)
        {
          ret = sky_fail (SKY_ERR_SIZE, "deblending made %lld sources, more than labels hold",
                          (long long) nout);
          goto exit;
        }
      for (int64_t k = 0; k < n; k++)
        for (int64_t p = start[k]; p < start[k + 1]; p++)
          labels[pixels[p]] = (int32_t) (base[k] + (nsub[k] > 1 ? sub[p] : 1));
      /* Raster order of first pixels, as the labelling numbers them. */
      renumber = calloc ((size_t) nout + 1, sizeof *renumber);
      if (renumber == NULL)
        goto oom;
      int32_t next = 0;
      for (int64_t i = 0; i < npixels; i++)
        {
          int32_t l = labels[i];
          if (l == 0)
            continue;
          if (renumber[l] == 0)
            renumber[l] = ++next;
          labels[i] = renumber[l];
        }
      for (int64_t k = 0; k < n; k++)
        if (nsub[k] > 1)
          for (int64_t s = 1; s <= nsub[k]; s++)
            flag[renumber[base[k] + s]] = 1;
    }
  *nlabels = nout;
  *deblended = flag;
  flag = NULL;
  goto exit;

oom:
  ret = sky_fail (SKY_ERR_MEMORY, "no memory to deblend %lld islands", (long long) n);
exit:
  free (start);
  free (fill);
  free (box);
  free (nsub);
  free (pixels);
  free (sub);
  free (base);
  free (renumber);
  free (flag);
  return ret;
}
