/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's method: the switch between the lesson's method and the local
 * one, the local method's parameters, what the view shows of its
 * background (the maps, the mesh), the banner that offers the local method
 * where the lesson's one threshold lies below the local background, and
 * the word that a local run asked of the GPU ran on the CPU. */
#include "sky-window-private.h"
#include "sky-source.h"

#include <math.h>
#include <stddef.h>

/* ------------------------------------------------------- the parameters */

typedef enum { PARAM_INT, PARAM_INT64, PARAM_DOUBLE } ParamKind;

/* The local method's parameters: the name scripts use, the control, the
 * field of SkyParams. */
static const struct {
  const char *name;
  const char *label;     /* as the Pipeline panel names it */
  size_t spin;           /* offset of the GtkSpinButton * in SkyWindow */
  size_t field;          /* offset in SkyParams */
  ParamKind kind;
} local_params[] = {
  { "box", "Box", offsetof (SkyWindow, box_spin), offsetof (SkyParams, bkg_box), PARAM_INT },
  { "filter", "Filter", offsetof (SkyWindow, filter_spin), offsetof (SkyParams, bkg_filter),
    PARAM_INT },
  { "seed", "Seed", offsetof (SkyWindow, seed_spin), offsetof (SkyParams, seed_sigma),
    PARAM_DOUBLE },
  { "flood", "Flood", offsetof (SkyWindow, flood_spin), offsetof (SkyParams, flood_sigma),
    PARAM_DOUBLE },
  { "min-area", "Least area", offsetof (SkyWindow, area_spin), offsetof (SkyParams, min_area),
    PARAM_INT64 },
  { "deblend-levels", "Deblend levels", offsetof (SkyWindow, nthresh_spin),
    offsetof (SkyParams, deblend_nthresh), PARAM_INT },
  { "deblend-share", "Deblend share", offsetof (SkyWindow, mincont_spin),
    offsetof (SkyParams, deblend_mincont), PARAM_DOUBLE },
  { "deblend-rise", "Deblend rise", offsetof (SkyWindow, deblend_sigma_spin),
    offsetof (SkyParams, deblend_sigma), PARAM_DOUBLE },
};

#define N_LOCAL_PARAMS G_N_ELEMENTS (local_params)

static GtkSpinButton *
param_spin (SkyWindow *self, guint i)
{
  return *(GtkSpinButton **) ((char *) self + local_params[i].spin);
}

static double
param_get (const SkyParams *params, guint i)
{
  const char *p = (const char *) params + local_params[i].field;

  switch (local_params[i].kind)
    {
    case PARAM_INT:
      return *(const int *) p;
    case PARAM_INT64:
      return (double) *(const gint64 *) p;
    default:
      return *(const double *) p;
    }
}

static void
param_set (SkyParams *params, guint i, double v)
{
  char *p = (char *) params + local_params[i].field;

  switch (local_params[i].kind)
    {
    case PARAM_INT:
      *(int *) p = (int) lround (v);
      break;
    case PARAM_INT64:
      *(gint64 *) p = (gint64) llround (v);
      break;
    default:
      *(double *) p = v;
    }
}

/* Sets control i to v without the handler (the value is already the
 * window's, or is being put back). */
