/* Connected-component labelling on the device, numbered exactly as the CPU
 * (and scipy.ndimage.label) numbers: 1..n in raster order of each
 * component's first pixel. Union-find over pixel indices in d_work, where
 * a root is always the smallest index of its set (Playne and Hawick's
 * label equivalence, as in YACCLAB's BUF family), in named phases:
 *
 *   init      each source pixel points at the start of its run inside its
 *             warp's 32 pixels of the row (one ballot, no loop);
 *   merge     each source pixel joins the neighbours before it in raster
 *             order that no other pixel of its run joins for it, with
 *             lock-free atomicMin links from larger roots to smaller;
 *   compress  every source pixel points straight at its root, the first
 *             pixel of its component, and each tile of 8192 consecutive
 *             pixels counts its roots;
 *   number    an exclusive scan over the tiles' counts, then a block scan
 *             inside each tile, give each root its raster rank + 1, stored
 *             negated in the root's own entry;
 *   relabel   every pixel of the label image gets its root's number (0 for
 *             background), with 16-byte stores.
 *
 * Background entries of d_work are never read or written. */
#include "sky-gpu-private.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

namespace {

constexpr int kRows = 8;             /* init and merge: 32 x 8 pixel blocks */
constexpr int kTileThreads = 1024;   /* compress and number: 8 pixels a thread */
constexpr int kRelabelThreads = 256; /* relabel: 4 pixels a thread */
static_assert (kTileThreads * 8 == SKY_LABEL_TILE, "a tile is 8 pixels per thread");

/* Reads through L2 only: other threads relink roots during the merge. */
__device__ __forceinline__ int
find_root (const int *parent, int x)
{
  int p = __ldcg (parent + x);
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
__device__ void
unite (int *parent, int a, int b)
{
  for (;;)
    {
      a = find_root (parent, a);
      b = find_root (parent, b);
      if (a < b)
        {
          int old = atomicMin (parent + b, a);
          if (old == b)
            return;
          b = old;
        }
      else if (b < a)
        {
          int old = atomicMin (parent + a, b);
          if (old == a)
            return;
          a = old;
        }
      else
        return;
    }
}

__global__ void __launch_bounds__ (32 * kRows)
labelInitKernel (const uint8_t *__restrict__ mask, int nx, int ny, int *__restrict__ parent)
{
  const int lane = threadIdx.x;
  const int x = blockIdx.x * 32 + lane, y = blockIdx.y * kRows + threadIdx.y;
  const bool inside = x < nx && y < ny;
  const int p = inside ? y * nx + x : 0;
  const bool fg = inside && mask[p];
  const uint32_t bits = __ballot_sync (0xffffffffu, fg);

  if (fg)
    {
      const uint32_t background_below = ~bits & ((1u << lane) - 1);
      const int start = background_below ? 32 - __clz (background_below) : 0;
      parent[p] = p - lane + start;
    }
}

/* Which joins a pixel makes, p's neighbours before it being W (left), NW,
 * N and NE. Pixels of one run in a warp already share a root; across a
 * warp boundary lane 0 joins its left neighbour. 4-connectivity: join N,
 * unless W and NW are both source pixels (then W's run reaches N through
 * NW). 8-connectivity: join N unless W is a source pixel (W reaches N as
 * its NE or through its N); with N empty, join NE, and NW unless W is a
 * source pixel (W reaches NW as its N). */
__global__ void __launch_bounds__ (32 * kRows)
labelMergeKernel (const uint8_t *__restrict__ mask, int nx, int ny,
                  const SkyGpuParams *__restrict__ params, int *__restrict__ parent)
{
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * kRows + threadIdx.y;
  if (x >= nx || y >= ny)
    return;
  const int p = y * nx + x;
  if (!mask[p])
    return;

  const bool w = x > 0 && mask[p - 1];
  if (w && threadIdx.x == 0)
    unite (parent, p, p - 1);
  if (y == 0)
    return;
  const bool n = mask[p - nx];
  if (params->connectivity == 8)
    {
      if (n)
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
  else if (n && !(w && mask[p - nx - 1]))
    unite (parent, p, p - nx);
}

/* Path compression, and each tile's root count. Thread t of a tile owns
 * pixels 8t .. 8t + 7, read as one 8-byte mask word. */
__global__ void __launch_bounds__ (kTileThreads)
labelCompressKernel (const uint8_t *__restrict__ mask, int *__restrict__ parent,
                     uint32_t *__restrict__ tile_counts)
{
  typedef cub::BlockReduce<uint32_t, kTileThreads> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const int p0 = blockIdx.x * SKY_LABEL_TILE + threadIdx.x * 8;
  const uint64_t m = *reinterpret_cast<const uint64_t *> (mask + p0);
  uint32_t roots = 0;

  if (m != 0)
    for (int j = 0; j < 8; j++)
      if ((m >> (8 * j)) & 0xff)
        {
          const int p = p0 + j, r = find_root (parent, p);
          parent[p] = r;
          roots += r == p;
        }
  roots = Reduce (tmp).Sum (roots);
  if (threadIdx.x == 0)
    tile_counts[blockIdx.x] = roots;
}

/* Numbers the roots of a tile in raster order, after the tiles before it:
 * label = tile offset + rank in tile + 1, stored as -label in the root's
 * entry (other entries, being indices, are >= 0). */
__global__ void __launch_bounds__ (kTileThreads)
labelNumberKernel (const uint8_t *__restrict__ mask, int *__restrict__ parent,
                   const uint32_t *__restrict__ tile_counts,
                   const uint32_t *__restrict__ tile_offs, int ntiles,
                   SkyGpuState *__restrict__ st)
{
  typedef cub::BlockScan<uint32_t, kTileThreads> Scan;
  __shared__ typename Scan::TempStorage tmp;
  const int p0 = blockIdx.x * SKY_LABEL_TILE + threadIdx.x * 8;
  const uint64_t m = *reinterpret_cast<const uint64_t *> (mask + p0);
  uint32_t flags = 0, rank;

  if (m != 0)
    for (int j = 0; j < 8; j++)
      if (((m >> (8 * j)) & 0xff) && parent[p0 + j] == p0 + j)
        flags |= 1u << j;
  Scan (tmp).ExclusiveSum ((uint32_t) __popc (flags), rank);

  int label = (int) (tile_offs[blockIdx.x] + rank) + 1;
  for (int j = 0; j < 8; j++)
    if (flags & (1u << j))
      parent[p0 + j] = -label++;
  if (blockIdx.x == ntiles - 1 && threadIdx.x == 0)
    st->nsources = tile_offs[blockIdx.x] + tile_counts[blockIdx.x];
}

__global__ void __launch_bounds__ (kRelabelThreads)
labelRelabelKernel (const uint8_t *__restrict__ mask, int n, const int *__restrict__ parent,
                    int *__restrict__ labels)
{
  const int p0 = (blockIdx.x * kRelabelThreads + threadIdx.x) * 4;
  if (p0 >= n)
    return;
  const uchar4 m = *reinterpret_cast<const uchar4 *> (mask + p0);
  const uint8_t mb[4] = { m.x, m.y, m.z, m.w };
  int out[4];

#pragma unroll
  for (int j = 0; j < 4; j++)
    {
      out[j] = 0;
      if (mb[j])
        {
          const int v = parent[p0 + j];
          out[j] = v < 0 ? -v : -parent[v];
        }
    }
  *reinterpret_cast<int4 *> (labels + p0) = make_int4 (out[0], out[1], out[2], out[3]);
}

} /* namespace */

int
sky_gpu_label_scan_bytes (int64_t ntiles, size_t *bytes)
{
  *bytes = 0;
  SKY_CUDA (cub::DeviceScan::ExclusiveSum (nullptr, *bytes, (const uint32_t *) nullptr,
                                           (uint32_t *) nullptr, (int) ntiles));
  return SKY_OK;
}

int
sky_gpu_label_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  cudaStream_t s = gpu->stream;
  const int n = (int) (nx * ny), ntiles = (int) gpu->ntiles;
  int *parent = reinterpret_cast<int *> (gpu->d_work);
  const dim3 block (32, kRows), grid ((unsigned) ((nx + 31) / 32), (unsigned) ((ny + kRows - 1) / kRows));
  size_t scan_bytes = gpu->scan_temp_bytes;

  SKY_LAUNCH (labelInitKernel, grid, block, 0, s, gpu->d_mask, (int) nx, (int) ny, parent);
  SKY_LAUNCH (labelMergeKernel, grid, block, 0, s, gpu->d_mask, (int) nx, (int) ny, gpu->d_params,
              parent);
  SKY_LAUNCH (labelCompressKernel, ntiles, kTileThreads, 0, s, gpu->d_mask, parent,
              gpu->d_tile_counts);
  SKY_CUDA (cub::DeviceScan::ExclusiveSum (gpu->d_scan_temp, scan_bytes, gpu->d_tile_counts,
                                           gpu->d_tile_offs, ntiles, s));
  SKY_LAUNCH (labelNumberKernel, ntiles, kTileThreads, 0, s, gpu->d_mask, parent,
              gpu->d_tile_counts, gpu->d_tile_offs, ntiles, gpu->d_state);
  SKY_LAUNCH (labelRelabelKernel, (unsigned) ((n + 4 * kRelabelThreads - 1) / (4 * kRelabelThreads)),
              kRelabelThreads, 0, s, gpu->d_mask, n, parent, gpu->d_labels);
  return SKY_OK;
}
