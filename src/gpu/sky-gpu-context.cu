/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The device: whether there is a usable one and why not, the context that
 * owns a stream, events and buffers, and CUDA errors as statuses. */
#include "sky-gpu-detect-private.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A device needs at least this much free memory to be worth using. */
#define SKY_GPU_MIN_FREE (256u << 20)

int
sky_gpu_cuda_fail (cudaError_t err, const char *call, const char *file, int line)
{
  int status = err == cudaErrorMemoryAllocation ? SKY_ERR_MEMORY : SKY_ERR_UNAVAILABLE;
  const char *base = strrchr (file, '/');

  /* Clear a non-sticky error so that it is not reported again later. */
  cudaGetLastError ();
  return sky_fail (status, "CUDA: %s failed at %s:%d: %s (%s)", call, base ? base + 1 : file, line,
                   cudaGetErrorString (err), cudaGetErrorName (err));
}

static void
set_why (char *why, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
set_why (char *why, size_t size, const char *fmt, ...)
{
  va_list ap;

  if (why == NULL || size == 0)
    return;
  va_start (ap, fmt);
  vsnprintf (why, size, fmt, ap);
  va_end (ap);
}

int
sky_gpu_available (char *why, size_t why_size)
{
  char msg[512];
  int count = 0, driver = 0, runtime = 0;
  size_t free_bytes = 0, total_bytes = 0;
  cudaDeviceProp prop;
  cudaError_t err;

  /* The runtime is linked statically; the driver comes as libcuda.so.1.
   * Asking for it first gives a plainer reason than the runtime would. */
  if (dlopen ("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL)
    {
      const char *e = dlerror ();
      snprintf (msg, sizeof msg, "no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)",
                e ? e : "not found");
      set_why (why, why_size, "%s", msg);
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", msg);
    }

  cudaRuntimeGetVersion (&runtime);
  err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess || count == 0)
    {
      cudaDriverGetVersion (&driver);
      if (err == cudaErrorInsufficientDriver)
        snprintf (msg, sizeof msg,
                  "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA %d.%d",
                  driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
      else if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
        snprintf (msg, sizeof msg, "no CUDA device: the NVIDIA driver is loaded but sees no GPU");
      else
        snprintf (msg, sizeof msg, "CUDA cannot start: %s (%s)", cudaGetErrorString (err),
                  cudaGetErrorName (err));
      cudaGetLastError ();
      set_why (why, why_size, "%s", msg);
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", msg);
    }

  err = cudaGetDeviceProperties (&prop, 0);
  if (err == cudaSuccess)
    err = cudaSetDevice (0);
  if (err == cudaSuccess)
    err = cudaMemGetInfo (&free_bytes, &total_bytes);
  if (err != cudaSuccess)
    {
      snprintf (msg, sizeof msg, "CUDA device 0 cannot be used: %s (%s)", cudaGetErrorString (err),
                cudaGetErrorName (err));
      cudaGetLastError ();
      set_why (why, why_size, "%s", msg);
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", msg);
    }
  if (prop.major < 8)
    {
      snprintf (msg, sizeof msg,
                "%s has compute capability %d.%d; this build runs on 8.0 (Ampere) and newer",
                prop.name, prop.major, prop.minor);
      set_why (why, why_size, "%s", msg);
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", msg);
    }
  if (free_bytes < SKY_GPU_MIN_FREE)
    {
      snprintf (msg, sizeof msg, "%s has only %zu MiB of free memory (at least %u MiB needed)",
                prop.name, free_bytes >> 20, SKY_GPU_MIN_FREE >> 20);
      set_why (why, why_size, "%s", msg);
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", msg);
    }
  cudaDriverGetVersion (&driver);
  set_why (why, why_size, "%s, compute %d.%d, %d SMs, %.1f GiB (%.1f GiB free), driver CUDA %d.%d",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           total_bytes / 1073741824.0, free_bytes / 1073741824.0, driver / 1000,
           driver % 1000 / 10);
  return SKY_OK;
}

/* ------------------------------------------------------------- context */

static void
free_image_buffers (SkyGpu *gpu)
{
  cudaFree (gpu->d_image);
  cudaFree (gpu->d_mask);
  cudaFree (gpu->d_work);
  cudaFree (gpu->d_labels);
  cudaFree (gpu->d_tile_counts);
  cudaFree (gpu->d_super_counts);
  gpu->d_image = NULL;
  gpu->d_mask = NULL;
  gpu->d_work = NULL;
  gpu->d_labels = NULL;
  gpu->d_tile_counts = gpu->d_super_counts = NULL;
  gpu->capacity = 0;
  gpu->loaded_n = 0;
}

void
sky_gpu_free (SkyGpu *gpu)
{
  if (gpu == NULL)
    return;
  cudaSetDevice (gpu->device);
  if (gpu->stream)
    cudaStreamSynchronize (gpu->stream);
  free_image_buffers (gpu);
  sky_gpu_loader_free (gpu);
  sky_gpu_detect_free (gpu);
  sky_gpu_local_free (gpu);
  cudaFree (gpu->d_conv_out);
  cudaFree (gpu->d_conv_f32);
  cudaFree (gpu->d_counts);
  cudaFree (gpu->d_offs);
  cudaFree (gpu->d_cursor);
  cudaFree (gpu->d_block_coarse);
  cudaFree (gpu->d_coarse_cursor);
  cudaFree (gpu->d_bsum);
  cudaFree (gpu->d_bsum2);
  cudaFree (gpu->d_gsum);
  cudaFree (gpu->d_gsum2);
  cudaFree (gpu->d_meas);
  cudaFree (gpu->d_state);
  cudaFree (gpu->d_params);
  cudaFreeHost (gpu->h_state);
  cudaFreeHost (gpu->h_params);
  cudaFreeHost (gpu->h_cat);
  cudaFreeHost (gpu->h_stage);
  for (int i = 0; i < (int) (sizeof gpu->ev / sizeof gpu->ev[0]); i++)
    if (gpu->ev[i])
      cudaEventDestroy (gpu->ev[i]);
  if (gpu->ev_caller)
    cudaEventDestroy (gpu->ev_caller);
  if (gpu->stream)
    cudaStreamDestroy (gpu->stream);
  cudaGetLastError ();
  free (gpu);
}

template <typename T>
static int
device_alloc (SkyGpu *gpu, T **ptr, size_t bytes)
{
  (void) gpu;
  SKY_CUDA (cudaMalloc ((void **) ptr, bytes));
  return SKY_OK;
}

static int
context_init (SkyGpu *gpu)
{
  const size_t nb = SKY_CLIP_BUCKETS;
  int ret, major = 0, coop = 0;

  sky_gpu_switches_read (&gpu->switches);
  SKY_CUDA (cudaSetDevice (gpu->device));
  SKY_CUDA (cudaDeviceGetAttribute (&gpu->nsm, cudaDevAttrMultiProcessorCount, gpu->device));
  SKY_CUDA (cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, gpu->device));
  /* Programmatic dependent launches where the chip has them (Hopper on);
   * SKYSIFT_GPU_PDL=0 turns them off, for comparisons. */
  gpu->pdl = major >= 9 && !gpu->switches.pdl_off;
  /* The clip's full path as one cooperative kernel where the device can
   * launch those (SKYSIFT_GPU_FULL_COOP=0: five kernels, for comparisons). */
  SKY_CUDA (cudaDeviceGetAttribute (&coop, cudaDevAttrCooperativeLaunch, gpu->device));
  gpu->full_coop = coop && !gpu->switches.full_coop_off;
  SKY_CUDA (cudaStreamCreateWithFlags (&gpu->stream, cudaStreamNonBlocking));
  for (int i = 0; i < (int) (sizeof gpu->ev / sizeof gpu->ev[0]); i++)
    SKY_CUDA (cudaEventCreate (&gpu->ev[i]));
  if ((ret = device_alloc (gpu, &gpu->d_counts, nb * sizeof (uint32_t))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_offs, (nb + 1) * sizeof (uint32_t))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_cursor, nb * sizeof (uint32_t))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_block_coarse, (size_t) gpu->nsm * 256 * sizeof (uint32_t)))
             != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_coarse_cursor, 256 * sizeof (uint32_t))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_bsum, nb * sizeof (double))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_bsum2, nb * sizeof (double))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_gsum, SKY_CLIP_GROUPS * sizeof (double))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_gsum2, SKY_CLIP_GROUPS * sizeof (double))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_state, sizeof (SkyGpuState))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_params, sizeof (SkyGpuParams))) != SKY_OK)
    return ret;
  /* The clip's histogram starts from zero counts; the clip's scan clears
   * them again after each run. */
  SKY_CUDA (cudaMemset (gpu->d_counts, 0, nb * sizeof (uint32_t)));
  SKY_CUDA (cudaHostAlloc ((void **) &gpu->h_state, sizeof (SkyGpuState), cudaHostAllocDefault));
  SKY_CUDA (cudaHostAlloc ((void **) &gpu->h_params, sizeof (SkyGpuParams), cudaHostAllocDefault));
  return sky_gpu_clip_prepare (gpu);
}