static void
spin_show (SkyWindow *self, guint i, double v)
{
  GtkSpinButton *spin = param_spin (self, i);

  g_signal_handlers_block_matched (spin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  gtk_spin_button_set_value (spin, v);
  g_signal_handlers_unblock_matched (spin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
}

/* Why params with parameter i at v cannot run, or NULL: the two rules the
 * controls' ranges cannot say (an odd filter, a seed not under the flood). */
static char *
param_refusal (const SkyParams *params, guint i, double v)
{
  SkyParams p = *params;

  param_set (&p, i, v);
  if (p.bkg_filter % 2 == 0)
    return g_strdup_printf ("Filter: %d boxes is even; the mesh's median filter is centred on a "
                            "box, so it takes an odd number; it stays %d", p.bkg_filter,
                            params->bkg_filter);
  if (p.seed_sigma < p.flood_sigma)
    return g_strdup_printf ("%s: a seed level of %g rms under the flood level %g grows no "
                            "island; it stays %g", local_params[i].label, p.seed_sigma,
                            p.flood_sigma, param_get (params, i));
  return NULL;
}

static void
rerun (SkyWindow *self)
{
  if (self->run != NULL && !self->restoring_params)
    sky_window_push_job (self, SKY_JOB_RERUN, NULL, SKY_STEP_NONE, FALSE);
}

static void
on_local_param_changed (GtkSpinButton *spin, SkyWindow *self)
{
  double v = gtk_spin_button_get_value (spin);
  g_autofree char *refusal = NULL;
  guint i = 0;

  while (i < N_LOCAL_PARAMS && param_spin (self, i) != spin)
    i++;
  g_return_if_fail (i < N_LOCAL_PARAMS);
  if ((refusal = param_refusal (&self->params, i, v)) != NULL)
    {
      spin_show (self, i, param_get (&self->params, i));
      sky_window_set_input_error (self, GTK_WIDGET (spin), refusal);
      return;
    }
  param_set (&self->params, i, v);
  sky_window_clear_input_error (self, GTK_WIDGET (spin));
  sky_window_changed (self);
  if (self->method == SKY_METHOD_LOCAL)
    rerun (self);
}

void
sky_window_set_local_param (SkyWindow *self, const char *name, double value)
{
  GtkAdjustment *adjustment;
  g_autofree char *refusal = NULL;
  guint i = 0;

  while (i < N_LOCAL_PARAMS && g_strcmp0 (local_params[i].name, name) != 0)
    i++;
  if (i == N_LOCAL_PARAMS)
    {
      g_autofree char *detail = g_strdup_printf (
        "“%s” is none of box, filter, seed, flood, min-area, deblend-levels, deblend-share, "
        "deblend-rise.", name);
      sky_window_show_error (self, "There is no such parameter of the local method", detail);
      return;
    }
  adjustment = gtk_spin_button_get_adjustment (param_spin (self, i));
  if (!(value >= gtk_adjustment_get_lower (adjustment)
        && value <= gtk_adjustment_get_upper (adjustment)))
    refusal = g_strdup_printf ("%s is %g to %g, not %g.", local_params[i].label,
                               gtk_adjustment_get_lower (adjustment),
                               gtk_adjustment_get_upper (adjustment), value);
  else
    refusal = param_refusal (&self->params, i, value);
  if (refusal != NULL)
    {
      sky_window_show_error (self, "The local method cannot take that", refusal);
      return;
    }
  gtk_spin_button_set_value (param_spin (self, i), value);
}

/* ----------------------------------------------------------- the method */

/* The step of method `to` that stands for step of the other: what it
 * shows is the nearest (the background's statistics, the pixels kept, the
 * sources numbered, the catalogue). */
static SkyStep
equivalent_step (SkyStep step, SkyMethod to)
{
  static const SkyStep lesson[] = { SKY_STEP_CLIP, SKY_STEP_SEGMENT, SKY_STEP_LABEL,
                                    SKY_STEP_MEASURE };
  static const SkyStep local[] = { SKY_STEP_BACKGROUND, SKY_STEP_FLOOD, SKY_STEP_DEBLEND,
                                   SKY_STEP_MEASURE };

  if (step == SKY_STEP_DETECT)
    step = SKY_STEP_FLOOD;
  for (int k = 0; k < 4; k++)
    if (step == lesson[k] || step == local[k])
      return to == SKY_METHOD_LOCAL ? local[k] : lesson[k];
  return step;
}

SkyStep
sky_window_method_step (SkyWindow *self, SkyStep step)
{
  const SkyStep *steps;
  int n = sky_method_steps (self->method, &steps);

  for (int k = 0; k < n; k++)
    if (steps[k] == step)
      return step;
  return step == SKY_STEP_NONE ? step : equivalent_step (step, self->method);
}

/* The controls of the method in use: the toolbar's steps, the local
 * method's parameters shown, the lesson's alone sensitive with it. */
static void
sync_method_widgets (SkyWindow *self)
{
  gboolean local = self->method == SKY_METHOD_LOCAL;

  gtk_widget_set_visible (self->clip_button, !local);
  gtk_widget_set_visible (self->segment_button, !local);
  gtk_widget_set_visible (self->label_button, !local);
  gtk_widget_set_visible (self->background_button, local);
  gtk_widget_set_visible (self->flood_button, local);
  gtk_widget_set_visible (self->deblend_button, local);
  gtk_widget_set_visible (self->local_grid, local);
  gtk_widget_set_sensitive (GTK_WIDGET (self->kappa_spin), !local);
  gtk_widget_set_sensitive (GTK_WIDGET (self->threshold_scale), !local);
  gtk_widget_set_sensitive (GTK_WIDGET (self->threshold_spin), !local);
  gtk_widget_set_sensitive (GTK_WIDGET (self->relative_check), !local);
  gtk_widget_set_visible (GTK_WIDGET (self->histogram), !local);
  if (local)
    gtk_revealer_set_reveal_child (self->method_banner, FALSE);
}

static void
on_method_changed (GtkDropDown *dropdown, GParamSpec *pspec, SkyWindow *self)
{
  SkyMethod method = gtk_drop_down_get_selected (dropdown) == 1 ? SKY_METHOD_LOCAL
                                                                : SKY_METHOD_LESSON;

  if (method == self->method)
    return;
  self->method = method;
  sync_method_widgets (self);
  sky_window_changed (self);
  if (self->run != NULL && self->shown_step != SKY_STEP_NONE && !self->restoring_params)
    sky_window_run (self, equivalent_step (self->shown_step, method));
}

void
sky_window_set_method (SkyWindow *self, SkyMethod method)
{
  g_return_if_fail (method >= 0 && method < SKY_METHOD_COUNT);
  gtk_drop_down_set_selected (self->method_dropdown, method == SKY_METHOD_LOCAL ? 1 : 0);
}

SkyMethod
sky_window_get_method (SkyWindow *self)
{
  return self->method;
}

/* -------------------------------------------------- the background view */

static const char *const background_views[] = { "image", "background", "rms", "residual" };

static void show_background (SkyWindow *self);

/* A map being made on a worker (sky_run_maps_make): the state is busy
 * until it is, then the view shows it if it is still what is chosen. */
typedef struct {
  SkyRunMaps *maps;
  SkyMapKind kind;
} MapTask;

static void
map_task_free (MapTask *m)
{
  sky_run_maps_unref (m->maps);
  g_free (m);
}

static void
map_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  MapTask *m = data;
  GError *error = NULL;

  if (sky_run_maps_make (m->maps, m->kind, &error) != NULL)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
on_map_made (GObject *source, GAsyncResult *result, gpointer data)
{
  SkyWindow *self = SKY_WINDOW (source);
  g_autoptr (GError) error = NULL;

  self->maps_pending--;
  if (self->disposed)
    return;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    sky_window_show_error (self, "Could not make the map", error->message);
  else
    show_background (self);
  sky_window_changed (self);
}

static void
make_map (SkyWindow *self, SkyRunMaps *maps, SkyMapKind kind)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, on_map_made, NULL);
  MapTask *m = g_new (MapTask, 1);

  m->maps = sky_run_maps_ref (maps);
  m->kind = kind;
  g_task_set_task_data (task, m, (GDestroyNotify) map_task_free);
  self->maps_pending++;
  g_task_run_in_thread (task, map_thread);
}

