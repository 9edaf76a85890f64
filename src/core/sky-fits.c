/* SPDX-License-Identifier: GPL-3.0-or-later */
/* FITS loading with cfitsio: one image plane as float32 in FITS row order,
 * blanks as NaN, and the header values later steps need. */
#include "sky-fits-private.h"

#include <errno.h>
#include <fitsio.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKY_MAX_AXES 9

/* cfitsio's mark for "no BLANK keyword" (fitsio2.h, which is not public). */
#define SKY_CFITSIO_NULL_UNDEFINED 1234554321

typedef struct {
  int naxis;
  long long naxes[SKY_MAX_AXES];
  int bitpix;
  int compressed;
} HduShape;

static int
fits_failure (int status_code, const char *path, int cfitsio_status, const char *what)
{
  char text[FLEN_STATUS];

  fits_get_errstatus (cfitsio_status, text);
  fits_clear_errmsg ();
  return sky_fail (status_code, "%s: %s (%s)", path, what, text);
}

/* Physical memory in bytes, or 0 if unknown. */
static uint64_t
physical_memory (void)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);

  if (pages <= 0 || page_size <= 0)
    return 0;
  return (uint64_t) pages * (uint64_t) page_size;
}

/* Reads the shape of the current HDU if it is an image; *is_image says so. */
static int
read_hdu_shape (fitsfile *fptr, HduShape *shape, int *is_image, int *status)
{
  int hdutype = 0;

  *is_image = 0;
  memset (shape, 0, sizeof *shape);
  if (fits_get_hdu_type (fptr, &hdutype, status))
    return *status;
  if (hdutype != IMAGE_HDU)
    return 0;
  if (fits_get_img_paramll (fptr, SKY_MAX_AXES, &shape->bitpix, &shape->naxis,
                            shape->naxes, status))
    return *status;
  shape->compressed = fits_is_compressed_image (fptr, status);
  *is_image = shape->naxis > 0;
  return 0;
}

/* Moves to the HDU to load: the one asked for, or the first with image data. */
static int
select_hdu (fitsfile *fptr, const char *path, int wanted, HduShape *shape, int *hdu_out)
{
  int status = 0, nhdus = 0, is_image = 0, first_empty = 0;

  if (fits_get_num_hdus (fptr, &nhdus, &status))
    return fits_failure (SKY_ERR_FORMAT, path, status, "cannot count HDUs");

  if (wanted > 0)
    {
      if (wanted > nhdus)
        return sky_fail (SKY_ERR_NO_IMAGE, "%s: there is no HDU %d (the file has %d)",
                         path, wanted, nhdus);
      if (fits_movabs_hdu (fptr, wanted, NULL, &status)
          || read_hdu_shape (fptr, shape, &is_image, &status))
        return fits_failure (SKY_ERR_FORMAT, path, status, "cannot read the HDU");
      if (!is_image)
        return sky_fail (SKY_ERR_NO_IMAGE, "%s: HDU %d holds no image data", path, wanted);
      *hdu_out = wanted;
      return SKY_OK;
    }

  /* An image HDU with a zero-length axis holds no data (some writers make
   * their empty primary that way): pass over it, but if nothing better
   * follows, go back so that check_shape names the empty axis. */
  for (int hdu = 1; hdu <= nhdus; hdu++)
    {
      int has_pixels = 1;
      if (fits_movabs_hdu (fptr, hdu, NULL, &status)
          || read_hdu_shape (fptr, shape, &is_image, &status))
        return fits_failure (SKY_ERR_FORMAT, path, status, "cannot read an HDU header");
      for (int i = 0; i < shape->naxis; i++)
        has_pixels = has_pixels && shape->naxes[i] > 0;
      if (is_image && has_pixels)
        {
          *hdu_out = hdu;
          return SKY_OK;
        }
      if (is_image && first_empty == 0)
        first_empty = hdu;
    }
  if (first_empty > 0)
    {
      if (fits_movabs_hdu (fptr, first_empty, NULL, &status)
          || read_hdu_shape (fptr, shape, &is_image, &status))
        return fits_failure (SKY_ERR_FORMAT, path, status, "cannot read an HDU header");
      *hdu_out = first_empty;
      return SKY_OK;
    }
  return sky_fail (SKY_ERR_NO_IMAGE, "%s: no HDU holds image data", path);
}

