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
 * counted. A NaN from the file keeps its bits, as it does through cfitsio.
 * A stored value equal to BLANK (is_blank; 0 where the plane has none) is
 * converted whatever it is and the blank chosen after with a bit mask:
 * written as a choice, the compiler moves the conversion into a branch,
 * and a loop with a branch around a floating-point operation does not
 * vectorise. */
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

#define STORE_CLASSIFIED(dst, value) STORE_CLASSIFIED_OR_BLANK (dst, value, 0)

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

/* The loops below are written once for all widths and specialised by
 * inlining: each reader of a stored value and each pass over a block is
 * inlined where its width and the plane's flags are constants, so that
 * every kind of plane compiles to its own loop with nothing tested inside
 * but a BLANK (a loop that chose per pixel would not vectorise), and the
 * functions that carry SKY_VECTOR_CLONES are the only ones called. */
#define SKY_INLINE static inline __attribute__ ((always_inline))

/* A stored floating-point value of 4 or 8 bytes (BITPIX -32, -64),
 * big-endian, as a double: exact for both. */
SKY_INLINE double
stored_real (const void *in, int64_t i, int bytes)
{
  if (bytes == 4)
    {
      uint32_t u = __builtin_bswap32 (((const Bits *) in)[i]);
      float f;
      memcpy (&f, &u, sizeof f);
      return f;
    }
  uint64_t u = __builtin_bswap64 (((const uint64_t *) in)[i]);
  double d;
  memcpy (&d, &u, sizeof d);
  return d;
}

/* A stored integer of 1, 2 or 4 bytes (BITPIX 8, 16, 32) as the value it
 * holds: big-endian and signed, but for BITPIX 8, one unsigned byte. */
SKY_INLINE int32_t
stored_int (const void *in, int64_t i, int bytes)
{
  if (bytes == 1)
    return ((const uint8_t *) in)[i];
  if (bytes == 2)
    return (int16_t) __builtin_bswap16 (((const uint16_t *) in)[i]);
  return (int32_t) __builtin_bswap32 (((const Bits *) in)[i]);
}

/* A floating-point plane has no BLANK: its blanks are its NaNs. */
SKY_INLINE void
convert_real_pass (const void *in, Bits *out, int64_t n, int bytes, int scaled, double scale,
                   double zero, uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  for (int64_t i = 0; i < n; i++)
    {
      double d = stored_real (in, i, bytes);
      STORE_CLASSIFIED (out[i], scaled ? scaled_value (d, scale, zero) : (float) d);
    }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

SKY_INLINE void
convert_real (const void *in, Bits *out, int64_t n, int bytes, int scaled, double scale,
              double zero, uint32_t blank_bits, BlockCounts *c)
{
  if (scaled)
    convert_real_pass (in, out, n, bytes, 1, scale, zero, blank_bits, c);
  else
    convert_real_pass (in, out, n, bytes, 0, scale, zero, blank_bits, c);
}

/* Where every value of an integer plane is finite (always unscaled, and
 * scaled where the header's BSCALE and BZERO keep the range inside
 * float's, see finite_range) the pass only picks and counts BLANKs. */
SKY_INLINE void
convert_int_pass (const void *in, Bits *out, int64_t n, int bytes, int scaled, int finite,
                  int check_blank, double scale, double zero, int32_t blank,
                  uint32_t blank_bits, BlockCounts *c)
{
  uint32_t nonfinite = 0, infinite = 0;

  for (int64_t i = 0; i < n; i++)
    {
      int32_t v = stored_int (in, i, bytes);
      float f = scaled ? scaled_value (v, scale, zero) : (float) v;
      int is_blank = check_blank && v == blank;
      if (finite)
        STORE_FINITE_OR_BLANK (out[i], f, is_blank);
      else
        STORE_CLASSIFIED_OR_BLANK (out[i], f, is_blank);
    }
  c->nonfinite = nonfinite;
  c->infinite = infinite;
}

/* An unscaled plane is always finite (float holds 2^31), which leaves six
 * kinds of integer plane; without a BLANK no value is blank, and the test
 * is kept out of the loop. */
SKY_INLINE void
convert_int (const void *in, Bits *out, int64_t n, int bytes, int scaled, double scale,
             double zero, int finite, int check_blank, int32_t blank, uint32_t blank_bits,
             BlockCounts *c)
{
  if (finite && !scaled && !check_blank)
    convert_int_pass (in, out, n, bytes, 0, 1, 0, scale, zero, blank, blank_bits, c);
  else if (finite && !scaled)
    convert_int_pass (in, out, n, bytes, 0, 1, 1, scale, zero, blank, blank_bits, c);
  else if (finite && !check_blank)
    convert_int_pass (in, out, n, bytes, 1, 1, 0, scale, zero, blank, blank_bits, c);
  else if (finite)
    convert_int_pass (in, out, n, bytes, 1, 1, 1, scale, zero, blank, blank_bits, c);
  else if (!check_blank)
    convert_int_pass (in, out, n, bytes, 1, 0, 0, scale, zero, blank, blank_bits, c);
  else
    convert_int_pass (in, out, n, bytes, 1, 0, 1, scale, zero, blank, blank_bits, c);
}

/* BITPIX -32 and 32: 4 bytes in, 4 out, so in may be out (converted where
 * pread put them). The pointers are not restrict: GCC versions these
 * loops for aliasing, and its vector version runs when in == out (as fast
 * in place as apart, measured). */
static void SKY_VECTOR_CLONES
convert_f32 (const Bits *in, Bits *out, int64_t n, int scaled, double scale, double zero,
             uint32_t blank_bits, BlockCounts *c)
{
  convert_real (in, out, n, 4, scaled, scale, zero, blank_bits, c);
}

static void SKY_VECTOR_CLONES
convert_i32 (const Bits *in, Bits *out, int64_t n, int scaled, double scale, double zero,
             int finite, int check_blank, int32_t blank, uint32_t blank_bits, BlockCounts *c)
{
  convert_int (in, out, n, 4, scaled, scale, zero, finite, check_blank, blank, blank_bits, c);
}

static void SKY_VECTOR_CLONES
convert_f64 (const uint64_t *restrict in, Bits *restrict out, int64_t n, int scaled,
             double scale, double zero, uint32_t blank_bits, BlockCounts *c)
{
  convert_real (in, out, n, 8, scaled, scale, zero, blank_bits, c);
}

static void SKY_VECTOR_CLONES
convert_i16 (const uint16_t *restrict in, Bits *restrict out, int64_t n, int scaled,
             double scale, double zero, int finite, int check_blank, int16_t blank,
             uint32_t blank_bits, BlockCounts *c)
{
  convert_int (in, out, n, 2, scaled, scale, zero, finite, check_blank, blank, blank_bits, c);
}

static void SKY_VECTOR_CLONES
convert_u8 (const uint8_t *restrict in, Bits *restrict out, int64_t n, int scaled,
            double scale, double zero, int finite, int check_blank, uint8_t blank,
            uint32_t blank_bits, BlockCounts *c)
{
  convert_int (in, out, n, 1, scaled, scale, zero, finite, check_blank, blank, blank_bits, c);
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
