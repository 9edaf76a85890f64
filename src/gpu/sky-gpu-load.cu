/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A file's plane straight into the context's image on the device, with no
 * image in host memory: threads pread the stored (big-endian) values in
 * chunks into a small ring of page-locked slots, each slot goes up by DMA
 * on its own stream while the threads read the next chunks, and the device
 * converts them. The conversion is the host reader's (sky-fits-read.c, to
 * cfitsio's bits): byte order, BSCALE/BZERO as (float) (v * scale + zero)
 * with the product rounded first, BLANK and infinities to the blank NaN,
 * NaN payloads kept as x86 keeps them. This file is built without fused
 * multiply-adds and flushing (src/gpu/meson.build), and the arithmetic is
 * spelled with round-to-nearest intrinsics besides. */
#include "sky-gpu-private.h"
#include "sky-fits-private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A slot: one chunk of stored values in page-locked memory, the stream
 * its copy (and, for 8-byte values, its conversion) runs on, and the event
 * that says the slot may be refilled. */
typedef struct {
  unsigned char *host;
  unsigned char *device;     /* 8-byte values: converted from here */
  cudaStream_t stream;
  cudaEvent_t done;
  int used;
} LoadSlot;

struct SkyGpuLoader {
  LoadSlot *slots;
  int nslots;
  size_t slot_bytes;
  unsigned char *host_ring, *device_ring;
  unsigned long long *d_counts, *h_counts;   /* non-finite, infinite */
};

enum { MAX_SLOTS = 34 };

void
sky_gpu_loader_free (SkyGpu *gpu)
{
  SkyGpuLoader *l = gpu->loader;

  if (l == NULL)
    return;
  for (int i = 0; i < l->nslots; i++)
    {
      if (l->slots[i].stream)
        {
          cudaStreamSynchronize (l->slots[i].stream);
          cudaStreamDestroy (l->slots[i].stream);
        }
      if (l->slots[i].done)
        cudaEventDestroy (l->slots[i].done);
    }
  cudaFreeHost (l->host_ring);
  cudaFree (l->device_ring);
  cudaFree (l->d_counts);
  cudaFreeHost (l->h_counts);
  free (l->slots);
  free (l);
  gpu->loader = NULL;
  cudaGetLastError ();
}

size_t
sky_gpu_loader_bytes (const SkyGpu *gpu)
{
  const SkyGpuLoader *l = gpu->loader;

  return l == NULL ? 0 : 16 + (l->device_ring ? l->slot_bytes * (size_t) l->nslots : 0);
}

/* The ring for nslots slots of slot_bytes (their device copies too where
 * device_slots), kept from an earlier load or sky_gpu_load_prepare where
 * it is large enough: page-locking costs about a millisecond a few MiB. */
static int
ensure_loader (SkyGpu *gpu, int nslots, size_t slot_bytes, int device_slots)
{
  SkyGpuLoader *l = gpu->loader;

  if (l == NULL || l->nslots < nslots || l->slot_bytes < slot_bytes)
    {
      sky_gpu_loader_free (gpu);
      l = (SkyGpuLoader *) calloc (1, sizeof *l);
      if (l == NULL
          || (l->slots = (LoadSlot *) calloc ((size_t) nslots, sizeof *l->slots)) == NULL)
        {
          free (l);
          return sky_fail (SKY_ERR_MEMORY, "out of memory for the GPU loader");
        }
      gpu->loader = l;
      l->nslots = nslots;
      l->slot_bytes = slot_bytes;
      SKY_CUDA (cudaHostAlloc ((void **) &l->host_ring, slot_bytes * (size_t) nslots,
                               cudaHostAllocDefault));
      SKY_CUDA (cudaMalloc ((void **) &l->d_counts, 2 * sizeof (unsigned long long)));
      SKY_CUDA (cudaHostAlloc ((void **) &l->h_counts, 2 * sizeof (unsigned long long),
                               cudaHostAllocDefault));
      for (int i = 0; i < nslots; i++)
        {
          LoadSlot *s = &l->slots[i];
          s->host = l->host_ring + slot_bytes * (size_t) i;
          SKY_CUDA (cudaStreamCreateWithFlags (&s->stream, cudaStreamNonBlocking));
          SKY_CUDA (cudaEventCreateWithFlags (&s->done, cudaEventDisableTiming));
        }
    }
  if (device_slots && l->device_ring == NULL)
    {
      int ret = sky_gpu_check_memory_limit (gpu, l->slot_bytes * (size_t) l->nslots,
                                            "the loader");
      if (ret != SKY_OK)
        return ret;
      SKY_CUDA (cudaMalloc ((void **) &l->device_ring, l->slot_bytes * (size_t) l->nslots));
      for (int i = 0; i < l->nslots; i++)
        l->slots[i].device = l->device_ring + l->slot_bytes * (size_t) i;
    }
  return SKY_OK;
}

