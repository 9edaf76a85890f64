/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Atomic output files (sky-output-private.h), shared by every writer. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Creates path.tmpXXXXXXXX beside path, so that rename() stays on one file
 * system, with the mode any new file gets (0666 less the umask): not
 * mkstemp, whose files are 0600. Returns the descriptor, or -1 with errno
 * set and *tmp NULL. */
static int
make_temp (const char *path, char **tmp)
{
  static atomic_uint_fast64_t counter;
  size_t size = strlen (path) + sizeof ".tmpXXXXXXXX";
  struct timespec now;
  int fd = -1;

  *tmp = malloc (size);
  if (*tmp == NULL)
    return -1;
  clock_gettime (CLOCK_REALTIME, &now);
  for (int attempt = 0; attempt < 100 && fd < 0; attempt++)
    {
      /* splitmix64's finaliser over the pid, the time and a counter. */
      uint64_t x = ((uint64_t) getpid () << 40) ^ (uint64_t) now.tv_nsec
                   ^ ((uint64_t) now.tv_sec << 20) ^ atomic_fetch_add (&counter, 1);
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
      x ^= x >> 31;
      snprintf (*tmp, size, "%s.tmp%08" PRIx64, path, x & 0xFFFFFFFFu);
      fd = open (*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0)
    {
      int saved = errno;
      free (*tmp);
      *tmp = NULL;
      errno = saved;
    }
  return fd;
}

/* Both ways of opening: with a stream, or by name (named: no stream, and
 * only a regular file or a new one). */
static int
output_open (SkyOutput *out, const char *path, int named)
{
  struct stat st;
  int fd;

  memset (out, 0, sizeof *out);
  out->path = path;
  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      if (S_ISDIR (st.st_mode))
        return sky_fail (SKY_ERR_IO, "%s: is a directory", path);
      if (named)
        return sky_fail (SKY_ERR_IO, "%s: not a regular file", path);
      out->fp = fopen (path, "w");
      if (out->fp == NULL)
        return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (errno));
      return SKY_OK;
    }

  fd = make_temp (path, &out->tmp_path);
  if (fd < 0)
    return sky_fail (errno == ENOMEM ? SKY_ERR_MEMORY : SKY_ERR_IO,
                     "%s: cannot create the file: %s", path, strerror (errno));
  if (named)
    {
      close (fd);
      return SKY_OK;
    }
  out->fp = fdopen (fd, "w");
  if (out->fp == NULL)
    {
      int err = errno;
      close (fd);
      unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
      return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (err));
    }
  return SKY_OK;
}

int
sky_output_open (SkyOutput *out, const char *path)
{
  return output_open (out, path, 0);
}

int
sky_output_open_named (SkyOutput *out, const char *path)
{
  return output_open (out, path, 1);
}

/* Syncs a file written by name (sky_output_open_named). */
static int
sync_named (const char *tmp_path)
{
  int fd = open (tmp_path, O_RDONLY | O_CLOEXEC), err = 0;

  if (fd < 0)
    return errno;
  if (fsync (fd) != 0)
    err = errno;
  close (fd);
  return err;
}

int
sky_output_close (SkyOutput *out)
{
  int err = 0;

  if (out->fp == NULL)
    err = out->tmp_path != NULL ? sync_named (out->tmp_path) : EBADF;
  else
    {
      if (ferror (out->fp))
        err = errno ? errno : EIO;
      if (fflush (out->fp) != 0 && err == 0)
        err = errno;
      if (out->tmp_path != NULL && err == 0 && fsync (fileno (out->fp)) != 0)
        err = errno;
      if (fclose (out->fp) != 0 && err == 0)
        err = errno;
      out->fp = NULL;
    }

  if (out->tmp_path != NULL)
    {
      if (err == 0 && rename (out->tmp_path, out->path) != 0)
        err = errno;
      if (err != 0)
        unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
    }
  if (err != 0)
    return sky_fail (SKY_ERR_IO, "%s: writing failed: %s", out->path, strerror (err));
  return SKY_OK;
}

int
sky_output_abort (SkyOutput *out, int status)
{
  if (out->fp != NULL)
    fclose (out->fp);
  out->fp = NULL;
  if (out->tmp_path != NULL)
    {
      unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
    }
  return status;
}

int
sky_write_text (const char *path, const char *text)
{
  return sky_write_bytes (path, text, strlen (text));
}

int
sky_write_bytes (const char *path, const void *data, size_t size)
{
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  if (size > 0)
    fwrite (data, 1, size, out.fp);   /* sky_output_close checks the stream */
  return sky_output_close (&out);
}