int
sky_gpu_new (SkyGpu **out)
{
  char why[512];
  SkyGpu *gpu;
  int ret;

  *out = NULL;
  if ((ret = sky_gpu_available (why, sizeof why)) != SKY_OK)
    return ret;
  gpu = (SkyGpu *) calloc (1, sizeof *gpu);
  if (gpu == NULL)
    return sky_fail (SKY_ERR_MEMORY, "out of memory for a GPU context");
  gpu->device = 0;
  if ((ret = context_init (gpu)) != SKY_OK)
    {
      char msg[1024];
      snprintf (msg, sizeof msg, "%s", sky_last_error ());
      sky_gpu_free (gpu);
      return sky_fail (ret, "%s", msg);
    }
  *out = gpu;
  return SKY_OK;
}


/* d_work: the clip's values by bucket, then the labeller's union-find over
 * pixel indices, 4 bytes each up to 2^31 - 1 pixels and 8 beyond
 * (sky-gpu-label.cu). */
static size_t
work_bytes (int64_t n)
{
  return (size_t) ((n + 32767) / 32768 * 32768) * (n > INT32_MAX ? 8 : 4);
}

/* Bytes of the image-sized buffers for capacity pixels. */
static size_t
image_bytes (int64_t n)
{
  const int64_t ntiles = (n + SKY_LABEL_TILE - 1) / SKY_LABEL_TILE;
  const int64_t nsupers = (ntiles + SKY_LABEL_SUPER - 1) / SKY_LABEL_SUPER;

  return (size_t) ((n + 15) / 16 * 16) * 4      /* image */
         + (size_t) (ntiles * SKY_LABEL_TILE)   /* mask */
         + work_bytes (n)                        /* work */
         + (size_t) ((n + 15) / 16 * 16) * 4    /* labels */
         + (size_t) (ntiles + nsupers) * 4;     /* tile and super-tile counts */
}