/* Checks the shape and finds where the wanted plane starts. Axes 1 and 2 are
 * the image (a missing second axis is one row); every further axis is a
 * plane axis, and a degenerate one (length 1) simply drops out. */
static int
check_shape (const char *path, const HduShape *shape, int64_t plane,
             int64_t *nx, int64_t *ny, int64_t *nplanes, long long first_pixel[])
{
  long long planes = 1;

  for (int i = 0; i < shape->naxis; i++)
    if (shape->naxes[i] <= 0)
      return sky_fail (SKY_ERR_SIZE, "%s: NAXIS%d is %lld: the image has no pixels",
                       path, i + 1, shape->naxes[i]);

  *nx = shape->naxes[0];
  *ny = shape->naxis >= 2 ? shape->naxes[1] : 1;
  for (int i = 2; i < shape->naxis; i++)
    {
      if (planes > INT64_MAX / shape->naxes[i])
        return sky_fail (SKY_ERR_SIZE, "%s: the cube has more planes than can be counted", path);
      planes *= shape->naxes[i];
    }
  *nplanes = planes;
  if (plane < 0 || plane >= planes)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: there is no plane %lld (the HDU has %lld)",
                     path, (long long) plane, planes);

  if (*nx > INT32_MAX || *ny > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "%s: %lld x %lld pixels is more than skysift handles",
                     path, (long long) *nx, (long long) *ny);

  /* The plane index runs over axes 3.. in FITS order (axis 3 fastest). */
  first_pixel[0] = first_pixel[1] = 1;
  for (int i = 2; i < shape->naxis; i++)
    {
      first_pixel[i] = 1 + plane % shape->naxes[i];
      plane /= shape->naxes[i];
    }
  return SKY_OK;
}

/* Whether the file on disk is a compressed stream (gzip, bzip2, Unix
 * compress, pack, pkzip): the magic numbers cfitsio's file driver looks
 * for before it decompresses the whole file into memory. Judged by the
 * bytes, not the name, so the name is still taken literally. */
static int
is_compressed_stream (const char *path)
{
  unsigned char magic[4] = { 0 };
  FILE *fp = fopen (path, "rb");
  size_t got = 0;

  if (fp == NULL)
    return 0;
  got = fread (magic, 1, sizeof magic, fp);
  fclose (fp);
  if (got < 2)
    return 0;
  if (magic[0] == 0x1f && (magic[1] == 0x8b || magic[1] == 0x9d || magic[1] == 0x1e
                           || magic[1] == 0xa0))
    return 1;
  if (got >= 3 && memcmp (magic, "BZh", 3) == 0)
    return 1;
  /* cfitsio takes any file that begins "PK" for pkzip. */
  return memcmp (magic, "PK", 2) == 0;
}

/* Deflate expands at most 1032 times (zlib's own bound: each 258-byte
 * match costs at least 2 bits), so no gzip or zip stream of n bytes holds
 * more. */
#define SKY_DEFLATE_MAX_RATIO 1032

/* cfitsio sizes its buffer for a compressed file from the size the file
 * claims before it inflates a byte:
 * - gzip: the trailer's ISIZE (the size modulo 2^32); where ISIZE is below
 *   the compressed size cfitsio takes the size to have wrapped and adds
 *   4 GiB, so a damaged 12 KB file with a zero trailer made it allocate
 *   4 GiB;
 * - pkzip (any file that begins "PK"): the 32-bit size at byte 22 of the
 *   local header, as it is; a 6.7 KB file claiming 3.9 GB made it allocate
 *   that (both found by fuzzing).
 * The smallest size the claim allows is worked out the same way, and a file
 * that cannot hold it is refused first. A real FITS file is never refused:
 * its header alone compresses, so it grows when inflated, and its true size
 * is at least what the claim allows. */
