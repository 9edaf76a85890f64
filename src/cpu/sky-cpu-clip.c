/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kappa-sigma clipping without a sort per pass, and without a sort at all.
 *
 * Every clipping pass keeps the pixels strictly inside an interval, and each
 * interval lies inside the last, so the survivors are always one contiguous
 * run of the pixels in sorted order: ranks [first, last). One pass over the
 * image counts the pixels of each bucket (the top bits of an
 * order-preserving key) and sums them, which gives every rank's bucket and
 * the moments of any run of whole buckets. A clipping pass needs the values
 * themselves only in the bucket of its median and in the two buckets of its
 * bounds. Those are fetched from the image on demand, a window of buckets
 * at a time so that the next passes' buckets usually come along, and sorted
 * by their low key bits. In practice that is one more read of the image. */
#include "sky-cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Buckets are the top BUCKET_BITS of the key: sign, exponent and the top
 * three mantissa bits, an eighth of an octave. */
#define BUCKET_BITS 12
#define BUCKET_SHIFT (32 - BUCKET_BITS)
#define NBUCKETS (1 << BUCKET_BITS)
/* Counting splits each task's pixels over LANES interleaved counters, so
 * that runs of pixels in one bucket do not wait on each other's updates. */
#define LANES 4
/* Buckets fetched on each side of one that is needed: the median moves by
 * a bucket or two between passes, a bound by a few. A fetch pass costs a
 * read of the image and a branch per pixel that mispredicts about as often
 * as a pixel is wanted, so the windows stay narrow. */
#define MEDIAN_WINDOW 4
#define BOUND_WINDOW 8
/* Pixels sampled for the shift that keeps the sums precise. */
#define SAMPLE 1023

typedef struct {
  int64_t count;
  double sum, sum_sq; /* of (x - shift) */
} Moments;

typedef struct {
  const float *pixels;  /* the image, or NULL: read from source */
  const SkyPixelSource *source;
  atomic_int read_status; /* the first failed read's status, else SKY_OK */
  int64_t npixels;
  int ntasks;
  double shift;         /* near the median, so sums of squares keep precision */
  Moments *task_moments; /* [task][lane][bucket] */
  int64_t *task_counts; /* [task][bucket], then a fetch's write cursors */
  Moments *moments;     /* [bucket], all tasks */
  int64_t *rank;        /* [bucket + 1]: rank of each bucket's first value */
  float **values;       /* [bucket]: its values once fetched, else NULL */
  uint8_t *sorted;      /* [bucket] */
  uint8_t *wanted;      /* [bucket]: to be fetched by the next pass */
  float **chunks;       /* storage of each fetch, freed at the end */
  int nchunks;
  /* Read from a source, a bucket's values are never fetched (that would
   * hold a share of the image): one read counts its pixels by their low
   * key bits instead, and one key is one value, so the bucket becomes its
   * distinct values in order, each with its end rank inside the bucket. */
  float **dvalue;       /* [bucket]: distinct values ascending, NULL until counted */
  int64_t **dend;       /* [bucket]: end (exclusive) of each within the bucket */
  int64_t *ndistinct;   /* [bucket] */
  _Atomic uint64_t **low; /* [bucket]: counts by low key bits while counting */
} Buckets;

/* Buckets counted around a needed one from a source: each costs 8 MiB
 * while its read lasts. */
#define SOURCE_WINDOW 1
#define LOW_KEYS (1 << BUCKET_SHIFT)

static inline int
bucket_of_value (double v)
{
  return (int) (sky_float_key ((float) v) >> BUCKET_SHIFT);
}

static void
task_range (const Buckets *b, int task, int64_t *start, int64_t *end)
{
  *start = b->npixels * task / b->ntasks;
  *end = b->npixels * (task + 1) / b->ntasks;
}

/* Pixels [start, end) of a task, which pixels holds from pixel first on. */
static void
count_range (Buckets *b, Moments *m, const float *pixels, int64_t first, int64_t start,
             int64_t end)
{
  const double shift = b->shift;

  pixels -= first;
  for (int64_t i = start; i < end; i++)
    {
      float v = pixels[i];
      if (!isnan (v))
        {
          Moments *k = &m[(i & (LANES - 1)) * NBUCKETS + (sky_float_key (v) >> BUCKET_SHIFT)];
          double d = (double) v - shift;
          k->count++;
          k->sum += d;
          k->sum_sq += d * d;
        }
    }
}

