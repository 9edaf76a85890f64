/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The display's textures filled two ways, headless (no X server): from host
 * memory (any OpenGL, Mesa's llvmpipe in CI) and through CUDA/OpenGL
 * interop (sky-gpu-gl.h, the NVIDIA driver). Each texture is read back
 * with glGetTexImage and compared with what was meant to go in; the
 * colour-mapped picture with the CPU's colour mapping (sky-colormap.h).
 *
 *   test-gl-interop gl            the host half: EGL device or surfaceless
 *   test-gl-interop cuda          the interop half: the EGL device of CUDA
 *                                 device 0, textures written by the device
 *   test-gl-interop bench [N] [R] a result of N x N (2048) displayed both
 *                                 ways R times (200): medians in ms
 *
 * The mask and labels also go into buffer objects read as buffer textures,
 * as the image view holds them on desktop OpenGL: test-gl-interop-buffers.c.
 *
 * Prints TAP lines; exits 0, 1 on a failed check, 77 (skip) saying which
 * precondition is missing. */
#include <epoxy/gl.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test-gl-interop.h"
#include "sky-colormap.h"

int ntests, nfailed;

void
check (int ok, const char *fmt, ...)
{
  va_list ap;

  printf ("%s %d - ", ok ? "ok" : "not ok", ++ntests);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
  nfailed += !ok;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t
rng (void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t) (rng_state >> 16);
}

/* A field like a radio image: noise, a few bright sources, some blanks. */
float *
make_image (int nx, int ny)
{
  float *img = malloc ((size_t) nx * ny * sizeof *img);

  for (size_t i = 0; i < (size_t) nx * ny; i++)
    {
      float u = (rng () & 0xFFFFFF) / 16777216.0f;
      img[i] = (u - 0.5f) * 0.02f + ((rng () & 1023) == 0 ? u * 3.0f : 0.0f);
      if ((rng () & 4095) == 0)
        img[i] = NAN;
    }
  return img;
}

void *
make_bytes (size_t n)
{
  uint8_t *p = malloc (n);
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t) rng ();
  return p;
}

static const uint8_t blank_rgba[4] = { 140, 158, 191, 255 };

/* The CPU's colour mapping of the display, pixel by pixel. */
static void
cpu_colormap (const float *img, size_t n, double lo, double hi, SkyStretch s,
              const uint8_t *cmap, uint8_t *out)
{
  for (size_t i = 0; i < n; i++, out += 4)
    {
      if (isnan (img[i]))
        {
          memcpy (out, blank_rgba, 4);
          continue;
        }
      int c = (int) (sky_stretch_apply (s, (img[i] - lo) / (hi - lo), NULL) * 255 + 0.5);
      memcpy (out, cmap + 4 * c, 3);
      out[3] = 255;
    }
}

typedef struct {
  GLint internal;
  GLenum format, type;
  int bytes;
  const char *name;
} Format;

static const Format formats[] = {
  { GL_R32F, GL_RED, GL_FLOAT, 4, "R32F (image)" },
  { GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1, "R8UI (mask)" },
  { GL_R32I, GL_RED_INTEGER, GL_INT, 4, "R32I (labels)" },
  { GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, "RGBA8 (colour-mapped)" },
};

GLuint
gl_texture (GLenum internal, GLenum format, GLenum type, int nx, int ny, const void *pixels)
{
  GLuint tex;

  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_2D, tex);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D (GL_TEXTURE_2D, 0, (GLint) internal, nx, ny, 0, format, type, pixels);
  return tex;
}

static GLuint
texture (const Format *f, int nx, int ny, const void *pixels)
{
  return gl_texture (f->internal, f->format, f->type, nx, ny, pixels);
}

/* Overwrites the texture with a pattern no real write leaves, so that a
 * write that never happened cannot pass. */
static void
poison (GLuint tex, const Format *f, int nx, int ny)
{
  size_t n = (size_t) nx * ny * f->bytes;
  void *p = malloc (n);

  memset (p, 0xA5, n);
  glBindTexture (GL_TEXTURE_2D, tex);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
  glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, nx, ny, f->format, f->type, p);
  free (p);
}

/* Reads the texture back and counts the bytes that differ from want. */
static size_t
readback_diff (GLuint tex, const Format *f, int nx, int ny, const void *want)
{
  size_t n = (size_t) nx * ny * f->bytes, diff = 0;
  uint8_t *got = malloc (n);

  glBindTexture (GL_TEXTURE_2D, tex);
  glPixelStorei (GL_PACK_ALIGNMENT, 1);
  glGetTexImage (GL_TEXTURE_2D, 0, f->format, f->type, got);
  for (size_t i = 0; i < n; i++)
    diff += got[i] != ((const uint8_t *) want)[i];
  free (got);
  return diff;
}

