/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyTimingsPanel: a grid of times in milliseconds and a bar chart. */
#include "sky-timings-panel.h"
#include "sky-display-path.h"

#include <math.h>

#define MAX_ROWS (SKY_STEP_COUNT + 1) /* the method's steps, then the total */
#define N_VALUES 5    /* CPU, GPU kernels, GPU with transfers, speedup, agree */

struct _SkyTimingsPanel {
  GtkWidget parent_instance;

  GtkGrid *grid;
  GtkDrawingArea *chart;
  GtkLabel *gpu_note;
  GtkLabel *caption;
  GtkLabel *convolution_label;
  GtkLabel *display_label;
  guint display_watch;
  guint display_idle;

  /* One row per step of the method shown, then the total. */
  SkyMethod method;
  int nrows;
  SkyStep row_steps[MAX_ROWS];  /* SKY_STEP_NONE: the total */
  GtkWidget *names[MAX_ROWS];
  GtkLabel *cells[MAX_ROWS][N_VALUES];
  SkyRun *run;
  char *no_gpu;     /* why there is no GPU, or NULL */
};

G_DEFINE_FINAL_TYPE (SkyTimingsPanel, sky_timings_panel, GTK_TYPE_WIDGET)

GtkWidget *
sky_timings_panel_new (void)
{
  return g_object_new (SKY_TYPE_TIMINGS_PANEL, NULL);
}

static void show_note (SkyTimingsPanel *self);


/* The display path and its last texture update, each way measured. */
static gboolean
show_display (gpointer data)
{
  SkyTimingsPanel *self = data;
  g_autofree char *text = sky_display_describe ();

  gtk_label_set_text (self->display_label, text);
  self->display_idle = 0;
  return G_SOURCE_REMOVE;
}

/* The times change while the view draws (in GTK's snapshot phase), when
 * no widget may change size: the label follows from the main loop. */
static void
display_changed (gpointer data)
{
  SkyTimingsPanel *self = data;

  if (self->display_idle == 0)
    self->display_idle = g_idle_add (show_display, self);
}

/* A row's time: its step's, or the total's. */
static double
row_time (const SkyTimingsPanel *self, const SkyStepTimes *t, int row)
{
  SkyStep step = self->row_steps[row];
  return step == SKY_STEP_NONE ? t->total : t->ms[step];
}

/* Whether the run has the row's result: its step, or (the total) any. */
static gboolean
row_done (const SkyTimingsPanel *self, const SkyRun *run, int row)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (self->method, &steps), done = -1;

  for (int k = 0; k < nsteps; k++)
    if (steps[k] == run->done)
      done = k;
  return self->row_steps[row] == SKY_STEP_NONE ? done >= 0 : done >= row;
}

/* The grid's rows for method: a name and N_VALUES cells for each step,
 * then the total. */
static void
build_rows (SkyTimingsPanel *self, SkyMethod method)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (method, &steps);

  for (int r = 0; r < self->nrows; r++)
    {
      gtk_grid_remove (self->grid, self->names[r]);
      for (int c = 0; c < N_VALUES; c++)
        gtk_grid_remove (self->grid, GTK_WIDGET (self->cells[r][c]));
    }
  self->method = method;
  self->nrows = nsteps + 1;
  for (int r = 0; r < self->nrows; r++)
    {
      self->row_steps[r] = r < nsteps ? steps[r] : SKY_STEP_NONE;
      self->names[r] = gtk_label_new (r < nsteps ? sky_step_name (steps[r]) : "total");
      gtk_label_set_xalign (GTK_LABEL (self->names[r]), 0.0);
      gtk_grid_attach (self->grid, self->names[r], 0, r + 1, 1, 1);
      for (int c = 0; c < N_VALUES; c++)
        {
          GtkWidget *label = gtk_label_new ("–");
          gtk_label_set_xalign (GTK_LABEL (label), 1.0);
          gtk_widget_add_css_class (label, "numeric");
          gtk_grid_attach (self->grid, label, c + 1, r + 1, 1, 1);
          self->cells[r][c] = GTK_LABEL (label);
        }
    }
}