static void
fetch_range (Buckets *b, int64_t *cursor, const float *pixels, int64_t first, int64_t start,
             int64_t end)
{
  const uint8_t *wanted = b->wanted;

  pixels -= first;
  for (int64_t i = start; i < end; i++)
    {
      float v = pixels[i];
      int k;
      if (isnan (v))
        continue;
      k = (int) (sky_float_key (v) >> BUCKET_SHIFT);
      if (wanted[k])
        b->values[k][cursor[k]++] = v;
    }
}

/* Runs range over a task's pixels: in place, or read from the source a
 * chunk at a time into the task's own buffer, in the same order, so that
 * every sum is the same as over the image in memory. */
static void
task_pixels (Buckets *b, int task,
             void (*range) (Buckets *, void *, const float *, int64_t, int64_t, int64_t),
             void *acc)
{
  int64_t start, end;
  float *buf;

  task_range (b, task, &start, &end);
  if (b->pixels != NULL)
    {
      range (b, acc, b->pixels, 0, start, end);
      return;
    }
  buf = malloc ((size_t) b->source->chunk * sizeof *buf);
  if (buf == NULL)
    {
      int ok = SKY_OK;
      atomic_compare_exchange_strong (&b->read_status, &ok, SKY_ERR_MEMORY);
      return;
    }
  for (int64_t at = start; at < end && atomic_load (&b->read_status) == SKY_OK;
       at += b->source->chunk)
    {
      int64_t n = end - at < b->source->chunk ? end - at : b->source->chunk;
      int ret = b->source->read (b->source->ctx, at, n, 1, buf, NULL);
      if (ret != SKY_OK)
        {
          int ok = SKY_OK;
          atomic_compare_exchange_strong (&b->read_status, &ok, ret);
          break;
        }
      range (b, acc, buf, at, at, at + n);
    }
  free (buf);
}

static void
count_range_any (Buckets *b, void *acc, const float *pixels, int64_t first, int64_t start,
                 int64_t end)
{
  count_range (b, acc, pixels, first, start, end);
}

static void
fetch_range_any (Buckets *b, void *acc, const float *pixels, int64_t first, int64_t start,
                 int64_t end)
{
  fetch_range (b, acc, pixels, first, start, end);
}

static void
count_task (void *ctx, int task)
{
  Buckets *b = ctx;

  task_pixels (b, task, count_range_any, b->task_moments + (size_t) task * LANES * NBUCKETS);
}

static void
fetch_task (void *ctx, int task)
{
  Buckets *b = ctx;

  task_pixels (b, task, fetch_range_any, b->task_counts + (size_t) task * NBUCKETS);
}

static void
refine_range (Buckets *b, void *acc, const float *pixels, int64_t first, int64_t start,
              int64_t end)
{
  (void) acc;
  pixels -= first;
  for (int64_t i = start; i < end; i++)
    {
      float v = pixels[i];
      uint32_t key;
      if (isnan (v))
        continue;
      key = sky_float_key (v);
      if (b->wanted[key >> BUCKET_SHIFT])
        atomic_fetch_add_explicit (&b->low[key >> BUCKET_SHIFT][key & (LOW_KEYS - 1)], 1,
                                   memory_order_relaxed);
    }
}

static void
refine_task (void *ctx, int task)
{
  task_pixels (ctx, task, refine_range, NULL);
}

/* Counts every wanted bucket by its low key bits in one read of the
 * source, and keeps each as its distinct values and their end ranks. */
