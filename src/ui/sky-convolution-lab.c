/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Convolution lab: the lesson's demo computed on a worker (GTask) with
 * the CPU backend, shown in two SkyImageViews that share one zoom. */
#include "sky-convolution-lab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sky-color-bar.h"
#include "sky-colormap.h"
#include "sky-cpu.h"
#include "sky-pipeline-gpu.h"
#include "sky-resources.h"

struct _SkyConvolutionLab {
  GtkWindow parent_instance;

  GtkDropDown *dtype_dropdown;
  GtkDropDown *mode_dropdown;
  GtkDropDown *kernel_dropdown;
  GtkDropDown *show_dropdown;
  GtkWidget *deltas_box, *result_box;
  SkyImageView *deltas_view, *result_view;
  GtkLabel *status_label;
  GtkLabel *readout_label;  /* the value under the pointer, either view */
  GtkLabel *timings_label;

  GCancellable *cancellable;
  gboolean busy;
  gboolean rerun;      /* settings moved while a run was on */
  int result_offset;
  char *timings_head;  /* the timings up to how the result is shown */
  char *timings;
  double pending_zoom; /* show_delta asked before a result: apply then */
  int pending_x, pending_y;
};

G_DEFINE_FINAL_TYPE (SkyConvolutionLab, sky_convolution_lab, GTK_TYPE_WINDOW)

enum { PROP_0, PROP_TIMINGS, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* The entries of dropdowns in sky-convolution-lab.ui, in its order. */
static const char *const dtype_names[] = { "f64", "f32", NULL };
static const char *const mode_names[] = { "same", "full", "valid", NULL };
static const SkyConvolveMode mode_values[] = { SKY_CONVOLVE_SAME, SKY_CONVOLVE_FULL,
                                               SKY_CONVOLVE_VALID };
static const char *const kernel_specs[] = { "lesson", "gauss:2", "gauss:4", "box:5" };

/* ------------------------------------------------------------ the worker */

typedef struct {
  int f64;
  SkyConvolveMode mode;
  char *kernel_spec;
  /* out */
  SkyImageData *deltas, *result;
  int64_t result_nx, result_ny;
  int offset;
  double sep_ms, direct_ms, cpu1d_ms;
  double max_diff;       /* separable against direct */
  gboolean agree;        /* allclose, and the 1D output as on one thread */
  gboolean has_gpu;
  double gpu_ms[4];      /* 2D kernel, 2D with transfers, 1D kernel, 1D with transfers */
  double gpu_max_diff;   /* GPU against the CPU, 2D and 1D */
  gboolean gpu_agree;
  char *gpu_reason;
  guint64 on_device;     /* the shown output is the GPU's, kept there as this number */
} Work;

static void
work_free (Work *w)
{
  g_free (w->kernel_spec);
  g_clear_pointer (&w->deltas, sky_image_data_unref);
  g_clear_pointer (&w->result, sky_image_data_unref);
  g_free (w->gpu_reason);
  g_free (w);
}

/* An image held in memory (float pixels, malloc'd: taken) made ready for
 * the view. */
static SkyImageData *
image_data_new (float *pixels, int64_t nx, int64_t ny, const char *name, GError **error)
{
  g_autoptr (SkyImageData) data = g_atomic_rc_box_new0 (SkyImageData);
  int ret;

  data->image.nx = nx;
  data->image.ny = ny;
  data->image.pixels = pixels;
  data->image.nplanes = 1;
  data->image.hdu = 1;
  data->image.bitpix = -32;
  if ((ret = sky_display_stats_compute (&data->image, 0, &data->stats)) != SKY_OK
      || (ret = sky_pyramid_build (&data->image, 0, &data->pyramid)) != SKY_OK)
    {
      g_set_error (error, SKY_UI_ERROR, sky_ui_error_from_status (ret), "%s: %s", name,
                   sky_last_error ());
      return NULL;
    }
  data->display_name = g_strdup (name);
  return g_steal_pointer (&data);
}

/* The demo's output as the view shows it: float pixels, malloc'd. */
static float *
to_float_pixels (const void *values, int f64, size_t n)
{
  float *px = malloc (n * sizeof *px);

  if (px != NULL && f64)
    for (size_t i = 0; i < n; i++)
      px[i] = (float) ((const double *) values)[i];
  else if (px != NULL)
    memcpy (px, values, n * sizeof *px);
  return px;
}

/* The GPU's part of the demo through the app's one GPU context, which
 * keeps the 2D output on the device for the view; timed as skysift-cli
 * convolve --demo times it (page-locked buffers, a warm-up, best of
 * LAB_GPU_REPEAT). */
#define LAB_GPU_REPEAT 10

static void
lab_gpu (Work *w, SkyConvolutionDemo *d)
{
  GError *gerr = NULL;

  d->gpu_2d = malloc ((size_t) (d->out_nx * d->out_ny) * (d->f64 ? sizeof (double)
                                                                  : sizeof (float)));
  d->gpu_1d = malloc ((size_t) d->n1d * (d->f64 ? sizeof (double) : sizeof (float)));
  if (d->gpu_2d == NULL || d->gpu_1d == NULL)
    {
      w->gpu_reason = g_strdup ("out of memory");
      return;
    }
  w->has_gpu = sky_pipeline_gpu_convolution_demo (d, LAB_GPU_REPEAT, &w->on_device, &gerr);
  if (!w->has_gpu)
    {
      w->gpu_reason = g_strdup (gerr->message);
      w->on_device = 0;
      g_clear_error (&gerr);
      return;
    }
  w->gpu_ms[0] = d->gpu_2d_ms;
  w->gpu_ms[1] = d->gpu_2d_total_ms;
  w->gpu_ms[2] = d->gpu_1d_ms;
  w->gpu_ms[3] = d->gpu_1d_total_ms;
}

static void
lab_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Work *w = task_data;
  SkyConvolutionDemo d = { 0 };
  SkyKernel k = { 0 };
  GError *error = NULL;
  float *deltas_px = NULL, *result_px = NULL;
  int ret;