/* ------------------------------------------------------------ host half */

static int
run_gl (void)
{
  const int nx = 517, ny = 389;   /* odd widths: rows not 4-byte aligned */
  const size_t n = (size_t) nx * ny;
  char why[512] = "";
  GlHeadless gl;
  float *img;
  void *mask, *labels;
  uint8_t cmap[SKY_CMAP_SIZE * 4], *rgba;

  if (gl_headless_open (&gl, -1, why, sizeof why) != 0)
    {
      printf ("1..0 # SKIP %s\n", why);
      return SKIP;
    }
  printf ("# %s\n", gl.what);
  img = make_image (nx, ny);
  mask = make_bytes (n);
  labels = make_bytes (n * 4);
  const void *data[3] = { img, mask, labels };
  for (int k = 0; k < 3; k++)
    {
      GLuint tex = texture (&formats[k], nx, ny, NULL);
      poison (tex, &formats[k], nx, ny);
      glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, nx, ny, formats[k].format, formats[k].type,
                       data[k]);
      size_t d = readback_diff (tex, &formats[k], nx, ny, data[k]);
      check (d == 0 && glGetError () == GL_NO_ERROR, "host upload of %d x %d %s reads back "
             "bit for bit (%zu bytes differ)", nx, ny, formats[k].name, d);
      glDeleteTextures (1, &tex);
    }

  /* The colour-mapped picture through a pixel buffer, as the interop path
   * hands it to GL. */
  rgba = malloc (n * 4);
  sky_colormap_fill (SKY_COLORMAP_INFERNO, cmap);
  cpu_colormap (img, n, -0.01, 0.05, SKY_STRETCH_LOG, cmap, rgba);
  GLuint pbo, tex = texture (&formats[3], nx, ny, NULL);
  poison (tex, &formats[3], nx, ny);
  glGenBuffers (1, &pbo);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
  glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr) (n * 4), rgba, GL_STREAM_DRAW);
  glBindTexture (GL_TEXTURE_2D, tex);
  glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, nx, ny, GL_RGBA, GL_UNSIGNED_BYTE, (void *) 0);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  size_t d = readback_diff (tex, &formats[3], nx, ny, rgba);
  check (d == 0 && glGetError () == GL_NO_ERROR,
         "colour-mapped picture through a pixel buffer reads back (%zu bytes differ)", d);
  glDeleteBuffers (1, &pbo);
  glDeleteTextures (1, &tex);
  free (rgba);
  free (img);
  free (mask);
  free (labels);
  buffers_gl_checks ();
  gl_headless_close (&gl);
  printf ("1..%d\n", ntests);
  return nfailed ? 1 : 0;
}

#ifdef SKYSIFT_HAVE_GPU_GL
/* ------------------------------------------------------- interop half */

void *
to_device (const void *host, size_t bytes)
{
  void *d = NULL;
  CU (cudaMalloc (&d, bytes));
  CU (cudaMemcpy (d, host, bytes, cudaMemcpyHostToDevice));
  return d;
}

/* Preconditions of the interop half, in the order a person fixes them. */
int
open_cuda_gl (GlHeadless *gl, char *why, size_t size)
{
  char gpu[512] = "";

  if (sky_gpu_available (gpu, sizeof gpu) != SKY_OK)
    {
      snprintf (why, size, "no CUDA device: %s", gpu);
      return -1;
    }
  printf ("# CUDA: %s\n", gpu);
  if (gl_headless_open (gl, 0, why, size) != 0)
    return -1;
  printf ("# %s\n", gl->what);
  /* The context must be on the CUDA device (the surfaceless fallback
   * takes the driver's default GPU; Mesa's is none). */
  if (sky_gpu_gl_check (0, gpu, sizeof gpu) != SKY_OK)
    {
      snprintf (why, size, "the OpenGL context is not on CUDA device 0: %s", gpu);
      gl_headless_close (gl);
      return -1;
    }
  return 0;
}

/* Writes the three display textures from device memory and reads them
 * back; one context's worth (the test runs it on two contexts in turn, as
 * a widget realized twice gets). */
static void
interop_round (const char *when, int nx, int ny, const void *const host[3],
               const void *const dev[3])
{
  char why[256];

  check (sky_gpu_gl_check (0, why, sizeof why) == SKY_OK, "%s: %s", when, why);
  for (int k = 0; k < 3; k++)
    {
      const Format *f = &formats[k];
      GLuint tex = texture (f, nx, ny, NULL);
      SkyGpuGl *obj = NULL;
      double ms = -1;
      int ret;

      poison (tex, f, nx, ny);
      ret = sky_gpu_gl_register_texture (tex, GL_TEXTURE_2D, &obj);
      if (ret == SKY_OK)
        ret = sky_gpu_gl_write_texture (NULL, obj, dev[k], (size_t) nx * f->bytes, ny, &ms);
      size_t d = ret == SKY_OK ? readback_diff (tex, f, nx, ny, host[k]) : (size_t) -1;
      check (ret == SKY_OK && d == 0 && ms >= 0, "%s: %s written from device memory through "
             "interop reads back bit for bit (%s%zu bytes differ, %.3f ms)", when, f->name,
             ret == SKY_OK ? "" : sky_last_error (), d, ms);
      sky_gpu_gl_unregister (obj);
      glDeleteTextures (1, &tex);
    }
  buffers_cuda_round (when, nx, ny, host[1], host[2], dev[1], dev[2]);
}

