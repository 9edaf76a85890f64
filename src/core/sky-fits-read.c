/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The loader's reader for uncompressed planes. cfitsio reads a plane
 * through its own buffers, a few thousand pixels at a time on one thread;
 * here the plane is cut into chunks that threads pread into a small buffer
 * of their own (or, for 4-byte values into pages already in memory,
 * straight into the image) and convert while the chunk is still in cache.
 * The arithmetic is cfitsio's to the bit (getcole.c, fffXXr4): the same
 * conversions in the same order, so that the result does not depend on
 * which reader ran. */
#include "sky-fits-private.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The conversion loops are built for the baseline, for AVX2 (byte
 * shuffles, wide conversions) and for AVX-512 (twice the doubles a step:
 * a scaled 16- or 32-bit plane converts 1.6x faster than with AVX2), and
 * the loader picks one for the processor (GCC's function multi-versioning,
 * as the convolution does). No loop may fuse a multiply and an add:
 * cfitsio rounds the product first. GCC in ISO C mode does not contract;
 * the product and the sum are separate statements, which clang does not
 * contract either. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define SKY_VECTOR_CLONES \
  __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SKY_VECTOR_CLONES
#endif

/* A task is 4 MiB of pixels (a few per thread on the smallest image worth
 * splitting); a block, one pread, is 128 KiB of pixels and at most 256 KiB
 * of file, so that the conversion finds it in the core's cache. */
#define TASK_PIXELS ((int64_t) 1 << 20)
#define BLOCK_PIXELS ((int64_t) 1 << 15)

/* The pixels are handled as their bits: a type that may alias the image's
 * floats (and the file's bytes read into them). */
typedef uint32_t Bits __attribute__ ((may_alias));

#define ABS_MASK 0x7fffffffu
#define INF_BITS 0x7f800000u

typedef struct {
  uint32_t nonfinite, infinite;
} BlockCounts;

/* cfitsio scales as (float) (v * scale + zero): the product rounded to
 * double, then the sum. */
static inline float
scaled_value (double v, double scale, double zero)
{
  double product = v * scale;
  double sum = product + zero;
  return (float) sum;
}

/* Every pixel goes through here: infinities become the blank NaN (the
 * loader's rule: no statistic can use them), and non-finite pixels are
 * counted. A NaN from the file keeps its bits, as it does through cfitsio. */
#define STORE_CLASSIFIED(dst, value)                                          \
  do                                                                          \
    {                                                                         \
      float f_ = (value);                                                     \
      uint32_t u_, a_;                                                        \
      memcpy (&u_, &f_, sizeof u_);                                           \
      a_ = u_ & ABS_MASK;                                                     \
      nonfinite += a_ >= INF_BITS;                                            \
      infinite += a_ == INF_BITS;                                             \
      (dst) = a_ == INF_BITS ? blank_bits : u_;                               \
    }                                                                         \
  while (0)

/* The same for a stored value that may equal BLANK. The value is converted
 * whatever it is and the blank chosen after with a bit mask: written as a
 * choice, the compiler moves the conversion into a branch, and a loop with
 * a branch around a floating-point operation does not vectorise. */
#define STORE_CLASSIFIED_OR_BLANK(dst, value, is_blank)                       \
  do                                                                          \
    {                                                                         \
      float f_ = (value);                                                     \
      uint32_t u_, a_, m_;                                                    \
      memcpy (&u_, &f_, sizeof u_);                                           \
      m_ = 0u - (uint32_t) (is_blank);                                        \
      u_ = (u_ & ~m_) | (blank_bits & m_);                                    \
      a_ = u_ & ABS_MASK;                                                     \
      nonfinite += a_ >= INF_BITS;                                            \
      infinite += a_ == INF_BITS;                                             \
      (dst) = a_ == INF_BITS ? blank_bits : u_;                               \
    }                                                                         \
  while (0)

/* The same where the value cannot be infinite or NaN (an integer plane
 * whose every scaled value lies well inside float's range): only a BLANK
 * makes a blank pixel, and nothing else need be looked at. */
#define STORE_FINITE_OR_BLANK(dst, value, is_blank)                           \
  do                                                                          \
    {                                                                         \
      float f_ = (value);                                                     \
      uint32_t u_, m_;                                                        \
      memcpy (&u_, &f_, sizeof u_);                                           \
      m_ = 0u - (uint32_t) (is_blank);                                        \
      nonfinite += (is_blank);                                                \
      (dst) = (u_ & ~m_) | (blank_bits & m_);                                 \
    }                                                                         \
  while (0)