/* ------------------------------------------------------- the conversion */

typedef struct {
  int bitpix;
  int scaled;
  int check_blank;
  int unsigned_offset;       /* BITPIX 64 with BZERO 2^63, BSCALE 1 */
  double scale, zero;
  long long blank;
  uint32_t blank_bits;
} Conversion;

#define ABS_MASK 0x7fffffffu
#define INF_BITS 0x7f800000u

/* x86's double to float of a NaN (cvtsd2ss): the sign, the top 23 bits of
 * the payload, quieted. The device's own conversion would give its
 * canonical NaN. */
__device__ __forceinline__ uint32_t
nan_to_float_bits (unsigned long long d)
{
  return (uint32_t) ((d >> 32) & 0x80000000u) | INF_BITS | 0x400000u
         | (uint32_t) ((d >> 29) & 0x7fffffu);
}

/* (float) (v * scale + zero), the product rounded to double first, as
 * cfitsio and the host reader compute it. A NaN v goes through x86's
 * arithmetic unchanged but quieted; the device's would give its own. */
__device__ __forceinline__ uint32_t
scaled_bits (double v, double scale, double zero)
{
  if (isnan (v))
    return nan_to_float_bits ((unsigned long long) __double_as_longlong (v));
  double product = __dmul_rn (v, scale);
  double sum = __dadd_rn (product, zero);
  if (isnan (sum))
    return nan_to_float_bits ((unsigned long long) __double_as_longlong (sum));
  return __float_as_uint (__double2float_rn (sum));
}

__device__ __forceinline__ uint32_t
double_bits (double d)
{
  if (isnan (d))
    return nan_to_float_bits ((unsigned long long) __double_as_longlong (d));
  return __float_as_uint (__double2float_rn (d));
}

__device__ __forceinline__ uint32_t
convert_one (const unsigned char *raw, int64_t i, const Conversion &c)
{
  switch (c.bitpix)
    {
    case -32:
      {
        uint32_t u = __byte_perm (reinterpret_cast<const uint32_t *> (raw)[i], 0, 0x0123);
        return c.scaled ? scaled_bits ((double) __uint_as_float (u), c.scale, c.zero) : u;
      }
    case 32:
      {
        int32_t v = (int32_t) __byte_perm (reinterpret_cast<const uint32_t *> (raw)[i], 0,
                                           0x0123);
        if (c.check_blank && v == (int32_t) c.blank)
          return c.blank_bits;
        return c.scaled ? scaled_bits ((double) v, c.scale, c.zero)
                        : __float_as_uint (__int2float_rn (v));
      }
    case 16:
      {
        uint16_t w = reinterpret_cast<const uint16_t *> (raw)[i];
        int16_t v = (int16_t) (uint16_t) ((w >> 8) | (w << 8));
        if (c.check_blank && v == (int16_t) c.blank)
          return c.blank_bits;
        return c.scaled ? scaled_bits ((double) v, c.scale, c.zero)
                        : __float_as_uint ((float) v);
      }
    case 8:
      {
        uint8_t v = raw[i];
        if (c.check_blank && v == (uint8_t) c.blank)
          return c.blank_bits;
        return c.scaled ? scaled_bits ((double) v, c.scale, c.zero)
                        : __float_as_uint ((float) v);
      }
    case -64:
      {
        const uint32_t *w = reinterpret_cast<const uint32_t *> (raw) + 2 * i;
        unsigned long long u = ((unsigned long long) __byte_perm (w[0], 0, 0x0123) << 32)
            | __byte_perm (w[1], 0, 0x0123);
        double d = __longlong_as_double ((long long) u);
        return c.scaled ? scaled_bits (d, c.scale, c.zero) : double_bits (d);
      }
    default: /* 64 */
      {
        const uint32_t *w = reinterpret_cast<const uint32_t *> (raw) + 2 * i;
        long long v = (long long) (((unsigned long long) __byte_perm (w[0], 0, 0x0123) << 32)
                                   | __byte_perm (w[1], 0, 0x0123));
        if (c.check_blank && v == c.blank)
          return c.blank_bits;
        if (c.unsigned_offset)
          return __float_as_uint (__ull2float_rn ((unsigned long long) v
                                                  ^ 0x8000000000000000ull));
        if (!c.scaled)
          return __float_as_uint (__ll2float_rn (v));
        return scaled_bits (__ll2double_rn (v), c.scale, c.zero);
      }
    }
}

