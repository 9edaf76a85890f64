/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Connected-component labelling on the device, numbered exactly as the CPU
 * (and scipy.ndimage.label) numbers: 1..n in raster order of each
 * component's first pixel. Union-find over pixel indices in d_work, where
 * a root is always the smallest index of its set (Playne and Hawick's
 * label equivalence, as in YACCLAB's BUF family). Each thread owns 16
 * consecutive pixels in raster order (one 16-byte mask load; threads with
 * no source pixel leave at once), in named phases:
 *
 *   init      each source pixel points at the start of its run inside the
 *             thread's 16 pixels and its row: these starts are the only
 *             roots, and the only entries the later phases ever change;
 *   merge     each source pixel joins the neighbours before it in raster
 *             order that no other pixel of its run joins for it, with
 *             lock-free atomicMin links from larger roots to smaller;
 *   compress  every run start points straight at its root, the first pixel
 *             of its component; each warp adds its roots to its tile's
 *             count (tiles of 8192 pixels) and its super-tile's (64
 *             tiles), with no block barrier;
 *   number    a tile's first label is the sum of the counts of the
 *             super-tiles before it and of the tiles before it in its own
 *             (one block reduction, no separate scan launches); a block
 *             scan inside the tile gives each root its raster rank + 1,
 *             stored negated in the root's own entry;
 *   relabel   the label image, 16 pixels per thread in four 16-byte
 *             stores: pixel -> its run start -> the root (3 loads at most);
 *             it also clears the measure step's accumulators of the
 *             sources found.
 *
 * Background entries of d_work are never read or written. */
#include "sky-gpu-private.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace {

constexpr int kPixels = 16;                            /* per thread */
constexpr int kTileThreads = SKY_LABEL_TILE / kPixels; /* 512 */
constexpr int kThreads = 256;

/* Index is the type of a pixel index and of a union-find entry: int up to
 * 2^31 - 1 pixels, long long beyond (the entries then take 8 bytes). */

/* Reads through L2 only: other threads relink roots during the merge. */
template <typename Index>
__device__ __forceinline__ Index
find_root (const Index *parent, Index x)
{
  Index p = __ldcg (parent + x);
  while (p != x)
    {
      x = p;
      p = __ldcg (parent + x);
    }
  return x;
}

/* Joins the sets of a and b, the smaller root becoming the root. When
 * another thread relinked the root we tried to link, atomicMin returns its
 * new parent and we go on joining with that. */
template <typename Index>
__device__ void
unite (Index *parent, Index a, Index b)
{
  for (;;)
    {
      a = find_root (parent, a);
      b = find_root (parent, b);
      if (a < b)
        {
          Index old = atomicMin (parent + b, a);
          if (old == b)
            return;
          b = old;
        }
      else if (b < a)
        {
          Index old = atomicMin (parent + a, b);
          if (old == a)
            return;
          a = old;
        }
      else
        return;
    }
}

/* The 16 mask bytes of a thread as a 16-bit set of its source pixels. */
template <typename Index>
__device__ __forceinline__ uint32_t
source_bits (const uint8_t *__restrict__ mask, Index p0)
{
  const uint4 m = *reinterpret_cast<const uint4 *> (mask + p0);
  const uint32_t w[4] = { m.x, m.y, m.z, m.w };
  uint32_t bits = 0;

#pragma unroll
  for (int k = 0; k < 16; k++)
    bits |= ((w[k >> 2] >> (8 * (k & 3))) & 0xffu ? 1u : 0u) << k;
  return bits;
}

/* Which of the thread's pixels start a run: a source pixel that is the
 * thread's first, the first of its row, or whose left neighbour is not a
 * source pixel. x0 is the column of the first pixel. */
__device__ __forceinline__ uint32_t
run_starts (uint32_t bits, int x0, int nx)
{
  uint32_t row_starts = 0;

  for (int x = x0 == 0 ? 0 : nx - x0; x < kPixels; x += nx)
    row_starts |= 1u << x;
  return bits & ~((bits << 1) & ~row_starts);
}

