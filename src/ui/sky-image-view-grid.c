/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView's coordinate grid (with its labels, the N/E compass and the
 * beam) and contours, drawn with cairo over the image and under the
 * markers. The geometry is the core's (sky_wcs_grid, sky_contour_trace);
 * this file only places and paints it. The grid is worked out for the part
 * of the image in view, so its spacing follows the zoom; contours once per
 * image, run and levels. Both go into the exported PNG, which renders the
 * view as it is drawn. */
#include "sky-image-view-private.h"

#include <math.h>
#include <stdlib.h>

/* Contours of the full image up to this many pixels, else of the first
 * zoom-out level at or under it (a few ms a level on the main thread). */
#define CONTOUR_MAX_PIXELS (2048 * 2048)
#define COMPASS_LENGTH 34.0     /* logical pixels */
#define LABEL_FONT 11.0

static const double GRID_RGB[3] = { 0.2, 0.85, 0.35 };
static const double CONTOUR_RGB[3] = { 0.15, 0.45, 1.0 };
static const double THRESHOLD_RGB[3] = { 1.0, 0.55, 0.0 };

/* ------------------------------------------------------------ contour spec */

gboolean
sky_contour_spec_parse (const char *text, SkyContourSpec *spec, GError **error)
{
  g_auto (GStrv) tokens = NULL;
  g_autofree char *norm = NULL;

  memset (spec, 0, sizeof *spec);
  if (text == NULL)
    return TRUE;
  /* "3,5,10 sigma", "3 5 10σ", "threshold, 3 sigma", "0.01 0.05", "off". */
  norm = g_strdup (text);
  g_strdelimit (norm, ",;", ' ');
  {
    g_autofree char *tmp = norm;
    GString *s = g_string_new (NULL);
    for (const char *p = tmp; *p; p = g_utf8_next_char (p))
      {
        if (g_utf8_get_char (p) == 0x3C3) /* σ */
          g_string_append (s, " sigma");
        else
          g_string_append_unichar (s, g_utf8_get_char (p));
      }
    norm = g_string_free (s, FALSE);
  }
  tokens = g_strsplit_set (g_strstrip (norm), " \t", -1);
  for (int i = 0; tokens[i] != NULL; i++)
    {
      const char *t = tokens[i];
      char *end = NULL;
      double v;

      if (*t == '\0' || g_ascii_strcasecmp (t, "off") == 0 || g_ascii_strcasecmp (t, "none") == 0)
        continue;
      if (g_ascii_strcasecmp (t, "sigma") == 0)
        {
          spec->sigma = TRUE;
          continue;
        }
      if (g_ascii_strcasecmp (t, "threshold") == 0)
        {
          spec->threshold = TRUE;
          continue;
        }
      v = g_ascii_strtod (t, &end);
      if (end != NULL && g_ascii_strcasecmp (end, "sigma") == 0)
        spec->sigma = TRUE;
      else if (end == t || end == NULL || *end != '\0' || !isfinite (v))
        {
          g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT,
                       "contour levels: “%s” is not a number, “sigma” or “threshold”", t);
          return FALSE;
        }
      if (spec->n == SKY_CONTOUR_MAX_LEVELS)
        {
          g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT,
                       "contour levels: at most %d levels", SKY_CONTOUR_MAX_LEVELS);
          return FALSE;
        }
      spec->values[spec->n++] = v;
    }
  return TRUE;
}