/* Converts n stored values at raw into out (which may be raw itself for
 * 4-byte values: each thread reads its value before writing it), infinities
 * made the blank NaN, and adds the non-finite and the infinite pixels to
 * counts[0] and counts[1]. */
__global__ static void
convertKernel (const unsigned char *raw, uint32_t *out, int64_t n, Conversion c,
               unsigned long long *counts)
{
  unsigned nonfinite = 0, infinite = 0;

  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * blockDim.x)
    {
      uint32_t u = convert_one (raw, i, c);
      uint32_t a = u & ABS_MASK;
      nonfinite += a >= INF_BITS;
      infinite += a == INF_BITS;
      out[i] = a == INF_BITS ? c.blank_bits : u;
    }
  for (int off = 16; off > 0; off >>= 1)
    {
      nonfinite += __shfl_down_sync (0xffffffffu, nonfinite, off);
      infinite += __shfl_down_sync (0xffffffffu, infinite, off);
    }
  if ((threadIdx.x & 31) == 0 && (nonfinite | infinite) != 0)
    {
      atomicAdd (&counts[0], (unsigned long long) nonfinite);
      atomicAdd (&counts[1], (unsigned long long) infinite);
    }
}

static int
launch_convert (SkyGpu *gpu, const unsigned char *raw, float *out, int64_t n,
                const Conversion &c, cudaStream_t s)
{
  int64_t want = (n + 255) / 256;
  int blocks = (int) (want < (int64_t) gpu->nsm * 8 ? want : (int64_t) gpu->nsm * 8);

  if (n <= 0)
    return SKY_OK;
  convertKernel<<<blocks, 256, 0, s>>> (raw, (uint32_t *) out, n, c, gpu->loader->d_counts);
  SKY_CUDA (cudaGetLastError ());
  return SKY_OK;
}

/* ------------------------------------------------------- the pipeline */

typedef struct {
  SkyGpu *gpu;
  const SkyFitsRawPlane *plane;
  Conversion conv;
  int fd;
  int bytes;                 /* per stored value */
  int64_t chunk_pixels;
  unsigned char *region;     /* 1 to 4-byte values land here whole, converted at the end */
  pthread_mutex_t lock;
  int free_slots[MAX_SLOTS];
  int nfree;
  int error;                 /* first errno, -1 where the file ended, -2 a CUDA failure */
  cudaError_t cuda_error;
  const char *cuda_call;
} Pipe;

static void
pipe_fail (Pipe *p, int error, cudaError_t cuda_error, const char *call)
{
  pthread_mutex_lock (&p->lock);
  if (p->error == 0)
    {
      p->error = error;
      p->cuda_error = cuda_error;
      p->cuda_call = call;
    }
  pthread_mutex_unlock (&p->lock);
}

/* One chunk: a free slot (its last copy waited for), the read, the copy up
 * and, for 8-byte values, the conversion, all on the slot's stream. There
 * are more slots than threads, so one is always free. */