#define STORE_FINITE(dst, value)                                              \
  do                                                                          \
    {                                                                         \
      float f_ = (value);                                                     \
      memcpy (&(dst), &f_, sizeof f_);                                        \
    }                                                                         \
  while (0)

/* BITPIX -32 and 32: 4 bytes in, 4 out, so in may be out (converted where
 * pread put them). The pointers are not restrict: GCC versions these
 * loops for aliasing, and its vector version runs when in == out (as fast
 * in place as apart, measured). */
static void SKY_VECTOR_CLONES
convert_f32 (const Bits *in, Bits *out, int64_t n, int scaled, double scale, double zero,
             uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  if (!scaled)
    for (int64_t i = 0; i < n; i++)
      {
        uint32_t u = __builtin_bswap32 (in[i]);
        float f;
        memcpy (&f, &u, sizeof f);
        STORE_CLASSIFIED (out[i], f);
      }
  else
    for (int64_t i = 0; i < n; i++)
      {
        uint32_t u = __builtin_bswap32 (in[i]);
        float f;
        memcpy (&f, &u, sizeof f);
        STORE_CLASSIFIED (out[i], scaled_value ((double) f, scale, zero));
      }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

/* Integer planes: where every value is finite (always unscaled, and
 * scaled where the header's BSCALE and BZERO keep the range inside float's,
 * see finite_range) the loops only pick and count BLANKs. */
static void SKY_VECTOR_CLONES
convert_i32 (const Bits *in, Bits *out, int64_t n, int scaled, double scale, double zero,
             int finite, int check_blank, int32_t blank, uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  /* Without a BLANK no value is blank: the test is kept out of the loop. */
  if (finite && !scaled && !check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE (out[i], (float) (int32_t) __builtin_bswap32 (in[i]));
  else if (finite && !scaled)
    for (int64_t i = 0; i < n; i++)
      {
        int32_t v = (int32_t) __builtin_bswap32 (in[i]);
        STORE_FINITE_OR_BLANK (out[i], (float) v, v == blank);
      }
  else if (finite && !check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE (out[i], scaled_value ((int32_t) __builtin_bswap32 (in[i]), scale, zero));
  else if (finite)
    for (int64_t i = 0; i < n; i++)
      {
        int32_t v = (int32_t) __builtin_bswap32 (in[i]);
        STORE_FINITE_OR_BLANK (out[i], scaled_value (v, scale, zero), v == blank);
      }
  else if (!check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_CLASSIFIED (out[i], scaled_value ((int32_t) __builtin_bswap32 (in[i]), scale, zero));
  else
    for (int64_t i = 0; i < n; i++)
      {
        int32_t v = (int32_t) __builtin_bswap32 (in[i]);
        STORE_CLASSIFIED_OR_BLANK (out[i], scaled_value (v, scale, zero), v == blank);
      }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

static void SKY_VECTOR_CLONES
convert_f64 (const uint64_t *restrict in, Bits *restrict out, int64_t n, int scaled,
             double scale, double zero, uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  if (!scaled)
    for (int64_t i = 0; i < n; i++)
      {
        uint64_t u = __builtin_bswap64 (in[i]);
        double d;
        memcpy (&d, &u, sizeof d);
        STORE_CLASSIFIED (out[i], (float) d);
      }
  else
    for (int64_t i = 0; i < n; i++)
      {
        uint64_t u = __builtin_bswap64 (in[i]);
        double d;
        memcpy (&d, &u, sizeof d);
        STORE_CLASSIFIED (out[i], scaled_value (d, scale, zero));
      }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

static void SKY_VECTOR_CLONES
convert_i16 (const uint16_t *restrict in, Bits *restrict out, int64_t n, int scaled,
             double scale, double zero, int finite, int check_blank, int16_t blank,
             uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  if (finite && !scaled && !check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE (out[i], (float) (int16_t) __builtin_bswap16 (in[i]));
  else if (finite && !scaled)
    for (int64_t i = 0; i < n; i++)
      {
        int16_t v = (int16_t) __builtin_bswap16 (in[i]);
        STORE_FINITE_OR_BLANK (out[i], (float) v, v == blank);
      }
  else if (finite && !check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE (out[i], scaled_value ((int16_t) __builtin_bswap16 (in[i]), scale, zero));
  else if (finite)
    for (int64_t i = 0; i < n; i++)
      {
        int16_t v = (int16_t) __builtin_bswap16 (in[i]);
        STORE_FINITE_OR_BLANK (out[i], scaled_value (v, scale, zero), v == blank);
      }
  else if (!check_blank)
    for (int64_t i = 0; i < n; i++)
      STORE_CLASSIFIED (out[i], scaled_value ((int16_t) __builtin_bswap16 (in[i]), scale, zero));
  else
    for (int64_t i = 0; i < n; i++)
      {
        int16_t v = (int16_t) __builtin_bswap16 (in[i]);
        STORE_CLASSIFIED_OR_BLANK (out[i], scaled_value (v, scale, zero), v == blank);
      }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

/* BITPIX 8 is unsigned, one byte: nothing to swap. */
static void SKY_VECTOR_CLONES
convert_u8 (const uint8_t *restrict in, Bits *restrict out, int64_t n, int scaled,
            double scale, double zero, int finite, int check_blank, uint8_t blank,
            uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  if (finite && !scaled)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE_OR_BLANK (out[i], (float) in[i], check_blank && in[i] == blank);
  else if (finite)
    for (int64_t i = 0; i < n; i++)
      STORE_FINITE_OR_BLANK (out[i], scaled_value (in[i], scale, zero),
                             check_blank && in[i] == blank);
  else
    for (int64_t i = 0; i < n; i++)
      STORE_CLASSIFIED_OR_BLANK (out[i], scaled_value (in[i], scale, zero),
                                 check_blank && in[i] == blank);
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

/* BITPIX 64: int64 to float in one rounding where unscaled (as cfitsio's
 * cast), and BZERO = 2^63 with BSCALE = 1 read as unsigned, as cfitsio
 * does, since the double sum would round twice. */
static void SKY_VECTOR_CLONES
convert_i64 (const uint64_t *restrict in, Bits *restrict out, int64_t n, double scale,
             double zero, int check_blank, int64_t blank, uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;
  float blank_f;
  int unsigned_offset = scale == 1. && zero == 9223372036854775808.;
  int unscaled = scale == 1. && zero == 0.;

  memcpy (&blank_f, &blank_bits, sizeof blank_f);
  for (int64_t i = 0; i < n; i++)
    {
      int64_t v = (int64_t) __builtin_bswap64 (in[i]);
      float f;
      if (check_blank && v == blank)
        f = blank_f;
      else if (unsigned_offset)
        f = (float) ((uint64_t) v ^ UINT64_C (0x8000000000000000));
      else if (unscaled)
        f = (float) v;
      else
        f = scaled_value ((double) v, scale, zero);
      STORE_CLASSIFIED (out[i], f);
    }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

typedef struct {
  const SkyFitsRawPlane *plane;
  int fd;
  int bytes;            /* per stored value */
  int scaled;
  int finite;           /* every converted value is finite (finite_range) */
  uint32_t blank_bits;
  Bits *pixels;         /* the image, as bits */
  int64_t ntasks;
  atomic_llong nblank, ninf;
  atomic_int error;     /* first errno, or -1 where the file ended early */
} Reader;

/* Whether every value an integer plane can hold converts to a finite float:
 * |v * scale + zero| at most the type's largest magnitude times |BSCALE|
 * plus |BZERO|, with room to spare for the roundings. Unscaled 8-, 16- and
 * 32-bit values always are (float holds 2^31); 64-bit ones go through
 * their own loop. */
static int
finite_range (int bitpix, double scale, double zero)
{
  double largest = bitpix == 8 ? 255. : bitpix == 16 ? 32768. : bitpix == 32 ? 2147483648. : 0.;

  if (largest == 0. || !isfinite (scale) || !isfinite (zero))
    return 0;
  return largest * fabs (scale) + fabs (zero) < 0.5 * FLT_MAX;
}

int
sky_fits_pread (int fd, void *buf, size_t count, int64_t offset)
{
  unsigned char *at = buf;

  while (count > 0)
    {
      ssize_t got = pread (fd, at, count, (off_t) offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return errno != 0 ? errno : EIO;
      if (got == 0)
        return -1;
      at += got;
      offset += got;
      count -= (size_t) got;
    }
  return 0;
}

static void
convert_block (const Reader *r, const void *raw, Bits *out, int64_t n, BlockCounts *c)
{
  const SkyFitsRawPlane *p = r->plane;

  switch (p->bitpix)
    {
    case -32:
      convert_f32 (raw, out, n, r->scaled, p->scale, p->zero, r->blank_bits, c);
      break;
    case 32:
      convert_i32 (raw, out, n, r->scaled, p->scale, p->zero, r->finite, p->check_blank,
                   (int32_t) p->blank, r->blank_bits, c);
      break;
    case -64:
      convert_f64 (raw, out, n, r->scaled, p->scale, p->zero, r->blank_bits, c);
      break;
    case 16:
      convert_i16 (raw, out, n, r->scaled, p->scale, p->zero, r->finite, p->check_blank,
                   (int16_t) p->blank, r->blank_bits, c);
      break;
    case 8:
      convert_u8 (raw, out, n, r->scaled, p->scale, p->zero, r->finite, p->check_blank,
                  (uint8_t) p->blank, r->blank_bits, c);
      break;
    default:
      convert_i64 (raw, out, n, p->scale, p->zero, p->check_blank, p->blank, r->blank_bits, c);
      break;
    }
}

/* Whether the page holding p is in memory: a buffer being refilled rather
 * than fresh pages the kernel has yet to fault in and zero. */
static int
page_present (const void *p)
{
  long page = sysconf (_SC_PAGESIZE);
  unsigned char present = 0;
  uintptr_t start = (uintptr_t) p / (uintptr_t) page * (uintptr_t) page;

  return page > 0 && mincore ((void *) start, 1, &present) == 0 && (present & 1);
}

static void
read_task (void *data, int task)
{
  Reader *r = data;
  int64_t n = r->plane->npixels;
  int64_t start = task * TASK_PIXELS, end = start + TASK_PIXELS < n ? start + TASK_PIXELS : n;
  int64_t nblank = 0, ninf = 0;
  void *scratch = NULL;

  /* Values of 4 bytes are read into the image and converted in place where
   * its pages are there already. Into fresh pages (a load's new image),
   * every value is read into a block of the task's own and converted from
   * there: pread faulting the fresh pages in and the conversion going over
   * them again took 1.4x as long on 16 cores (bench/results/load-h100-*). */
  if ((r->bytes != 4 || !page_present (r->pixels + start))
      && (scratch = malloc ((size_t) (BLOCK_PIXELS * r->bytes))) == NULL)
    {
      int none = 0;
      atomic_compare_exchange_strong (&r->error, &none, ENOMEM);
      return;
    }
  for (int64_t at = start; at < end && atomic_load (&r->error) == 0; at += BLOCK_PIXELS)
    {
      int64_t count = end - at < BLOCK_PIXELS ? end - at : BLOCK_PIXELS;
      void *dst = scratch != NULL ? scratch : (void *) (r->pixels + at);
      BlockCounts c;
      int err = sky_fits_pread (r->fd, dst, (size_t) (count * r->bytes),
                             r->plane->offset + at * r->bytes);
      if (err != 0)
        {
          int none = 0;
          atomic_compare_exchange_strong (&r->error, &none, err);
          break;
        }
      convert_block (r, dst, r->pixels + at, count, &c);
      nblank += c.nonfinite;
      ninf += c.infinite;
    }
  atomic_fetch_add (&r->nblank, nblank);
  atomic_fetch_add (&r->ninf, ninf);
  free (scratch);
}

int
sky_fits_read_raw_plane (const char *path, const SkyFitsRawPlane *plane, int nthreads,
                         float *pixels, int64_t *nblank, int64_t *ninf)
{
  Reader r = { 0 };
  float blank = NAN;
  int error;

  r.plane = plane;
  r.bytes = abs (plane->bitpix) / 8;
  r.scaled = !(plane->scale == 1. && plane->zero == 0.);
  r.finite = finite_range (plane->bitpix, plane->scale, plane->zero);
  memcpy (&r.blank_bits, &blank, sizeof blank);
  r.pixels = (Bits *) pixels;
  r.ntasks = (plane->npixels + TASK_PIXELS - 1) / TASK_PIXELS;
  atomic_init (&r.nblank, 0);
  atomic_init (&r.ninf, 0);
  atomic_init (&r.error, 0);
  if (r.ntasks > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "%s: %lld pixels are too many to read in one plane", path,
                     (long long) plane->npixels);
  r.fd = open (path, O_RDONLY | O_CLOEXEC);
  if (r.fd < 0)
    return sky_fail (SKY_ERR_IO, "%s: cannot open the file to read its pixels: %s", path,
                     strerror (errno));
  if (nthreads <= 0)
    nthreads = sky_default_threads ();
  sky_parallel_for ((int) r.ntasks, nthreads, read_task, &r);
  close (r.fd);

  error = atomic_load (&r.error);
  if (error == -1)
    return sky_fail (SKY_ERR_IO, "%s: the file ends before the pixels its header describes",
                     path);
  if (error != 0)
    return sky_fail (error == ENOMEM ? SKY_ERR_MEMORY : SKY_ERR_IO,
                     "%s: cannot read the pixels: %s", path, strerror (error));
  *nblank = atomic_load (&r.nblank);
  *ninf = atomic_load (&r.ninf);
  return SKY_OK;
}