static int
refine_wanted (Buckets *b)
{
  int ret = SKY_OK;

  for (int k = 0; k < NBUCKETS && ret == SKY_OK; k++)
    if (b->wanted[k] && (b->low[k] = calloc (LOW_KEYS, sizeof **b->low)) == NULL)
      ret = sky_fail (SKY_ERR_MEMORY, "clip: no memory to count a bucket");
  if (ret == SKY_OK)
    {
      sky_parallel_for (b->ntasks, b->ntasks, refine_task, b);
      ret = atomic_load (&b->read_status);
    }
  for (int k = 0; k < NBUCKETS; k++)
    {
      int64_t n = 0, at = 0;
      if (!b->wanted[k])
        continue;
      b->wanted[k] = 0;
      if (ret != SKY_OK || b->low[k] == NULL)
        {
          free (b->low[k]);
          b->low[k] = NULL;
          continue;
        }
      for (int64_t j = 0; j < LOW_KEYS; j++)
        n += atomic_load_explicit (&b->low[k][j], memory_order_relaxed) > 0;
      b->dvalue[k] = malloc ((size_t) (n > 0 ? n : 1) * sizeof **b->dvalue);
      b->dend[k] = malloc ((size_t) (n > 0 ? n : 1) * sizeof **b->dend);
      if (b->dvalue[k] == NULL || b->dend[k] == NULL)
        ret = sky_fail (SKY_ERR_MEMORY, "clip: no memory for a bucket's values");
      else
        {
          int64_t d = 0;
          for (int64_t j = 0; j < LOW_KEYS; j++)
            {
              uint64_t c = atomic_load_explicit (&b->low[k][j], memory_order_relaxed);
              if (c == 0)
                continue;
              at += (int64_t) c;
              b->dvalue[k][d] = sky_key_float (((uint32_t) k << BUCKET_SHIFT) | (uint32_t) j);
              b->dend[k][d] = at;
              d++;
            }
          b->ndistinct[k] = n;
        }
      free (b->low[k]);
      b->low[k] = NULL;
    }
  return ret;
}