template <typename Index>
__global__ void __launch_bounds__ (kThreads)
labelInitKernel (const uint8_t *__restrict__ mask, Index n, int nx, Index *__restrict__ parent,
                 uint32_t *__restrict__ tile_counts, uint32_t *__restrict__ super_counts,
                 int ntiles)
{
  sky_grid_wait ();
  const Index t = (Index) blockIdx.x * kThreads + threadIdx.x, p0 = t * kPixels;

  /* The compress phase adds to the tile counts: clear them first. */
  if (t < ntiles)
    tile_counts[t] = 0;
  if (t < (ntiles + SKY_LABEL_SUPER - 1) / SKY_LABEL_SUPER)
    super_counts[t] = 0;
  if (p0 >= n)
    return;
  const uint32_t bits = source_bits (mask, p0);
  if (bits == 0)
    return;
  const uint32_t starts = run_starts (bits, (int) (p0 % nx), nx);
  Index root = p0;
  for (int k = 0; k < kPixels; k++)
    if (bits & (1u << k))
      {
        if (starts & (1u << k))
          root = p0 + k;
        parent[p0 + k] = root;
      }
}

/* Which joins a pixel makes, p's neighbours before it being W (left), NW,
 * N and NE. Pixels of one run in a thread already share a root; the first
 * pixel of the thread joins its left neighbour. 4-connectivity: join N,
 * unless W and NW are both source pixels (then W's run reaches N through
 * NW). 8-connectivity: join N unless W is a source pixel (W reaches N as
 * its NE or through its N); with N empty, join NE, and NW unless W is a
 * source pixel (W reaches NW as its N). */
template <typename Index>
__global__ void __launch_bounds__ (kThreads)
labelMergeKernel (const uint8_t *__restrict__ mask, Index n, int nx,
                  const SkyGpuParams *__restrict__ params, Index *__restrict__ parent)
{
  sky_grid_wait ();
  const Index p0 = ((Index) blockIdx.x * kThreads + threadIdx.x) * kPixels;
  if (p0 >= n)
    return;
  const uint32_t bits = source_bits (mask, p0);
  if (bits == 0)
    return;
  const bool eight = params->connectivity == 8;
  int x = (int) (p0 % nx);

  for (int k = 0; k < kPixels; k++, x = x + 1 == nx ? 0 : x + 1)
    {
      if (!(bits & (1u << k)))
        continue;
      const Index p = p0 + k;
      const bool w = x > 0 && (k > 0 ? (bits >> (k - 1)) & 1u : mask[p - 1] != 0);
      if (w && k == 0)
        unite (parent, p, p - 1);
      if (p < nx)
        continue;
      const bool nn = mask[p - nx] != 0;
      if (eight)
        {
          if (nn)
            {
              if (!w)
                unite (parent, p, p - nx);
            }
          else
            {
              if (x + 1 < nx && mask[p - nx + 1])
                unite (parent, p, p - nx + 1);
              if (!w && x > 0 && mask[p - nx - 1])
                unite (parent, p, p - nx - 1);
            }
        }
      else if (nn && !(w && mask[p - nx - 1]))
        unite (parent, p, p - nx);
    }
}

/* Run starts point straight at their roots; each warp adds the roots it
 * found to its tile's and its super-tile's counts. */
template <typename Index>
__global__ void __launch_bounds__ (kThreads)
labelCompressKernel (const uint8_t *__restrict__ mask, Index n, int nx, Index *__restrict__ parent,
                     uint32_t *__restrict__ tile_counts, uint32_t *__restrict__ super_counts)
{
  sky_grid_wait ();
  const Index t = (Index) blockIdx.x * kThreads + threadIdx.x, p0 = t * kPixels;
  uint32_t roots = 0;

  if (p0 < n)
    {
      const uint32_t bits = source_bits (mask, p0);
      uint32_t starts = bits ? run_starts (bits, (int) (p0 % nx), nx) : 0;
      while (starts)
        {
          const int k = __ffs (starts) - 1;
          const Index p = p0 + k, r = find_root (parent, p);
          starts &= starts - 1;
          if (r != p)
            parent[p] = r;
          roots += r == p;
        }
    }
  roots = __reduce_add_sync (0xffffffffu, roots);
  if ((threadIdx.x & 31) == 0 && roots != 0)
    {
      atomicAdd (&tile_counts[t / kTileThreads], roots);
      atomicAdd (&super_counts[t / kTileThreads / SKY_LABEL_SUPER], roots);
    }
}