/* A GPU convolution's output, kept on the device by its context, written
 * into a registered R32F texture (sky_gpu_gl_write_convolved) must read
 * back as the downloaded output: bit for bit in float32, and in float64
 * as the host's rounding of the download to float. */
static void
convolved_round (int nx, int ny)
{
  float *in32 = make_image (nx, ny);
  double *in64 = malloc ((size_t) nx * ny * sizeof *in64);
  SkyGpu *gpu = NULL;
  SkyGpuConvolveOutput o;
  SkyKernel k = { 0 };
  char cmp[64];

  for (size_t i = 0; i < (size_t) nx * ny; i++)
    in64[i] = isnan (in32[i]) ? 0.0 : in32[i] * 1.000000123;   /* bits past float's */
  for (size_t i = 0; i < (size_t) nx * ny; i++)
    in32[i] = isnan (in32[i]) ? 0.0f : in32[i];
  if (sky_gpu_new (&gpu) != SKY_OK || sky_kernel_parse (&k, "lesson") != SKY_OK)
    {
      check (0, "a GPU context and the lesson's kernel: %s", sky_last_error ());
      return;
    }
  check (sky_gpu_convolve_output (gpu, &o) == SKY_ERR_ARGUMENT && o.data == NULL,
         "a context that has convolved nothing offers no output");
  for (int f64 = 0; f64 <= 1; f64++)
    for (int mode = 0; mode < 3; mode++)
      {
        static const SkyConvolveMode modes[3] = { SKY_CONVOLVE_FULL, SKY_CONVOLVE_SAME,
                                                  SKY_CONVOLVE_VALID };
        static const char *names[3] = { "full", "same", "valid" };
        int64_t onx, ony, x0, y0;
        int swapped;
        sky_convolve_geometry (nx, ny, &k, modes[mode], &onx, &ony, &x0, &y0, &swapped);
        size_t n = (size_t) (onx * ony);
        void *down = malloc (n * (f64 ? 8 : 4));
        float *want = malloc (n * sizeof *want);
        int ret = f64 ? sky_gpu_convolve2d_f64 (gpu, in64, nx, ny, &k, modes[mode],
                                                SKY_CONVOLVE_AUTO, down, NULL)
                      : sky_gpu_convolve2d_f32 (gpu, in32, nx, ny, &k, modes[mode],
                                                SKY_CONVOLVE_AUTO, down, NULL);
        /* A 1D convolution between must leave the 2D output alone. */
        float v[3] = { 1, 2, 1 }, *o1 = malloc (((size_t) nx * ny + 2) * sizeof *o1);
        if (ret == SKY_OK)
          ret = sky_gpu_convolve1d_f32 (gpu, in32, (int64_t) nx * ny, v, 3, o1, NULL);
        free (o1);
        for (size_t i = 0; i < n; i++)
          want[i] = f64 ? (float) ((double *) down)[i] : ((float *) down)[i];
        snprintf (cmp, sizeof cmp, "%s %s, %lld x %lld", f64 ? "float64" : "float32",
                  names[mode], (long long) onx, (long long) ony);
        int got = ret == SKY_OK ? sky_gpu_convolve_output (gpu, &o) : ret;
        check (got == SKY_OK && o.nx == onx && o.ny == ony && o.f64 == f64,
               "%s: the context keeps the output on the device (%s)", cmp,
               got == SKY_OK ? "ok" : sky_last_error ());
        GLuint tex = texture (&formats[0], (int) onx, (int) ony, NULL);
        SkyGpuGl *obj = NULL;
        double ms = -1;
        poison (tex, &formats[0], (int) onx, (int) ony);
        if (got == SKY_OK && (got = sky_gpu_gl_register_texture (tex, GL_TEXTURE_2D, &obj))
                             == SKY_OK)
          got = sky_gpu_gl_write_convolved (gpu, obj, &ms);
        size_t d = got == SKY_OK ? readback_diff (tex, &formats[0], (int) onx, (int) ony, want)
                                 : (size_t) -1;
        check (got == SKY_OK && d == 0 && ms >= 0, "%s: written from the device into an R32F "
               "texture, it reads back as the download%s bit for bit (%s%zu bytes differ, "
               "%.3f ms)", cmp, f64 ? " rounded to float" : "", got == SKY_OK ? ""
               : sky_last_error (), d, ms);
        sky_gpu_gl_unregister (obj);
        glDeleteTextures (1, &tex);
        free (down);
        free (want);
      }
  /* A failed 2D convolution (here no output array) leaves no output to show. */
  int ret = sky_gpu_convolve2d_f64 (gpu, in64, nx, ny, &k, SKY_CONVOLVE_SAME,
                                    SKY_CONVOLVE_AUTO, NULL, NULL);
  check (ret != SKY_OK && sky_gpu_convolve_output (gpu, &o) == SKY_ERR_ARGUMENT,
         "after a failed 2D convolution the context offers no output");
  sky_kernel_clear (&k);
  sky_gpu_free (gpu);
  free (in32);
  free (in64);
}

