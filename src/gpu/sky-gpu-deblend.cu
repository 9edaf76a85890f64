/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Multi-threshold deblending on the device, deciding every island exactly
 * as sky-cpu-deblend.c does: the same islands split, into the same parts,
 * with the same watershed. Islands that cannot split (the CPU's early
 * exits: too small, too faint, fewer than two local maxima high enough)
 * are found pixel by pixel; each other island is deblended by a block, its
 * cores read from its tree of components over the levels (built by one
 * union-find going down them, sky-gpu-deblend-tree.cuh) or, where the tree
 * cannot decide, its levels' components found by a union-find each, and its
 * watershed a front at a time (deblend_parallel says why this decides as
 * the CPU's serial walk does). Where a decision rests on rounding or on equal
 * values, the block's first thread deblends that island serially in the
 * CPU's order (sky-gpu-deblend-serial.cuh).
 *
 * Phases:
 *   clear     the header's counts, the maxima counts, the first-pixel bitmap;
 *   maxima    each pixel that is a local maximum high enough counts for its
 *             island (up to two);
 *   need      each island's scratch (words), zero for one that cannot split;
 *             the islands that may split listed;
 *   scan      the scratch offsets;
 *   islands   as many blocks as fit on the device at once, each taking the
 *             next listed island as it finishes one: gather (the values and
 *             neighbours into shared memory where they fit), the component
 *             tree (or the levels climbed), watershed, each part's first pixel;
 *   firsts    a bit at each source's first pixel (an island that did not
 *             split: its own first pixel);
 *   ranks     the bits counted per 64-pixel word and scanned: a source's
 *             label is the rank of its first pixel in raster order, which
 *             is the CPU's sort of the first pixels;
 *   relabel   the label image, and the deblended flag of each part.
 * Nothing after the islands phase runs when no island split. */
#include "sky-gpu-detect-private.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 512;   /* threads deblending one large island */
/* The island kernel's shared words: what the device lets a block have
 * (227 KiB on Hopper, 163 on Ampere, less the static words), up to this. */
constexpr int kSharedWordsMost = 57344;
/* The islands that may split are deblended an island a block, the
 * largest first. Those under kSmallIsland pixels by blocks of their own,
 * beside the others', on a second stream: a block of kBlock threads and
 * all the shared memory deblends one island a multiprocessor at a time, and
 * a small island's levels take nearly as long as a large one's (a level's
 * time is its chain of reads and two barriers). Fewer threads and
 * kSmallWords of shared memory, which hold a small island's values,
 * neighbours and tree words (14 words a pixel), let kSmallPerSM run on
 * each. */
constexpr int64_t kLargeIsland = 1024;
constexpr int64_t kSmallIsland = 256;
constexpr int kSmallBlock = 128;
constexpr int kSmallPerSM = 4;
constexpr int64_t kSmallWords = 14 * kSmallIsland + 512;

/* Which of the listed islands an island kernel's blocks take. */
enum IslandLists {
  kListsAll,     /* the large, then the medium, then the small ones */
  kListsLarger,  /* the large, then the medium ones (the small have their own blocks) */
  kListsSmall,   /* the small ones */
};

typedef unsigned long long u64;

#include "sky-gpu-deblend-serial.cuh"
#include "sky-gpu-deblend-block.cuh"
#include "sky-gpu-deblend-tree.cuh"

/* Whether island k can split at all: the CPU's first early exit. */
__device__ __forceinline__ bool
may_split (int64_t npix, float peak, const SkyGpuDetectParams &lp)
{
  return !(npix < 2 * lp.deblend.min_area || npix < 2 || lp.deblend.nthresh < 2 || npix > INT_MAX
           || !((double) peak > lp.deblend.flood + lp.deblend.prominence));
}

/* The parallel deblending's scratch of an island of p pixels: pixels (two
 * words a pixel), then parent, frame, val, owner, flag, area, top (one
 * each), nsig (p + 1), flux (two, 8-byte aligned), neighbours (eight), the
 * local maxima (one); the island's words are the larger of this and the
 * serial deblending's. Where they fit in the block's shared words, the
 * values and neighbours are kept there instead (the island's whole walk
 * then reads shared memory), and the union-find's parents, the tree's
 * levels and node ids and the watershed's levels, cores and flags live
 * there too. */
__host__ __device__ __forceinline__ int64_t
flux_offset (int64_t p)
{
  return 10 * p + 2;
}

__host__ __device__ __forceinline__ int64_t
neighbour_offset (int64_t p)
{
  return flux_offset (p) + 2 * p;
}