/* Numbers the roots of a tile in raster order, after the tiles before it:
 * label = tile offset + rank in tile + 1, stored as -label in the root's
 * entry (other entries, being indices, are >= 0). The tile offset is the
 * sum of the super-tiles' counts before the tile's super-tile and of the
 * tiles' counts before it inside it (at most 63), one load or a few per
 * thread; the last tile's block also writes the source count. */
template <typename Index>
__global__ void __launch_bounds__ (kTileThreads)
labelNumberKernel (const uint8_t *__restrict__ mask, Index n, int nx, Index *__restrict__ parent,
                   const uint32_t *__restrict__ tile_counts,
                   const uint32_t *__restrict__ super_counts, int ntiles,
                   SkyGpuState *__restrict__ st)
{
  typedef cub::BlockScan<uint32_t, kTileThreads> Scan;
  typedef cub::BlockReduce<uint32_t, kTileThreads> Reduce;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  } tmp;
  __shared__ uint32_t s_offset;
  sky_grid_wait ();
  const int tile = blockIdx.x;
  const bool last = tile == ntiles - 1;
  const uint32_t mine = tile_counts[tile];
  const Index p0 = (Index) tile * SKY_LABEL_TILE + threadIdx.x * kPixels;
  uint32_t roots = 0, rank, part = 0;

  if (mine == 0 && !last)
    return;  /* uniform over the block */
  const int sup = tile / SKY_LABEL_SUPER, first = sup * SKY_LABEL_SUPER;
  for (int i = threadIdx.x; i < sup; i += kTileThreads)
    part += super_counts[i];
  if ((int) threadIdx.x < tile - first)
    part += tile_counts[first + threadIdx.x];
  part = Reduce (tmp.reduce).Sum (part);
  if (threadIdx.x == 0)
    {
      s_offset = part;
      if (last)
        st->nsources = part + mine;
    }
  __syncthreads ();
  if (mine == 0)
    return;  /* uniform over the block */
  const uint32_t offset = s_offset;
  if (p0 < n)
    {
      const uint32_t bits = source_bits (mask, p0);
      uint32_t starts = bits ? run_starts (bits, (int) (p0 % nx), nx) : 0;
      while (starts)
        {
          const int k = __ffs (starts) - 1;
          starts &= starts - 1;
          if (parent[p0 + k] == p0 + k)
            roots |= 1u << k;
        }
    }
  Scan (tmp.scan).ExclusiveSum ((uint32_t) __popc (roots), rank);

  int label = (int) (offset + rank) + 1;
  while (roots)
    {
      const int k = __ffs (roots) - 1;
      roots &= roots - 1;
      parent[p0 + k] = -(Index) label++;
    }
}

/* The label image. A run start holds -label (a root) or its root's index;
 * the pixels after it in the run take the same label. */