/* A result's three planes of nx x ny (the float image, the mask, the
 * labels), on the host and on the device, as the interop writes read them. */
typedef struct {
  float *img;
  const void *host[3];
  const void *dev[3];
} Planes;

static void
planes_make (Planes *p, int nx, int ny)
{
  static const size_t bytes[3] = { 4, 1, 4 };
  const size_t n = (size_t) nx * ny;

  p->img = make_image (nx, ny);
  p->host[0] = p->img;
  p->host[1] = make_bytes (n);
  p->host[2] = make_bytes (n * 4);
  for (int k = 0; k < 3; k++)
    p->dev[k] = to_device (p->host[k], n * bytes[k]);
}

static void
planes_free (Planes *p)
{
  for (int k = 0; k < 3; k++)
    {
      cudaFree ((void *) p->dev[k]);
      free ((void *) p->host[k]);
    }
}

/* A CUDA/GL context, or the TAP plan that skips the run and why. */
static int
open_or_skip (GlHeadless *gl)
{
  char why[512] = "";

  if (open_cuda_gl (gl, why, sizeof why) != 0)
    {
      printf ("1..0 # SKIP %s\n", why);
      return -1;
    }
  return 0;
}

static int
run_cuda (void)
{
  const int nx = 517, ny = 389;
  const size_t n = (size_t) nx * ny;
  char why[512] = "";
  GlHeadless gl;
  Planes planes;

  if (open_or_skip (&gl) != 0)
    return SKIP;
  planes_make (&planes, nx, ny);
  const float *img = planes.img;
  const void *const *host = planes.host, *const *dev = planes.dev;

  interop_round ("first context", nx, ny, host, dev);

  /* A kernel writes the colour-mapped picture into a registered pixel
   * buffer; GL copies it into a texture; it must be the CPU's picture. */
  static const SkyStretch stretches[] = { SKY_STRETCH_LINEAR, SKY_STRETCH_LOG,
                                          SKY_STRETCH_SQRT, SKY_STRETCH_ASINH };
  uint8_t cmap[SKY_CMAP_SIZE * 4];
  uint8_t *want = malloc (n * 4), *got = malloc (n * 4);
  GLuint pbo, tex = texture (&formats[3], nx, ny, NULL);
  SkyGpuGl *obj = NULL;
  glGenBuffers (1, &pbo);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
  glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr) (n * 4), NULL, GL_STREAM_DRAW);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  int ret = sky_gpu_gl_register_buffer (pbo, &obj);
  check (ret == SKY_OK, "a pixel buffer registers with CUDA (%s)",
         ret == SKY_OK ? "ok" : sky_last_error ());
  for (int k = 0; k < 4 && ret == SKY_OK; k++)
    {
      SkyColormap c = k % 2 ? SKY_COLORMAP_INFERNO : SKY_COLORMAP_GREY_R;
      size_t exact = 0, near = 0;
      double ms = -1;

      sky_colormap_fill (c, cmap);
      cpu_colormap (img, n, -0.01, 0.05, stretches[k], cmap, want);
      poison (tex, &formats[3], nx, ny);
      int r = sky_gpu_gl_colormap (NULL, obj, dev[0], nx, ny, -0.01, 0.05, stretches[k], cmap,
                                   blank_rgba, &ms);
      glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
      glBindTexture (GL_TEXTURE_2D, tex);
      glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
      glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, nx, ny, GL_RGBA, GL_UNSIGNED_BYTE, (void *) 0);
      glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
      glPixelStorei (GL_PACK_ALIGNMENT, 1);
      glGetTexImage (GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, got);
      /* The device's log1p and asinh may round the last bit differently
       * from the C library's: a value on an entry's edge may then take the
       * next entry. Anything else is a failure. */
      for (size_t i = 0; i < n; i++)
        {
          if (memcmp (got + 4 * i, want + 4 * i, 4) == 0)
            exact++;
          else if (!isnan (img[i]))
            {
              int ci = (int) (sky_stretch_apply (stretches[k], (img[i] + 0.01) / 0.06, NULL)
                              * 255 + 0.5);
              for (int dc = -1; dc <= 1; dc += 2)
                if (ci + dc >= 0 && ci + dc < 256 && memcmp (got + 4 * i, cmap + 4 * (ci + dc), 3) == 0
                    && got[4 * i + 3] == 255)
                  near++;
            }
        }
      check (r == SKY_OK && exact + near == n && near <= n / 10000,
             "%s stretch, %s: the kernel's picture is the CPU's (%zu of %zu pixels exact, %zu "
             "one entry off, %.3f ms)", sky_stretch_name (stretches[k]), sky_colormap_name (c),
             exact, n, near, ms);
    }
  sky_gpu_gl_unregister (obj);
  glDeleteBuffers (1, &pbo);
  glDeleteTextures (1, &tex);
  convolved_round (nx, ny);
  gl_headless_close (&gl);

  /* A re-realized widget gets a new context: registration starts again. */
  if (open_cuda_gl (&gl, why, sizeof why) != 0)
    check (0, "second context: %s", why);
  else
    {
      interop_round ("second context", nx, ny, host, dev);
      gl_headless_close (&gl);
    }
  planes_free (&planes);
  free (want);
  free (got);
  printf ("1..%d\n", ntests);
  return nfailed ? 1 : 0;
}