static void
load_chunk (void *data, int task)
{
  Pipe *p = (Pipe *) data;
  SkyGpuLoader *l = p->gpu->loader;
  const int64_t first = task * p->chunk_pixels;
  const int64_t count = p->plane->npixels - first < p->chunk_pixels ? p->plane->npixels - first
                                                                    : p->chunk_pixels;
  const size_t nbytes = (size_t) (count * p->bytes);
  LoadSlot *s;
  cudaError_t err = cudaSuccess;
  int slot, read_err;

  pthread_mutex_lock (&p->lock);
  slot = p->error == 0 && p->nfree > 0 ? p->free_slots[--p->nfree] : -1;
  /* Threads hold a slot each at most and there are more slots: none free
   * would be a fault here, never a chunk skipped in silence. */
  if (slot < 0 && p->error == 0)
    p->error = EDEADLK;
  pthread_mutex_unlock (&p->lock);
  if (slot < 0)
    return;
  s = &l->slots[slot];
  if (s->used && (err = cudaEventSynchronize (s->done)) != cudaSuccess)
    pipe_fail (p, -2, err, "cudaEventSynchronize");
  else if ((read_err = sky_fits_pread (p->fd, s->host, nbytes,
                                       p->plane->offset + first * p->bytes)) != 0)
    pipe_fail (p, read_err, cudaSuccess, NULL);
  else if (p->region != NULL)
    {
      err = cudaMemcpyAsync (p->region + first * p->bytes, s->host, nbytes,
                             cudaMemcpyHostToDevice, s->stream);
      if (err != cudaSuccess)
        pipe_fail (p, -2, err, "cudaMemcpyAsync");
    }
  else
    {
      err = cudaMemcpyAsync (s->device, s->host, nbytes, cudaMemcpyHostToDevice, s->stream);
      if (err == cudaSuccess)
        {
          int64_t want = (count + 255) / 256;
          int blocks = (int) (want < 64 ? want : 64);
          convertKernel<<<blocks, 256, 0, s->stream>>> (
            s->device, (uint32_t *) (p->gpu->d_image + first), count, p->conv, l->d_counts);
          err = cudaGetLastError ();
        }
      if (err != cudaSuccess)
        pipe_fail (p, -2, err, "cudaMemcpyAsync or convertKernel");
    }
  if (err == cudaSuccess && (err = cudaEventRecord (s->done, s->stream)) == cudaSuccess)
    s->used = 1;
  else if (err != cudaSuccess)
    pipe_fail (p, -2, err, "cudaEventRecord");
  pthread_mutex_lock (&p->lock);
  p->free_slots[p->nfree++] = slot;
  pthread_mutex_unlock (&p->lock);
}

static Conversion
conversion_of (const SkyFitsRawPlane *plane)
{
  Conversion c;
  float blank = NAN;

  memset (&c, 0, sizeof c);
  c.bitpix = plane->bitpix;
  c.scaled = !(plane->scale == 1. && plane->zero == 0.);
  c.check_blank = plane->check_blank;
  c.unsigned_offset = plane->bitpix == 64 && plane->scale == 1.
                      && plane->zero == 9223372036854775808.;
  c.scale = plane->scale;
  c.zero = plane->zero;
  c.blank = plane->blank;
  memcpy (&c.blank_bits, &blank, sizeof blank);
  return c;
}

static size_t default_chunk_bytes (int64_t plane_bytes, int nthreads);

/* Threads and slots for a plane of plane_bytes: every thread where there
 * is a chunk for it, two slots more than threads so that a thread never
 * waits for one. */
static void
plan (int64_t plane_bytes, int *nthreads, size_t *chunk_bytes, int64_t *nchunks, int *nslots)
{
  if (*nthreads <= 0)
    *nthreads = sky_default_threads ();
  if (*chunk_bytes == 0)
    *chunk_bytes = default_chunk_bytes (plane_bytes, *nthreads);
  *chunk_bytes = *chunk_bytes / 8 * 8 > 8 ? *chunk_bytes / 8 * 8 : 8;
  *nchunks = (plane_bytes + (int64_t) *chunk_bytes - 1) / (int64_t) *chunk_bytes;
  if (*nthreads > *nchunks)
    *nthreads = (int) *nchunks;
  if (*nthreads > MAX_SLOTS - 2)
    *nthreads = MAX_SLOTS - 2;
  *nslots = *nthreads + 2 < *nchunks ? *nthreads + 2 : (int) *nchunks;
}