static int
check_compressed_size (const char *path, const struct stat *st)
{
  unsigned char head[2] = { 0 }, size[4] = { 0 };
  FILE *fp = fopen (path, "rb");
  int gzip = 0, pkzip = 0, ok = 0;
  double claimed, least;

  if (fp == NULL)
    return SKY_OK; /* the open itself says why */
  if (fread (head, 1, 2, fp) == 2)
    {
      gzip = head[0] == 0x1f && head[1] == 0x8b;
      pkzip = head[0] == 'P' && head[1] == 'K';
    }
  if (gzip)
    ok = st->st_size >= 18 && fseeko (fp, -4, SEEK_END) == 0 && fread (size, 1, 4, fp) == 4;
  else if (pkzip)
    ok = st->st_size >= 30 && fseeko (fp, 22, SEEK_SET) == 0 && fread (size, 1, 4, fp) == 4;
  fclose (fp);
  if (!gzip && !pkzip)
    return SKY_OK;
  if (!ok)
    return sky_fail (SKY_ERR_FORMAT, "%s: a damaged %s file (%lld bytes, too short for a "
                     "%s stream)", path, gzip ? "gzip" : "zip", (long long) st->st_size,
                     gzip ? "gzip" : "zip");
  claimed = (double) ((uint32_t) size[0] | (uint32_t) size[1] << 8 | (uint32_t) size[2] << 16
                      | (uint32_t) size[3] << 24);
  least = gzip && claimed < (double) st->st_size ? claimed + 4294967296.0 : claimed;
  if (least > (double) SKY_DEFLATE_MAX_RATIO * (double) st->st_size)
    return sky_fail (SKY_ERR_FORMAT, "%s: a damaged %s file: its %s gives %.0f bytes "
                     "uncompressed, more than %lld compressed bytes can hold", path,
                     gzip ? "gzip" : "zip", gzip ? "trailer" : "header", least,
                     (long long) st->st_size);
  return SKY_OK;
}

/* The bytes of FITS the open file holds: its size on disk, or for a
 * gzipped (bzip2...) file the size cfitsio decompressed it to. Compared with
 * the compressed size, every .fits.gz would look truncated, and its
 * extensions would go unseen. */
static long long
fits_bytes (fitsfile *fptr, const char *path, const struct stat *st)
{
  return is_compressed_stream (path) ? (long long) fptr->Fptr->logfilesize
                                     : (long long) st->st_size;
}

/* Refuses an image that cannot fit in memory (where it is to be held
 * whole), or whose data the file does not hold, before anything large is
 * allocated. */
static int
check_size (fitsfile *fptr, const char *path, const HduShape *shape, int64_t nx, int64_t ny,
            int whole)
{
  uint64_t bytes = (uint64_t) nx * (uint64_t) ny * sizeof (float);
  uint64_t memory = physical_memory ();
  LONGLONG header_start, data_start, data_end;
  int status = 0;
  struct stat st;

  if (whole && memory > 0 && bytes > memory)
    return sky_fail (SKY_ERR_SIZE,
                     "%s: a %lld x %lld plane needs %.1f GiB, more than this machine's %.1f GiB",
                     path, (long long) nx, (long long) ny, bytes / 1073741824.0,
                     memory / 1073741824.0);

  if (shape->compressed)
    return SKY_OK; /* a binary table of tiles: cfitsio checks as it reads */

  if (fits_get_hduaddrll (fptr, &header_start, &data_start, &data_end, &status))
    return fits_failure (SKY_ERR_FORMAT, path, status, "cannot locate the data");
  if (stat (path, &st) == 0 && S_ISREG (st.st_mode))
    {
      long double need = (long double) data_start;
      long long held = fits_bytes (fptr, path, &st);
      long double pixels = 1;
      for (int i = 0; i < shape->naxis; i++)
        pixels *= shape->naxes[i];
      need += pixels * (abs (shape->bitpix) / 8);
      if (need > (long double) held)
        return sky_fail (SKY_ERR_FORMAT,
                         "%s: the header describes %.0Lf bytes of data but the file ends "
                         "after %lld%s: it is truncated or its header is wrong",
                         path, need - data_start, held - (long long) data_start,
                         held != (long long) st.st_size ? " (decompressed)" : "");
    }
  return SKY_OK;
}