char *
sky_contour_spec_to_string (const SkyContourSpec *spec)
{
  GString *s = g_string_new (NULL);

  if (spec->threshold)
    g_string_append (s, "threshold");
  for (int i = 0; i < spec->n; i++)
    {
      char num[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (s, "%s%s", s->len && i == 0 ? ", " : i ? "," : "",
                              g_ascii_formatd (num, sizeof num, "%g", spec->values[i]));
    }
  if (spec->n > 0 && spec->sigma)
    g_string_append (s, " sigma");
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------- caches */

/* The contours shown go, and a tracing under way will not be shown. */
static void
drop_contours (SkyImageView *self)
{
  for (int i = 0; i < self->ncontours; i++)
    sky_contour_free (&self->contours[i]);
  self->ncontours = 0;
  self->contours_valid = FALSE;
  self->contours_pending = FALSE;
  self->contour_generation++;
}

void
sky_image_view_tools_forget (SkyImageView *self, gboolean image_too)
{
  if (image_too)
    {
      sky_grid_free (&self->grid);
      self->grid_valid = FALSE;
    }
  /* A new run moves sigma and the threshold, not levels given as values. */
  if (image_too || self->contour_spec.sigma || self->contour_spec.threshold)
    drop_contours (self);
}

void
sky_image_view_set_grid (SkyImageView *self, gboolean show)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (self->show_grid == show)
    return;
  self->show_grid = show;
  sky_image_view_state_changed (self, FALSE);
}

gboolean
sky_image_view_get_grid (SkyImageView *self)
{
  return self->show_grid;
}

void
sky_image_view_set_contours (SkyImageView *self, const SkyContourSpec *spec)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  self->contour_spec = *spec;
  drop_contours (self);
  sky_image_view_state_changed (self, FALSE);
}

const SkyContourSpec *
sky_image_view_get_contours (SkyImageView *self)
{
  return &self->contour_spec;
}

/* The levels asked for, in the image's unit: values as given, sigma levels
 * as the threshold reads them (k sigma, or median + k sigma for a relative
 * threshold), then the run's detection threshold. Sigma and the threshold
 * need a clipped run; without one they are left out. */
static int
contour_levels (SkyImageView *self, double *levels, gboolean *is_threshold)
{
  const SkyContourSpec *spec = &self->contour_spec;
  gboolean clipped = self->run != NULL && self->run->done >= SKY_STEP_CLIP;
  int n = 0;

  for (int i = 0; i < spec->n; i++)
    {
      if (spec->sigma && !clipped)
        break;
      levels[n] = spec->sigma
        ? (self->run->params.relative ? self->run->stats.median : 0.0)
            + spec->values[i] * self->run->stats.sigma
        : spec->values[i];
      is_threshold[n++] = FALSE;
    }
  if (spec->threshold && clipped && isfinite (self->run->threshold_value))
    {
      levels[n] = self->run->threshold_value;
      is_threshold[n++] = TRUE;
    }
  return n;
}

/* Tracing runs on a worker (about 20 ms a level on 2048 x 2048 pixels on
 * the 2-core development machine), on the image's pixels, which are never
 * changed once loaded; the result is shown if nothing has changed the
 * contours since it was asked for. */
typedef struct {
  SkyImageData *image;
  int lod, n;
  double level[SKY_CONTOUR_MAX_LEVELS + 1];
  SkyContour contours[SKY_CONTOUR_MAX_LEVELS + 1];
  guint generation;
  double ms;
} ContourJob;

static void
contour_job_free (gpointer data)
{
  ContourJob *job = data;
  for (int i = 0; i < job->n; i++)
    sky_contour_free (&job->contours[i]);
  sky_image_data_unref (job->image);
  g_free (job);
}

static void
trace_contours (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ContourJob *job = data;
  const SkyPyramid *pyr = &job->image->pyramid;
  gint64 t0 = g_get_monotonic_time ();

  for (int i = 0; i < job->n; i++)
    if (sky_contour_trace (pyr->pixels[job->lod], pyr->nx[job->lod], pyr->ny[job->lod],
                           job->level[i], &job->contours[i]) != SKY_OK)
      {
        for (int j = 0; j < i; j++)
          sky_contour_free (&job->contours[j]);
        job->n = 0;
        g_task_return_new_error (task, SKY_UI_ERROR, SKY_UI_ERROR_MEMORY, "contours: %s",
                                 sky_last_error ());
        return;
      }
  job->ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_task_return_boolean (task, TRUE);
}

