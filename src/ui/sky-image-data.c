/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loading an image and preparing it for display, off the main thread. */
#include "sky-image-data.h"
#include "sky-image-read.h"
#include "sky-ui-task.h"

#include <glib/gstdio.h>
#include <string.h>

static void
image_data_clear (SkyImageData *data)
{
  sky_wcs_free (data->wcs);
  sky_pyramid_clear (&data->pyramid);
  sky_display_stats_clear (&data->stats);
  sky_image_clear (&data->image);
  g_free (data->display_name);
}

SKY_DEFINE_SHARED_TYPE (SkyImageData, sky_image_data, image_data_clear)

char *
sky_image_data_demo_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "skysift", "gc_like_demo_2048.fits", NULL);
}

typedef struct {
  char *path;
  SkyLoadOptions opts;
  gboolean make_demo;
  SkyOpenProgress *progress;
} LoadInput;

static void
load_input_free (LoadInput *in)
{
  g_free (in->path);
  g_clear_pointer (&in->progress, sky_open_progress_unref);
  g_free (in);
}

void
sky_image_data_describe (SkyImageData *data, const char *path)
{
  int header_has_cdelt;

  if (data->display_name != NULL)
    return;
  /* No celestial WCS is no failure: the readout then shows pixels only. */
  if (sky_wcs_new (&data->image, &data->wcs) != SKY_OK)
    data->wcs = NULL;
  /* RA increases to the left where a celestial WCS says which way it runs;
   * elsewhere x increases to the right, as DS9 shows it. */
  data->has_wcs = data->wcs != NULL;
  data->flip_x = data->has_wcs
                 && sky_header_flip_x (data->image.header, data->image.nheader_cards,
                                       &header_has_cdelt);
  data->display_name = g_filename_display_basename (path);
}

/* Min-max limits set by a few wild pixels: where the central 99.99% of the
 * pixels span less than a thousandth of the range from the least to the
 * greatest, the min-max view puts nearly all of them in one colour (a
 * black frame). Returns how many pixels lie that far out then (more than
 * ten times the central span beyond it), 0 otherwise. */
static gint64
count_minmax_outliers (const SkyImage *img, const SkyDisplayStats *st)
{
  double lo = sky_display_stats_quantile (st, 0.00005);
  double hi = sky_display_stats_quantile (st, 0.99995);
  double far_lo = lo - 10 * (hi - lo), far_hi = hi + 10 * (hi - lo);
  gint64 n = 0;

  if (!(st->max > st->min) || (hi - lo) * 1000 >= st->max - st->min)
    return 0;
  for (gint64 i = 0; i < img->nx * img->ny; i++)
    n += img->pixels[i] < far_lo || img->pixels[i] > far_hi;
  return n;
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadInput *in = task_data;
  g_autoptr (SkyImageData) data = g_atomic_rc_box_new0 (SkyImageData);
  g_autoptr (GError) error = NULL;
  gboolean counted = FALSE;
  double t0;
  int ret = SKY_OK;

  if (in->make_demo && !g_file_test (in->path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *dir = g_path_get_dirname (in->path);
      g_autofree char *truth = NULL;

      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          int err = errno;
          g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_IO,
                                   "%s: cannot make the cache folder for the demo image: %s",
                                   dir, g_strerror (err));
          return;
        }
      truth = g_strdup_printf ("%.*s_truth.csv", (int) strlen (in->path) - 5, in->path);
      if ((ret = sky_synth_write (in->path, truth, NULL)) != SKY_OK)
        {
          g_task_return_error (task, sky_ui_error_new_from_status (ret));
          return;
        }
    }
  data->is_demo = in->make_demo;

  t0 = sky_now_ms ();
  switch (sky_image_read (in->path, &in->opts, data, in->progress, cancellable, &error))
    {
    case SKY_IMAGE_READ_DONE:
      counted = TRUE;
      break;
    case SKY_IMAGE_READ_FAILED:
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    case SKY_IMAGE_READ_CANCELLED:
      g_task_return_error_if_cancelled (task);
      return;
    case SKY_IMAGE_READ_CANNOT:
      ret = sky_image_load (in->path, &in->opts, &data->image);
      if (ret != SKY_OK)
        {
          g_task_return_error (task, sky_ui_error_new_from_status (ret));
          return;
        }
      break;
    }
  data->load_ms = sky_now_ms () - t0;
  if (g_task_return_error_if_cancelled (task))
    return;

  t0 = sky_now_ms ();
  /* A big image's first frame needs level 0 alone: the zoom-out levels
   * come after it (sky_image_data_make_levels_async). */
  data->levels_pending = in->progress != NULL
                         && data->image.nx * data->image.ny
                            >= sky_image_read_progressive_min_pixels ();
  if (!counted)
    ret = sky_display_stats_compute (&data->image, 0, &data->stats);
  if (ret == SKY_OK && data->levels_pending)
    sky_pyramid_init_base (&data->image, &data->pyramid);
  else if (ret == SKY_OK)
    ret = sky_pyramid_build (&data->image, 0, &data->pyramid);
  if (ret != SKY_OK)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, sky_ui_error_from_status (ret), "%s: %s",
                               in->path, sky_last_error ());
      return;
    }
  sky_image_data_describe (data, in->path);
  data->minmax_outliers = count_minmax_outliers (&data->image, &data->stats);
  data->prepare_ms = sky_now_ms () - t0;

  g_task_return_pointer (task, g_steal_pointer (&data), (GDestroyNotify) sky_image_data_unref);
}