static void
read_header_values (fitsfile *fptr, SkyImage *img)
{
  int status = 0;
  char text[FLEN_VALUE] = "";
  double bmaj = 0, bmin = 0, bpa = 0;

  if (fits_read_key (fptr, TSTRING, "BUNIT", text, NULL, &status) == 0)
    snprintf (img->bunit, sizeof img->bunit, "%s", text);
  status = 0;

  if (fits_read_key (fptr, TDOUBLE, "BMAJ", &bmaj, NULL, &status) == 0
      && fits_read_key (fptr, TDOUBLE, "BMIN", &bmin, NULL, &status) == 0
      && bmaj > 0 && bmin > 0)
    {
      img->has_beam = 1;
      img->bmaj = bmaj;
      img->bmin = bmin;
      status = 0;
      if (fits_read_key (fptr, TDOUBLE, "BPA", &bpa, NULL, &status) == 0)
        img->bpa = bpa;
    }
  status = 0;

  /* Keep every card so that wcslib can build the WCS from the same header;
   * of a tile-compressed image, the image's header, not its table's.
   * cfitsio allocates the string before reading the cards, and a card it
   * cannot read fails the call with the string still allocated. */
  img->header = NULL;
  if (fits_is_compressed_image (fptr, &status)
        ? fits_convert_hdr2str (fptr, 0, NULL, 0, &img->header, &img->nheader_cards, &status)
        : fits_hdr2str (fptr, 0, NULL, 0, &img->header, &img->nheader_cards, &status))
    {
      int free_status = 0;
      if (img->header)
        fits_free_memory (img->header, &free_status);
      img->header = NULL;
      img->nheader_cards = 0;
    }
  fits_clear_errmsg ();
}

/* Turns +-Inf into NaN (no statistic can use them) and counts the blanks. */
static void
mark_blanks (SkyImage *img)
{
  int64_t n = img->nx * img->ny, nblank = 0, ninf = 0;
  float *p = img->pixels;

  for (int64_t i = 0; i < n; i++)
    {
      if (!isfinite (p[i]))
        {
          nblank++;
          if (isinf (p[i]))
            {
              ninf++;
              p[i] = NAN;
            }
        }
    }
  img->nblank = nblank;
  img->ninf = ninf;
}

/* Starts a child for work that may crash inside cfitsio. The child's
 * stderr goes to /dev/null: the parent says what went wrong, in one line,
 * and whatever a crashing library (or a sanitizer watching it) would print
 * stays out. fork()'s result. */
static pid_t
fork_quiet (void)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);
      if (devnull >= 0)
        dup2 (devnull, STDERR_FILENO);
    }
  return pid;
}

/* Waits for a child of fork_quiet(); its wait status. */
static int
wait_child (pid_t pid)
{
  int wstatus = 0;

  while (waitpid (pid, &wstatus, 0) < 0 && errno == EINTR)
    ;
  return wstatus;
}

/* Reads a tile-compressed plane in a child process. cfitsio's decompressors
 * trust the compressed stream: a damaged RICE tile was seen to make
 * fits_rdecomp read past its buffer and crash (cfitsio 4.2, found by
 * fuzzing). In a child, a crash costs the child only; the pixels come back
 * through shared memory. The caller reads nothing more from fptr after
 * this, since the child moved the file's shared offset. */
static int
read_compressed_plane (fitsfile *fptr, const char *path, long long first_pixel[], int64_t n,
                       int float_data, float *pixels)
{
  size_t bytes = (size_t) n * sizeof *pixels;
  float *shared = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int wstatus = 0, ret = SKY_OK;
  pid_t pid;

  if (shared == MAP_FAILED)
    return sky_fail (SKY_ERR_MEMORY, "%s: no memory to decompress %lld pixels", path,
                     (long long) n);
  pid = fork_quiet ();
  if (pid == 0)
    {
      float nulval = NAN;
      int status = 0, anynul = 0;
      fits_read_pixll (fptr, TFLOAT, first_pixel, n, float_data ? NULL : &nulval, shared,
                       &anynul, &status);
      _exit (status == 0 ? 0 : 1);
    }
  if (pid < 0)
    ret = sky_fail (SKY_ERR_IO, "%s: cannot start the decompression: %s", path,
                    strerror (errno));
  else
    {
      wstatus = wait_child (pid);
      if (WIFSIGNALED (wstatus))
        ret = sky_fail (SKY_ERR_FORMAT, "%s: the compressed image data is damaged "
                        "(decompressing it failed with signal %d)", path, WTERMSIG (wstatus));
      else if (!WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0)
        ret = sky_fail (SKY_ERR_FORMAT, "%s: cannot decompress the pixels", path);
      else
        memcpy (pixels, shared, bytes);
    }
  munmap (shared, bytes);
  return ret;
}