/* The view shows the map chosen where the run shown has the maps (made on
 * a worker the first time: the image until then), the image otherwise;
 * the mesh's boxes are outlined over a map, and over the image while the
 * background step is what is shown. */
static void
show_background (SkyWindow *self)
{
  guint which = gtk_drop_down_get_selected (self->background_view_dropdown);
  SkyRunMaps *maps = self->run != NULL && self->run->method == SKY_METHOD_LOCAL
                     ? self->run->maps : NULL;
  SkyImageData *shown = NULL;
  int mesh = 0;

  if (maps != NULL)
    {
      if (which > 0 && (shown = sky_run_maps_peek (maps, which - 1)) == NULL)
        make_map (self, maps, which - 1);
      mesh = which > 0 || self->shown_step == SKY_STEP_BACKGROUND ? maps->box : 0;
    }
  sky_image_view_show_pixels (self->view, shown, mesh);
}

const char *
sky_window_shown_map_name (SkyWindow *self)
{
  static const char *const names[] = { NULL, "background", "rms", "image − background" };
  SkyImageData *shown = sky_image_view_get_shown_pixels (self->view);

  return shown != NULL ? names[gtk_drop_down_get_selected (self->background_view_dropdown)]
                       : NULL;
}

static void
on_background_view_changed (GtkDropDown *dropdown, GParamSpec *pspec, SkyWindow *self)
{
  show_background (self);
  sky_window_changed (self);
}