static void
set_cell (SkyTimingsPanel *self, int row, int col, const char *text)
{
  gtk_label_set_text (self->cells[row][col], text);
}

void
sky_timings_panel_set_run (SkyTimingsPanel *self, SkyRun *run)
{
  g_return_if_fail (SKY_IS_TIMINGS_PANEL (self));

  g_clear_pointer (&self->run, sky_run_unref);
  self->run = run ? sky_run_ref (run) : NULL;
  if (run != NULL && run->stages.method != self->method)
    build_rows (self, run->stages.method);
  for (int r = 0; r < self->nrows; r++)
    {
      SkyStep step = self->row_steps[r];
      gboolean done = run && row_done (self, run, r);
      char text[64];

      /* The GPU backend alone runs nothing on the CPU: no CPU figures. */
      gboolean cpu_ran = done && run->backend != SKY_BACKEND_GPU;
      gboolean both = cpu_ran && run->has_gpu;
      double speedup;

      if (cpu_ran)
        g_snprintf (text, sizeof text, "%.2f", row_time (self, &run->cpu, r));
      set_cell (self, r, 0, cpu_ran ? text : "–");
      if (done && run->has_gpu)
        {
          gboolean same = both && sky_run_speedup (run, step, &speedup);
          g_snprintf (text, sizeof text, "%.2f", row_time (self, &run->gpu_kernel, r));
          set_cell (self, r, 1, text);
          g_snprintf (text, sizeof text, "%.2f", row_time (self, &run->gpu_total, r));
          set_cell (self, r, 2, text);
          if (same)
            g_snprintf (text, sizeof text, "%.1f×", speedup);
          set_cell (self, r, 3, same ? text : "–");
          set_cell (self, r, 4, !both ? "–" : step == SKY_STEP_NONE ? ""
                                : run->agree[step] ? "yes" : "NO");
        }
      else
        for (int c = 1; c < N_VALUES; c++)
          set_cell (self, r, c, "–");
    }
  if (run == NULL)
    gtk_label_set_text (self->caption, "Run a step to time it.");
  else
    {
      g_autofree char *gpu = run->has_gpu ? sky_run_describe_gpu (&run->stages.gpu_times)
                                          : NULL;
      g_autofree char *cpu = run->backend != SKY_BACKEND_GPU ? sky_run_describe_cpu (run)
                                                             : g_strdup ("");
      g_autofree char *text =
        g_strdup_printf ("%s, %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT " pixels, %s backend, "
                         "%d threads. Milliseconds; a step reused from an earlier run keeps "
                         "the time it took then.%s%s%s%s",
                         run->image->display_name, run->image->image.nx, run->image->image.ny,
                         sky_backend_name (run->backend),
                         run->params.nthreads ? run->params.nthreads : sky_default_threads (),
                         *cpu ? " " : "", cpu,
                         gpu ? " " : "", gpu ? gpu : "");
      gtk_label_set_text (self->caption, text);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self->chart));
  show_note (self);
}

/* Under the table: why there is no GPU, or what differs between the
 * backends of a run on both. */
static void
show_note (SkyTimingsPanel *self)
{
  g_autofree char *text = NULL;

  if (self->run && self->run->has_gpu && self->run->gpu_note)
    text = g_strdup_printf ("The backends differ: %s", self->run->gpu_note);
  else if (!(self->run && self->run->has_gpu) && self->no_gpu)
    text = g_strdup (self->no_gpu);
  gtk_label_set_text (self->gpu_note, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->gpu_note), text != NULL);
}

void
sky_timings_panel_set_gpu_note (SkyTimingsPanel *self, const char *note)
{
  g_free (self->no_gpu);
  self->no_gpu = note && *note ? g_strdup (note) : NULL;
  show_note (self);
}

/* Bars per step: CPU, and where there is one, the GPU with and without its
 * transfers; all on one linear scale in milliseconds. */