/* Whether the plane is read by sky_fits_read_raw_plane rather than by
 * cfitsio: a plain (not tile-compressed) HDU of a regular file that is not
 * a compressed stream (cfitsio holds those decompressed in memory).
 * SKYSIFT_FITS_READER=cfitsio sends every plane through cfitsio, so that
 * tests and benchmarks can compare the two readers. */
static int
reads_raw (const char *path, const HduShape *shape)
{
  const char *forced = getenv ("SKYSIFT_FITS_READER");
  struct stat st;

  if (forced != NULL && strcmp (forced, "cfitsio") == 0)
    return 0;
  if (shape->compressed || stat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return 0;
  return !is_compressed_stream (path);
}

/* Reads the plane as cfitsio's fits_read_pixll to float would, with the
 * BSCALE, BZERO and BLANK cfitsio found in the header: cfitsio holds an
 * image as a table of two columns, the group parameters and the array, and
 * the array's column carries them (fitscore.c, ffpinit). Which BLANK
 * values it checks follows ffgcle (getcole.c): none where the header has
 * none or where the value cannot occur in the data type; a 32-bit
 * image compares its BLANK narrowed to 32 bits. */
static int
raw_plane_of (fitsfile *fptr, const char *path, const HduShape *shape, int64_t plane,
              int64_t npixels, SkyFitsRawPlane *raw)
{
  LONGLONG header_start, data_start, data_end;
  int status = 0;
  const tcolumn *column = fptr->Fptr->tableptr + 1;

  memset (raw, 0, sizeof *raw);
  if (fits_get_hduaddrll (fptr, &header_start, &data_start, &data_end, &status))
    return fits_failure (SKY_ERR_FORMAT, path, status, "cannot locate the data");
  raw->bitpix = shape->bitpix;
  raw->npixels = npixels;
  raw->offset = data_start + column->tbcol + plane * npixels * (abs (shape->bitpix) / 8);
  raw->scale = column->tscale;
  raw->zero = column->tzero;
  raw->blank = column->tnull;
  raw->check_blank = shape->bitpix > 0 && column->tnull != SKY_CFITSIO_NULL_UNDEFINED;
  if (shape->bitpix == 16 && (column->tnull > SHRT_MAX || column->tnull < SHRT_MIN))
    raw->check_blank = 0;
  if (shape->bitpix == 8 && (column->tnull > 255 || column->tnull < 0))
    raw->check_blank = 0;
  return SKY_OK;
}

static int
read_plane_raw (fitsfile *fptr, const char *path, const HduShape *shape, int64_t plane,
                SkyImage *out)
{
  SkyFitsRawPlane raw;
  int ret = raw_plane_of (fptr, path, shape, plane, out->nx * out->ny, &raw);

  if (ret != SKY_OK)
    return ret;
  return sky_fits_read_raw_plane (path, &raw, 0, out->pixels, &out->nblank, &out->ninf);
}

/* Whether anything follows the primary HDU: only extensions can be
 * tile-compressed images, and only those need the guarded walk below. */
static int
has_extensions (fitsfile *fptr, const char *path, const struct stat *st)
{
  LONGLONG header_start, data_start, data_end;
  int status = 0;

  if (fits_get_hduaddrll (fptr, &header_start, &data_start, &data_end, &status))
    return 1;
  return !S_ISREG (st->st_mode) || data_end < fits_bytes (fptr, path, st);
}

/* Walks the headers in a child process first. cfitsio parses a compressed
 * image's tiling as soon as it reaches its HDU, and a ZTILEn of 0 makes it
 * divide by zero and kill the process (cfitsio 4.2, found by fuzzing);
 * converting such a header can crash as well. The child takes the same
 * steps as the load, on its own handle; if it dies, the file is refused
 * before this process goes near it. Any other failure is left to the load
 * itself, which says what it was. */
static int
walk_headers_in_child (const char *path, const SkyLoadOptions *opts)
{
  int wstatus;
  pid_t pid = fork_quiet ();

  if (pid == 0)
    {
      fitsfile *fptr = NULL;
      HduShape shape;
      char *header = NULL;
      int status = 0, hdu = 0, ncards = 0;
      if (fits_open_diskfile (&fptr, path, READONLY, &status) == 0
          && select_hdu (fptr, path, opts->hdu, &shape, &hdu) == SKY_OK && shape.compressed)
        fits_convert_hdr2str (fptr, 0, NULL, 0, &header, &ncards, &status);
      _exit (0);
    }
  if (pid < 0)
    return sky_fail (SKY_ERR_IO, "%s: cannot start reading the headers: %s", path,
                     strerror (errno));
  wstatus = wait_child (pid);
  /* The child exits 0 whatever it found; anything else means it died (a
   * sanitizer, watching it, turns the signal into an exit status). */
  if (WIFSIGNALED (wstatus))
    return sky_fail (SKY_ERR_FORMAT, "%s: an HDU header is damaged (reading it failed with "
                     "signal %d)", path, WTERMSIG (wstatus));
  if (!WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0)
    return sky_fail (SKY_ERR_FORMAT, "%s: an HDU header is damaged (reading it failed)", path);
  return SKY_OK;
}

/* Opens path and finds the plane to read: the checks every reader shares
 * (whole: the plane is to be held in memory whole). On success *fptr is
 * open and the caller closes it. */
static int
open_plane (const char *path, const SkyLoadOptions *opts, fitsfile **fptr, HduShape *shape,
            int *hdu, int64_t *nx, int64_t *ny, int64_t *nplanes, long long first_pixel[],
            int whole)
{
  int status = 0, ret;
  struct stat st;

  *fptr = NULL;
  if (opts->hdu < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: HDU numbers start at 1 (got %d)", path, opts->hdu);
  if (stat (path, &st) != 0)
    return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (errno));
  if (S_ISDIR (st.st_mode))
    return sky_fail (SKY_ERR_IO, "%s: is a directory", path);
  if (S_ISREG (st.st_mode) && (ret = check_compressed_size (path, &st)) != SKY_OK)
    return ret;

  /* diskfile: the name is a plain path, so brackets in it stay brackets. */
  if (fits_open_diskfile (fptr, path, READONLY, &status))
    {
      *fptr = NULL;
      return fits_failure (status == FILE_NOT_OPENED ? SKY_ERR_IO : SKY_ERR_FORMAT, path, status,
                           "not a readable FITS file");
    }
  /* The child must not share this handle (its reads would move the file
   * offset under it), so the file is closed around the walk. */
  if (has_extensions (*fptr, path, &st))
    {
      fits_close_file (*fptr, &status);
      *fptr = NULL;
      status = 0;
      if ((ret = walk_headers_in_child (path, opts)) != SKY_OK)
        return ret;
      if (fits_open_diskfile (fptr, path, READONLY, &status))
        {
          *fptr = NULL;
          return fits_failure (SKY_ERR_IO, path, status, "cannot reopen the file");
        }
    }
  ret = select_hdu (*fptr, path, opts->hdu, shape, hdu);
  if (ret == SKY_OK)
    ret = check_shape (path, shape, opts->plane, nx, ny, nplanes, first_pixel);
  if (ret == SKY_OK)
    ret = check_size (*fptr, path, shape, *nx, *ny, whole);
  if (ret != SKY_OK)
    {
      status = 0;
      fits_close_file (*fptr, &status);
      *fptr = NULL;
    }
  return ret;
}

int
sky_image_load (const char *path, const SkyLoadOptions *opts, SkyImage *out)
{
  SkyLoadOptions defaults = { 0, 0 };
  fitsfile *fptr = NULL;
  HduShape shape;
  long long first_pixel[SKY_MAX_AXES];
  int64_t nx = 0, ny = 0, nplanes = 0;
  int status = 0, anynul = 0, hdu = 0, ret = SKY_OK;
  float nulval = NAN;

  memset (out, 0, sizeof *out);
  if (opts == NULL)
    opts = &defaults;
  ret = open_plane (path, opts, &fptr, &shape, &hdu, &nx, &ny, &nplanes, first_pixel, 1);
  if (ret != SKY_OK)
    goto exit;

  out->pixels = sky_alloc_large ((size_t) (nx * ny) * sizeof (float));
  if (out->pixels == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "%s: no memory for %lld x %lld pixels", path,
                      (long long) nx, (long long) ny);
      goto exit;
    }
  out->nx = nx;
  out->ny = ny;

  /* The header first: a compressed plane is read by a child process,
   * after which this process reads nothing more from the file. */
  read_header_values (fptr, out);

  /* cfitsio applies BSCALE/BZERO and writes nulval for BLANK pixels. Float
   * images are read without that check: it tests only the exponent, so it
   * would turn +-Inf into nulval as well and ninf could never be counted;
   * NaN and Inf come through as they are and mark_blanks sorts them out. */
  if (reads_raw (path, &shape))
    {
      /* Converts, makes +-Inf NaN and counts the blanks as it reads. */
      ret = read_plane_raw (fptr, path, &shape, opts->plane, out);
      if (ret != SKY_OK)
        goto exit;
    }
  else
    {
      if (shape.compressed)
        {
          ret = read_compressed_plane (fptr, path, first_pixel, nx * ny, shape.bitpix < 0,
                                       out->pixels);
          if (ret != SKY_OK)
            goto exit;
        }
      else if (fits_read_pixll (fptr, TFLOAT, first_pixel, nx * ny,
                                shape.bitpix < 0 ? NULL : &nulval, out->pixels, &anynul,
                                &status))
        {
          ret = fits_failure (SKY_ERR_FORMAT, path, status, "cannot read the pixels");
          goto exit;
        }
      mark_blanks (out);
    }
  if (out->nblank == nx * ny)
    {
      ret = sky_fail (SKY_ERR_EMPTY, "%s: every pixel of HDU %d plane %lld is blank", path, hdu,
                      (long long) opts->plane);
      goto exit;
    }

  out->path = strdup (path);
  out->hdu = hdu;
  out->plane = opts->plane;
  out->nplanes = nplanes;
  out->bitpix = shape.bitpix;
  if (out->path == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);

exit:
  if (fptr != NULL)
    {
      int close_status = 0;
      fits_close_file (fptr, &close_status);
    }
  fits_clear_errmsg ();
  if (ret != SKY_OK)
    sky_image_clear (out);
  return ret;
}