gboolean
sky_window_set_background_view (SkyWindow *self, const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (background_views); i++)
    if (g_strcmp0 (background_views[i], name) == 0)
      {
        gtk_drop_down_set_selected (self->background_view_dropdown, i);
        return TRUE;
      }
  return FALSE;
}

/* ------------------------------------------------------------ the banner */

static void
update_method_banner (SkyWindow *self, const SkyRun *run)
{
  double share = sky_run_background_above (run);
  gboolean show = run->method == SKY_METHOD_LESSON && share >= SKY_BACKGROUND_ABOVE_SHARE
                  && self->method_banner_dismissed != (gconstpointer) run->image;

  if (show)
    {
      g_autofree char *text = g_strdup_printf (
        "The local background lies above the threshold (%.4g %s) over %.0f%% of the image "
        "(the median-filtered background of %d-pixel boxes): there the threshold finds the "
        "background, not sources. The local method measures against background and rms maps.",
        run->threshold_value, run->image->image.bunit, 100 * share,
        sky_run_get_mesh (run)->box);
      gtk_label_set_text (self->method_banner_label, text);
    }
  gtk_revealer_set_reveal_child (self->method_banner, show);
}

static void
mesh_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;

  if (sky_run_make_mesh (data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
on_mesh_made (GObject *source, GAsyncResult *result, gpointer data)
{
  SkyWindow *self = SKY_WINDOW (source);
  SkyRun *run = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  self->maps_pending--;
  if (self->mesh_pending == run)
    self->mesh_pending = NULL;
  if (self->disposed)
    return;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    g_warning ("no background mesh for the banner: %s", error->message);
  else if (self->run == run)
    update_method_banner (self, run);
  sky_window_changed (self);
}

typedef struct {
  SkyWindow *self;
  SkyRun *run;
} MeshWanted;

/* The run's frame is on screen: its mesh may be made now. */
static void
on_shown_for_mesh (gpointer data, gpointer unused)
{
  MeshWanted *w = data;
  SkyWindow *self = w->self;

  if (self->disposed)
    self->maps_pending--;
  else
    {
      g_autoptr (GTask) task = g_task_new (self, NULL, on_mesh_made, NULL);
      g_task_set_task_data (task, g_steal_pointer (&w->run), (GDestroyNotify) sky_run_unref);
      g_task_run_in_thread (task, mesh_thread);
    }
  g_clear_pointer (&w->run, sky_run_unref);
  g_object_unref (w->self);
  g_free (w);
}

/* A lesson run's mesh for the banner, made on a worker once the run's
 * frame is on screen: it costs about a clip (8 ms at 2048 x 2048, some
 * 0.5 s at 16384 x 16384), which the results need not wait for, and on
 * two cores it would slow the frame it ran beside. The state is busy from
 * now until it is made. */
static void
make_mesh (SkyWindow *self, SkyRun *run)
{
  MeshWanted *w;

  if (run->method != SKY_METHOD_LESSON || !sky_run_has (run, SKY_STEP_CLIP)
      || sky_run_get_mesh (run) != NULL || self->mesh_pending == run)
    return;
  w = g_new (MeshWanted, 1);
  w->self = g_object_ref (self);
  w->run = sky_run_ref (run);
  self->mesh_pending = run;
  self->maps_pending++;
  sky_image_view_when_drawn (self->view, on_shown_for_mesh, w);
}

static void
on_method_banner_switch (GtkButton *button, SkyWindow *self)
{
  gtk_revealer_set_reveal_child (self->method_banner, FALSE);
  sky_window_set_method (self, SKY_METHOD_LOCAL);
  sky_window_changed (self);
}

/* Dismissed, it stays hidden for this image. */
static void
on_method_banner_close (GtkButton *button, SkyWindow *self)
{
  self->method_banner_dismissed = self->image;
  gtk_revealer_set_reveal_child (self->method_banner, FALSE);
  sky_window_changed (self);
}

/* -------------------------------------------------------------- a run */

char *
sky_window_maps_text (const SkyRun *run)
{
  const SkyRunMaps *m = run->maps;

  if (isnan (m->global_back))   /* the GPU's maps: no mesh on the host */
    return g_strdup_printf ("Background: %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT " boxes of "
                            "%d pixels, filtered over %d, made on the GPU", m->nbx, m->nby,
                            m->box, m->filter);
  return g_strdup_printf ("Background: %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT " boxes of %d "
                          "pixels, filtered over %d; %.4g, rms %.4g %s (the mesh's medians)",
                          m->nbx, m->nby, m->box, m->filter, m->global_back, m->global_rms,
                          run->image->image.bunit);
}

char *
sky_window_cpu_only_text (const SkyRun *run, const char *found, const char *ran)
{
  return g_strdup_printf ("%s; %s (the GPU has no such steps for the %s method yet)",
                          sky_run_has (run, SKY_STEP_MEASURE) ? found : "The background",
                          ran, sky_method_name (run->method));
}

static void
update_local_stats (SkyWindow *self, const SkyRun *run)
{
  GString *text;

  if (run->method != SKY_METHOD_LOCAL)
    return;
  text = g_string_new (NULL);
  if (run->maps != NULL)
    {
      g_autofree char *maps = sky_window_maps_text (run);
      g_string_append (text, maps);
    }
  if (sky_run_has (run, SKY_STEP_FLOOD))
    g_string_append_printf (text, "\n%" G_GINT64_FORMAT " islands above %g rms with a seed "
                            "above %g, %d-connected", run->stages.result.nislands,
                            run->params.flood_sigma, run->params.seed_sigma,
                            run->params.connectivity);
  if (sky_run_has (run, SKY_STEP_DEBLEND))
    {
      g_autofree char *found = sky_source_count_text (run->nsources);
      g_string_append_printf (text, "\n%s; deblending split %" G_GINT64_FORMAT " islands", found,
                              run->stages.result.ndeblended);
    }
  gtk_label_set_text (self->stats_label, text->str);
  g_string_free (text, TRUE);
}

void
sky_window_method_apply_run (SkyWindow *self, SkyRun *run, gboolean new_step)
{
  /* Each step its own picture: the background step its map, the later
   * steps the image under their islands and sources. */
  if (new_step && run->method == SKY_METHOD_LOCAL)
    gtk_drop_down_set_selected (self->background_view_dropdown,
                                self->shown_step == SKY_STEP_BACKGROUND ? 1 : 0);
  show_background (self);
  update_method_banner (self, run);
  make_mesh (self, run);
  update_local_stats (self, run);
  /* Never a silent fallback: a local run asked of the GPU that the CPU did
   * says so where a GPU failure would. */
  if (run->cpu_only != NULL)
    {
      gtk_label_set_text (self->gpu_banner_label, run->cpu_only);
      gtk_revealer_set_reveal_child (self->gpu_banner, TRUE);
    }
}

/* A cancelled re-run: the method and the local parameters go back to the
 * run shown's, listed in moved as "Box 32" (inside the caller's restore). */
void
sky_window_method_restore (SkyWindow *self, GString *moved)
{
  const SkyRun *run = self->run;

  if (run == NULL)
    return;
  for (guint i = 0; i < N_LOCAL_PARAMS; i++)
    if (param_get (&self->params, i) != param_get (&run->params, i))
      {
        double v = param_get (&run->params, i);
        spin_show (self, i, v);
        param_set (&self->params, i, v);
        g_string_append_printf (moved, "%s%s %g", moved->len ? ", " : "", local_params[i].label,
                                v);
      }
  if (self->method != run->method)
    {
      sky_window_set_method (self, run->method);
      g_string_append_printf (moved, "%sthe %s method", moved->len ? ", " : "",
                              sky_method_name (run->method));
    }
}

/* -------------------------------------------------------------- state */

void
sky_window_describe_method (SkyWindow *self, GString *out)
{
  SkyRun *run = self->run;
  double share = sky_run_background_above (run);
  char number[G_ASCII_DTOSTR_BUF_SIZE];
  /* The mesh outlined: over a map, or the image while the background step shows. */
  int mesh_box = run != NULL && run->maps != NULL
                 && (sky_image_view_get_shown_pixels (self->view) != NULL
                     || self->shown_step == SKY_STEP_BACKGROUND) ? run->maps->box : 0;

  g_string_append_printf (out, ", \"method\": \"%s\", \"local\": {",
                          sky_method_name (self->method));
  for (guint i = 0; i < N_LOCAL_PARAMS; i++)
    g_string_append_printf (out, "%s\"%s\": %s", i ? ", " : "", local_params[i].name,
                            g_ascii_formatd (number, sizeof number, "%.6g",
                                             param_get (&self->params, i)));
  g_string_append_printf (out, "}, \"background_view\": \"%s\", \"mesh_box\": %d",
                          background_views[gtk_drop_down_get_selected (
                            self->background_view_dropdown)], mesh_box);
  g_string_append_printf (out, ", \"background_above\": %s",
                          g_ascii_formatd (number, sizeof number, "%.6g", share));
  g_string_append_printf (out, ", \"cpu_only\": %s", run && run->cpu_only ? "true" : "false");
  g_string_append_printf (out, ", \"method_banner\": %s",
                          gtk_revealer_get_reveal_child (self->method_banner) ? "true" : "false");
  if (run != NULL && run->method == SKY_METHOD_LOCAL && sky_run_has (run, SKY_STEP_FLOOD))
    g_string_append_printf (out, ", \"nislands\": %" G_GINT64_FORMAT ", \"ndeblended\": %"
                            G_GINT64_FORMAT, run->stages.result.nislands,
                            run->stages.result.ndeblended);
}

/* --------------------------------------------------------------- setup */

void
sky_window_method_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, method_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, local_grid);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, box_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, filter_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, seed_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, flood_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, area_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, nthresh_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, mincont_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, deblend_sigma_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, background_view_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, clip_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, segment_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, label_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, background_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, flood_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, deblend_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, method_banner);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, method_banner_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, method_banner_button);
  gtk_widget_class_bind_template_callback (widget_class, on_method_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_local_param_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_background_view_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_method_banner_switch);
  gtk_widget_class_bind_template_callback (widget_class, on_method_banner_close);
}

void
sky_window_method_init (SkyWindow *self)
{
  self->method = SKY_METHOD_LESSON;
  for (guint i = 0; i < N_LOCAL_PARAMS; i++)
    spin_show (self, i, param_get (&self->params, i));
  sync_method_widgets (self);
}