static void
draw_chart (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
  SkyTimingsPanel *self = data;
  SkyRun *run = self->run;
  const int nsteps = self->nrows - 1;
  const double label_w = 58, right = 48, row_h = (h - 4) / (double) MAX (nsteps, 1);
  double tmax = 0;
  GdkRGBA fg;

  if (run == NULL || w < label_w + right + 20)
    return;
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  for (int r = 0; r < nsteps; r++)
    {
      tmax = MAX (tmax, row_time (self, &run->cpu, r));
      if (run->has_gpu)
        tmax = MAX (tmax, row_time (self, &run->gpu_total, r));
    }
  if (tmax <= 0)
    return;
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10);
  for (int r = 0; r < nsteps && row_done (self, run, r); r++)
    {
      double y = 2 + r * row_h, bar_h = run->has_gpu ? row_h * 0.36 : row_h * 0.6;
      double scale = (w - label_w - right) / tmax;
      double cpu = row_time (self, &run->cpu, r), gpu = row_time (self, &run->gpu_total, r);
      double kernels = row_time (self, &run->gpu_kernel, r);
      char text[32];

      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_move_to (cr, 0, y + row_h / 2 + 4);
      cairo_show_text (cr, sky_step_name (self->row_steps[r]));

      if (run->backend != SKY_BACKEND_GPU)
        {
          cairo_set_source_rgb (cr, 0.25, 0.5, 0.85);
          cairo_rectangle (cr, label_w, y + 2, MAX (cpu * scale, 1), bar_h);
          cairo_fill (cr);
          gdk_cairo_set_source_rgba (cr, &fg);
          g_snprintf (text, sizeof text, "%.1f", cpu);
          cairo_move_to (cr, label_w + cpu * scale + 4, y + 2 + bar_h - 2);
          cairo_show_text (cr, text);
        }
      if (run->has_gpu)
        {
          double yg = y + 3 + bar_h;
          cairo_set_source_rgb (cr, 0.55, 0.8, 0.45);
          cairo_rectangle (cr, label_w, yg, MAX (gpu * scale, 1), bar_h);
          cairo_fill (cr);
          cairo_set_source_rgb (cr, 0.2, 0.6, 0.2);
          cairo_rectangle (cr, label_w, yg, MAX (kernels * scale, 1), bar_h);
          cairo_fill (cr);
          gdk_cairo_set_source_rgba (cr, &fg);
          g_snprintf (text, sizeof text, "%.1f", gpu);
          cairo_move_to (cr, label_w + gpu * scale + 4, yg + bar_h - 2);
          cairo_show_text (cr, text);
        }
    }
}

static void
sky_timings_panel_dispose (GObject *object)
{
  SkyTimingsPanel *self = SKY_TIMINGS_PANEL (object);

  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), SKY_TYPE_TIMINGS_PANEL);
  /* Template children without an id are ours to unparent. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->no_gpu, g_free);
  sky_display_unwatch (self->display_watch);
  self->display_watch = 0;
  g_clear_handle_id (&self->display_idle, g_source_remove);
  G_OBJECT_CLASS (sky_timings_panel_parent_class)->dispose (object);
}

static void
sky_timings_panel_class_init (SkyTimingsPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_timings_panel_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-timings-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, grid);
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, chart);
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, gpu_note);
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, caption);
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, convolution_label);
  gtk_widget_class_bind_template_child (widget_class, SkyTimingsPanel, display_label);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "skytimingspanel");
}

static void
sky_timings_panel_init (SkyTimingsPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  /* The template lays out the headers; the rows follow the method. */
  build_rows (self, SKY_METHOD_LESSON);
  gtk_drawing_area_set_draw_func (self->chart, draw_chart, self, NULL);
  show_display (self);
  self->display_watch = sky_display_watch (display_changed, self);
}

void
sky_timings_panel_set_convolution (SkyTimingsPanel *self, const char *text)
{
  g_return_if_fail (SKY_IS_TIMINGS_PANEL (self));

  gtk_label_set_text (self->convolution_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->convolution_label), text != NULL && *text);
}

const char *
sky_timings_panel_get_convolution (SkyTimingsPanel *self)
{
  return gtk_label_get_text (self->convolution_label);
}

const char *
sky_timings_panel_get_display (SkyTimingsPanel *self)
{
  return gtk_label_get_text (self->display_label);
}

const char *
sky_timings_panel_get_caption (SkyTimingsPanel *self)
{
  return gtk_label_get_text (self->caption);
}