int
sky_fits_read_plane_f64 (const char *path, int64_t *nx, int64_t *ny, double **data)
{
  SkyLoadOptions opts = { 0, 0 };
  fitsfile *fptr = NULL;
  HduShape shape;
  long long first_pixel[SKY_MAX_AXES];
  int64_t nplanes;
  int status = 0, anynul = 0, hdu, ret;
  double nulval = NAN;

  *data = NULL;
  ret = open_plane (path, &opts, &fptr, &shape, &hdu, nx, ny, &nplanes, first_pixel, 1);
  if (ret != SKY_OK)
    return ret;
  *data = malloc ((size_t) (*nx * *ny) * sizeof **data);
  if (*data == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "%s: no memory for %lld x %lld pixels", path,
                    (long long) *nx, (long long) *ny);
  else if (fits_read_pixll (fptr, TDOUBLE, first_pixel, *nx * *ny,
                            shape.bitpix < 0 ? NULL : &nulval, *data, &anynul, &status))
    ret = fits_failure (SKY_ERR_FORMAT, path, status, "cannot read the pixels");
  status = 0;
  fits_close_file (fptr, &status);
  fits_clear_errmsg ();
  if (ret != SKY_OK)
    {
      free (*data);
      *data = NULL;
    }
  return ret;
}

