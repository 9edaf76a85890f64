/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sky-test-util.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmpdir;

const char *
sky_test_shared_data (const char **why)
{
  static char reason[512];
  const char *dir = g_getenv ("SKYSIFT_SHARED_DATA");

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_snprintf (reason, sizeof reason,
                  "no shared test images at %s (they sit in ../shared/data beside a "
                  "development checkout)", dir ? dir : "(SKYSIFT_SHARED_DATA unset)");
      if (why)
        *why = reason;
      return NULL;
    }
  return dir;
}

static void
skip_without_shared_data (gconstpointer why)
{
  g_test_skip (why);
}

void
sky_test_add_shared_images (const char *prefix, gboolean skip_2048, GTestDataFunc func)
{
  const char *why = NULL, *dir = sky_test_shared_data (&why);
  const char *subdirs[] = { "", "external" };

  if (dir == NULL)
    {
      char *test = g_strdup_printf ("%s/shared-images", prefix);
      g_test_add_data_func (test, why, skip_without_shared_data);
      g_free (test);
      return;
    }
  for (int s = 0; s < (int) G_N_ELEMENTS (subdirs); s++)
    {
      char *folder = g_build_filename (dir, subdirs[s], NULL);
      GDir *d = g_dir_open (folder, 0, NULL);
      GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
      const char *name;

      while (d != NULL && (name = g_dir_read_name (d)) != NULL)
        if (g_str_has_suffix (name, ".fits"))
          g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
      for (guint i = 0; i < names->len; i++)
        {
          const char *file = g_ptr_array_index (names, i);
          char *test;
          if (skip_2048 && strstr (file, "2048") != NULL)
            continue;
          test = g_strdup_printf ("%s/shared/%s", prefix, file);
          g_test_add_data_func_full (test, g_build_filename (folder, file, NULL), func, g_free);
          g_free (test);
        }
      g_ptr_array_free (names, TRUE);
      if (d != NULL)
        g_dir_close (d);
      g_free (folder);
    }
}

/* Removes path with what is in it, folders included (the app's tests make
 * the demo image and their XDG folders in folders of their own). */
static void
remove_tree (const char *path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
      g_free (child);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (path);
}

static void
remove_tmpdir (void)
{
  if (tmpdir != NULL)
    remove_tree (tmpdir);
}

const char *
sky_test_tmpdir (void)
{
  if (tmpdir == NULL)
    {
      tmpdir = g_dir_make_tmp ("skysift-test-XXXXXX", NULL);
      g_assert_nonnull (tmpdir);
      atexit (remove_tmpdir);
    }
  return tmpdir;
}

char *
sky_test_tmp_path (const char *name)
{
  return g_build_filename (sky_test_tmpdir (), name, NULL);
}

void
sky_test_image (SkyImage *img, int64_t nx, int64_t ny, const float *values)
{
  g_assert_cmpint (sky_image_alloc (img, nx, ny), ==, SKY_OK);
  if (values != NULL)
    memcpy (img->pixels, values, (size_t) (nx * ny) * sizeof (float));
  sky_image_count_blanks (img);
}

void
sky_test_run_cpu (const SkyImage *img, const SkyParams *params, SkyResult *res)
{
  int ret = sky_cpu_run (img, params, res);
  if (ret != SKY_OK)
    g_error ("pipeline failed: %s", sky_last_error ());
}