/* Index of the first distinct value of bucket k whose end passes offset. */
static int64_t
distinct_at (const Buckets *b, int k, int64_t offset)
{
  int64_t lo = 0, hi = b->ndistinct[k] - 1;

  while (lo < hi)
    {
      int64_t mid = lo + (hi - lo) / 2;
      if (b->dend[k][mid] > offset)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

/* Fetches every wanted bucket from the image in one parallel pass. */
static int
fetch_wanted (Buckets *b)
{
  int64_t total = 0;
  float *chunk, **grown;

  for (int k = 0; k < NBUCKETS; k++)
    if (b->wanted[k])
      total += b->moments[k].count;
  grown = realloc (b->chunks, (size_t) (b->nchunks + 1) * sizeof *grown);
  chunk = malloc ((size_t) (total > 0 ? total : 1) * sizeof *chunk);
  if (grown == NULL || chunk == NULL)
    {
      free (chunk);
      if (grown != NULL)
        b->chunks = grown;
      return sky_fail (SKY_ERR_MEMORY, "clip: no memory for %lld values", (long long) total);
    }
  b->chunks = grown;
  b->chunks[b->nchunks++] = chunk;

  /* Each task writes its share of a bucket after the earlier tasks'. */
  for (int k = 0; k < NBUCKETS; k++)
    {
      int64_t at = 0;
      if (!b->wanted[k])
        continue;
      b->values[k] = chunk;
      chunk += b->moments[k].count;
      for (int t = 0; t < b->ntasks; t++)
        {
          int64_t *c = &b->task_counts[(size_t) t * NBUCKETS + k];
          int64_t n = *c;
          *c = at;
          at += n;
        }
    }
  sky_parallel_for (b->ntasks, b->ntasks, fetch_task, b);
  if (atomic_load (&b->read_status) != SKY_OK)
    return atomic_load (&b->read_status);

  /* Restore the per-task counts for the next fetch. */
  for (int k = 0; k < NBUCKETS; k++)
    if (b->wanted[k])
      {
        int64_t before = 0;
        for (int t = 0; t < b->ntasks; t++)
          {
            int64_t *c = &b->task_counts[(size_t) t * NBUCKETS + k];
            *c -= before;
            before += *c;
          }
        b->wanted[k] = 0;
      }
  return SKY_OK;
}

static void
want_window (Buckets *b, int k, int window)
{
  if (b->pixels == NULL && window > SOURCE_WINDOW)
    window = SOURCE_WINDOW;
  for (int j = k - window; j <= k + window; j++)
    if (j >= 0 && j < NBUCKETS && b->values[j] == NULL && b->moments[j].count > 0
        && (b->dvalue == NULL || b->dvalue[j] == NULL))
      b->wanted[j] = 1;
}

/* Sorts one bucket in place: its values share the top key bits, so 8-bit
 * radix passes over the low BUCKET_SHIFT bits order it completely. */
static int
sort_bucket (float *v, int64_t n)
{
  float *tmp;

  if (n <= 32)
    {
      for (int64_t i = 1; i < n; i++)
        {
          float x = v[i];
          int64_t j = i;
          for (; j > 0 && sky_float_key (v[j - 1]) > sky_float_key (x); j--)
            v[j] = v[j - 1];
          v[j] = x;
        }
      return SKY_OK;
    }
  tmp = malloc ((size_t) n * sizeof *tmp);
  if (tmp == NULL)
    return sky_fail (SKY_ERR_MEMORY, "clip: no memory to sort %lld values", (long long) n);
  for (int shift = 0; shift < BUCKET_SHIFT; shift += 8)
    {
      int64_t count[257] = { 0 };
      for (int64_t i = 0; i < n; i++)
        count[((sky_float_key (v[i]) >> shift) & 0xff) + 1]++;
      for (int d = 0; d < 256; d++)
        count[d + 1] += count[d];
      for (int64_t i = 0; i < n; i++)
        tmp[count[(sky_float_key (v[i]) >> shift) & 0xff]++] = v[i];
      memcpy (v, tmp, (size_t) n * sizeof *v);
    }
  free (tmp);
  return SKY_OK;
}

/* Makes bucket k's values available in ascending order. */
static int
need_bucket (Buckets *b, int k)
{
  int ret;

  if (b->pixels == NULL)
    {
      if (b->dvalue[k] != NULL)
        return SKY_OK;
      want_window (b, k, BOUND_WINDOW);
      return refine_wanted (b);
    }
  if (b->values[k] == NULL)
    {
      want_window (b, k, BOUND_WINDOW);
      if ((ret = fetch_wanted (b)) != SKY_OK)
        return ret;
    }
  if (!b->sorted[k])
    {
      if ((ret = sort_bucket (b->values[k], b->moments[k].count)) != SKY_OK)
        return ret;
      b->sorted[k] = 1;
    }
  return SKY_OK;
}

/* The bucket holding rank r. */
static int
bucket_of_rank (const Buckets *b, int64_t r)
{
  int lo = 0, hi = NBUCKETS - 1;

  while (lo < hi)
    {
      int mid = lo + (hi - lo + 1) / 2;
      if (b->rank[mid] <= r)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

static int
value_at (Buckets *b, int64_t r, double *value)
{
  int k = bucket_of_rank (b, r);
  int ret = need_bucket (b, k);

  if (ret == SKY_OK && b->pixels == NULL)
    *value = b->dvalue[k][distinct_at (b, k, r - b->rank[k])];
  else if (ret == SKY_OK)
    *value = b->values[k][r - b->rank[k]];
  return ret;
}

/* First rank in [first, last) whose value is > bound (inclusive = 0) or
 * >= bound (inclusive = 1); last if none. Buckets below the bound's bucket
 * hold only smaller values and those above only larger ones, so only the
 * bound's own bucket is searched. */
static int
first_beyond (Buckets *b, int64_t first, int64_t last, double bound, int inclusive,
              int64_t *pos)
{
  int k = bucket_of_value (bound), ret;
  int64_t lo, hi;
  const float *v;

  if (k < bucket_of_rank (b, first))
    {
      *pos = first;
      return SKY_OK;
    }
  if (k > bucket_of_rank (b, last - 1))
    {
      *pos = last;
      return SKY_OK;
    }
  if (b->moments[k].count == 0)
    {
      /* Between the run's end buckets: all below are inside, all above out. */
      *pos = b->rank[k];
      return SKY_OK;
    }
  if ((ret = need_bucket (b, k)) != SKY_OK)
    return ret;
  lo = b->rank[k] > first ? b->rank[k] : first;
  hi = b->rank[k + 1] < last ? b->rank[k + 1] : last;
  if (b->pixels == NULL)
    {
      /* The first distinct value beyond the bound starts the answer over
       * the whole bucket; the search over [lo, hi) is that, clamped. */
      int64_t dlo = 0, dhi = b->ndistinct[k], at;
      while (dlo < dhi)
        {
          int64_t mid = dlo + (dhi - dlo) / 2;
          double x = b->dvalue[k][mid];
          if (inclusive ? x >= bound : x > bound)
            dhi = mid;
          else
            dlo = mid + 1;
        }
      at = b->rank[k] + (dlo > 0 ? b->dend[k][dlo - 1] : 0);
      *pos = at < lo ? lo : at > hi ? hi : at;
      return SKY_OK;
    }
  v = b->values[k] - b->rank[k]; /* indexed by rank */
  while (lo < hi)
    {
      int64_t mid = lo + (hi - lo) / 2;
      double x = v[mid];
      if (inclusive ? x >= bound : x > bound)
        hi = mid;
      else
        lo = mid + 1;
    }
  *pos = lo;
  return SKY_OK;
}

/* Adds the values of ranks [start, end), all in bucket k, to the sums. */
static int
add_ranks (Buckets *b, int k, int64_t start, int64_t end, double *s, double *s2)
{
  int ret;
  const float *v;

  if (start == b->rank[k] && end == b->rank[k + 1])
    {
      *s += b->moments[k].sum;
      *s2 += b->moments[k].sum_sq;
      return SKY_OK;
    }
  if ((ret = need_bucket (b, k)) != SKY_OK)
    return ret;
  if (b->pixels == NULL)
    {
      /* Value by value in rank order, as over the sorted values. */
      int64_t r = start;
      for (int64_t j = distinct_at (b, k, start - b->rank[k]); r < end; j++)
        {
          double d = (double) b->dvalue[k][j] - b->shift;
          int64_t stop = b->rank[k] + b->dend[k][j] < end ? b->rank[k] + b->dend[k][j] : end;
          for (; r < stop; r++)
            {
              *s += d;
              *s2 += d * d;
            }
        }
      return SKY_OK;
    }
  v = b->values[k] - b->rank[k];
  for (int64_t r = start; r < end; r++)
    {
      double d = (double) v[r] - b->shift;
      *s += d;
      *s2 += d * d;
    }
  return SKY_OK;
}

/* Mean and population sigma of the ranks [first, last). */
static int
run_moments (Buckets *b, int64_t first, int64_t last, double *mean, double *sigma)
{
  int kf = bucket_of_rank (b, first), kl = bucket_of_rank (b, last - 1), ret;
  double s = 0, s2 = 0, n = (double) (last - first), var;

  if (kf == kl)
    ret = add_ranks (b, kf, first, last, &s, &s2);
  else
    {
      ret = add_ranks (b, kf, first, b->rank[kf + 1], &s, &s2);
      for (int k = kf + 1; k < kl; k++)
        {
          s += b->moments[k].sum;
          s2 += b->moments[k].sum_sq;
        }
      if (ret == SKY_OK)
        ret = add_ranks (b, kl, b->rank[kl], last, &s, &s2);
    }
  var = s2 / n - (s / n) * (s / n);
  *mean = b->shift + s / n;
  *sigma = var > 0 ? sqrt (var) : 0.0;
  return ret;
}

static int
run_median (Buckets *b, int64_t first, int64_t last, double *median)
{
  int64_t n = last - first, mid = first + (n - 1) / 2;
  double lower, upper;
  int ret = value_at (b, mid, &lower);

  if (ret == SKY_OK && n % 2 == 0)
    {
      ret = value_at (b, mid + 1, &upper);
      lower = 0.5 * (lower + upper);
    }
  *median = lower;
  return ret;
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* The median of an even sample of the image: any value near the bulk of
 * the pixels keeps the sums of squares about it precise. */
static double
sample_shift (Buckets *b)
{
  float sample[SAMPLE];
  int m = 0;

  for (int i = 0; i < SAMPLE; i++)
    {
      int64_t at = (int64_t) ((double) b->npixels * i / SAMPLE);
      float v;
      if (b->pixels != NULL)
        v = b->pixels[at];
      else if (b->source->read (b->source->ctx, at, 1, 1, &v, NULL) != SKY_OK)
        {
          int ok = SKY_OK;
          atomic_compare_exchange_strong (&b->read_status, &ok, SKY_ERR_IO);
          return 0.0;
        }
      if (!isnan (v))
        sample[m++] = v;
    }
  if (m == 0)
    return 0.0;
  qsort (sample, (size_t) m, sizeof *sample, compare_floats);
  return sample[m / 2];
}

/* Either img (in memory) or src (read on demand) gives the pixels. */
static int
count_buckets (Buckets *b, const SkyImage *img, const SkyPixelSource *src, int nthreads)
{
  size_t per_task = (size_t) LANES * NBUCKETS;

  b->pixels = img != NULL ? img->pixels : NULL;
  b->source = src;
  atomic_init (&b->read_status, SKY_OK);
  b->npixels = img != NULL ? img->nx * img->ny : src->nx * src->ny;
  b->ntasks = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (b->ntasks > 64)
    b->ntasks = 64;
  if (b->npixels < 65536)
    b->ntasks = 1;
  b->shift = sample_shift (b);
  if (atomic_load (&b->read_status) != SKY_OK)
    return atomic_load (&b->read_status);

  b->task_moments = calloc ((size_t) b->ntasks * per_task, sizeof *b->task_moments);
  b->task_counts = calloc ((size_t) b->ntasks * NBUCKETS, sizeof *b->task_counts);
  b->moments = calloc (NBUCKETS, sizeof *b->moments);
  b->rank = calloc (NBUCKETS + 1, sizeof *b->rank);
  b->values = calloc (NBUCKETS, sizeof *b->values);
  b->sorted = calloc (NBUCKETS, 1);
  if (src != NULL)
    {
      b->dvalue = calloc (NBUCKETS, sizeof *b->dvalue);
      b->dend = calloc (NBUCKETS, sizeof *b->dend);
      b->ndistinct = calloc (NBUCKETS, sizeof *b->ndistinct);
      b->low = calloc (NBUCKETS, sizeof *b->low);
      if (!b->dvalue || !b->dend || !b->ndistinct || !b->low)
        return sky_fail (SKY_ERR_MEMORY, "clip: out of memory");
    }
  b->wanted = calloc (NBUCKETS, 1);
  if (!b->task_moments || !b->task_counts || !b->moments || !b->rank || !b->values
      || !b->sorted || !b->wanted)
    return sky_fail (SKY_ERR_MEMORY, "clip: out of memory");

  sky_parallel_for (b->ntasks, b->ntasks, count_task, b);
  if (atomic_load (&b->read_status) != SKY_OK)
    return atomic_load (&b->read_status);

  for (int t = 0; t < b->ntasks; t++)
    for (int lane = 0; lane < LANES; lane++)
      for (int k = 0; k < NBUCKETS; k++)
        {
          const Moments *m = &b->task_moments[(size_t) t * per_task + lane * NBUCKETS + k];
          b->task_counts[(size_t) t * NBUCKETS + k] += m->count;
          b->moments[k].count += m->count;
          b->moments[k].sum += m->sum;
          b->moments[k].sum_sq += m->sum_sq;
        }
  for (int k = 0; k < NBUCKETS; k++)
    b->rank[k + 1] = b->rank[k] + b->moments[k].count;
  if (b->rank[NBUCKETS] == 0)
    return sky_fail (SKY_ERR_EMPTY, "clip: every pixel is blank");
  return SKY_OK;
}

static void
free_buckets (Buckets *b)
{
  for (int i = 0; i < b->nchunks; i++)
    free (b->chunks[i]);
  free (b->chunks);
  free (b->task_moments);
  free (b->task_counts);
  free (b->moments);
  free (b->rank);
  free (b->values);
  free (b->sorted);
  free (b->wanted);
  for (int k = 0; k < NBUCKETS && b->dvalue != NULL; k++)
    {
      free (b->dvalue[k]);
      free (b->dend[k]);
    }
  for (int k = 0; k < NBUCKETS && b->low != NULL; k++)
    free (b->low[k]);
  free (b->dvalue);
  free (b->dend);
  free (b->ndistinct);
  free (b->low);
}

/* The open interval (lo, hi) of the pixels a pass keeps. A bound of zero
 * is given the sign that puts -0 and +0 (equal values with adjacent keys) on
 * the same side of it, so that a bucket's position alone still says whether
 * its values are inside. */
static void
clip_bounds (double median, double half_width, double *lo, double *hi)
{
  *lo = median - half_width;
  *hi = median + half_width;
  if (*lo == 0)
    *lo = 0.0;
  if (*hi == 0)
    *hi = -0.0;
}

/* Asks for the buckets the first passes will need, so that one fetch
 * usually serves them all: around the median and around the first bounds
 * (whose sigma the bucket sums already give exactly). */
static void
want_first_buckets (Buckets *b, double kappa)
{
  int64_t n = b->rank[NBUCKETS];
  int k = bucket_of_rank (b, (n - 1) / 2);
  double s = 0, s2 = 0, median_guess, sigma, lo, hi;

  for (int j = 0; j < NBUCKETS; j++)
    {
      s += b->moments[j].sum;
      s2 += b->moments[j].sum_sq;
    }
  sigma = sqrt (fmax (s2 / n - (s / n) * (s / n), 0.0));
  median_guess = b->moments[k].count > 0 ? b->shift : 0.0;
  want_window (b, k, MEDIAN_WINDOW);
  clip_bounds (median_guess, kappa * sigma, &lo, &hi);
  want_window (b, bucket_of_value (lo), BOUND_WINDOW);
  want_window (b, bucket_of_value (hi), BOUND_WINDOW);
}

static int
clip_pixels (const SkyImage *img, const SkyPixelSource *src, const SkyParams *params,
             SkyClipStats *stats)
{
  Buckets b = { 0 };
  int64_t first, last;
  int ret;

  memset (stats, 0, sizeof *stats);
  stats->median = stats->sigma = stats->mean = NAN;
  ret = sky_params_check (params);
  if (ret == SKY_OK)
    ret = count_buckets (&b, img, src, params->nthreads);
  if (ret == SKY_OK)
    {
      want_first_buckets (&b, params->clip_kappa);
      ret = b.pixels != NULL ? fetch_wanted (&b) : refine_wanted (&b);
    }
  if (ret != SKY_OK)
    goto exit;

  first = 0;
  last = b.rank[NBUCKETS];
  stats->ninput = last;

  for (;;)
    {
      double median, mean, sigma, lo, hi;
      int64_t new_first, new_last;

      if ((ret = run_median (&b, first, last, &median)) != SKY_OK
          || (ret = run_moments (&b, first, last, &mean, &sigma)) != SKY_OK)
        goto exit;
      stats->iterations++;
      stats->median = median;
      stats->mean = mean;
      stats->sigma = sigma;
      stats->n = last - first;

      clip_bounds (median, params->clip_kappa * sigma, &lo, &hi);
      if ((ret = first_beyond (&b, first, last, lo, 0, &new_first)) != SKY_OK
          || (ret = first_beyond (&b, first, last, hi, 1, &new_last)) != SKY_OK)
        goto exit;

      if (new_first == first && new_last == last)
        {
          stats->converged = 1;
          break;
        }
      if (new_last <= new_first)
        {
          /* Nothing lies strictly inside the bounds (sigma 0): there is no
           * background to measure, as with the lesson's empty result. */
          stats->flat = 1;
          stats->converged = 1;
          break;
        }
      if (params->max_iter > 0 && stats->iterations >= params->max_iter)
        break;
      first = new_first;
      last = new_last;
    }

exit:
  free_buckets (&b);
  return ret;
}

int
sky_cpu_clip (const SkyImage *img, const SkyParams *params, SkyClipStats *stats)
{
  return clip_pixels (img, NULL, params, stats);
}

int
sky_cpu_clip_source (const SkyPixelSource *src, const SkyParams *params, SkyClipStats *stats)
{
  return clip_pixels (NULL, src, params, stats);
}