static void
contours_traced (GObject *source, GAsyncResult *result, gpointer data)
{
  SkyImageView *self = SKY_IMAGE_VIEW (source);
  ContourJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  if (job->generation != self->contour_generation)
    return;
  self->contours_pending = FALSE;
  self->contours_valid = TRUE;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    g_warning ("%s", error->message);
  else
    {
      self->ncontours = job->n;
      self->contour_lod = job->lod;
      memcpy (self->contours, job->contours, sizeof self->contours);
      memcpy (self->contour_level, job->level, sizeof self->contour_level);
      job->n = 0;   /* the view owns them now */
      g_debug ("contours: %d levels on level %d of the pyramid in %.1f ms", self->ncontours,
               self->contour_lod, job->ms);
    }
  sky_image_view_state_changed (self, FALSE);
}

/* Starts tracing the contours asked for, where they are not traced or
 * being traced; TRUE while they are on their way (the frame is then not
 * the current state's, and those waiting for one wait on). */
static gboolean
ensure_contours (SkyImageView *self)
{
  const SkyPyramid *pyr;
  g_autoptr (GTask) task = NULL;
  ContourJob *job;
  gboolean is_threshold[SKY_CONTOUR_MAX_LEVELS + 1];
  double level[SKY_CONTOUR_MAX_LEVELS + 1];
  int n;

  if (self->contours_valid || self->image == NULL)
    return FALSE;
  if (self->contours_pending)
    return TRUE;
  n = contour_levels (self, level, is_threshold);
  memcpy (self->contour_is_threshold, is_threshold, sizeof is_threshold);
  if (n == 0)
    {
      self->contours_valid = TRUE;
      return FALSE;
    }
  job = g_new0 (ContourJob, 1);
  job->image = sky_image_data_ref (self->image);
  job->n = n;
  memcpy (job->level, level, sizeof level);
  job->generation = self->contour_generation;
  pyr = &self->image->pyramid;
  job->lod = pyr->first;
  while (job->lod + 1 < sky_pyramid_levels (pyr) && pyr->nx[job->lod] * pyr->ny[job->lod] > CONTOUR_MAX_PIXELS)
    job->lod++;
  self->contours_pending = TRUE;
  task = g_task_new (self, NULL, contours_traced, NULL);
  g_task_set_task_data (task, job, contour_job_free);
  g_task_run_in_thread (task, trace_contours);
  return TRUE;
}

/* ------------------------------------------------------------ drawing */

/* 0-based pixel coordinates (WCS and contours) to widget pixels: the view
 * counts pixel i as [i, i + 1). */
void
sky_image_view_pix_to_widget (SkyImageView *self, double w, double h, double x, double y, double *wx, double *wy)
{
  sky_image_view_to_widget_in (self, w, h, x + 0.5, y + 0.5, wx, wy);
}

static void
draw_contours (SkyImageView *self, cairo_t *cr, double w, double h)
{
  double scale = (double) (1 << self->contour_lod);

  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  for (int i = 0; i < self->ncontours; i++)
    {
      const SkyContour *c = &self->contours[i];
      const double *rgb = self->contour_is_threshold[i] ? THRESHOLD_RGB : CONTOUR_RGB;

      cairo_new_path (cr);
      for (int64_t p = 0; p < c->npaths; p++)
        for (int64_t k = c->path_start[p]; k < c->path_start[p + 1]; k++)
          {
            double wx, wy;
            /* A zoom-out level's pixel k centres on full pixels
             * k * scale .. (k + 1) * scale - 1. */
            sky_image_view_pix_to_widget (self, w, h, (c->px[k] + 0.5) * scale - 0.5, (c->py[k] + 0.5) * scale - 0.5,
                           &wx, &wy);
            if (k == c->path_start[p])
              cairo_move_to (cr, wx, wy);
            else
              cairo_line_to (cr, wx, wy);
          }
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width (cr, self->contour_is_threshold[i] ? 1.8 : 1.2);
      cairo_stroke (cr);
    }
}