template <typename Index>
__global__ void __launch_bounds__ (kThreads)
labelRelabelKernel (const uint8_t *__restrict__ mask, Index n, int nx,
                    const Index *__restrict__ parent, int *__restrict__ labels,
                    const SkyGpuState *__restrict__ st, unsigned char *__restrict__ meas,
                    int64_t cap)
{
  /* Each thread's 16 labels go through shared memory so that the warp
   * stores 512 consecutive bytes at a time. */
  __shared__ int4 s_out[kThreads * 4];
  sky_grid_wait ();
  const int lane = threadIdx.x & 31, warp0 = threadIdx.x & ~31;
  const Index p0 = ((Index) blockIdx.x * kThreads + threadIdx.x) * kPixels;
  const uint32_t bits = p0 < n ? source_bits (mask, p0) : 0;
  int out[kPixels], label = 0;

  if (bits != 0)
    {
      const uint32_t starts = run_starts (bits, (int) (p0 % nx), nx);
#pragma unroll
      for (int k = 0; k < kPixels; k++)
        {
          if (starts & (1u << k))
            {
              const Index v = parent[p0 + k];
              label = (int) (v < 0 ? -v : -parent[v]);
            }
          out[k] = (bits & (1u << k)) ? label : 0;
        }
    }
  else
#pragma unroll
    for (int k = 0; k < kPixels; k++)
      out[k] = 0;
  for (int q = 0; q < 4; q++)
    s_out[threadIdx.x * 4 + q] = make_int4 (out[4 * q], out[4 * q + 1], out[4 * q + 2], out[4 * q + 3]);
  __syncwarp ();
  /* The warp's 32 threads cover 512 consecutive pixels: 128 int4. */
  const Index wp0 = ((Index) blockIdx.x * kThreads + warp0) * kPixels;
  int4 *dst = reinterpret_cast<int4 *> (labels + wp0);
  for (int q = lane; q < 128; q += 32)
    if (wp0 + q * 4 < n)
      dst[q] = s_out[warp0 * 4 + q];
  /* The measure step's accumulators of the sources found start from zero
   * (when they fit; else measure grows the buffer and clears it). */
  const int64_t ns = st->nsources;
  if (ns <= cap)
    {
      const SkyMeasureAcc a = sky_measure_acc (meas, cap);
      for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < ns;
           i += (int64_t) gridDim.x * kThreads)
        sky_measure_acc_clear (a, i);
    }
}

} /* namespace */

/* The five phases with pixel indices of type Index. */
template <typename Index>
static int
label_enqueue_as (SkyGpu *gpu, Index n, int nx, int ntiles)
{
  cudaStream_t s = gpu->stream;
  const unsigned blocks = (unsigned) ((n + kThreads * kPixels - 1) / (kThreads * kPixels));
  const unsigned init_blocks = (unsigned) ((ntiles + kThreads - 1) / kThreads) > blocks
                                   ? (unsigned) ((ntiles + kThreads - 1) / kThreads)
                                   : blocks;
  Index *parent = reinterpret_cast<Index *> (gpu->d_work);

  SKY_LAUNCH (labelInitKernel<Index>, init_blocks, kThreads, 0, s, gpu->d_mask, n, nx, parent,
              gpu->d_tile_counts, gpu->d_super_counts, ntiles);
  SKY_LAUNCH (labelMergeKernel<Index>, blocks, kThreads, 0, s, gpu->d_mask, n, nx, gpu->d_params,
              parent);
  SKY_LAUNCH (labelCompressKernel<Index>, blocks, kThreads, 0, s, gpu->d_mask, n, nx, parent,
              gpu->d_tile_counts, gpu->d_super_counts);
  SKY_LAUNCH (labelNumberKernel<Index>, ntiles, kTileThreads, 0, s, gpu->d_mask, n, nx, parent,
              gpu->d_tile_counts, gpu->d_super_counts, ntiles, gpu->d_state);
  SKY_LAUNCH (labelRelabelKernel<Index>, blocks, kThreads, 0, s, gpu->d_mask, n, nx, parent,
              gpu->d_labels, gpu->d_state, gpu->d_meas, gpu->meas_cap);
  return SKY_OK;
}

int
sky_gpu_label_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  const int64_t n = nx * ny;

  /* 32-bit indices wherever they reach: the union-find then moves half the
   * bytes (sky_gpu_work_bytes sizes d_work to match). */
  if (n <= INT32_MAX)
    return label_enqueue_as<int> (gpu, (int) n, (int) nx, (int) gpu->ntiles);
  return label_enqueue_as<long long> (gpu, (long long) n, (int) nx, (int) gpu->ntiles);
}