__host__ __device__ __forceinline__ int64_t
island_words (int64_t p, int nthresh)
{
  const int64_t parallel = neighbour_offset (p) + 9 * p + tree_words (p, nthresh);
  const int64_t serial = serial_words (p, nthresh);
  return ((parallel > serial ? parallel : serial) + 1) & ~(int64_t) 1;
}

__global__ void __launch_bounds__ (kThreads)
deblendClearKernel (SkyGpuDetectHeader *__restrict__ hdr, u64 *__restrict__ maxima,
                    u64 *__restrict__ bits, int64_t nwords)
{
  sky_grid_wait ();
  const int64_t n = (int64_t) __ldcg (&hdr->nislands);
  const int64_t tid = (int64_t) blockIdx.x * kThreads + threadIdx.x;
  const int64_t stride = (int64_t) gridDim.x * kThreads;

  if (tid == 0)
    {
      hdr->nsplit = 0;
      hdr->extra = 0;
      hdr->nwork = 0;
      hdr->nmedium = 0;
      hdr->nsmall = 0;
      hdr->next_work = 0;
      hdr->next_small = 0;
      hdr->scratch_overflow = 0;
    }
  for (int64_t k = tid; k < n; k += stride)
    maxima[k] = 0;
  for (int64_t w = tid; w < nwords; w += stride)
    bits[w] = 0;
}

/* The CPU's second early exit, pixel by pixel: the local maxima at least
 * flood + prominence high of each island that may split (counted up to
 * two; fewer than two and it cannot split), into the island's need word
 * (by island - 1), which the need kernel then overwrites: no other buffer
 * holds two meanings in one run. */
__global__ void __launch_bounds__ (kThreads)
deblendMaximaKernel (const SkyGpuDetectHeader *__restrict__ hdr, SkyGpuDetectMaps m,
                     const int32_t *__restrict__ labels, int64_t nx, int64_t ny,
                     SkyGpuDetectParams lp, const float *__restrict__ kpeak,
                     const u64 *__restrict__ karea, u64 *__restrict__ maxima)
{
  sky_grid_wait ();
  const int64_t n = nx * ny;
  const int nn = lp.deblend.connectivity == 8 ? 8 : 4;
  const double top = lp.deblend.flood + lp.deblend.prominence;

  if (__ldcg (&hdr->nislands) == 0)
    return;
  for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * kThreads)
    {
      const int32_t l = __ldcg (labels + i);
      if (l == 0 || !may_split ((int64_t) karea[l], kpeak[l], lp)
          || __ldcg (maxima + l - 1) >= 2)
        continue;
      const float v = sky_gpu_snr_at (m, i);
      if (!(v >= top))
        continue;
      const int64_t x = i % nx, y = i / nx;
      bool highest = true;
      for (int d = 0; d < nn && highest; d++)
        {
          const int64_t xx = x + c_dx8[d], yy = y + c_dy8[d];
          if (xx < 0 || yy < 0 || xx >= nx || yy >= ny || __ldcg (labels + yy * nx + xx) != l)
            continue;
          highest = sky_gpu_snr_at (m, yy * nx + xx) <= v;
        }
      if (highest)
        atomicAdd (maxima + l - 1, 1ull);
    }
}

/* Each island's scratch words (0: it cannot split, and stays one source);
 * the islands that may split listed for the island blocks, which take them
 * one at a time, each block the next as it finishes one: those of at least
 * kLargeIsland pixels from the list's start, those of at least
 * kSmallIsland from the medium list, the others from the list's end
 * backwards (cap words), so that the slowest start first. */
__global__ void __launch_bounds__ (kThreads)
deblendNeedKernel (SkyGpuDetectHeader *__restrict__ hdr, const float *__restrict__ kpeak,
                   const u64 *__restrict__ karea, SkyGpuDetectParams lp, u64 *need,
                   int32_t *__restrict__ nsub, int32_t *__restrict__ work,
                   int32_t *__restrict__ medium, int64_t cap)
{
  sky_grid_wait ();
  const int64_t n = (int64_t) __ldcg (&hdr->nislands);

  for (int64_t k = (int64_t) blockIdx.x * kThreads + threadIdx.x + 1; k <= n;
       k += (int64_t) gridDim.x * kThreads)
    {
      const bool may = may_split ((int64_t) karea[k], kpeak[k], lp) && __ldcg (need + k - 1) >= 2;
      need[k - 1] = may ? (u64) island_words ((int64_t) karea[k], lp.deblend.nthresh) : 0;
      if (!may)
        nsub[k] = 1;
      else if ((int64_t) karea[k] >= kLargeIsland)
        work[atomicAdd (&hdr->nwork, 1ull)] = (int32_t) k;
      else if ((int64_t) karea[k] >= kSmallIsland)
        medium[atomicAdd (&hdr->nmedium, 1ull)] = (int32_t) k;
      else
        work[cap - 1 - (int64_t) atomicAdd (&hdr->nsmall, 1ull)] = (int32_t) k;
    }
}