int
sky_fits_read_header (const char *path, char **cards, int *ncards, int *hdu, int *naxis)
{
  SkyLoadOptions opts = { 0, 0 };
  SkyImage img;
  fitsfile *fptr = NULL;
  HduShape shape;
  long long first_pixel[SKY_MAX_AXES];
  int64_t nx, ny, nplanes;
  int status = 0, ret;

  *cards = NULL;
  *ncards = 0;
  ret = open_plane (path, &opts, &fptr, &shape, hdu, &nx, &ny, &nplanes, first_pixel, 1);
  if (ret != SKY_OK)
    return ret;
  memset (&img, 0, sizeof img);
  read_header_values (fptr, &img);
  fits_close_file (fptr, &status);
  fits_clear_errmsg ();
  if (img.header == NULL)
    return sky_fail (SKY_ERR_FORMAT, "%s: cannot read the header of HDU %d", path, *hdu);
  /* cfitsio allocates it with malloc (sky_image_clear frees it so too). */
  *cards = img.header;
  *ncards = img.nheader_cards;
  *naxis = shape.naxis;
  return SKY_OK;
}

struct SkyPlaneFile {
  char *path;
  SkyFitsRawPlane raw;  /* the whole plane */
};

int
sky_plane_file_open (const char *path, const SkyLoadOptions *opts, SkyImage *img,
                     SkyPlaneFile **out)
{
  SkyLoadOptions defaults = { 0, 0 };
  SkyPlaneFile *f = NULL;
  fitsfile *fptr = NULL;
  HduShape shape;
  long long first_pixel[SKY_MAX_AXES];
  int64_t nx = 0, ny = 0, nplanes = 0;
  int hdu = 0, ret;

  memset (img, 0, sizeof *img);
  *out = NULL;
  if (opts == NULL)
    opts = &defaults;
  ret = open_plane (path, opts, &fptr, &shape, &hdu, &nx, &ny, &nplanes, first_pixel, 0);
  if (ret != SKY_OK)
    return ret;
  if (shape.compressed || is_compressed_stream (path))
    ret = sky_fail (SKY_ERR_ARGUMENT, "%s: only an uncompressed image can be read in parts "
                    "(this one is compressed)", path);
  else if ((f = calloc (1, sizeof *f)) == NULL || (f->path = strdup (path)) == NULL
           || (img->path = strdup (path)) == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
  else
    ret = raw_plane_of (fptr, path, &shape, opts->plane, nx * ny, &f->raw);
  if (ret == SKY_OK)
    {
      read_header_values (fptr, img);
      img->nx = nx;
      img->ny = ny;
      img->hdu = hdu;
      img->plane = opts->plane;
      img->nplanes = nplanes;
      img->bitpix = shape.bitpix;
      *out = f;
      f = NULL;
    }
  {
    int close_status = 0;
    fits_close_file (fptr, &close_status);
  }
  fits_clear_errmsg ();
  sky_plane_file_close (f);
  if (ret != SKY_OK)
    sky_image_clear (img);
  return ret;
}

int
sky_plane_file_read (SkyPlaneFile *f, int64_t first, int64_t n, int nthreads, float *out,
                     int64_t *ninf)
{
  return sky_plane_file_read_each (f, first, n, nthreads, out, ninf, NULL, NULL);
}

int
sky_plane_file_read_each (SkyPlaneFile *f, int64_t first, int64_t n, int nthreads, float *out,
                          int64_t *ninf, SkyPixelBlockFunc each_block, void *user)
{
  SkyFitsRawPlane part = f->raw;
  int64_t nblank = 0, ninf_part = 0;
  int ret;

  if (first < 0 || n < 0 || first + n > f->raw.npixels)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: pixels %lld to %lld are not in the plane",
                     f->path, (long long) first, (long long) (first + n));
  part.offset += first * (abs (part.bitpix) / 8);
  part.npixels = n;
  ret = sky_fits_read_raw_plane_each (f->path, &part, nthreads, out, &nblank, &ninf_part,
                                      each_block, user);
  if (ret == SKY_OK && ninf != NULL)
    *ninf += ninf_part;
  return ret;
}

const SkyFitsRawPlane *
sky_plane_file_raw (const SkyPlaneFile *f)
{
  return &f->raw;
}

const char *
sky_plane_file_path (const SkyPlaneFile *f)
{
  return f->path;
}

void
sky_plane_file_close (SkyPlaneFile *f)
{
  if (f == NULL)
    return;
  free (f->path);
  free (f);
}
