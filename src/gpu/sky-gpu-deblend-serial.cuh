/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-deblend-serial.cuh: one island deblended by one thread exactly as
 * sky-cpu-deblend.c does it, in the CPU's order (the pixels in raster order
 * from its box, the same breadth-first components, the same sums in double
 * in the same order, the same binary heap for the watershed). The CPU's
 * recursion over the levels becomes an explicit stack of frames.
 * sky-gpu-deblend.cu runs it where its parallel deblending cannot be sure
 * to decide as the CPU does (a part's flux within rounding of mincont of
 * the island's, or a watershed that meets equal values). Included by
 * sky-gpu-deblend.cu only, inside its anonymous namespace. */

/* Frames of the explicit recursion: six words each. */
enum { F_OFF, F_COUNT, F_LEV, F_CS, F_NCOMP, F_NEXT, F_WORDS };

/* The deepest the recursion goes: a frame per level, one more to end. */
__host__ __device__ __forceinline__ int64_t
max_depth (int64_t npix, int nthresh)
{
  return (npix < nthresh ? npix : nthresh) + 1;
}

/* Scratch words of an island of npix pixels (even: the pixel indices are
 * 8-byte words): pixels (2 words a pixel), set, comp, val, owner, mark,
 * seen, queue (one each), component starts (2 npix + 2 depth + 4), frames. */
__host__ __device__ __forceinline__ int64_t
serial_words (int64_t npix, int nthresh)
{
  const int64_t d = max_depth (npix, nthresh);
  const int64_t w = 2 * npix + 7 * npix + (2 * npix + 2 * d + 4) + F_WORDS * (d + 1);
  return (w + 1) & ~(int64_t) 1;
}

struct Island {
  int64_t npix, nx, ny;
  int32_t label;
  int connectivity;
  double total, mincont, prominence;
  int64_t min_area;
  int64_t *pixels;     /* island pixel -> image index (raster order) */
  float *val;
  int32_t *owner, *mark, *seen, *queue, *set, *comp, *cs, *frames;
  int64_t cs_cap;
  int32_t stamp, ncores;
  const int32_t *labels;
  const int32_t *index;   /* image index -> island pixel, for this island's pixels */
};

__device__ __forceinline__ void
island_layout (Island &is, int32_t *base, int nthresh)
{
  const int64_t p = is.npix, d = max_depth (p, nthresh);

  is.pixels = reinterpret_cast<int64_t *> (base);
  is.set = base + 2 * p;     /* set and comp: even, for the parts' first pixels after */
  is.comp = base + 3 * p;
  is.val = reinterpret_cast<float *> (base + 4 * p);
  is.owner = base + 5 * p;
  is.mark = base + 6 * p;
  is.seen = base + 7 * p;
  is.queue = base + 8 * p;
  is.cs = base + 9 * p;
  is.cs_cap = 2 * p + 2 * d + 4;
  is.frames = is.cs + is.cs_cap;
}

__constant__ int c_dx8[8] = { 1, -1, 0, 0, 1, 1, -1, -1 };
__constant__ int c_dy8[8] = { 0, 0, 1, -1, 1, -1, 1, -1 };

/* The island neighbours of island pixel j, in the CPU's order. */
__device__ int
neighbours (const Island &is, int32_t j, int32_t *out)
{
  const int64_t b = is.pixels[j], x = b % is.nx, y = b / is.nx;
  const int nn = is.connectivity == 8 ? 8 : 4;
  int count = 0;

  for (int k = 0; k < nn; k++)
    {
      const int64_t xx = x + c_dx8[k], yy = y + c_dy8[k];
      if (xx < 0 || yy < 0 || xx >= is.nx || yy >= is.ny)
        continue;
      const int64_t q = yy * is.nx + xx;
      if (__ldcg (is.labels + q) == is.label)
        out[count++] = is.index[q];
    }
  return count;
}

__device__ int64_t
local_maxima (const Island &is, double top)
{
  int32_t nb[8];
  int64_t count = 0;

  for (int32_t j = 0; j < is.npix && count < 2; j++)
    {
      int m, highest = 1;
      if (!(is.val[j] >= top))
        continue;
      m = neighbours (is, j, nb);
      for (int q = 0; q < m && highest; q++)
        highest = is.val[nb[q]] <= is.val[j];
      count += highest;
    }
  return count;
}

__device__ __forceinline__ double
level_at (double flood, double peak, int nthresh, int lev)
{
  /* levels[l - 1] = flood (peak / flood)^(l / nthresh), l = lev + 1 */
  return flood * pow (peak / flood, (double) (lev + 1) / nthresh);
}

/* One level's components of set[0..count) into comp (breadth-first, each
 * contiguous), their starts into cs[0..ncomp]; returns the significant
 * ones' count and leaves their pixels in comp[0..*used). */
__device__ int64_t
components (Island &is, const int32_t *set, int64_t count, double t, int32_t *cs,
            int64_t *ncomp_out, int64_t *used_out)
{
  const int32_t s = ++is.stamp;
  int64_t ncomp = 0, used = 0, nsig = 0;
  int32_t nb[8];

  for (int64_t k = 0; k < count; k++)
    if (is.val[set[k]] > t)
      is.mark[set[k]] = s;
  for (int64_t k = 0; k < count; k++)
    {
      const int32_t j = set[k];
      double flux = 0;
      float top = -INFINITY;
      int64_t head;

      if (is.mark[j] != s || is.seen[j] == s)
        continue;
      cs[ncomp] = (int32_t) used;
      head = used;
      is.seen[j] = s;
      is.comp[used++] = j;
      while (head < used)
        {
          const int32_t p = is.comp[head++];
          const int m = neighbours (is, p, nb);
          flux += is.val[p];
          top = is.val[p] > top ? is.val[p] : top;
          for (int q = 0; q < m; q++)
            if (is.mark[nb[q]] == s && is.seen[nb[q]] != s)
              {
                is.seen[nb[q]] = s;
                is.comp[used++] = nb[q];
              }
        }
      if (flux > is.mincont * is.total && used - cs[ncomp] >= is.min_area
          && top - t >= is.prominence)
        {
          nsig++;
          ncomp++;
        }
      else
        used = cs[ncomp];
    }
  cs[ncomp] = (int32_t) used;
  *ncomp_out = ncomp;
  *used_out = used;
  return nsig;
}

/* sky-cpu-deblend.c's find_cores from level 0 over the whole island, with
 * the recursion as a stack: a frame's set is a slice of is.set (the CPU
 * passes a slice of its parent's component buffer; here the components are
 * copied back over the parent's slice, the same pixels in the same order),
 * its component starts a slice of is.cs kept while its children run. */
__device__ void
find_cores (Island &is, double flood, double peak, int nthresh)
{
  const int nlevels = nthresh - 1;
  int32_t *fr = is.frames;
  int depth = 0;
  int64_t cs_top = 0;

  fr[F_OFF] = 0;
  fr[F_COUNT] = (int32_t) is.npix;
  fr[F_LEV] = 0;
  fr[F_NCOMP] = -1;   /* not split (yet) */
  while (depth >= 0)
    {
      int32_t *f = fr + F_WORDS * depth;
      if (f[F_NCOMP] < 0)
        {
          int split = 0;
          for (; f[F_LEV] < nlevels; f[F_LEV]++)
            {
              const double t = level_at (flood, peak, nthresh, f[F_LEV]);
              int64_t ncomp, used;
              int64_t nsig = components (is, is.set + f[F_OFF], f[F_COUNT], t, is.cs + cs_top,
                                         &ncomp, &used);
              if (nsig == 0)
                break;
              for (int64_t k = 0; k < used; k++)
                is.set[f[F_OFF] + k] = is.comp[k];
              if (nsig == 1)
                {
                  f[F_COUNT] = (int32_t) used;
                  continue;
                }
              f[F_CS] = (int32_t) cs_top;
              f[F_NCOMP] = (int32_t) ncomp;
              f[F_NEXT] = 0;
              cs_top += ncomp + 1;
              split = 1;
              break;
            }
          if (!split)
            {
              /* No further split: this set is one core. */
              is.ncores++;
              for (int64_t k = 0; k < f[F_COUNT]; k++)
                is.owner[is.set[f[F_OFF] + k]] = is.ncores;
              depth--;
            }
          continue;
        }
      if (f[F_NEXT] < f[F_NCOMP])
        {
          const int c = f[F_NEXT]++;
          const int32_t *cs = is.cs + f[F_CS];
          int32_t *child = fr + F_WORDS * (depth + 1);
          child[F_OFF] = f[F_OFF] + cs[c];
          child[F_COUNT] = cs[c + 1] - cs[c];
          child[F_LEV] = f[F_LEV] + 1;
          child[F_NCOMP] = -1;
          depth++;
          continue;
        }
      cs_top = f[F_CS];
      depth--;
    }
}

__device__ void
watershed (Island &is)
{
  int64_t n = 0;
  int32_t nb[8];

  for (int32_t j = 0; j < is.npix; j++)
    if (is.owner[j] != 0)
      sky_value_heap_push (is.queue, &n, is.val, j);
  while (n > 0)
    {
      const int32_t p = sky_value_heap_pop (is.queue, &n, is.val);
      const int m = neighbours (is, p, nb);
      for (int q = 0; q < m; q++)
        if (is.owner[nb[q]] == 0)
          {
            is.owner[nb[q]] = is.owner[p];
            sky_value_heap_push (is.queue, &n, is.val, nb[q]);
          }
    }
}

/* Island k (npix pixels, its box) from base on: returns its cores (1 when
 * it does not split), the owner of each pixel and, where it splits, each
 * part's first pixel at base + 2 npix, as island_part_first reads it. */
__device__ int32_t
deblend_serial (const SkyGpuDetectMaps &m, const int32_t *labels, int32_t *index, int64_t nx,
                int64_t ny, const SkyGpuDetectParams &lp, int64_t k, int64_t npix,
                const int32_t *box, double peak, int32_t *base)
{
  Island is;

  is.npix = npix;
  is.nx = nx;
  is.ny = ny;
  is.label = (int32_t) k;
  is.connectivity = lp.deblend.connectivity;
  is.total = 0;
  is.mincont = lp.deblend.mincont;
  is.prominence = lp.deblend.prominence;
  is.min_area = lp.deblend.min_area;
  is.stamp = 0;
  is.ncores = 0;
  is.labels = labels;
  is.index = index;
  island_layout (is, base, lp.deblend.nthresh);

  /* The island's pixels from its box, in raster order. */
  int32_t j = 0;
  for (int64_t y = box[2]; y <= box[3]; y++)
    for (int64_t x = box[0]; x <= box[1]; x++)
      {
        const int64_t i = y * nx + x;
        if (__ldcg (labels + i) != (int32_t) k || j >= is.npix)
          continue;
        const float v = sky_gpu_snr_at (m, i);
        index[i] = j;
        is.pixels[j] = i;
        is.val[j] = v;
        is.total += v;
        is.set[j] = j;
        is.owner[j] = 0;
        is.mark[j] = 0;
        is.seen[j] = 0;
        j++;
      }
  if (local_maxima (is, lp.deblend.flood + lp.deblend.prominence) < 2)
    return 1;
  find_cores (is, lp.deblend.flood, peak, lp.deblend.nthresh);
  if (is.ncores <= 1)
    return 1;
  watershed (is);
  /* Each part's first pixel, over the set and comp words (no longer
   * needed): the pixels are in raster order, so the first met. */
  int64_t *part_first = reinterpret_cast<int64_t *> (is.set);
  for (int32_t c = 0; c < is.ncores; c++)
    part_first[c] = LLONG_MAX;
  for (int64_t q = 0; q < is.npix; q++)
    {
      int64_t *f = &part_first[is.owner[q] - 1];
      *f = is.pixels[q] < *f ? is.pixels[q] : *f;
    }
  return is.ncores;
}
