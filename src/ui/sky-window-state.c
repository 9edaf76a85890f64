/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's state for scripts: sky_window_describe's JSON, which the
 * app's state action holds (docs/ui.md lists its keys). */
#include "sky-window-private.h"
#include "sky-image-read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sky-colormap.h"
#include "sky-ui-json.h"

static void
json_number (GString *out, double v)
{
  if (isfinite (v))
    g_string_append_printf (out, "%.17g", v);
  else
    g_string_append (out, "null");
}

char *
sky_window_describe (SkyWindow *self)
{
  GString *out = g_string_new ("{");
  SkyRun *run = self->run;

  g_string_append (out, "\"image\": ");
  sky_ui_json_string (out, self->image_path);
  if (self->image)
    g_string_append_printf (out, ", \"hdu\": %d, \"plane\": %" G_GINT64_FORMAT
                            ", \"nplanes\": %" G_GINT64_FORMAT ", \"shape\": [%" G_GINT64_FORMAT
                            ", %" G_GINT64_FORMAT "]", self->image->image.hdu,
                            self->image->image.plane, self->image->image.nplanes,
                            self->image->image.ny, self->image->image.nx);
  if (self->image)
    g_string_append_printf (out, ", \"load_ms\": %.1f, \"prepare_ms\": %.1f, "
                            "\"levels_ms\": %.1f",
                            self->image->load_ms, self->image->prepare_ms,
                            self->image->levels_ms);
  g_string_append_printf (out, ", \"busy\": %s, \"queued\": %u",
                          sky_window_is_busy (self) ? "true" : "false",
                          g_queue_get_length (&self->jobs));
  g_string_append (out, ", \"backend\": ");
  sky_ui_json_string (out, sky_backend_name (self->backend));
  g_string_append (out, ", \"gpu_banner\": ");
  sky_ui_json_string (out, gtk_revealer_get_reveal_child (self->gpu_banner)
                      ? gtk_label_get_text (self->gpu_banner_label) : NULL);
  g_string_append (out, ", \"shown_step\": ");
  sky_ui_json_string (out, sky_step_name (self->shown_step));
  g_string_append (out, ", \"done\": ");
  sky_ui_json_string (out, sky_step_name (run ? run->done : SKY_STEP_NONE));
  g_string_append (out, ", \"threshold\": ");
  json_number (out, self->params.threshold);
  g_string_append (out, ", \"clip_kappa\": ");
  json_number (out, self->params.clip_kappa);
  g_string_append_printf (out, ", \"relative\": %s, \"connectivity\": %d",
                          self->params.relative ? "true" : "false", self->params.connectivity);
  g_string_append_printf (out, ", \"nsources\": %" G_GINT64_FORMAT,
                          run && sky_run_has_labels (run) ? run->nsources : -1);
  if (run && sky_run_has (run, SKY_STEP_CLIP))
    {
      g_string_append (out, ", \"median\": ");
      json_number (out, run->stats.median);
      g_string_append (out, ", \"sigma\": ");
      json_number (out, run->stats.sigma);
    }
  sky_window_describe_method (self, out);
  if (run && run->done != SKY_STEP_NONE)
    {
      const SkyStep *steps;
      int nsteps = sky_method_steps (run->stages.method, &steps);

      g_string_append (out, ", \"times_ms\": {");
      for (int k = 0; k < nsteps; k++)
        {
          g_string_append_printf (out, "%s\"%s\": ", k ? ", " : "", sky_step_name (steps[k]));
          json_number (out, run->cpu.ms[steps[k]]);
        }
      g_string_append (out, "}");
      /* How the CPU's times were taken: each step's best of this many runs. */
      g_string_append_printf (out, ", \"cpu_runs\": %d", run->stages.cpu_runs);
      if (run->has_gpu)
        {
          /* The timings panel's GPU figures, and what they include. */
          const SkyStepTimes *gpu_times[2] = { &run->gpu_kernel, &run->gpu_total };

          for (int t = 0; t < 2; t++)
            {
              g_string_append (out, t == 0 ? ", \"gpu_kernels_ms\": {"
                                           : ", \"gpu_with_transfers_ms\": {");
              for (int k = 0; k < nsteps; k++)
                {
                  g_string_append_printf (out, "\"%s\": ", sky_step_name (steps[k]));
                  json_number (out, gpu_times[t]->ms[steps[k]]);
                  g_string_append (out, ", ");
                }
              g_string_append (out, "\"total\": ");
              json_number (out, gpu_times[t]->total);
              g_string_append (out, "}");
            }
          g_string_append_printf (out, ", \"gpu_runs\": %d, \"gpu_outputs_ms\": ",
                                  run->stages.gpu_times.runs);
          json_number (out, run->stages.gpu_times.outputs);
        }
    }
  g_string_append (out, ", \"open_to_frame_ms\": ");
  json_number (out, self->open_to_frame_ms);
  /* A big image's open: its reduced view's first frame, and its zoom-out
   * levels drawn (0 where there were none to wait for). */
  g_string_append (out, ", \"preview_to_frame_ms\": ");
  json_number (out, self->preview_to_frame_ms);
  g_string_append (out, ", \"open_to_levels_ms\": ");
  json_number (out, self->open_to_levels_ms);
  g_string_append (out, ", \"open_max_tick_ms\": ");
  json_number (out, self->open_max_tick_ms);
  /* The share of the pixels read of an open under way (0 when none). */
  g_string_append (out, ", \"open_read_fraction\": ");
  json_number (out, self->open_progress ? sky_open_progress_fraction (self->open_progress) : 0);
  g_string_append_printf (out, ", \"preview_shown\": %s", self->preview ? "true" : "false");
  g_string_append (out, ", \"startup_to_frame_ms\": ");
  json_number (out, self->startup_to_frame_ms);
  g_string_append (out, ", \"threshold_redraw_ms\": ");
  json_number (out, self->last_threshold_redraw_ms);
  g_string_append (out, ", \"threshold_redraw_max_ms\": ");
  json_number (out, self->max_threshold_redraw_ms);
  g_string_append_printf (out, ", \"threshold_redraws\": %d", self->threshold_redraws);
  g_string_append (out, ", \"max_gap_ms\": ");
  json_number (out, self->max_gap_ms);
  g_string_append (out, ", \"run_max_gap_ms\": ");
  json_number (out, self->run_max_gap_ms);
  g_string_append (out, ", \"sort_ms\": ");
  json_number (out, self->sort_ms);
  g_string_append (out, ", \"sort_max_gap_ms\": ");
  json_number (out, self->sort_max_gap_ms);
  g_string_append (out, ", \"table_max_gap_ms\": ");
  json_number (out, self->table_max_gap_ms);
  /* The selected source's label number, 0 for none. */
  g_string_append_printf (out, ", \"selected\": %" G_GINT64_FORMAT,
                          sky_image_view_get_selected (self->view) + 1);
  g_string_append (out, ", \"zoom\": ");
  json_number (out, sky_image_view_get_zoom (self->view));
  {
    guint stretch, limits, colormap;
    gboolean flip;
    double lo, hi;
    g_object_get (self->view, "stretch", &stretch, "limits", &limits, "colormap", &colormap,
                  "flip-x", &flip, NULL);
    sky_image_view_get_scale (self->view, &lo, &hi, NULL);
    g_string_append (out, ", \"stretch\": ");
    sky_ui_json_string (out, sky_stretch_name (stretch));
    g_string_append (out, ", \"limits\": ");
    sky_ui_json_string (out, limits == SKY_LIMITS_TYPED ? "typed" : sky_limits_name (limits));
    g_string_append (out, ", \"scale\": [");
    json_number (out, lo);
    g_string_append (out, ", ");
    json_number (out, hi);
    g_string_append (out, "], \"colormap\": ");
    sky_ui_json_string (out, sky_colormap_name (colormap));
    g_string_append_printf (out, ", \"flip\": %s", flip ? "true" : "false");
    {
      g_autoptr (GVariant) panels = g_action_group_get_action_state (G_ACTION_GROUP (self),
                                                                     "panels");
      g_string_append (out, ", \"panels\": ");
      sky_ui_json_string (out, g_variant_get_string (panels, NULL));
    }
  }
  sky_image_view_tools_describe (self->view, out);
  sky_window_tools_describe (self, out);
  g_string_append (out, ", \"catalogue\": ");
  sky_ui_json_string (out, self->catalogue_path);
  g_string_append (out, ", \"view\": ");
  sky_ui_json_string (out, self->view_path);
  g_string_append (out, ", \"gl\": ");
  sky_ui_json_string (out, sky_image_view_get_gl_info (self->view));
  sky_window_viewer_describe (self, out);
  sky_window_frames_describe (self, out);
  g_string_append (out, ", \"last_error\": ");
  sky_ui_json_string (out, self->last_error);
  g_string_append (out, "}");
  return g_string_free (out, FALSE);
}

gboolean
sky_window_is_busy (SkyWindow *self)
{
  return self->current || !g_queue_is_empty (&self->jobs) || self->sorting
         || self->maps_pending > 0 || sky_source_table_sort_pending (self->sources) > 0;
}

SkyImageData *
sky_window_get_image (SkyWindow *self)
{
  return self->image;
}

SkyRun *
sky_window_get_catalogue_run (SkyWindow *self)
{
  return self->run && sky_run_has (self->run, SKY_STEP_MEASURE) ? self->run : NULL;
}

gint64
sky_window_get_selected_source (SkyWindow *self)
{
  return sky_image_view_get_selected (self->view) + 1;
}