/* The chunk: a quarter of each thread's share, from 64 KiB to 4 MiB, so
 * that a small image still spreads over every thread and a large one
 * costs few copies. */
static size_t
default_chunk_bytes (int64_t plane_bytes, int nthreads)
{
  int64_t b = plane_bytes / ((int64_t) nthreads * 4);

  b = b < (64 << 10) ? (64 << 10) : b > (4 << 20) ? (4 << 20) : b;
  return (size_t) ((b + 4095) / 4096 * 4096);
}

static int
run_pipeline (SkyGpu *gpu, const SkyFitsRawPlane *plane, const char *path, int nthreads,
              size_t chunk_bytes, SkyGpuLoadTimes *t)
{
  const int bytes = abs (plane->bitpix) / 8;
  const int64_t n = plane->npixels;
  SkyGpuLoader *l;
  Pipe p;
  int64_t nchunks;
  int nslots, ret;
  double t0 = sky_now_ms ();
  struct stat st;

  plan (n * bytes, &nthreads, &chunk_bytes, &nchunks, &nslots);
  if (nchunks > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "%s: %lld chunks are too many to load", path,
                     (long long) nchunks);

  if ((ret = sky_gpu_ensure_buffers (gpu, n)) != SKY_OK)
    return ret;
  t->buffers_ms = sky_now_ms () - t0;
  if ((ret = ensure_loader (gpu, nslots, chunk_bytes, bytes == 8)) != SKY_OK)
    return ret;
  l = gpu->loader;
  t->ring_ms = sky_now_ms () - t0 - t->buffers_ms;
  nslots = l->nslots; /* a ring prepared larger serves as it is */

  memset (&p, 0, sizeof p);
  p.gpu = gpu;
  p.plane = plane;
  p.conv = conversion_of (plane);
  p.bytes = bytes;
  p.chunk_pixels = (int64_t) chunk_bytes / bytes;
  /* 4-byte values land in the image and are converted there; 1 and
   * 2-byte ones in the work buffer (4 bytes a pixel), converted into the
   * image at the end; 8-byte ones chunk by chunk from the slot's device
   * copy. */
  p.region = bytes == 4   ? (unsigned char *) gpu->d_image
             : bytes < 4 ? (unsigned char *) gpu->d_work
                         : NULL;
  p.nfree = nslots;
  for (int i = 0; i < nslots; i++)
    p.free_slots[i] = nslots - 1 - i;
  pthread_mutex_init (&p.lock, NULL);
  p.fd = open (path, O_RDONLY | O_CLOEXEC);
  if (p.fd < 0)
    {
      pthread_mutex_destroy (&p.lock);
      return sky_fail (SKY_ERR_IO, "%s: cannot open the file to read its pixels: %s", path,
                       strerror (errno));
    }
  if (fstat (p.fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (p.fd);
      pthread_mutex_destroy (&p.lock);
      return sky_fail (SKY_ERR_ARGUMENT, "%s: not a regular file: the device loader needs one",
                       path);
    }

  /* The counts start from zero before any slot's stream converts. */
  SKY_CUDA (cudaMemsetAsync (l->d_counts, 0, 2 * sizeof (unsigned long long), gpu->stream));
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));
  for (int i = 0; i < l->nslots; i++)
    l->slots[i].used = 0;
  sky_parallel_for ((int) nchunks, nthreads, load_chunk, &p);
  close (p.fd);
  pthread_mutex_destroy (&p.lock);

  /* The context's stream waits for every slot's last copy, converts what
   * waits whole, and brings the counts home. */
  for (int i = 0; i < nslots; i++)
    if (l->slots[i].used)
      SKY_CUDA (cudaStreamWaitEvent (gpu->stream, l->slots[i].done, 0));
  if (p.error == 0 && p.region != NULL
      && (ret = launch_convert (gpu, p.region, gpu->d_image, n, p.conv, gpu->stream)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaMemcpyAsync (l->h_counts, l->d_counts, 2 * sizeof (unsigned long long),
                             cudaMemcpyDeviceToHost, gpu->stream));
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));

  if (p.error == -1)
    return sky_fail (SKY_ERR_IO, "%s: the file ends before the pixels its header describes",
                     path);
  if (p.error == -2)
    return sky_gpu_cuda_fail (p.cuda_error, p.cuda_call, __FILE__, __LINE__);
  if (p.error != 0)
    return sky_fail (SKY_ERR_IO, "%s: cannot read the pixels: %s", path, strerror (p.error));
  t->nchunks = nchunks;
  t->chunk_bytes = (int64_t) chunk_bytes;
  t->nslots = nslots;
  t->nthreads = nthreads;
  t->stream_ms = sky_now_ms () - t0 - t->buffers_ms - t->ring_ms;
  return SKY_OK;
}

