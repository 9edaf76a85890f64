/* Kappa-sigma clipping without a sort per pass.
 *
 * Every clipping pass keeps the pixels strictly inside an interval, and each
 * interval lies inside the last, so the survivors are always one contiguous
 * run of the pixels in sorted order. We bucket the pixels once by the top
 * bits of an order-preserving key (a counting sort: one histogram pass, one
 * scatter pass) and keep per-bucket sums. A pass then needs exact order only
 * inside the buckets that hold its median and its two bounds; those few are
 * sorted on first use by their low key bits, and every bucket in between
 * is taken whole through its sums. The cost is three streaming passes over
 * the image, whatever the number of clipping passes. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Buckets are the top BUCKET_BITS of the key: sign, exponent and the top
 * three mantissa bits, an eighth of an octave. Few enough that the scatter's
 * write streams stay in cache, fine enough that the buckets sorted per pass
 * hold a fraction of a percent of the pixels. */
#define BUCKET_BITS 12
#define BUCKET_SHIFT (32 - BUCKET_BITS)
#define NBUCKETS (1 << BUCKET_BITS)
/* Each task splits its pixels over LANES interleaved streams with their own
 * counters, so that runs of pixels in one bucket (most of them, in smooth
 * noise) do not wait on each other's counter updates. */
#define LANES 4

typedef struct {
  const float *pixels;
  int64_t npixels;
  int ntasks;
  int64_t *task_counts;  /* [task][lane][bucket]: counts, then write cursors */
  int64_t *offsets;      /* NBUCKETS + 1 bucket starts in values */
  float *values;         /* the non-blank pixels, bucket by bucket */
  int64_t nvalues;
  uint8_t *sorted;       /* per bucket: already in ascending order */
  double shift;          /* sums are of (x - shift), a value near the median */
  double *sum;           /* per bucket */
  double *sum_sq;
} Buckets;

/* Order-preserving map of a finite float to uint32, branch-free: negative
 * floats have all bits flipped, positive ones the sign bit set. -0 sorts just
 * below +0; clip_bounds() keeps the bounds on the right side of that pair. */
static inline uint32_t
float_key (float v)
{
  uint32_t u;

  memcpy (&u, &v, sizeof u);
  return u ^ ((uint32_t) ((int32_t) u >> 31) | 0x80000000u);
}

static inline int
bucket_of_value (double v)
{
  return (int) (float_key ((float) v) >> BUCKET_SHIFT);
}

static void
task_range (const Buckets *b, int task, int64_t *start, int64_t *end)
{
  *start = b->npixels * task / b->ntasks;
  *end = b->npixels * (task + 1) / b->ntasks;
}

static void
histogram_task (void *ctx, int task)
{
  Buckets *b = ctx;
  int64_t *counts = b->task_counts + (size_t) task * LANES * NBUCKETS;
  int64_t start, end;

  task_range (b, task, &start, &end);
  for (int64_t i = start; i < end; i++)
    {
      float v = b->pixels[i];
      int lane = (int) (i & (LANES - 1));
      if (!isnan (v))
        counts[lane * NBUCKETS + (float_key (v) >> BUCKET_SHIFT)]++;
    }
}

static void
scatter_task (void *ctx, int task)
{
  Buckets *b = ctx;
  int64_t *cursor = b->task_counts + (size_t) task * LANES * NBUCKETS;
  int64_t start, end;

  task_range (b, task, &start, &end);
  for (int64_t i = start; i < end; i++)
    {
      float v = b->pixels[i];
      int lane = (int) (i & (LANES - 1));
      if (!isnan (v))
        b->values[cursor[lane * NBUCKETS + (float_key (v) >> BUCKET_SHIFT)]++] = v;
    }
}

/* Buckets [first, last) for a task, cut so that each task sums about as
 * many values. */
static void
bucket_range (const Buckets *b, int task, int *first, int *last)
{
  int64_t lo = b->nvalues * task / b->ntasks, hi = b->nvalues * (task + 1) / b->ntasks;
  int k = 0;

  while (k < NBUCKETS && b->offsets[k + 1] <= lo)
    k++;
  *first = task == 0 ? 0 : k;
  while (k < NBUCKETS && b->offsets[k + 1] <= hi)
    k++;
  *last = task == b->ntasks - 1 ? NBUCKETS : k;
}

