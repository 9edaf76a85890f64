/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-deblend-number.cuh: the deblending's last kernels, after the
 * island blocks: a bit at each source's first pixel, the bits counted per
 * 64-pixel word (scanned between), each source's label as the rank of its
 * first pixel in raster order, and the label image relabelled. Included
 * by sky-gpu-deblend.cu only, inside its anonymous namespace, after the
 * island kernel. */
/* The kernels after the islands' read what kernels of the same run wrote
 * (the header's counts by atomics, the parts, the ranks) through L2 only
 * (__ldcg): a line of it an earlier kernel of the run left in a
 * multiprocessor's L1 (the header, read everywhere by the maxima kernel;
 * the words the parts' labels go over, read by the island's block) would
 * otherwise be read stale, the launches being programmatic dependents of
 * one another. */
__device__ __forceinline__ int64_t
l2 (const int64_t *p)
{
  return (int64_t) __ldcg (reinterpret_cast<const long long *> (p));
}

__device__ __forceinline__ int
deblend_skipped (const SkyGpuDetectHeader *hdr)
{
  return __ldcg (&hdr->nsplit) == 0 || __ldcg (&hdr->scratch_overflow);
}

__device__ __forceinline__ int64_t *
island_part_first (int32_t *scratch, const u64 *offset, int64_t k, int64_t npix)
{
  return reinterpret_cast<int64_t *> (scratch + __ldcg (offset + k - 1) + 2 * npix);
}

__device__ __forceinline__ int32_t *
island_part_label (int32_t *scratch, const u64 *offset, int64_t k, int64_t npix)
{
  return scratch + __ldcg (offset + k - 1) + 6 * npix;   /* over the flag (or mark) words */
}

__device__ __forceinline__ int32_t *
island_owner (int32_t *scratch, const u64 *offset, int64_t k, int64_t npix)
{
  return scratch + __ldcg (offset + k - 1) + 5 * npix;
}

__global__ void __launch_bounds__ (kThreads)
deblendFirstsKernel (SkyGpuDetectHeader *__restrict__ hdr, SkyGpuState *__restrict__ st,
                     const u64 *__restrict__ karea, const u64 *__restrict__ kfirst,
                     const int32_t *__restrict__ nsub, int32_t *__restrict__ scratch,
                     const u64 *__restrict__ offset, u64 *__restrict__ bits,
                     uint8_t *__restrict__ deblended)
{
  sky_grid_wait ();
  const int64_t n = (int64_t) __ldcg (&hdr->nislands);
  const int64_t nsources = n + (int64_t) __ldcg (&hdr->extra);
  const int64_t tid = (int64_t) blockIdx.x * kThreads + threadIdx.x;
  const int64_t stride = (int64_t) gridDim.x * kThreads;

  if (tid == 0)
    st->nsources = (uint32_t) nsources;
  for (int64_t s = tid; s <= nsources; s += stride)
    deblended[s] = 0;
  if (deblend_skipped (hdr))
    return;
  for (int64_t k = tid + 1; k <= n; k += stride)
    {
      const int32_t parts = __ldcg (nsub + k);
      if (parts == 1)
        {
          const u64 f = __ldcg (kfirst + k);
          atomicOr (bits + (f >> 6), 1ull << (f & 63));
          continue;
        }
      const int64_t *pf = island_part_first (scratch, offset, k, (int64_t) __ldcg (karea + k));
      for (int32_t c = 0; c < parts; c++)
        {
          const u64 f = (u64) l2 (pf + c);
          atomicOr (bits + (f >> 6), 1ull << (f & 63));
        }
    }
}

__global__ void __launch_bounds__ (kThreads)
deblendWordCountKernel (const SkyGpuDetectHeader *__restrict__ hdr, const u64 *__restrict__ bits,
                        int64_t nwords, u64 *__restrict__ count)
{
  sky_grid_wait ();
  if (deblend_skipped (hdr))
    return;
  for (int64_t w = (int64_t) blockIdx.x * kThreads + threadIdx.x; w < nwords;
       w += (int64_t) gridDim.x * kThreads)
    count[w] = (u64) __popcll (__ldcg (bits + w));
}

__device__ __forceinline__ int32_t
rank_of (u64 f, const u64 *bits, const u64 *word_offset)
{
  const u64 below = __ldcg (bits + (f >> 6)) & ((1ull << (f & 63)) - 1);
  return (int32_t) (__ldcg (word_offset + (f >> 6)) + (u64) __popcll (below) + 1);
}

__global__ void __launch_bounds__ (kThreads)
deblendRankKernel (const SkyGpuDetectHeader *__restrict__ hdr, const u64 *__restrict__ karea,
                   const u64 *__restrict__ kfirst, const int32_t *__restrict__ nsub,
                   int32_t *__restrict__ scratch, const u64 *__restrict__ offset,
                   const u64 *__restrict__ bits, const u64 *__restrict__ word_offset,
                   int32_t *__restrict__ newlabel, uint8_t *__restrict__ deblended)
{
  sky_grid_wait ();
  if (deblend_skipped (hdr))
    return;
  const int64_t n = (int64_t) __ldcg (&hdr->nislands);
  for (int64_t k = (int64_t) blockIdx.x * kThreads + threadIdx.x + 1; k <= n;
       k += (int64_t) gridDim.x * kThreads)
    {
      const int32_t parts = __ldcg (nsub + k);
      if (parts == 1)
        {
          newlabel[k] = rank_of (__ldcg (kfirst + k), bits, word_offset);
          continue;
        }
      const int64_t npix = (int64_t) __ldcg (karea + k);
      const int64_t *pf = island_part_first (scratch, offset, k, npix);
      int32_t *pl = island_part_label (scratch, offset, k, npix);
      for (int32_t c = 0; c < parts; c++)
        {
          const int32_t label = rank_of ((u64) l2 (pf + c), bits, word_offset);
          pl[c] = label;
          deblended[label] = 1;
        }
    }
}

__global__ void __launch_bounds__ (kThreads)
deblendRelabelKernel (const SkyGpuDetectHeader *__restrict__ hdr, const u64 *__restrict__ karea,
                      const int32_t *__restrict__ nsub, int32_t *__restrict__ scratch,
                      const u64 *__restrict__ offset, const int32_t *__restrict__ index,
                      const int32_t *__restrict__ newlabel, int64_t n, int32_t *__restrict__ labels)
{
  sky_grid_wait ();
  if (deblend_skipped (hdr))
    return;
  for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * kThreads)
    {
      const int32_t l = __ldcg (labels + i);
      if (l == 0)
        continue;
      if (__ldcg (nsub + l) == 1)
        {
          labels[i] = __ldcg (newlabel + l);
          continue;
        }
      const int64_t npix = (int64_t) __ldcg (karea + l);
      const int32_t part = __ldcg (island_owner (scratch, offset, l, npix) + __ldcg (index + i));
      labels[i] = __ldcg (island_part_label (scratch, offset, l, npix) + part - 1);
    }
}