  ret = sky_kernel_parse (&k, w->kernel_spec);
  if (ret == SKY_OK)
    ret = sky_convolution_demo_init (&d, &k, w->mode, w->f64, FALSE);
  sky_kernel_clear (&k);
  if (ret == SKY_OK)
    ret = sky_cpu_convolution_demo (&d, SKY_CONVOLVE_SEPARABLE, 1, 0);
  if (ret != SKY_OK)
    {
      g_task_return_error (task, sky_ui_error_new_from_status (ret));
      sky_convolution_demo_clear (&d);
      return;
    }
  /* In the full output a delta at i lands centred at i + (kx - 1) / 2; the
   * kept part starts at x0, so the result's centre is i + (kx - 1) / 2 - x0. */
  w->offset = (d.kernel.nx - 1) / 2 - (int) d.x0;
  w->result_nx = d.out_nx;
  w->result_ny = d.out_ny;
  w->sep_ms = d.cpu_2d_ms;
  w->direct_ms = d.cpu_2d_direct_ms;
  w->cpu1d_ms = d.cpu_1d_ms;
  w->max_diff = d.diff_2d;
  w->agree = d.agree_2d && d.agree_1d;
  lab_gpu (w, &d);
  if (w->has_gpu)
    {
      w->gpu_max_diff = MAX (d.gpu_diff_2d, d.gpu_diff_1d);
      w->gpu_agree = d.gpu_agree_2d && d.gpu_agree_1d;
    }
  /* The GPU's output is shown where it ran (the device keeps it, so the
   * view may take it from there); the CPU's checks it. */
  deltas_px = to_float_pixels (d.deltas, d.f64, (size_t) (d.n * d.n));
  result_px = to_float_pixels (w->has_gpu ? d.gpu_2d : d.cpu_2d, d.f64,
                               (size_t) (d.out_nx * d.out_ny));
  sky_convolution_demo_clear (&d);
  if (deltas_px == NULL || result_px == NULL)
    {
      free (deltas_px);
      free (result_px);
      g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_MEMORY, "out of memory");
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    {
      free (deltas_px);
      free (result_px);
      return;
    }
  if ((w->deltas = image_data_new (deltas_px, SKY_CONVOLUTION_DEMO_N, SKY_CONVOLUTION_DEMO_N,
                                   "deltas", &error)) == NULL
      || (w->result = image_data_new (result_px, w->result_nx, w->result_ny, "convolved",
                                      &error)) == NULL)
    {
      if (w->deltas == NULL)
        free (result_px);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* ------------------------------------------------------------ the window */

static void start_run (SkyConvolutionLab *self);

static void
apply_pending (SkyConvolutionLab *self)
{
  if (self->pending_zoom <= 0)
    return;
  sky_image_view_set_zoom (self->deltas_view, self->pending_zoom);
  sky_image_view_set_zoom (self->result_view, self->pending_zoom);
  sky_image_view_center_on (self->deltas_view, self->pending_x, self->pending_y);
  sky_image_view_center_on (self->result_view, self->pending_x + self->result_offset,
                            self->pending_y + self->result_offset);
}

/* The timings: what the computation measured, then how the result view
 * filled its texture (once it has drawn). */
static void
set_timings (SkyConvolutionLab *self)
{
  const char *fill = sky_image_view_get_image_fill (self->result_view);

  g_free (self->timings);
  self->timings = g_strdup_printf ("%s, %s", self->timings_head,
                                   fill ? fill : "not drawn yet");
  gtk_label_set_text (self->timings_label, self->timings);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMINGS]);
}