/* The part of the image in view, in 0-based pixel coordinates; FALSE when
 * none is. */
gboolean
sky_image_view_visible_rect (SkyImageView *self, double w, double h, double r[4])
{
  double ax, ay, bx, by;
  const SkyImage *img = &self->image->image;

  sky_image_view_widget_to_image (self, 0, 0, &ax, &ay);
  sky_image_view_widget_to_image (self, w, h, &bx, &by);
  r[0] = MAX (MIN (ax, bx) - 0.5, -0.5);
  r[2] = MIN (MAX (ax, bx) - 0.5, img->nx - 0.5);
  r[1] = MAX (MIN (ay, by) - 0.5, -0.5);
  r[3] = MIN (MAX (ay, by) - 0.5, img->ny - 0.5);
  return r[2] > r[0] && r[3] > r[1];
}

void
sky_image_view_ensure_grid (SkyImageView *self, const double r[4])
{
  if (self->grid_valid && memcmp (r, self->grid_rect, sizeof self->grid_rect) == 0)
    return;
  sky_grid_free (&self->grid);
  memcpy (self->grid_rect, r, sizeof self->grid_rect);
  self->grid_valid = sky_wcs_grid (self->image->wcs, r[0], r[1], r[2], r[3], &self->grid) == SKY_OK;
}

/* Text in a dark box, readable on any colour map and off the image. */
static void
show_boxed (cairo_t *cr, double x, double y, const char *text, double ax, double ay,
            double box[4])
{
  cairo_text_extents_t ext;
  double tx, ty;

  cairo_text_extents (cr, text, &ext);
  tx = x - ax * ext.x_advance;
  ty = y - ay * ext.height - ext.y_bearing;
  box[0] = tx - 3;
  box[1] = ty + ext.y_bearing - 2;
  box[2] = tx + ext.x_advance + 3;
  box[3] = ty + ext.y_bearing + ext.height + 2;
  cairo_rectangle (cr, box[0], box[1], box[2] - box[0], box[3] - box[1]);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.6);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 0.75, 1.0, 0.78);
  cairo_move_to (cr, tx, ty);
  cairo_show_text (cr, text);
}

/* Which edge of the rectangle is on which side of the screen: rows go up
 * the screen, and a mirrored view puts x1 on the left. */
static SkyEdge
screen_edge (SkyImageView *self, int side) /* 0 bottom, 1 left, 2 top, 3 right */
{
  switch (side)
    {
    case 0: return SKY_EDGE_Y0;
    case 2: return SKY_EDGE_Y1;
    case 1: return self->flip_x ? SKY_EDGE_X1 : SKY_EDGE_X0;
    default: return self->flip_x ? SKY_EDGE_X0 : SKY_EDGE_X1;
    }
}

/* Meridians are labelled along the bottom if any crosses it, parallels
 * along the left, each else on the first side in its order where its
 * lines cross and the other's labels are not. */
static void
label_sides (SkyImageView *self, int side_of_axis[2])
{
  static const int order[2][4] = { { 0, 2, 3, 1 }, { 1, 3, 0, 2 } };
  const SkyGrid *g = &self->grid;

  for (int axis = 0; axis < 2; axis++)
    {
      side_of_axis[axis] = -1;
      for (int k = 0; k < 4 && side_of_axis[axis] < 0; k++)
        {
          if (axis == 1 && order[1][k] == side_of_axis[0])
            continue;
          for (int c = 0; c < g->ncrossings; c++)
            if (g->lines[g->crossings[c].line].axis == axis
                && g->crossings[c].edge == screen_edge (self, order[axis][k]))
              {
                side_of_axis[axis] = order[axis][k];
                break;
              }
        }
    }
}

#define MAX_LABELS 64

typedef struct {
  double box[MAX_LABELS][4];
  int n;
  gboolean *labelled;       /* per line */
  double bounds[4];         /* the picture's extent, widget pixels: x0, y0, x1, y1 */
  gboolean figure;          /* dark text on the figure's white margin, with ticks */
} Placed;