int
sky_gpu_load_prepare (SkyGpu *gpu, int64_t plane_bytes, int nthreads)
{
  size_t chunk_bytes = 0;
  int64_t nchunks;
  int nslots, ret;
  cudaFuncAttributes attr;

  SKY_CUDA (cudaSetDevice (gpu->device));
  plan (plane_bytes > 0 ? plane_bytes : 1, &nthreads, &chunk_bytes, &nchunks, &nslots);
  if ((ret = ensure_loader (gpu, nslots, chunk_bytes, 0)) != SKY_OK)
    return ret;
  /* Loads the conversion's module now (CUDA loads modules lazily, at a
   * kernel's first launch). */
  SKY_CUDA (cudaFuncGetAttributes (&attr, convertKernel));
  return SKY_OK;
}

int
sky_gpu_load_plane (SkyGpu *gpu, SkyPlaneFile *f, SkyImage *img, int nthreads,
                    size_t chunk_bytes, SkyGpuLoadTimes *times)
{
  const SkyFitsRawPlane *plane = sky_plane_file_raw (f);
  const char *path = sky_plane_file_path (f);
  SkyGpuLoadTimes local;
  int ret;

  if (times == NULL)
    times = &local;
  memset (times, 0, sizeof *times);
  gpu->loaded_n = 0;
  if (gpu->broken)
    return sky_fail (SKY_ERR_UNAVAILABLE, "the GPU context failed earlier: %s", gpu->broken_why);
  if (plane->npixels != img->nx * img->ny || img->nx <= 0 || img->ny <= 0
      || img->nx > INT32_MAX || img->ny > INT32_MAX || img->nx * img->ny > (int64_t) UINT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "the GPU backend takes 1 to 2^32 - 1 pixels (got %lld x %lld)",
                     (long long) img->nx, (long long) img->ny);
  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = run_pipeline (gpu, plane, path, nthreads, chunk_bytes, times)) != SKY_OK)
    {
      /* A failed CUDA call may have left work on the slots' streams. */
      if (gpu->loader != NULL)
        for (int i = 0; i < gpu->loader->nslots; i++)
          cudaStreamSynchronize (gpu->loader->slots[i].stream);
      cudaGetLastError ();
      return ret;
    }
  img->nblank = (int64_t) gpu->loader->h_counts[0];
  img->ninf = (int64_t) gpu->loader->h_counts[1];
  if (img->nblank == img->nx * img->ny)
    return sky_fail (SKY_ERR_EMPTY, "%s: every pixel of HDU %d plane %lld is blank", path,
                     img->hdu, (long long) img->plane);
  gpu->loaded_n = img->nx * img->ny;
  return SKY_OK;
}

int
sky_gpu_image_download (SkyGpu *gpu, float *pixels, int64_t n)
{
  if (gpu->capacity < n || gpu->d_image == NULL)
    return sky_fail (SKY_ERR_ARGUMENT, "the GPU context holds no image of %lld pixels",
                     (long long) n);
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));
  SKY_CUDA (cudaMemcpy (pixels, gpu->d_image, (size_t) n * sizeof (float),
                        cudaMemcpyDeviceToHost));
  return SKY_OK;
}