static void
result_drawn (gpointer data, gpointer unused)
{
  GWeakRef *ref = data;
  SkyConvolutionLab *self = g_weak_ref_get (ref);

  if (self != NULL && self->timings_head != NULL)
    set_timings (self);
  g_clear_object (&self);
  g_weak_ref_clear (ref);
  g_free (ref);
}

static void
run_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (SkyConvolutionLab) self = data;
  Work *w = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  self->busy = FALSE;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text (self->status_label, error->message);
    }
  else
    {
      double zoom = sky_image_view_get_zoom (self->deltas_view);
      gboolean had = sky_image_view_get_image (self->deltas_view) != NULL;

      g_autofree char *gpu = w->has_gpu
        ? g_strdup_printf ("GPU, best of %d after a warm-up run, transfers from and to "
                           "page-locked memory:\n"
                           "GPU 2D: %.4f ms kernel, %.3f ms with transfers\n"
                           "GPU 1D: %.4f ms kernel, %.3f ms with transfers\n"
                           "GPU = CPU: %s (max |diff| %.2g)",
                           LAB_GPU_REPEAT, w->gpu_ms[0], w->gpu_ms[1], w->gpu_ms[2],
                           w->gpu_ms[3],
                           w->gpu_agree ? "yes" : "NO", w->gpu_max_diff)
        : g_strdup_printf ("GPU: no (%s)", w->gpu_reason ? w->gpu_reason : "unknown");

      self->result_offset = w->offset;
      sky_image_view_set_image (self->deltas_view, w->deltas);
      sky_image_view_set_image (self->result_view, w->result);
      sky_image_view_set_image_on_device (self->result_view, w->on_device);
      g_free (self->timings_head);
      self->timings_head = g_strdup_printf (
        "Convolution (%s, %s, %lld x %lld result)\n"
        "CPU 2D separable: %.2f ms (one run, as each CPU figure here)\n"
        "CPU 2D direct: %.2f ms\n"
        "CPU 1D (raveled, diagonal): %.2f ms\n"
        "separable = direct: %s (max |diff| %.2g)\n"
        "%s\n"
        "Result shown: %s",
        w->f64 ? "float64" : "float32", mode_names[gtk_drop_down_get_selected (self->mode_dropdown)],
        (long long) w->result->image.nx, (long long) w->result->image.ny,
        w->sep_ms, w->direct_ms, w->cpu1d_ms, w->agree ? "yes" : "NO", w->max_diff, gpu,
        w->has_gpu ? "the GPU's 2D output" : "the CPU's 2D output (separable)");
      set_timings (self);
      /* Once drawn, how the result reached the screen. */
      {
        GWeakRef *ref = g_new0 (GWeakRef, 1);
        g_weak_ref_init (ref, self);
        sky_image_view_when_drawn (self->result_view, result_drawn, ref);
      }
      gtk_label_set_text (self->status_label, "");
      if (self->pending_zoom > 0)
        apply_pending (self);
      else if (had)
        {
          /* Keep the zoom the user chose across a change of settings. */
          sky_image_view_set_zoom (self->deltas_view, zoom);
          sky_image_view_set_zoom (self->result_view, zoom);
        }
    }
  if (self->rerun)
    {
      self->rerun = FALSE;
      start_run (self);
    }
}

