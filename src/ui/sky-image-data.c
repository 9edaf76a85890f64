/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loading an image and preparing it for display, off the main thread. */
#include "sky-image-data.h"
#include "sky-ui-task.h"

#include <glib/gstdio.h>

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
} LoadInput;

static void
load_input_free (LoadInput *in)
{
  g_free (in->path);
  g_free (in);
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
  double t0;
  int header_has_cdelt;
  int ret;

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
  ret = sky_image_load (in->path, &in->opts, &data->image);
  data->load_ms = sky_now_ms () - t0;
  if (ret != SKY_OK)
    {
      g_task_return_error (task, sky_ui_error_new_from_status (ret));
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;

  t0 = sky_now_ms ();
  if ((ret = sky_display_stats_compute (&data->image, 0, &data->stats)) != SKY_OK
      || (ret = sky_pyramid_build (&data->image, 0, &data->pyramid)) != SKY_OK)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, sky_ui_error_from_status (ret), "%s: %s",
                               in->path, sky_last_error ());
      return;
    }
  /* No celestial WCS is no failure: the readout then shows pixels only. */
  if (sky_wcs_new (&data->image, &data->wcs) != SKY_OK)
    data->wcs = NULL;
  /* RA increases to the left where a celestial WCS says which way it runs;
   * elsewhere x increases to the right, as DS9 shows it. */
  data->has_wcs = data->wcs != NULL;
  data->flip_x = data->has_wcs
                 && sky_header_flip_x (data->image.header, data->image.nheader_cards,
                                       &header_has_cdelt);
  data->minmax_outliers = count_minmax_outliers (&data->image, &data->stats);
  data->display_name = g_filename_display_basename (in->path);
  data->prepare_ms = sky_now_ms () - t0;

  g_task_return_pointer (task, g_steal_pointer (&data), (GDestroyNotify) sky_image_data_unref);
}

void
sky_image_data_load_async (const char *path,
                           const SkyLoadOptions *opts,
                           gboolean make_demo,
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
  sky_ui_task_run (sky_image_data_load_async, in, (GDestroyNotify) load_input_free, load_thread,
                   cancellable, callback, user_data);
}

SkyImageData *
sky_image_data_load_finish (GAsyncResult *result, GError **error)
{
  return sky_ui_task_finish_pointer (result, sky_image_data_load_async, error);
}