size_t
sky_gpu_image_bytes (int64_t n)
{
  return image_bytes (n);
}

/* SKYSIFT_GPU_MEMORY_LIMIT caps the device memory one context may hold
 * (sky-gpu-switches.cu): a test can then run a GPU out of memory on purpose
 * and watch what the callers do. */
int
sky_gpu_check_memory_limit (const SkyGpu *gpu, size_t more, const char *what)
{
  const size_t limit = sky_gpu_memory_limit ();
  const size_t held = sky_gpu_device_bytes (gpu);

  if (limit == 0 || held + more <= limit)
    return SKY_OK;
  return sky_fail (SKY_ERR_MEMORY,
                   "the GPU needs %zu MiB more for %s, and SKYSIFT_GPU_MEMORY_LIMIT leaves %zu MiB "
                   "(the context holds %zu MiB)",
                   (more + (1u << 20) - 1) >> 20, what, held < limit ? (limit - held) >> 20 : 0,
                   held >> 20);
}

/* Image-sized buffers for n pixels, reused while they are large enough.
 * Checks the free memory first, so that a too-large image is a plain
 * SKY_ERR_MEMORY naming the sizes rather than a failed allocation. */
int
sky_gpu_ensure_buffers (SkyGpu *gpu, int64_t n)
{
  const int64_t ntiles = (n + SKY_LABEL_TILE - 1) / SKY_LABEL_TILE;
  const int64_t nsupers = (ntiles + SKY_LABEL_SUPER - 1) / SKY_LABEL_SUPER;
  size_t free_bytes, total_bytes, need;
  int ret;

  sky_gpu_clip_geometry (gpu, n, &gpu->clip_blocks, &gpu->clip_chunk);
  gpu->ntiles = ntiles;
  if (n <= gpu->capacity)
    return SKY_OK;

  free_image_buffers (gpu);

  need = image_bytes (n);
  if ((ret = sky_gpu_check_memory_limit (gpu, need, "the image's buffers")) != SKY_OK)
    return ret;
  SKY_CUDA (cudaMemGetInfo (&free_bytes, &total_bytes));
  if (need + (64u << 20) > free_bytes)
    return sky_fail (SKY_ERR_MEMORY,
                     "the GPU needs %zu MiB for a %lld-pixel image and has %zu MiB free of %zu MiB",
                     need >> 20, (long long) n, free_bytes >> 20, total_bytes >> 20);

  if ((ret = device_alloc (gpu, &gpu->d_image, (size_t) ((n + 15) / 16 * 16) * 4)) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_mask, (size_t) (ntiles * SKY_LABEL_TILE))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_work, work_bytes (n))) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_labels, (size_t) ((n + 15) / 16 * 16) * 4)) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_tile_counts, (size_t) ntiles * 4)) != SKY_OK
      || (ret = device_alloc (gpu, &gpu->d_super_counts, (size_t) nsupers * 4)) != SKY_OK)
    {
      free_image_buffers (gpu);
      return ret;
    }
  gpu->capacity = n;
  return SKY_OK;
}