/* Places a line's label at widget point (wx, wy) on screen side side (0
 * bottom, 1 left, 2 top, 3 right; -1 for a point inside the image):
 * outside the image where the view has room there (a publication figure's
 * axes), else just inside its edge; not where it would overlap a label
 * placed before. */
static gboolean
place_label (cairo_t *cr, Placed *placed, double wx, double wy, int side, const char *text)
{
  cairo_text_extents_t ext;
  double ax = 0.5, ay = 0.5, room, box[4];
  const double *b = placed->bounds;

  if (placed->n == MAX_LABELS)
    return FALSE;
  if (placed->figure && side >= 0)
    {
      /* A tick into the image at the crossing. */
      double dx = side == 1 ? 1 : side == 3 ? -1 : 0, dy = side == 0 ? -1 : side == 2 ? 1 : 0;
      cairo_move_to (cr, wx, wy);
      cairo_line_to (cr, wx + 7 * dx, wy + 7 * dy);
      cairo_set_source_rgb (cr, 0, 0, 0);
      cairo_set_line_width (cr, 1.2);
      cairo_stroke (cr);
    }
  cairo_text_extents (cr, text, &ext);
  switch (side)
    {
    case 0: room = b[3] - wy; ay = room > ext.height + 8 ? -0.3 : 1.3; wy += ay < 0 ? 4 : -4; break;
    case 2: room = wy - b[1]; ay = room > ext.height + 8 ? 1.3 : -0.3; wy += ay < 0 ? 4 : -4; break;
    case 1: room = wx - b[0]; ax = room > ext.x_advance + 10 ? 1.0 : 0.0; wx += ax > 0.5 ? -5 : 5; break;
    case 3: room = b[2] - wx; ax = room > ext.x_advance + 10 ? 0.0 : 1.0; wx += ax > 0.5 ? -5 : 5; break;
    default: ay = 1.3; break;
    }
  {
    double x0 = wx - ax * ext.x_advance - 4, x1 = x0 + ext.x_advance + 8;
    double y0 = wy - ay * ext.height - 3, y1 = y0 + ext.height + 6;
    for (int k = 0; k < placed->n; k++)
      if (x0 < placed->box[k][2] && x1 > placed->box[k][0] && y0 < placed->box[k][3]
          && y1 > placed->box[k][1])
        return FALSE;
  }
  if (placed->figure && side >= 0)
    {
      double tx = wx - ax * ext.x_advance, ty = wy - ay * ext.height - ext.y_bearing;
      cairo_set_source_rgb (cr, 0, 0, 0);
      cairo_move_to (cr, tx, ty);
      cairo_show_text (cr, text);
      box[0] = tx - 3;
      box[1] = ty + ext.y_bearing - 2;
      box[2] = tx + ext.x_advance + 3;
      box[3] = ty + ext.y_bearing + ext.height + 2;
    }
  else
    show_boxed (cr, wx, wy, text, ax, ay, box);
  memcpy (placed->box[placed->n++], box, sizeof box);
  return TRUE;
}

/* Each line is labelled where it meets its axis's side (meridians along
 * the bottom, parallels along the left); a line that does not meet it is
 * labelled at its first crossing of another side, and one that meets no
 * edge at a point of its own: a parallel (circling a pole in view) at its
 * lowest point on screen, a meridian (inside an all-sky map) half way
 * along. */