static void
start_run (SkyConvolutionLab *self)
{
  g_autoptr (GTask) task = NULL;
  Work *w;

  if (self->busy)
    {
      self->rerun = TRUE;
      return;
    }
  w = g_new0 (Work, 1);
  w->f64 = gtk_drop_down_get_selected (self->dtype_dropdown) == 0;
  w->mode = mode_values[MIN (gtk_drop_down_get_selected (self->mode_dropdown), 2)];
  w->kernel_spec = g_strdup (kernel_specs[MIN (gtk_drop_down_get_selected (self->kernel_dropdown),
                                               G_N_ELEMENTS (kernel_specs) - 1)]);
  self->busy = TRUE;
  gtk_label_set_text (self->status_label, "Convolving…");
  task = g_task_new (NULL, self->cancellable, run_done, g_object_ref (self));
  g_task_set_task_data (task, w, (GDestroyNotify) work_free);
  g_task_run_in_thread (task, lab_thread);
}

static void
setting_changed (GObject *object, GParamSpec *pspec, gpointer data)
{
  start_run (SKY_CONVOLUTION_LAB (data));
}

static void
show_changed (GObject *object, GParamSpec *pspec, gpointer data)
{
  SkyConvolutionLab *self = data;
  guint which = gtk_drop_down_get_selected (self->show_dropdown);

  gtk_widget_set_visible (self->deltas_box, which != 2);
  gtk_widget_set_visible (self->result_box, which != 1);
}

/* The lab's zoom buttons: fit, or the middle delta at 1x, 4x or 16x. */
static void
zoom_to (SkyConvolutionLab *self, double zoom)
{
  if (zoom <= 0)
    {
      sky_image_view_fit (self->deltas_view);
      sky_image_view_fit (self->result_view);
      return;
    }
  sky_convolution_lab_show_delta (self, zoom, SKY_CONVOLUTION_DEMO_N / 2 + SKY_CONVOLUTION_DEMO_FIRST,
                                  SKY_CONVOLUTION_DEMO_N / 2 + SKY_CONVOLUTION_DEMO_FIRST);
}

static void
on_zoom_fit_clicked (GtkButton *button, SkyConvolutionLab *self)
{
  zoom_to (self, 0);
}

static void
on_zoom_1_clicked (GtkButton *button, SkyConvolutionLab *self)
{
  zoom_to (self, 1);
}

static void
on_zoom_4_clicked (GtkButton *button, SkyConvolutionLab *self)
{
  zoom_to (self, 4);
}

static void
on_zoom_16_clicked (GtkButton *button, SkyConvolutionLab *self)
{
  zoom_to (self, 16);
}

/* The pixel under the pointer in either view, as the main window's readout
 * has it: FITS pixels counted from 1, and the value, enough digits to read
 * the blurred Gaussian's fall-off at 16x. */
static void
on_pointer_moved (SkyImageView *view, gboolean inside, double x, double y,
                  SkyConvolutionLab *self)
{
  SkyImageData *data = sky_image_view_get_image (view);
  const SkyImage *img = data ? &data->image : NULL;
  gint64 ix = (gint64) floor (x), iy = (gint64) floor (y);
  g_autofree char *text = NULL;

  if (!inside || img == NULL || ix < 0 || iy < 0 || ix >= img->nx || iy >= img->ny)
    {
      gtk_label_set_text (self->readout_label, "");
      return;
    }
  text = g_strdup_printf ("%s  x %5" G_GINT64_FORMAT "  y %5" G_GINT64_FORMAT
                          " (FITS, from 1)  %.6g", view == self->deltas_view ? "deltas" : "result",
                          ix + 1, iy + 1, img->pixels[iy * img->nx + ix]);
  gtk_label_set_text (self->readout_label, text);
}

static void
sky_convolution_lab_dispose (GObject *object)
{
  SkyConvolutionLab *self = SKY_CONVOLUTION_LAB (object);

  g_cancellable_cancel (self->cancellable);
  G_OBJECT_CLASS (sky_convolution_lab_parent_class)->dispose (object);
}

static void
sky_convolution_lab_finalize (GObject *object)
{
  SkyConvolutionLab *self = SKY_CONVOLUTION_LAB (object);

  g_clear_object (&self->cancellable);
  g_free (self->timings);
  g_free (self->timings_head);
  G_OBJECT_CLASS (sky_convolution_lab_parent_class)->finalize (object);
}