/* Island k deblended by the whole block, deciding as the CPU decides.
 *
 * The CPU's recursion over the levels, read as sets: a frame's set is
 * always a connected component of the pixels above some level (the whole
 * island first), so its components at a higher level are the island's own
 * components there that lie in it. All frames therefore move up the
 * levels together: at each level the island's components above it (a
 * union-find), their flux, area and top; a frame with no significant
 * component is a core; with one or more, each significant one is a frame
 * (the CPU's nsig == 1 continues with that one part; nsig > 1 recurses into
 * each), the rest of its pixels are left for the watershed. Which frame is
 * which is named by a pixel of it (a component's root), cores likewise,
 * and the parts are numbered by their first pixels afterwards: the CPU's
 * numbering of its cores never reaches the output.
 *
 * The flux sums are added in another order than the CPU's breadth-first
 * one; a sum of n positive values is then within 2 (n - 1) 2^-53 of its sum
 * of the CPU's, so a part whose flux lies within 2^-50 n of mincont times
 * the island's (itself summed in another order) is left undecided, and so
 * is the island: the caller deblends it serially.
 *
 * The watershed: the CPU pops the brightest pixel of its heap and gives
 * its unowned neighbours its core. A pixel is popped at its flood level,
 * the least value on the best path from a core (the widest path: the
 * highest of its neighbours' levels, capped by its own value; a core
 * pixel's own value), pixels in order of decreasing level; so an unowned
 * pixel goes to the core of its neighbour of highest level, the first of
 * them popped. Neighbours of equal level that belong to different cores
 * (possible only where two pixels have the same value) make the heap's
 * order matter: the island is left undecided. Returns the cores, or 0 for
 * undecided. */