void
sky_image_view_draw_labels (SkyImageView *self, cairo_t *cr, double w, double h, const double bounds[4],
             gboolean figure)
{
  const SkyGrid *g = &self->grid;
  int side_of_axis[2];
  g_autofree gboolean *labelled = g_new0 (gboolean, MAX (g->nlines, 1));
  Placed placed = { .n = 0, .labelled = labelled, .figure = figure };

  memcpy (placed.bounds, bounds, sizeof placed.bounds);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, LABEL_FONT);
  label_sides (self, side_of_axis);
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < g->ncrossings; c++)
      {
        const SkyGridCrossing *x = &g->crossings[c];
        const SkyGridLine *line = &g->lines[x->line];
        int side = -1;
        double wx, wy;

        for (int k = 0; k < 4; k++)
          if (x->edge == screen_edge (self, k))
            side = k;
        if (pass == 0 ? side != side_of_axis[line->axis] : labelled[x->line])
          continue;
        sky_image_view_pix_to_widget (self, w, h, x->x, x->y, &wx, &wy);
        if (place_label (cr, &placed, wx, wy, side, line->text))
          labelled[x->line] = TRUE;
      }
  for (int p = 0; p < g->npaths; p++)
    {
      int l = g->path_line[p];
      double bx = 0, by = -G_MAXDOUBLE;
      if (labelled[l])
        continue;
      if (g->lines[l].axis == 0)
        {
          /* A meridian is traced from south to north: its middle point,
           * where meridians stand apart (they meet at the poles). */
          int64_t k = (g->path_start[p] + g->path_start[p + 1]) / 2;
          sky_image_view_pix_to_widget (self, w, h, g->px[k], g->py[k], &bx, &by);
          if (place_label (cr, &placed, bx, by, -1, g->lines[l].text))
            labelled[l] = TRUE;
          continue;
        }
      for (int64_t k = g->path_start[p]; k < g->path_start[p + 1]; k++)
        {
          double wx, wy;
          sky_image_view_pix_to_widget (self, w, h, g->px[k], g->py[k], &wx, &wy);
          if (wy > by)
            {
              bx = wx;
              by = wy;
            }
        }
      if (by > -G_MAXDOUBLE && place_label (cr, &placed, bx, by, -1, g->lines[l].text))
        labelled[l] = TRUE;
    }
  self->grid_labels = placed.n;
}

/* Strokes the path in the grid's colour, line_width wide, over a dark
 * halo (halo_width wide, of opacity halo_alpha) that keeps it visible on
 * any colour map. */
static void
stroke_grid_path (cairo_t *cr, double halo_width, double halo_alpha, double line_width)
{
  cairo_set_line_width (cr, halo_width);
  cairo_set_source_rgba (cr, 0, 0, 0, halo_alpha);
  cairo_stroke_preserve (cr);
  cairo_set_line_width (cr, line_width);
  cairo_set_source_rgb (cr, GRID_RGB[0], GRID_RGB[1], GRID_RGB[2]);
  cairo_stroke (cr);
}

static void
draw_arrow (cairo_t *cr, double x, double y, double dx, double dy, const char *name)
{
  double ex = x + dx * COMPASS_LENGTH, ey = y + dy * COMPASS_LENGTH;
  double px = -dy, py = dx;

  cairo_move_to (cr, x, y);
  cairo_line_to (cr, ex, ey);
  cairo_move_to (cr, ex, ey);
  cairo_line_to (cr, ex - 7 * dx + 4 * px, ey - 7 * dy + 4 * py);
  cairo_move_to (cr, ex, ey);
  cairo_line_to (cr, ex - 7 * dx - 4 * px, ey - 7 * dy - 4 * py);
  stroke_grid_path (cr, 4, 0.6, 1.8);
  {
    double box[4];
    show_boxed (cr, ex + dx * 9, ey + dy * 9, name, 0.5, 0.5, box);
  }
}

/* The compass in the top right corner of the image in view, for the sky
 * at that point; the beam in the bottom left, at the image's scale. */