/* -------------------------------------------------------------- timing */

double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The Convolution lab's output on its way to the result view's R32F
 * texture: the lesson's deltas (side x side, a one at every [8::16, 8::16])
 * convolved with its 15 x 15 kernel in full mode (side + 14 square), in
 * float32 and float64, then written from the context's kept output through
 * interop (sky_gpu_gl_write_convolved: CUDA events) or downloaded (CUDA
 * events, pageable memory as the lab's; float64 rounded to float on the
 * host) and uploaded with glTexSubImage2D to glFinish (host clock). t has
 * room for 6 * repeats values. */
static void
bench_convolved (int side, int repeats, double *t)
{
  const int64_t n = (int64_t) side * side;
  double *t_int = t, *t_int_wall = t + repeats, *t_d2h = t + 2 * repeats,
         *t_up = t + 3 * repeats, *t_host = t + 4 * repeats;
  SkyGpu *gpu = NULL;
  SkyKernel k = { 0 };
  cudaEvent_t e0, e1;

  if (sky_gpu_new (&gpu) != SKY_OK || sky_kernel_parse (&k, "lesson") != SKY_OK)
    {
      check (0, "convolution bench: %s", sky_last_error ());
      return;
    }
  CU (cudaEventCreate (&e0));
  CU (cudaEventCreate (&e1));
  float *in32 = calloc ((size_t) n, sizeof *in32);
  double *in64 = calloc ((size_t) n, sizeof *in64);
  for (int64_t y = 8; y < side; y += 16)
    for (int64_t x = 8; x < side; x += 16)
      in32[y * side + x] = 1, in64[y * side + x] = 1;
  const int onx = side + k.nx - 1, ony = side + k.ny - 1;
  const size_t on = (size_t) onx * ony;
  void *down = malloc (on * 8);
  float *up = malloc (on * sizeof *up);
  for (int f64 = 0; f64 <= 1; f64++)
    {
      SkyGpuConvolveTimes ct = { 0 };
      int ret = f64 ? sky_gpu_convolve2d_f64 (gpu, in64, side, side, &k, SKY_CONVOLVE_FULL,
                                              SKY_CONVOLVE_AUTO, down, &ct)
                    : sky_gpu_convolve2d_f32 (gpu, in32, side, side, &k, SKY_CONVOLVE_FULL,
                                              SKY_CONVOLVE_AUTO, down, &ct);
      SkyGpuConvolveOutput o;
      if (ret != SKY_OK || sky_gpu_convolve_output (gpu, &o) != SKY_OK)
        {
          check (0, "convolution bench: %s", sky_last_error ());
          break;
        }
      float *want = malloc (on * sizeof *want);
      for (size_t i = 0; i < on; i++)
        want[i] = f64 ? (float) ((double *) down)[i] : ((float *) down)[i];
      GLuint tex = texture (&formats[0], onx, ony, NULL);
      SkyGpuGl *obj = NULL;
      double r0 = now_ms ();
      if (sky_gpu_gl_register_texture (tex, GL_TEXTURE_2D, &obj) != SKY_OK)
        {
          check (0, "register the R32F texture: %s", sky_last_error ());
          free (want);
          break;
        }
      double reg_ms = now_ms () - r0;
      size_t d_int = 0, d_host = 0;
      for (int r = -10; r < repeats; r++)
        {
          double ms = 0, w0;
          /* The last update is read back: a write that did not happen
           * must not pass on what the one before left. */
          if (r == repeats - 1)
            {
              poison (tex, &formats[0], onx, ony);
              glFinish ();
            }
          w0 = now_ms ();
          if (sky_gpu_gl_write_convolved (gpu, obj, &ms) != SKY_OK)
            {
              check (0, "interop write of the convolution: %s", sky_last_error ());
              break;
            }
          double w1 = now_ms ();
          if (r == repeats - 1)
            d_int = readback_diff (tex, &formats[0], onx, ony, want);
          /* The host path: the download the convolution makes, then the upload. */
          CU (cudaEventRecord (e0, 0));
          CU (cudaMemcpy (down, o.data, on * (f64 ? 8 : 4), cudaMemcpyDeviceToHost));
          CU (cudaEventRecord (e1, 0));
          CU (cudaEventSynchronize (e1));
          float d2h = 0;
          CU (cudaEventElapsedTime (&d2h, e0, e1));
          if (r == repeats - 1)
            {
              poison (tex, &formats[0], onx, ony);
              glFinish ();
            }
          double u0 = now_ms ();
          const float *src = (const float *) down;
          if (f64)
            {
              for (size_t i = 0; i < on; i++)
                up[i] = (float) ((double *) down)[i];
              src = up;
            }
          glBindTexture (GL_TEXTURE_2D, tex);
          glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
          glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, onx, ony, GL_RED, GL_FLOAT, src);
          glFinish ();
          double u1 = now_ms ();
          if (r == repeats - 1)
            d_host = readback_diff (tex, &formats[0], onx, ony, want);
          if (r < 0)
            continue;
          t_int[r] = ms;
          t_int_wall[r] = w1 - w0;
          t_d2h[r] = d2h;
          t_up[r] = u1 - u0;
          t_host[r] = d2h + (u1 - u0);
        }
      const char *dt = f64 ? "float64" : "float32";
      double mi = median (t_int, repeats), mw = median (t_int_wall, repeats);
      double mh = median (t_host, repeats), md = median (t_d2h, repeats),
             mu = median (t_up, repeats);
      printf ("# convolution output, %s, %d x %d full mode -> %d x %d (kernel %.4f ms):\n"
              "#   interop (%smap, copy, unmap; CUDA events) %.4f ms, host clock %.4f ms; "
              "registering the texture once %.3f ms\n"
              "#   host path %.4f ms = download %.4f (CUDA events) + %supload %.4f (host clock "
              "to glFinish)\n#   host / interop %.1fx\n", dt, side, side, onx, ony,
              ct.kernel_ms, f64 ? "round to float, " : "", mi, mw, reg_ms, mh, md,
              f64 ? "rounding and " : "", mu, mh / mi);
      printf ("BENCH convolved-%s side=%d out=%d interop_ms=%.4f interop_wall_ms=%.4f "
              "register_ms=%.3f host_ms=%.4f d2h_ms=%.4f upload_ms=%.4f\n", dt, side, onx, mi,
              mw, reg_ms, mh, md, mu);
      check (d_int == 0 && d_host == 0, "convolution output, %s %d x %d: the texture holds the "
             "downloaded output bit for bit after the timed updates, both ways (%zu, %zu bytes "
             "differ)", dt, onx, ony, d_int, d_host);
      sky_gpu_gl_unregister (obj);
      glDeleteTextures (1, &tex);
      free (want);
    }
  cudaEventDestroy (e0);
  cudaEventDestroy (e1);
  free (down);
  free (up);
  free (in32);
  free (in64);
  sky_kernel_clear (&k);
  sky_gpu_free (gpu);
}