__device__ int32_t
deblend_parallel (const SkyGpuDetectMaps &m, const int32_t *labels, int32_t *index, int64_t nx,
                  int64_t ny, const SkyGpuDetectParams &lp, int64_t k, int64_t p,
                  const int32_t *box, double peak, int32_t *base, BlockShared &sh,
                  int32_t *smem, int64_t shared_words, int use_tree)
{
  const int nn = lp.deblend.connectivity == 8 ? 8 : 4;
  /* Values and neighbours at the end of the shared words where they fit
   * with three words a pixel of work before them; room: the work words. */
  const bool held = (int64_t) (4 + nn) * p <= shared_words;
  const int64_t room = held ? shared_words - (int64_t) (1 + nn) * p : shared_words;
  int64_t *pixels = reinterpret_cast<int64_t *> (base);
  int32_t *parent = p <= room ? smem : base + 2 * p, *frame = base + 3 * p;
  float *val = held ? reinterpret_cast<float *> (smem + room) : reinterpret_cast<float *> (base + 4 * p);
  int32_t *owner = base + 5 * p, *flag = base + 6 * p, *area = base + 7 * p;
  uint32_t *top = reinterpret_cast<uint32_t *> (base + 8 * p);
  int32_t *nsig = base + 9 * p;
  double *flux = reinterpret_cast<double *> (base + flux_offset (p));
  int32_t *lmax = base + neighbour_offset (p) + 8 * p;
  int32_t *nb = held ? smem + room + p : base + neighbour_offset (p);
  const int tid = threadIdx.x;
  const int64_t chunk = (p + block_threads () - 1) / block_threads ();
  const int64_t lo = tid * chunk < p ? tid * chunk : p, hi = lo + chunk < p ? lo + chunk : p;

  if (tid == 0)
    {
      for (int i = 0; i < kMarks; i++)
        sh.mark[i] = 0;
      for (int i = 0; i < kPhases; i++)
        sh.phase[i] = 0;
      sh.steps[0] = sh.steps[1] = 0;
      sh.tree = -1;
    }
  mark (sh.mark, kMarkStart);
  /* The island's pixels from its box, in raster order. */
  const int64_t bw = box[1] - box[0] + 1, bn = bw * (box[3] - box[2] + 1);
  double tsum = 0, tabs = 0;
  int32_t found = 0;
  for (int64_t b0 = 0; b0 < bn; b0 += block_threads ())
    {
      const int64_t b = b0 + tid;
      int64_t i = 0;
      bool in = false;
      int32_t total;
      if (b < bn)
        {
          i = (box[2] + b / bw) * nx + box[0] + b % bw;
          in = __ldcg (labels + i) == (int32_t) k;
        }
      const int64_t j = found + block_rank (in, sh, &total);
      if (in && j < p)
        {
          const float v = sky_gpu_snr_at (m, i);
          index[i] = (int32_t) j;
          pixels[j] = i;
          val[j] = v;
          tsum += v;
          tabs += fabs ((double) v);
        }
      found += total;
    }
  if (found != p)
    return 0;
  const double total = block_sum (tsum, sh), total_abs = block_sum (tabs, sh);

  /* Each pixel's island neighbours in the CPU's order (-1: none). */
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      const int64_t x = pixels[j] % nx, y = pixels[j] / nx;
      for (int d = 0; d < nn; d++)
        {
          const int64_t xx = x + c_dx8[d], yy = y + c_dy8[d];
          int32_t q = -1;
          if (xx >= 0 && yy >= 0 && xx < nx && yy < ny
              && __ldcg (labels + yy * nx + xx) == (int32_t) k)
            q = index[yy * nx + xx];
          nb[j * nn + d] = q;
        }
      frame[j] = (int32_t) p;
      owner[j] = 0;
    }
  __syncthreads ();
  /* The island's local maxima (no neighbour higher, plateaus included):
   * each part that splits off holds one (its brightest pixel). */
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      bool highest = true;
      for (int d = 0; d < nn; d++)
        {
          const int32_t q = nb[j * nn + d];
          highest = highest && (q < 0 || val[q] <= val[j]);
        }
      lmax[j] = highest;
    }
  if (tid == 0)
    sh.cores = 0;
  __syncthreads ();

  const int nlevels = lp.deblend.nthresh - 1;
  const double floor_flux = lp.deblend.mincont * total;
  const double slack = 0x1p-50 * ((double) p * lp.deblend.mincont * total_abs + fabs (floor_flux));
  int32_t tree = 0;
  mark (sh.mark, kMarkGathered);
  if (use_tree)
    {
      tree = tree_decide (val, nb, nn, p, lp, peak, floor_flux, slack, frame, parent, smem, room,
                          owner, tree_words_at (lmax + p, p, lp.deblend.nthresh), use_tree > 1,
                          sh.phase);
      mark (sh.mark, kMarkTree);
      if (tid == 0)
        sh.tree = tree;
      if (tree == 1)
        return 1;
      for (int64_t j = tid; j < p; j += block_threads ())
        {
          frame[j] = tree > 1 ? -1 : (int32_t) p;
          if (tree == 0)
            owner[j] = 0;
        }
      __syncthreads ();
    }
  int live = tree == 0;
  for (int lev = 0; lev < nlevels && live; lev++)
    {
      const double t = level_at (lp.deblend.flood, peak, lp.deblend.nthresh, lev);
      for (int64_t j = tid; j < p; j += block_threads ())
        {
          const int32_t f = frame[j];
          parent[j] = f >= 0 && val[j] > t ? (int32_t) j : -1;
          if (f >= 0)
            nsig[f] = 0;
        }
      __syncthreads ();
      for (int64_t j = tid; j < p; j += block_threads ())
        if (frame[j] >= 0 && val[j] > t)
          for (int d = 0; d < nn; d++)
            {
              const int32_t q = nb[j * nn + d];
              if (q >= 0 && q < j && frame[q] >= 0 && val[q] > t)
                uf_union (parent, (int32_t) j, q);
            }
      __syncthreads ();
      for (int64_t j = tid; j < p; j += block_threads ())
        if (frame[j] >= 0 && val[j] > t)
          {
            const int32_t r = uf_find (parent, (int32_t) j);
            atomicMin (parent + j, r);   /* others still read it */
            if (r == j)
              {
                flux[j] = 0;
                area[j] = 0;
                top[j] = 0;
              }
          }
      __syncthreads ();
      {
        /* Runs of one component in this thread's stretch add up first. */
        int32_t cur = -1, cnt = 0;
        double acc = 0;
        uint32_t most = 0;
        for (int64_t j = lo; j <= hi; j++)
          {
            const bool act = j < hi && frame[j] >= 0 && val[j] > t;
            const int32_t r = act ? parent[j] : -1;
            if ((r != cur || j == hi) && cur >= 0)
              {
                atomicAdd (flux + cur, acc);
                atomicAdd (area + cur, cnt);
                atomicMax (top + cur, most);
              }
            if (r != cur)
              {
                cur = r;
                acc = 0;
                cnt = 0;
                most = 0;
              }
            if (act)
              {
                acc += val[j];
                cnt++;
                const uint32_t key = order_key (val[j]);
                most = key > most ? key : most;
              }
          }
      }
      __syncthreads ();
      int unsure = 0;
      for (int64_t j = tid; j < p; j += block_threads ())
        if (frame[j] >= 0 && val[j] > t && parent[j] == j)
          {
            const double a = flux[j];
            bool sig = area[j] >= lp.deblend.min_area
                       && (double) key_float (top[j]) - t >= lp.deblend.prominence;
            if (sig)
              {
                const double e = 0x1p-50 * (double) area[j] * a + slack;
                if (!(a > floor_flux + e))
                  {
                    sig = false;
                    unsure |= !(a < floor_flux - e);
                  }
              }
            flag[j] = sig;
            if (sig)
              atomicAdd (nsig + frame[j], 1);
          }
      if (__syncthreads_or (unsure))
        return 0;
      int any = 0;
      for (int64_t j = tid; j < p; j += block_threads ())
        {
          const int32_t f = frame[j];
          if (f < 0)
            continue;
          if (nsig[f] == 0)
            {
              owner[j] = f + 1;   /* a core */
              frame[j] = -1;
              if (j == f || (f == p && j == 0))
                atomicAdd (&sh.cores, 1);
              continue;
            }
          const int32_t r = val[j] > t ? parent[j] : -1;
          frame[j] = r >= 0 && flag[r] ? r : -1;
          any |= frame[j] >= 0;
        }
      live = __syncthreads_or (any);
      if (!live || lev + 1 >= nlevels)
        continue;
      /* A frame splits higher up only where it holds two local maxima
       * at least prominence above the next level (the brightest pixels of
       * its parts): where none can, the cores are the ones found and one
       * for each live frame, and at most one core means no split. */
      const double next = level_at (lp.deblend.flood, peak, lp.deblend.nthresh, lev + 1);
      if (tid == 0)
        sh.frames = 0;
      for (int64_t j = tid; j < p; j += block_threads ())
        if (frame[j] >= 0)
          nsig[frame[j]] = 0;
      __syncthreads ();
      for (int64_t j = tid; j < p; j += block_threads ())
        {
          const int32_t f = frame[j];
          if (f < 0)
            continue;
          if (f == j)
            atomicAdd (&sh.frames, 1);
          if (lmax[j] && (double) val[j] - next >= lp.deblend.prominence)
            atomicAdd (nsig + f, 1);
        }
      __syncthreads ();
      int can = 0;
      for (int64_t j = tid; j < p; j += block_threads ())
        can |= frame[j] == j && nsig[j] >= 2;
      if (!__syncthreads_or (can) && sh.cores + sh.frames <= 1)
        return 1;
    }
  mark (sh.mark, kMarkClimbed);
  if (tid == 0)
    sh.count = 0;
  __syncthreads ();
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      if (frame[j] >= 0)
        owner[j] = frame[j] + 1;
      if (owner[j] == j + 1 || (j == 0 && owner[j] == p + 1))
        atomicAdd (&sh.count, 1);
    }
  __syncthreads ();
  const int32_t ncores = sh.count;
  if (ncores <= 1)
    return 1;

  /* The watershed: the flood levels (level, as keys), from the cores'
   * pixels (fixed) outwards, a front at a time: only the pixels whose
   * level rose last time offer theirs to their neighbours, so a step costs
   * its front, not the island (a long island needs as many steps as its
   * longest path has pixels). Levels only rise, towards the one fixed point
   * (each pixel's widest path's least value from a core), whatever the
   * order. In shared memory where they fit. */
  const bool near = 2 * p <= room;
  uint32_t *level = near ? reinterpret_cast<uint32_t *> (smem) : top;
  int32_t *core_of = near ? smem + p : owner;
  int32_t *fixed = 3 * p <= room ? smem + 2 * p : flag;
  /* two fronts and the step each pixel last joined one (over the climb's
   * nsig and flux words, in global memory, where shared memory is short) */
  int32_t *front_words = 6 * p <= room ? smem + 3 * p : nsig;
  int32_t *const front[2] = { front_words, front_words + p };
  int32_t *joined = front_words + 2 * p;
  if (tid == 0)
    {
      sh.front[0] = 0;
      sh.front[1] = 0;
    }
  __syncthreads ();
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      fixed[j] = owner[j] != 0;
      level[j] = owner[j] != 0 ? order_key (val[j]) : 0;
      core_of[j] = owner[j];
      joined[j] = -1;
      if (owner[j] != 0)
        front[0][atomicAdd (&sh.front[0], 1)] = (int32_t) j;
    }
  __syncthreads ();
  sweep_fronts (front, nn, sh, [&] (int32_t u, int d, int step, const FrontPush &push) {
    const int32_t j = nb[(int64_t) u * nn + d];
    if (j < 0 || fixed[j])
      return;
    const uint32_t lu = vload (level + u), own = order_key (val[j]), reach = own < lu ? own : lu;
    if (reach > vload (level + j) && atomicMax (level + j, reach) < reach
        && atomicExch (joined + j, step) != step)
      push (j);
  });
  /* Each unowned pixel takes the core of a neighbour of the highest level
   * that has one (then every such neighbour must have that same core), a
   * front at a time from the cores' pixels: a pixel that has just taken
   * its core offers it to the neighbours of which it is a highest one.
   * (Every thread has read the last, empty, front's length first.) */
  mark (sh.mark, kMarkLevels);
  __syncthreads ();
  for (int64_t j = tid; j < p; j += block_threads ())
    if (fixed[j])
      front[0][atomicAdd (&sh.front[0], 1)] = (int32_t) j;
  __syncthreads ();
  sweep_fronts (front, nn, sh, [&] (int32_t u, int d, int, const FrontPush &push) {
    const int32_t j = nb[(int64_t) u * nn + d];
    if (j < 0 || vload (core_of + j) != 0)
      return;
    uint32_t best = 0;
    for (int e = 0; e < nn; e++)
      {
        const int32_t q = nb[(int64_t) j * nn + e];
        best = q >= 0 && level[q] > best ? level[q] : best;
      }
    if (level[u] == best && atomicCAS (core_of + j, 0, vload (core_of + u)) == 0)
      push (j);
  });
  mark (sh.mark, kMarkCores);
  int unsure = 0;
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      if (fixed[j])
        continue;
      uint32_t best = 0;
      for (int d = 0; d < nn; d++)
        {
          const int32_t q = nb[j * nn + d];
          best = q >= 0 && level[q] > best ? level[q] : best;
        }
      unsure |= core_of[j] == 0;
      for (int d = 0; d < nn; d++)
        {
          const int32_t q = nb[j * nn + d];
          unsure |= q >= 0 && level[q] == best && core_of[q] != core_of[j];
        }
    }
  if (__syncthreads_or (unsure))
    return 0;

  /* The cores numbered 1.. (in any order: the parts are numbered by their
   * first pixels), and each part's first pixel over parent and frame. */
  int32_t *core = area;
  if (tid == 0)
    sh.count = 0;
  for (int64_t j = tid; near && j < p; j += block_threads ())
    owner[j] = core_of[j];
  __syncthreads ();
  for (int64_t j = tid; j < p; j += block_threads ())
    if (owner[j] == j + 1)
      core[j] = atomicAdd (&sh.count, 1) + 1;
  __syncthreads ();
  u64 *part_first = reinterpret_cast<u64 *> (base + 2 * p);
  for (int64_t j = tid; j < p; j += block_threads ())
    owner[j] = core[owner[j] - 1];
  for (int32_t c = tid; c < ncores; c += block_threads ())
    part_first[c] = (u64) LLONG_MAX;
  __syncthreads ();
  for (int64_t j = tid; j < p; j += block_threads ())
    atomicMin (part_first + owner[j] - 1, (u64) pixels[j]);
  __syncthreads ();
  return ncores;
}