static void
sky_convolution_lab_get_property (GObject *object, guint prop_id, GValue *value,
                                  GParamSpec *pspec)
{
  SkyConvolutionLab *self = SKY_CONVOLUTION_LAB (object);

  switch (prop_id)
    {
    case PROP_TIMINGS:
      g_value_set_string (value, sky_convolution_lab_get_timings (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_convolution_lab_class_init (SkyConvolutionLabClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_convolution_lab_dispose;
  object_class->finalize = sky_convolution_lab_finalize;
  object_class->get_property = sky_convolution_lab_get_property;

  /* The timings of the result shown, "" before the first. */
  properties[PROP_TIMINGS] =
    g_param_spec_string ("timings", NULL, NULL, "",
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The template lives in a GResource inside the static library: naming it
   * keeps its object file, and the constructor that registers it, linked. */
  (void) sky_ui_get_resource ();
  g_type_ensure (SKY_TYPE_IMAGE_VIEW);
  g_type_ensure (SKY_TYPE_COLOR_BAR);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/skysift/SkySift/ui/sky-convolution-lab.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, dtype_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, mode_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, kernel_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, show_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, deltas_box);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, result_box);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, deltas_view);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, result_view);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, status_label);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, readout_label);
  gtk_widget_class_bind_template_child (widget_class, SkyConvolutionLab, timings_label);
  gtk_widget_class_bind_template_callback (widget_class, setting_changed);
  gtk_widget_class_bind_template_callback (widget_class, show_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_pointer_moved);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_fit_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_1_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_4_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_16_clicked);

  /* Escape and Ctrl+W close the lab, as they close a dialog. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close",
                                       NULL);
}

static void
sky_convolution_lab_init (SkyConvolutionLab *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();

  /* Plain values: a one is white, zero black, the blobs grey levels. */
  g_object_set (self->deltas_view, "stretch", SKY_STRETCH_LINEAR, "limits", SKY_LIMITS_MINMAX,
                "colormap", SKY_COLORMAP_GREY, NULL);
  g_object_set (self->result_view, "stretch", SKY_STRETCH_LINEAR, "limits", SKY_LIMITS_MINMAX,
                "colormap", SKY_COLORMAP_GREY, NULL);
  /* One zoom for both. */
  g_object_bind_property (self->deltas_view, "zoom", self->result_view, "zoom",
                          G_BINDING_BIDIRECTIONAL);
  start_run (self);
}

GtkWidget *
sky_convolution_lab_new (GtkApplication *app)
{
  return g_object_new (SKY_TYPE_CONVOLUTION_LAB, "application", app, NULL);
}

SkyImageView *
sky_convolution_lab_get_deltas_view (SkyConvolutionLab *self)
{
  return self->deltas_view;
}

SkyImageView *
sky_convolution_lab_get_result_view (SkyConvolutionLab *self)
{
  return self->result_view;
}

gboolean
sky_convolution_lab_is_busy (SkyConvolutionLab *self)
{
  return self->busy || self->rerun;
}

int
sky_convolution_lab_get_result_offset (SkyConvolutionLab *self)
{
  return self->result_offset;
}

void
sky_convolution_lab_show_delta (SkyConvolutionLab *self, double zoom, int x, int y)
{
  self->pending_zoom = zoom;
  self->pending_x = x;
  self->pending_y = y;
  if (sky_image_view_get_image (self->deltas_view) != NULL)
    apply_pending (self);
}

static void
choose (GtkDropDown *dropdown, const char *const *names, const char *name)
{
  for (guint i = 0; name && names[i]; i++)
    if (g_str_equal (names[i], name))
      gtk_drop_down_set_selected (dropdown, i);
}

void
sky_convolution_lab_choose (SkyConvolutionLab *self, const char *dtype, const char *mode,
                            const char *show)
{
  static const char *const show_keys[] = { "both", "deltas", "result", NULL };

  choose (self->dtype_dropdown, dtype_names, dtype);
  choose (self->mode_dropdown, mode_names, mode);
  choose (self->show_dropdown, show_keys, show);
}

const char *
sky_convolution_lab_get_timings (SkyConvolutionLab *self)
{
  return self->timings ? self->timings : "";
}