/* The measure buffer for at least nsources sources. */
int
sky_gpu_ensure_measure (SkyGpu *gpu, int64_t nsources)
{
  if (nsources <= gpu->meas_cap && gpu->d_meas != NULL)
    return SKY_OK;
  if (gpu->d_meas != NULL)
    {
      cudaFree (gpu->d_meas);
      gpu->d_meas = NULL;
      gpu->meas_cap = 0;
    }
  nsources = (nsources + 255) / 256 * 256;
  int ret = sky_gpu_check_memory_limit (gpu, (size_t) nsources * (SKY_MEASURE_ACC_BYTES
                                                                  + SKY_MEASURE_CAT_BYTES),
                                        "the catalogue");
  if (ret != SKY_OK)
    return ret;
  SKY_CUDA (cudaMalloc ((void **) &gpu->d_meas,
                        (size_t) nsources * (SKY_MEASURE_ACC_BYTES + SKY_MEASURE_CAT_BYTES)));
  gpu->meas_cap = nsources;
  return SKY_OK;
}

size_t
sky_gpu_device_bytes (const SkyGpu *gpu)
{
  const size_t nb = SKY_CLIP_BUCKETS;
  size_t bytes;

  if (gpu == NULL)
    return 0;
  bytes = nb * 4 * 3 + 4 + nb * 8 * 2 + SKY_CLIP_GROUPS * 8 * 2 + (size_t) gpu->nsm * 256 * 4
          + 256 * 4 + sizeof (SkyGpuState) + sizeof (SkyGpuParams);
  if (gpu->capacity > 0)
    bytes += image_bytes (gpu->capacity);
  bytes += (size_t) gpu->meas_cap * (SKY_MEASURE_ACC_BYTES + SKY_MEASURE_CAT_BYTES);
  bytes += gpu->conv_out_bytes + gpu->conv_f32_bytes;
  bytes += sky_gpu_local_bytes (gpu);
  bytes += sky_gpu_detect_bytes (gpu);
  bytes += sky_gpu_loader_bytes (gpu);
  return bytes;
}

/* A caller's stream (CuPy's current one, say) before the context's: the
 * context's stream waits on the device for what was enqueued there so
 * far, and the host does not wait at all. */
int
sky_gpu_wait_for_stream (SkyGpu *gpu, void *stream)
{
  if (gpu->ev_caller == NULL)
    SKY_CUDA (cudaEventCreateWithFlags (&gpu->ev_caller, cudaEventDisableTiming));
  SKY_CUDA (cudaEventRecord (gpu->ev_caller, (cudaStream_t) stream));
  SKY_CUDA (cudaStreamWaitEvent (gpu->stream, gpu->ev_caller, 0));
  return SKY_OK;
}

/* ------------------------------------------------------------- pinning */

int
sky_gpu_pin (const SkyImage *img)
{
  SKY_CUDA (cudaHostRegister (img->pixels, (size_t) (img->nx * img->ny) * sizeof (float),
                              cudaHostRegisterDefault));
  return SKY_OK;
}

void
sky_gpu_unpin (const SkyImage *img)
{
  if (img->pixels != NULL)
    cudaHostUnregister (img->pixels);
  cudaGetLastError ();
}

/* ------------------------------------------------- buffers for display */

int
sky_gpu_device_buffers (const SkyGpu *gpu, SkyGpuDeviceBuffers *out)
{
  memset (out, 0, sizeof *out);
  if (gpu == NULL || gpu->capacity == 0)
    return sky_fail (SKY_ERR_ARGUMENT, "the GPU context holds no image yet");
  out->image = gpu->d_image;
  out->mask = gpu->d_mask;
  out->labels = gpu->d_labels;
  out->capacity = gpu->capacity;
  return SKY_OK;
}