/* The islands that may split, an island a block, from the lists named. */
template <int THREADS, int PER_SM>
__global__ void __launch_bounds__ (THREADS, PER_SM)
deblendIslandKernel (SkyGpuDetectHeader *__restrict__ hdr, SkyGpuDetectMaps m,
                     const int32_t *__restrict__ labels, int32_t *__restrict__ index,
                     int64_t nx, int64_t ny, SkyGpuDetectParams lp, const float *__restrict__ kpeak,
                     const u64 *__restrict__ karea, const int32_t *__restrict__ kbox,
                     const u64 *__restrict__ offset, const u64 *__restrict__ total_need,
                     int32_t *__restrict__ scratch, int64_t scratch_cap,
                     int32_t *__restrict__ nsub, const int32_t *__restrict__ work,
                     const int32_t *__restrict__ medium, int64_t work_cap, int64_t shared_words,
                     int use_tree, int profile, IslandLists lists)
{
  sky_grid_wait ();
  __shared__ BlockShared sh;
  __shared__ int64_t next;
  extern __shared__ int32_t smem[];
  const int64_t n = (int64_t) __ldcg (&hdr->nislands);
  const int64_t nlarge = (int64_t) __ldcg (&hdr->nwork);
  const int64_t nbig = nlarge + (int64_t) __ldcg (&hdr->nmedium);
  const int64_t nsmall = (int64_t) __ldcg (&hdr->nsmall);
  const bool small = lists == kListsSmall;
  const int64_t nwork = small ? nsmall : lists == kListsLarger ? nbig : nbig + nsmall;
  unsigned long long *const counter = small ? &hdr->next_small : &hdr->next_work;

  if (n > 0 && (int64_t) __ldcg (total_need) > scratch_cap)
    {
      /* Too little scratch: the host grows it and deblends again. */
      if (blockIdx.x == 0 && threadIdx.x == 0)
        {
          hdr->scratch_need = __ldcg (total_need);
          hdr->scratch_overflow = 1;
        }
      return;
    }
  for (;;)
    {
      if (threadIdx.x == 0)
        next = (int64_t) atomicAdd (counter, 1ull);
      __syncthreads ();
      const int64_t w = next;
      __syncthreads ();
      if (w >= nwork)
        break;
      const int64_t k = small        ? __ldcg (work + work_cap - 1 - w)
                        : w < nlarge ? __ldcg (work + w)
                        : w < nbig   ? __ldcg (medium + w - nlarge)
                                     : __ldcg (work + work_cap - 1 - (w - nbig));
      const int64_t p = (int64_t) __ldcg (karea + k);
      const int32_t *box = kbox + 4 * k;
      int32_t *base = scratch + __ldcg (offset + k - 1);
      int32_t ncores = deblend_parallel (m, labels, index, nx, ny, lp, k, p, box, kpeak[k], base,
                                         sh, smem, shared_words, use_tree);
      __syncthreads ();
      if (threadIdx.x == 0)
        {
          const bool serial = ncores == 0;
          if (serial)
            ncores = deblend_serial (m, labels, index, nx, ny, lp, k, p, box, kpeak[k], base);
          if (profile)
            {
              /* kilocycles from the island's start to each phase's end */
              const long long t0 = sh.mark[kMarkStart], *t = sh.mark;
              printf ("deblend profile: island %lld, %lld pixels, tree %d, cores %d%s; kcycles: "
                      "gathered %lld, tree %lld, climbed %lld, levels %lld (%d steps), "
                      "cores %lld (%d steps), done %lld; tree: init %lld, union %lld, "
                      "find %lld, sums %lld, decide %lld\n",
                      (long long) k, (long long) p, sh.tree, ncores, serial ? " (serial)" : "",
                      t[kMarkGathered] ? (t[kMarkGathered] - t0) / 1000 : -1,
                      t[kMarkTree] ? (t[kMarkTree] - t0) / 1000 : -1,
                      t[kMarkClimbed] ? (t[kMarkClimbed] - t0) / 1000 : -1,
                      t[kMarkLevels] ? (t[kMarkLevels] - t0) / 1000 : -1, sh.steps[0],
                      t[kMarkCores] ? (t[kMarkCores] - t0) / 1000 : -1, sh.steps[1],
                      (clock64 () - t0) / 1000, sh.phase[kPhaseInit] / 1000,
                      sh.phase[kPhaseUnion] / 1000, sh.phase[kPhaseFind] / 1000,
                      sh.phase[kPhaseSums] / 1000, sh.phase[kPhaseDecide] / 1000);
            }
          nsub[k] = ncores;
          if (ncores > 1)
            {
              atomicAdd (&hdr->nsplit, 1ull);
              atomicAdd (&hdr->extra, (u64) (ncores - 1));
            }
        }
      __syncthreads ();
    }
}