static void
sums_task (void *ctx, int task)
{
  Buckets *b = ctx;
  int first, last;

  bucket_range (b, task, &first, &last);
  for (int k = first; k < last; k++)
    {
      double s = 0, s2 = 0;
      for (int64_t i = b->offsets[k]; i < b->offsets[k + 1]; i++)
        {
          double d = (double) b->values[i] - b->shift;
          s += d;
          s2 += d * d;
        }
      b->sum[k] = s;
      b->sum_sq[k] = s2;
    }
}

/* Sorts one bucket in place: its values share the top key bits, so 8-bit
 * radix passes over the low BUCKET_SHIFT bits order it completely. */
static int
ensure_sorted (Buckets *b, int k)
{
  int64_t start = b->offsets[k], n = b->offsets[k + 1] - start;
  float *v = b->values + start, *tmp;

  if (b->sorted[k])
    return SKY_OK;
  if (n <= 32)
    {
      for (int64_t i = 1; i < n; i++)
        {
          float x = v[i];
          int64_t j = i;
          for (; j > 0 && float_key (v[j - 1]) > float_key (x); j--)
            v[j] = v[j - 1];
          v[j] = x;
        }
      b->sorted[k] = 1;
      return SKY_OK;
    }

  tmp = malloc ((size_t) n * sizeof *tmp);
  if (tmp == NULL)
    return sky_fail (SKY_ERR_MEMORY, "clip: no memory to sort %lld values", (long long) n);
  for (int shift = 0; shift < BUCKET_SHIFT; shift += 8)
    {
      int64_t count[257] = { 0 };
      for (int64_t i = 0; i < n; i++)
        count[((float_key (v[i]) >> shift) & 0xff) + 1]++;
      for (int d = 0; d < 256; d++)
        count[d + 1] += count[d];
      for (int64_t i = 0; i < n; i++)
        tmp[count[(float_key (v[i]) >> shift) & 0xff]++] = v[i];
      memcpy (v, tmp, (size_t) n * sizeof *v);
    }
  free (tmp);
  b->sorted[k] = 1;
  return SKY_OK;
}