/* glTexSubImage2D of the set's m textures from down (host memory) or,
 * where pbo is not NULL, from pixel buffers pbo[0 .. m - 1]; glFinish so
 * that the upload is done. The GL timer's ns; *wall_end the host clock
 * after glFinish. */
static GLuint64
timed_upload (GLuint query, const int *set, int m, const GLuint *tex, int side,
              void *const *down, const GLuint *pbo, double *wall_end)
{
  GLuint64 gpu_ns = 0;

  glBeginQuery (GL_TIME_ELAPSED, query);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
  for (int j = 0; j < m; j++)
    {
      const Format *f = &formats[set[j]];
      if (pbo != NULL)
        glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo[j]);
      glBindTexture (GL_TEXTURE_2D, tex[set[j]]);
      glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, side, side, f->format, f->type,
                       pbo != NULL ? (void *) 0 : down[set[j]]);
    }
  if (pbo != NULL)
    glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  glEndQuery (GL_TIME_ELAPSED);
  glFinish ();
  *wall_end = now_ms ();
  glGetQueryObjectui64v (query, GL_QUERY_RESULT, &gpu_ns);
  return gpu_ns;
}

/* A 2048 x 2048 result (mask and labels; then the float image alone)
 * displayed through interop and through the host, R times each. */