#include "sky-gpu-deblend-number.cuh"

} /* namespace */

int
sky_gpu_deblend_enqueue (const SkyGpuLocalStep *step)
{
  SkyGpu *gpu = step->gpu;
  SkyGpuDetect *L = gpu->detect;
  const unsigned island_grid = sky_gpu_detect_grid (
      gpu, L->island_cap > L->nwords ? L->island_cap : L->nwords, kThreads);
  const unsigned pixel_grid = sky_gpu_detect_grid (gpu, step->n, kThreads);
  const unsigned word_grid = sky_gpu_detect_grid (gpu, L->nwords, kThreads);
  int32_t *index = reinterpret_cast<int32_t *> (gpu->d_work);
  const int use_tree = gpu->switches.deblend_tree;
  const int profile = gpu->switches.deblend_profile;
  int ret;

  SKY_LAUNCH (deblendClearKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, L->d_need,
              L->d_first_bits, L->nwords);
  SKY_LAUNCH (deblendMaximaKernel, pixel_grid, kThreads, 0, gpu->stream, L->d_header, *step->maps,
              gpu->d_labels, step->nx, step->ny, *step->params, L->d_kpeak, L->d_karea, L->d_need);
  /* The list of islands that may split goes into the new labels' words,
   * which the rank kernel fills only after the island kernel. */
  SKY_LAUNCH (deblendNeedKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, L->d_kpeak,
              L->d_karea, *step->params, L->d_need, L->d_nsub, L->d_newlabel, L->d_medium,
              L->island_cap);
  if ((ret = sky_gpu_scan_enqueue (gpu, L->d_need, L->d_offset, L->island_cap,
                                   &L->d_header->nislands, L->d_total + 1)) != SKY_OK)
    return ret;
  const auto large_kernel = deblendIslandKernel<kBlock, 1>;
  const auto small_kernel = deblendIslandKernel<kSmallBlock, kSmallPerSM>;
  const int small_apart = gpu->switches.deblend_small_own;
  if (L->island_words == 0)
    {
      /* As many shared words as a block may have, and as many blocks as
       * fit on the device at once with them: each takes the next island
       * from the list as it finishes one. */
      int optin = 0;
      cudaFuncAttributes fa;
      SKY_CUDA (cudaDeviceGetAttribute (&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                        gpu->device));
      SKY_CUDA (cudaFuncGetAttributes (&fa, large_kernel));
      const int64_t words = ((int64_t) optin - (int64_t) fa.sharedSizeBytes) / 4;
      L->island_words = words < kSharedWordsMost ? words : kSharedWordsMost;
      SKY_CUDA (cudaFuncSetAttribute (large_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int) (L->island_words * 4)));
      if ((ret = sky_gpu_resident_blocks (gpu, large_kernel, kBlock, (size_t) L->island_words * 4,
                                          &L->island_blocks)) != SKY_OK)
        return ret;
      L->small_words = kSmallWords < words ? kSmallWords : words;
      if ((ret = sky_gpu_resident_blocks (gpu, small_kernel, kSmallBlock,
                                          (size_t) L->small_words * 4, &L->small_blocks))
          != SKY_OK)
        return ret;
    }
  const auto launch = [&] (auto kernel, unsigned blocks, int threads, int64_t words,
                           cudaStream_t stream, IslandLists lists) -> int {
    SKY_LAUNCH (kernel, blocks, threads, (size_t) words * 4, stream, L->d_header, *step->maps,
                gpu->d_labels, index, step->nx, step->ny, *step->params, L->d_kpeak, L->d_karea,
                L->d_kbox, L->d_offset, L->d_total + 1, L->d_scratch, L->scratch_cap, L->d_nsub,
                L->d_newlabel, L->d_medium, L->island_cap, words, use_tree, profile, lists);
    return SKY_OK;
  };
  /* The larger islands' blocks are launched first, so that they are placed
   * before the small islands' fill the multiprocessors; those with no
   * island to take end at once. */
  if (!small_apart)
    ret = launch (large_kernel, L->island_blocks, kBlock, L->island_words, gpu->stream, kListsAll);
  else if ((ret = sky_gpu_detect_fork (gpu)) == SKY_OK
           && (ret = launch (large_kernel, L->island_blocks, kBlock, L->island_words, gpu->stream,
                             kListsLarger)) == SKY_OK
           && (ret = launch (small_kernel, L->small_blocks, kSmallBlock, L->small_words, L->side,
                             kListsSmall)) == SKY_OK)
    ret = sky_gpu_detect_join (gpu);
  if (ret != SKY_OK)
    return ret;
  SKY_LAUNCH (deblendFirstsKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, gpu->d_state,
              L->d_karea, L->d_kfirst, L->d_nsub, L->d_scratch, L->d_offset, L->d_first_bits,
              L->d_deblended);
  SKY_LAUNCH (deblendWordCountKernel, word_grid, kThreads, 0, gpu->stream, L->d_header,
              L->d_first_bits, L->nwords, L->d_word_count);
  if ((ret = sky_gpu_scan_enqueue (gpu, L->d_word_count, L->d_word_offset, L->nwords, NULL,
                                   L->d_total + 2)) != SKY_OK)
    return ret;
  SKY_LAUNCH (deblendRankKernel, island_grid, kThreads, 0, gpu->stream, L->d_header, L->d_karea,
              L->d_kfirst, L->d_nsub, L->d_scratch, L->d_offset, L->d_first_bits, L->d_word_offset,
              L->d_newlabel, L->d_deblended);
  SKY_LAUNCH (deblendRelabelKernel, pixel_grid, kThreads, 0, gpu->stream, L->d_header, L->d_karea,
              L->d_nsub, L->d_scratch, L->d_offset, index, L->d_newlabel, step->n, gpu->d_labels);
  return SKY_OK;
}