static void
draw_compass_and_beam (SkyImageView *self, cairo_t *cr, double w, double h, const double r[4])
{
  double left, right, top, bottom, ax, ay, bx, by;
  double sx = self->flip_x ? -1 : 1;
  double north[2], east[2], ix, iy;

  sky_image_view_pix_to_widget (self, w, h, r[0], r[1], &ax, &ay);
  sky_image_view_pix_to_widget (self, w, h, r[2], r[3], &bx, &by);
  left = MAX (MIN (ax, bx), 0);
  right = MIN (MAX (ax, bx), w);
  top = MAX (MIN (ay, by), 0);
  bottom = MIN (MAX (ay, by), h);

  sky_image_view_widget_to_image (self, right - 60, top + 60, &ix, &iy);
  if (sky_wcs_north_east (self->image->wcs, ix - 0.5, iy - 0.5, north, east) == SKY_OK)
    {
      self->compass_shown = TRUE;
      self->compass_north_deg = atan2 (north[1], north[0] * sx) * 180 / G_PI;
      self->compass_east_deg = atan2 (east[1], east[0] * sx) * 180 / G_PI;
      draw_arrow (cr, right - 60, top + 60, sx * north[0], -north[1], "N");
      draw_arrow (cr, right - 60, top + 60, sx * east[0], -east[1], "E");
    }

  if (self->image->image.has_beam)
    {
      double smaj, smin, angle, fw = 2 * sqrt (2 * log (2));
      if (sky_image_beam_pixels (&self->image->image, &smaj, &smin, &angle) == SKY_OK)
        {
          double a = 0.5 * fw * smaj * self->zoom, b = 0.5 * fw * smin * self->zoom;
          double box = MAX (2 * a + 10, 20), cxw = left + 10 + box / 2, cyw = bottom - 10 - box / 2;
          cairo_rectangle (cr, cxw - box / 2, cyw - box / 2, box, box);
          cairo_set_source_rgba (cr, 0, 0, 0, 0.5);
          cairo_fill (cr);
          cairo_save (cr);
          cairo_translate (cr, cxw, cyw);
          /* Pixel angle from +x towards +y; the screen's y goes down and
           * a mirrored view runs x the other way. */
          cairo_rotate (cr, atan2 (-sin (angle), sx * cos (angle)));
          self->beam_deg = atan2 (sin (angle), sx * cos (angle)) * 180 / G_PI;
          cairo_scale (cr, MAX (a, 0.5), MAX (b, 0.5));
          cairo_arc (cr, 0, 0, 1, 0, 2 * G_PI);
          cairo_restore (cr);
          cairo_set_source_rgba (cr, GRID_RGB[0], GRID_RGB[1], GRID_RGB[2], 0.8);
          cairo_fill_preserve (cr);
          cairo_set_source_rgb (cr, 1, 1, 1);
          cairo_set_line_width (cr, 1);
          cairo_stroke (cr);
          self->beam_shown = TRUE;
        }
    }
}

static void
draw_grid (SkyImageView *self, cairo_t *cr, double w, double h)
{
  double r[4];
  const SkyGrid *g;

  if (!sky_image_view_visible_rect (self, w, h, r))
    return;
  sky_image_view_ensure_grid (self, r);
  if (!self->grid_valid)
    return;
  g = &self->grid;
  cairo_new_path (cr);
  for (int p = 0; p < g->npaths; p++)
    for (int64_t k = g->path_start[p]; k < g->path_start[p + 1]; k++)
      {
        double wx, wy;
        sky_image_view_pix_to_widget (self, w, h, g->px[k], g->py[k], &wx, &wy);
        if (k == g->path_start[p])
          cairo_move_to (cr, wx, wy);
        else
          cairo_line_to (cr, wx, wy);
      }
  stroke_grid_path (cr, 2.5, 0.35, 1.0);
  if (!self->figure_pass)
    sky_image_view_draw_labels (self, cr, w, h, (const double[4]) { 0, 0, w, h }, FALSE);
  draw_compass_and_beam (self, cr, w, h, r);
}

static gboolean
tell_watcher (gpointer data)
{
  SkyImageView *self = data;
  /* A view taken out of its window (the window going away) tells no one. */
  if (self->tools_watcher != NULL && gtk_widget_get_root (GTK_WIDGET (self)) != NULL)
    self->tools_watcher (self->tools_watcher_data);
  return G_SOURCE_REMOVE;
}

void
sky_image_view_set_tools_watcher (SkyImageView *self, void (*watcher) (gpointer), gpointer data)
{
  self->tools_watcher = watcher;
  self->tools_watcher_data = data;
}