static int
run_bench (int side, int repeats)
{
  const size_t n = (size_t) side * side;
  GlHeadless gl;
  Planes planes;

  if (open_or_skip (&gl) != 0)
    return SKIP;
  planes_make (&planes, side, side);
  const void *const *host = planes.host, *const *dev = planes.dev;
  void *down[3] = { malloc (n * 4), malloc (n), malloc (n * 4) };   /* pageable, as the app's */
  GLuint tex[3], query;
  SkyGpuGl *obj[3];
  cudaEvent_t e0, e1;
  double *t = malloc (sizeof *t * repeats * 6);
  double *t_int = t, *t_int_wall = t + repeats, *t_d2h = t + 2 * repeats,
         *t_up = t + 3 * repeats, *t_up_gpu = t + 4 * repeats, *t_host = t + 5 * repeats;

  CU (cudaEventCreate (&e0));
  CU (cudaEventCreate (&e1));
  glGenQueries (1, &query);
  for (int k = 0; k < 3; k++)
    {
      tex[k] = texture (&formats[k], side, side, NULL);
      if (sky_gpu_gl_register_texture (tex[k], GL_TEXTURE_2D, &obj[k]) != SKY_OK)
        {
          check (0, "register %s: %s", formats[k].name, sky_last_error ());
          return 1;
        }
    }
  /* Which textures a display update writes: the result (mask and labels),
   * then the float image alone. */
  static const int sets[2][3] = { { 1, 2, -1 }, { 0, -1, -1 } };
  static const char *set_names[2] = { "result (mask R8UI + labels R32I, 20 MiB)",
                                      "float image (R32F, 16 MiB)" };
  printf ("# %d x %d, %d repeats after 10 warm-ups; medians in ms\n", side, side, repeats);
  for (int s = 0; s < 2; s++)
    {
      int m = sets[s][1] < 0 ? 1 : 2;
      SkyGpuGl *o[2];
      const void *src[2];
      size_t rb[2], rows[2] = { (size_t) side, (size_t) side };
      for (int j = 0; j < m; j++)
        {
          int k = sets[s][j];
          o[j] = obj[k];
          src[j] = dev[k];
          rb[j] = (size_t) side * formats[k].bytes;
        }
      for (int r = -10; r < repeats; r++)
        {
          double ms = 0, w0 = now_ms ();
          if (sky_gpu_gl_write_textures (NULL, m, o, src, rb, rows, &ms) != SKY_OK)
            {
              check (0, "interop write: %s", sky_last_error ());
              break;
            }
          double w1 = now_ms ();
          /* The host path: download (pageable memory, as the app's), then
           * glTexSubImage2D; glFinish so that the upload is done. */
          CU (cudaEventRecord (e0, 0));
          for (int j = 0; j < m; j++)
            CU (cudaMemcpy (down[sets[s][j]], dev[sets[s][j]], rb[j] * side,
                            cudaMemcpyDeviceToHost));
          CU (cudaEventRecord (e1, 0));
          CU (cudaEventSynchronize (e1));
          float d2h = 0;
          CU (cudaEventElapsedTime (&d2h, e0, e1));
          double u0 = now_ms ();
          double u1;
          GLuint64 gpu_ns = timed_upload (query, sets[s], m, tex, side, down, NULL, &u1);
          if (r < 0)
            continue;
          t_int[r] = ms;
          t_int_wall[r] = w1 - w0;
          t_d2h[r] = d2h;
          t_up[r] = u1 - u0;
          t_up_gpu[r] = gpu_ns / 1e6;
          t_host[r] = d2h + (u1 - u0);
        }
      /* What the last update left must be the data, both ways. */
      size_t d = 0;
      for (int j = 0; j < m; j++)
        d += readback_diff (tex[sets[s][j]], &formats[sets[s][j]], side, side, host[sets[s][j]]);
      double wall = median (t_int_wall, repeats);
      /* The fixed cost: the same map and unmap with nothing copied. */
      size_t none[2] = { 0, 0 };
      for (int r = -10; r < repeats; r++)
        {
          double ms = 0;
          if (sky_gpu_gl_write_textures (NULL, m, o, src, rb, none, &ms) == SKY_OK && r >= 0)
            t_int_wall[r] = ms;
        }
      printf ("#   map and unmap alone (nothing copied): %.4f ms\n", median (t_int_wall, repeats));
      double mi = median (t_int, repeats), mh = median (t_host, repeats);
      printf ("# %s:\n#   interop (map, copy, unmap; CUDA events) %.4f ms, host clock %.4f ms\n"
              "#   host path %.4f ms = download %.4f (CUDA events) + upload %.4f (host clock to "
              "glFinish; GL timer %.4f)\n#   host / interop %.1fx\n", set_names[s], mi,
              wall, mh, median (t_d2h, repeats), median (t_up, repeats),
              median (t_up_gpu, repeats), mh / mi);
      printf ("BENCH %s side=%d interop_ms=%.4f interop_wall_ms=%.4f map_unmap_ms=%.4f host_ms=%.4f d2h_ms=%.4f "
              "upload_ms=%.4f upload_gpu_ms=%.4f\n", s == 0 ? "result" : "image", side, mi,
              wall, median (t_int_wall, repeats), mh, median (t_d2h, repeats),
              median (t_up, repeats), median (t_up_gpu, repeats));
      check (d == 0, "%s: the textures hold the data after the timed updates (%zu bytes differ)",
             set_names[s], d);

      /* The other interop route: device to registered pixel buffers
       * (linear memory), then GL's own copy from them into the textures. */
      GLuint pbo[2];
      SkyGpuGl *bo[2] = { NULL, NULL };
      glGenBuffers (m, pbo);
      for (int j = 0; j < m; j++)
        {
          glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo[j]);
          glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr) (rb[j] * side), NULL, GL_STREAM_DRAW);
          if (sky_gpu_gl_register_buffer (pbo[j], &bo[j]) != SKY_OK)
            check (0, "register a pixel buffer: %s", sky_last_error ());
        }
      glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
      for (int r = -10; r < repeats && bo[m - 1]; r++)
        {
          double cu = 0, one = 0, w0 = now_ms ();
          for (int j = 0; j < m; j++)
            {
              sky_gpu_gl_write_buffer (NULL, bo[j], src[j], rb[j] * side, &one);
              cu += one;
            }
          double w1;
          GLuint64 gpu_ns = timed_upload (query, sets[s], m, tex, side, NULL, pbo, &w1);
          if (r < 0)
            continue;
          t_int[r] = cu;
          t_up_gpu[r] = gpu_ns / 1e6;
          t_int_wall[r] = w1 - w0;
          t_host[r] = cu + gpu_ns / 1e6;
        }
      d = 0;
      for (int j = 0; j < m; j++)
        d += readback_diff (tex[sets[s][j]], &formats[sets[s][j]], side, side, host[sets[s][j]]);
      printf ("#   through pixel buffers: %.4f ms = CUDA (map, copy, unmap) %.4f + GL copy into the "
              "textures %.4f (GL timer); host clock to glFinish %.4f\n", median (t_host, repeats),
              median (t_int, repeats), median (t_up_gpu, repeats), median (t_int_wall, repeats));
      printf ("BENCH %s-pbo side=%d pbo_total_ms=%.4f cuda_ms=%.4f gl_ms=%.4f wall_ms=%.4f\n",
              s == 0 ? "result" : "image", side, median (t_host, repeats), median (t_int, repeats),
              median (t_up_gpu, repeats), median (t_int_wall, repeats));
      check (d == 0, "%s through pixel buffers: the textures hold the data (%zu bytes differ)",
             set_names[s], d);
      for (int j = 0; j < m; j++)
        sky_gpu_gl_unregister (bo[j]);
      glDeleteBuffers (m, pbo);
    }
  for (int k = 0; k < 3; k++)
    {
      sky_gpu_gl_unregister (obj[k]);
      glDeleteTextures (1, &tex[k]);
      free (down[k]);
    }
  bench_convolved (side, repeats, t);
  gl_headless_close (&gl);
  free (t);
  planes_free (&planes);
  return nfailed ? 1 : 0;
}
#endif

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "gl";

  if (strcmp (mode, "gl") == 0)
    return run_gl ();
#ifdef SKYSIFT_HAVE_GPU_GL
  if (strcmp (mode, "cuda") == 0)
    return run_cuda ();
  if (strcmp (mode, "bench") == 0)
    {
      int side = argc > 2 ? atoi (argv[2]) : 2048, repeats = argc > 3 ? atoi (argv[3]) : 200;
      int ret = run_bench (side, repeats);
      if (ret != SKIP)
        {
          /* The buffers the view reads on desktop OpenGL, in a fresh context. */
          bench_buffers (side, repeats);
          printf ("1..%d\n", ntests);
          ret = nfailed ? 1 : 0;
        }
      return ret;
    }
#else
  if (strcmp (mode, "cuda") == 0 || strcmp (mode, "bench") == 0)
    {
      printf ("1..0 # SKIP this build has no CUDA/OpenGL interop (no CUDA or no libepoxy)\n");
      return SKIP;
    }
#endif
  fprintf (stderr, "usage: test-gl-interop gl|cuda|bench [SIDE] [REPEATS]\n");
  return 2;
}