/* The bucket holding sorted position pos. */
static int
bucket_of_position (const Buckets *b, int64_t pos)
{
  int lo = 0, hi = NBUCKETS - 1;

  while (lo < hi)
    {
      int mid = lo + (hi - lo + 1) / 2;
      if (b->offsets[mid] <= pos)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

static int
value_at (Buckets *b, int64_t pos, double *value)
{
  int ret = ensure_sorted (b, bucket_of_position (b, pos));

  *value = b->values[pos];
  return ret;
}

/* First position in [first, last) whose value is > bound (inclusive = 0) or
 * >= bound (inclusive = 1); last if none. Buckets below the bound's bucket
 * hold only smaller values and those above only larger ones, so only the
 * bound's own bucket is searched. */
static int
first_beyond (Buckets *b, int64_t first, int64_t last, double bound, int inclusive,
              int64_t *pos)
{
  int k = bucket_of_value (bound), ret;
  int64_t lo, hi;

  if (k < bucket_of_position (b, first))
    {
      *pos = first;
      return SKY_OK;
    }
  if (k > bucket_of_position (b, last - 1))
    {
      *pos = last;
      return SKY_OK;
    }
  ret = ensure_sorted (b, k);
  if (ret != SKY_OK)
    return ret;
  lo = b->offsets[k] > first ? b->offsets[k] : first;
  hi = b->offsets[k + 1] < last ? b->offsets[k + 1] : last;
  while (lo < hi)
    {
      int64_t mid = lo + (hi - lo) / 2;
      double v = b->values[mid];
      if (inclusive ? v >= bound : v > bound)
        hi = mid;
      else
        lo = mid + 1;
    }
  *pos = lo;
  return SKY_OK;
}

static void
add_range (const Buckets *b, int64_t start, int64_t end, double *s, double *s2)
{
  for (int64_t i = start; i < end; i++)
    {
      double d = (double) b->values[i] - b->shift;
      *s += d;
      *s2 += d * d;
    }
}

/* Mean and population sigma of the run [first, last): whole buckets from
 * their sums, the two partial ones value by value. */
static void
run_moments (const Buckets *b, int64_t first, int64_t last, double *mean, double *sigma)
{
  int kf = bucket_of_position (b, first), kl = bucket_of_position (b, last - 1);
  double s = 0, s2 = 0, n = (double) (last - first), var;

  if (kf == kl)
    add_range (b, first, last, &s, &s2);
  else
    {
      add_range (b, first, b->offsets[kf + 1], &s, &s2);
      for (int k = kf + 1; k < kl; k++)
        {
          s += b->sum[k];
          s2 += b->sum_sq[k];
        }
      add_range (b, b->offsets[kl], last, &s, &s2);
    }
  var = s2 / n - (s / n) * (s / n);
  *mean = b->shift + s / n;
  *sigma = var > 0 ? sqrt (var) : 0.0;
}

static int
build_buckets (Buckets *b, const SkyImage *img, int nthreads)
{
  int64_t total = 0;

  b->pixels = img->pixels;
  b->npixels = img->nx * img->ny;
  b->ntasks = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (b->ntasks > 64)
    b->ntasks = 64;
  if (b->npixels < 65536)
    b->ntasks = 1;

  b->task_counts = calloc ((size_t) b->ntasks * LANES * NBUCKETS, sizeof *b->task_counts);
  b->offsets = calloc (NBUCKETS + 1, sizeof *b->offsets);
  b->sorted = calloc (NBUCKETS, 1);
  b->sum = calloc (NBUCKETS, sizeof *b->sum);
  b->sum_sq = calloc (NBUCKETS, sizeof *b->sum_sq);
  if (!b->task_counts || !b->offsets || !b->sorted || !b->sum || !b->sum_sq)
    return sky_fail (SKY_ERR_MEMORY, "clip: out of memory");

  sky_parallel_for (b->ntasks, b->ntasks, histogram_task, b);

  /* Bucket starts, then each task's write cursor inside each bucket. */
  for (int k = 0; k < NBUCKETS; k++)
    {
      b->offsets[k] = total;
      for (int t = 0; t < b->ntasks * LANES; t++)
        {
          int64_t *c = &b->task_counts[(size_t) t * NBUCKETS + k];
          int64_t n = *c;
          *c = total;
          total += n;
        }
    }
  b->offsets[NBUCKETS] = total;
  b->nvalues = total;
  if (total == 0)
    return sky_fail (SKY_ERR_EMPTY, "clip: every pixel is blank");

  b->values = sky_alloc_large ((size_t) total * sizeof *b->values);
  if (b->values == NULL)
    return sky_fail (SKY_ERR_MEMORY, "clip: no memory for %lld pixels", (long long) total);
  sky_parallel_for (b->ntasks, b->ntasks, scatter_task, b);
  return SKY_OK;
}

static void
free_buckets (Buckets *b)
{
  free (b->task_counts);
  free (b->offsets);
  free (b->values);
  free (b->sorted);
  free (b->sum);
  free (b->sum_sq);
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

int
sky_cpu_clip (const SkyImage *img, const SkyParams *params, SkyClipStats *stats)
{
  Buckets b = { 0 };
  int64_t first, last;
  int ret;

  memset (stats, 0, sizeof *stats);
  stats->median = stats->sigma = stats->mean = NAN;
  ret = sky_params_check (params);
  if (ret == SKY_OK)
    ret = build_buckets (&b, img, params->nthreads);
  if (ret != SKY_OK)
    goto exit;

  first = 0;
  last = b.nvalues;
  stats->ninput = b.nvalues;

  /* Sums are taken about the overall median so that an image with a large
   * offset loses no precision in sigma. */
  ret = run_median (&b, first, last, &b.shift);
  if (ret != SKY_OK)
    goto exit;
  sky_parallel_for (b.ntasks, b.ntasks, sums_task, &b);

  for (;;)
    {
      double median, mean, sigma, lo, hi;
      int64_t new_first, new_last;

      ret = run_median (&b, first, last, &median);
      if (ret != SKY_OK)
        goto exit;
      run_moments (&b, first, last, &mean, &sigma);
      stats->iterations++;
      stats->median = median;
      stats->mean = mean;
      stats->sigma = sigma;
      stats->n = last - first;

      clip_bounds (median, params->clip_kappa * sigma, &lo, &hi);
      ret = first_beyond (&b, first, last, lo, 0, &new_first);
      if (ret == SKY_OK)
        ret = first_beyond (&b, first, last, hi, 1, &new_last);
      if (ret != SKY_OK)
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