/* What the state says of the grid and contours changed with this frame:
 * tell the watcher once, from the main loop, so that the state's readers
 * see what was drawn. */
static void
note_drawn (SkyImageView *self)
{
  guint hash = (guint) self->grid_valid * 31u + (guint) self->grid_labels * 131u
    + (guint) self->compass_shown * 7u + (guint) self->beam_shown * 11u
    + (guint) self->ncontours * 17u + (guint) self->show_grid * 3u;

  for (int i = 0; i < 4; i++)
    hash = hash * 33u + (guint) (gint64) (self->grid_rect[i] * 1000);
  for (int i = 0; i < self->ncontours; i++)
    hash = hash * 33u + (guint) self->contours[i].npaths;
  if (hash == self->tools_hash)
    return;
  self->tools_hash = hash;
  if (self->tools_watcher != NULL)
    g_idle_add_full (G_PRIORITY_DEFAULT, tell_watcher, g_object_ref (self), g_object_unref);
}

void
sky_image_view_grid_snapshot (SkyImageView *self, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  cairo_t *cr;

  self->grid_labels = 0;
  self->compass_shown = self->beam_shown = FALSE;
  if (self->image == NULL || w <= 0 || h <= 0)
    return;
  if (ensure_contours (self))
    self->render_current = FALSE;
  if (self->ncontours > 0 || (self->show_grid && self->image->wcs != NULL))
    {
      cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
      if (self->ncontours > 0)
        draw_contours (self, cr, w, h);
      if (self->show_grid && self->image->wcs != NULL)
        draw_grid (self, cr, w, h);
      cairo_destroy (cr);
    }
  note_drawn (self);
}

/* ------------------------------------------------------------ state */

void
sky_image_view_tools_describe (SkyImageView *self, GString *out)
{
  g_autofree char *spec = sky_contour_spec_to_string (&self->contour_spec);

  g_string_append_printf (out, ", \"grid\": {\"shown\": %s", self->show_grid ? "true" : "false");
  if (self->show_grid && self->image != NULL && self->image->wcs == NULL)
    g_string_append (out, ", \"note\": \"no celestial WCS\"");
  if (self->show_grid && self->grid_valid)
    {
      g_string_append_printf (out, ", \"rect\": [%.3f, %.3f, %.3f, %.3f], \"lines\": [",
                              self->grid_rect[0], self->grid_rect[1], self->grid_rect[2],
                              self->grid_rect[3]);
      for (int l = 0; l < self->grid.nlines; l++)
        g_string_append_printf (out, "%s\"%s\"", l ? ", " : "", self->grid.lines[l].text);
      g_string_append_printf (out, "], \"crossings\": %d, \"labels\": %d, \"compass\": %s, "
                              "\"north_deg\": %.2f, \"east_deg\": %.2f, \"beam\": %s",
                              self->grid.ncrossings, self->grid_labels,
                              self->compass_shown ? "true" : "false",
                              self->compass_shown ? self->compass_north_deg : 0.0,
                              self->compass_shown ? self->compass_east_deg : 0.0,
                              self->beam_shown ? "true" : "false");
      if (self->beam_shown)
        g_string_append_printf (out, ", \"beam_deg\": %.2f", self->beam_deg);
    }
  g_string_append_printf (out, "}, \"contours\": {\"spec\": \"%s\", \"levels\": [", spec);
  for (int i = 0; i < self->ncontours; i++)
    g_string_append_printf (out, "%s%.9g", i ? ", " : "", self->contour_level[i]);
  g_string_append (out, "], \"paths\": [");
  for (int i = 0; i < self->ncontours; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i ? ", " : "", self->contours[i].npaths);
  g_string_append_printf (out, "], \"threshold\": %s, \"pyramid_level\": %d}",
                          self->ncontours > 0 && self->contour_is_threshold[self->ncontours - 1]
                            ? "true" : "false", self->contour_lod);
}