void
sky_image_data_load_async (const char *path,
                           const SkyLoadOptions *opts,
                           gboolean make_demo,
                           SkyOpenProgress *progress,
                           GCancellable *cancellable,
                           GAsyncReadyCallback callback,
                           gpointer user_data)
{
  LoadInput *in;

  g_return_if_fail (path != NULL);

  in = g_new0 (LoadInput, 1);
  in->path = g_strdup (path);
  if (opts)
    in->opts = *opts;
  in->make_demo = make_demo;
  in->progress = progress ? sky_open_progress_ref (progress) : NULL;
  sky_ui_task_run (sky_image_data_load_async, in, (GDestroyNotify) load_input_free, load_thread,
                   cancellable, callback, user_data);
}

SkyImageData *
sky_image_data_load_finish (GAsyncResult *result, GError **error)
{
  return sky_ui_task_finish_pointer (result, sky_image_data_load_async, error);
}

/* What the worker made after the first frame: the exact statistics of a
 * sampled histogram, handed to the image on the main thread, whose code
 * alone reads them. */
typedef struct {
  SkyDisplayStats stats;
  gint64 minmax_outliers;
} LevelsResult;

static void
levels_result_free (LevelsResult *res)
{
  sky_display_stats_clear (&res->stats);
  g_free (res);
}

static void
levels_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  SkyImageData *data = task_data;
  LevelsResult *res = g_new0 (LevelsResult, 1);
  SkyPyramid levels;
  double t0 = sky_now_ms ();
  const char *delay = g_getenv ("SKYSIFT_LEVELS_DELAY_US");
  int ret = SKY_OK;

  /* A pause first, for the tests that look at the first frame before the
   * levels on any machine. */
  if (delay != NULL)
    g_usleep (g_ascii_strtoull (delay, NULL, 10));
  t0 = sky_now_ms ();
  if (data->stats.sampled)
    {
      ret = sky_display_stats_compute (&data->image, 0, &res->stats);
      if (ret == SKY_OK)
        res->minmax_outliers = count_minmax_outliers (&data->image, &res->stats);
    }
  if (ret == SKY_OK)
    ret = sky_pyramid_build (&data->image, 0, &levels);
  if (ret != SKY_OK)
    {
      levels_result_free (res);
      g_task_return_error (task, sky_ui_error_new_from_status (ret));
      return;
    }
  sky_pyramid_publish (&data->pyramid, &levels);
  data->levels_ms = sky_now_ms () - t0;
  g_task_return_pointer (task, res, (GDestroyNotify) levels_result_free);
}

void
sky_image_data_make_levels_async (SkyImageData *data,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  g_return_if_fail (data != NULL && data->levels_pending);
  /* Whoever asks first makes them; the flag is the main thread's. */
  data->levels_pending = FALSE;
  sky_ui_task_run (sky_image_data_make_levels_async, sky_image_data_ref (data),
                   (GDestroyNotify) sky_image_data_unref, levels_thread, cancellable, callback,
                   user_data);
}

gboolean
sky_image_data_make_levels_finish (GAsyncResult *result, GError **error)
{
  SkyImageData *data;
  LevelsResult *res;

  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result))
                        == sky_image_data_make_levels_async, FALSE);
  data = g_task_get_task_data (G_TASK (result));
  res = g_task_propagate_pointer (G_TASK (result), error);
  if (res == NULL)
    return FALSE;
  if (res->stats.cum != NULL)
    {
      sky_display_stats_clear (&data->stats);
      data->stats = res->stats;
      memset (&res->stats, 0, sizeof res->stats);
      data->minmax_outliers = res->minmax_outliers;
    }
  levels_result_free (res);
  return TRUE;
}
