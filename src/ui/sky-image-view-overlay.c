/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView's markers and label numbers, drawn with cairo on top of the
 * GL image. Numbers that would overlap an earlier one are left out, the
 * brightest sources placed first, so a crowded field stays readable. */
#include "sky-image-view-private.h"

#include <math.h>

#define CELL 4  /* occupancy grid for the numbers, in logical pixels */

static double
marker_radius (SkyImageView *self, gint64 i)
{
  /* The radius of a disc of the source's area, plus a margin. */
  double r = sqrt (self->run->catalogue.npix[i] / G_PI) * self->zoom;
  return MAX (r + 3, 5);
}

static gboolean
cells_free (const guint8 *grid, int gw, int gh, double x0, double y0, double x1, double y1)
{
  int a = MAX ((int) floor (x0 / CELL), 0), b = MIN ((int) floor (x1 / CELL), gw - 1);
  int c = MAX ((int) floor (y0 / CELL), 0), d = MIN ((int) floor (y1 / CELL), gh - 1);
  for (int y = c; y <= d; y++)
    for (int x = a; x <= b; x++)
      if (grid[y * gw + x])
        return FALSE;
  return TRUE;
}

static void
cells_take (guint8 *grid, int gw, int gh, double x0, double y0, double x1, double y1)
{
  int a = MAX ((int) floor (x0 / CELL), 0), b = MIN ((int) floor (x1 / CELL), gw - 1);
  int c = MAX ((int) floor (y0 / CELL), 0), d = MIN ((int) floor (y1 / CELL), gh - 1);
  for (int y = c; y <= d; y++)
    for (int x = a; x <= b; x++)
      grid[y * gw + x] = 1;
}

/* Strokes the selected source's ring twice: a light halo under the line
 * keeps it visible on dark and light colour maps alike (as the others'). */
static void
stroke_selected (cairo_t *cr)
{
  cairo_set_line_width (cr, 4.5);
  cairo_set_source_rgba (cr, 1, 1, 1, 0.55);
  cairo_stroke_preserve (cr);
  cairo_set_line_width (cr, 2.5);
  cairo_set_source_rgb (cr, 1.0, 0.15, 0.1);
  cairo_stroke (cr);
}

/* Glyphs rather than text paths (a stroked path per number cost tens of
 * milliseconds a frame for a few hundred sources): the halo is the number
 * drawn in white one pixel off each way, then the number itself. */
static void
show_number (cairo_t *cr, double x, double y, const char *text, gboolean selected)
{
  static const double off[4][2] = { { -1, 0 }, { 1, 0 }, { 0, -1 }, { 0, 1 } };

  cairo_set_source_rgba (cr, 1, 1, 1, 0.9);
  for (int k = 0; k < 4; k++)
    {
      cairo_move_to (cr, x + off[k][0], y + off[k][1]);
      cairo_show_text (cr, text);
    }
  if (selected)
    cairo_set_source_rgb (cr, 1.0, 0.15, 0.1);
  else
    cairo_set_source_rgb (cr, 0.55, 0.0, 0.3);
  cairo_move_to (cr, x, y);
  cairo_show_text (cr, text);
}

/* A marker in view: its catalogue index and where it is, in widget pixels. */
typedef struct {
  gint64 index;
  double x, y, r;
} VisibleMarker;

/* Whether a marker of radius m->r at m reaches into the w x h view. */
static gboolean
marker_in_view (const VisibleMarker *m, int w, int h)
{
  return m->x >= -m->r && m->y >= -m->r && m->x <= w + m->r && m->y <= h + m->r;
}

/* The markers that reach into the w x h view, brightest first, culled by
 * their bounding box before anything is drawn: a crowded catalogue is
 * mostly outside the view once zoomed in. The selected source is left out;
 * it is drawn on its own. */
static GArray *
visible_markers (SkyImageView *self, int w, int h)
{
  const SkyCatalogue *cat = &self->run->catalogue;
  GArray *in_view = g_array_new (FALSE, FALSE, sizeof (VisibleMarker));

  for (gint64 k = 0; k < cat->n; k++)
    {
      gint64 i = self->draw_order[k];
      VisibleMarker m = { .index = i, .r = marker_radius (self, i) };
      sky_image_view_to_widget_in (self, w, h, cat->x[i] + 0.5, cat->y[i] + 0.5, &m.x, &m.y);
      if (i == self->selected || !marker_in_view (&m, w, h)
          || (self->marker_filter && !self->marker_filter (self->run, i, self->marker_filter_data)))
        continue;
      g_array_append_val (in_view, m);
    }
  return in_view;
}

/* Says, in the view's top left corner, that a crowded view shows points
 * for most of its sources: without it a user would take the missing rings
 * and numbers for missing sources. */
static void
show_crowd_note (cairo_t *cr, guint in_view, guint ringed)
{
  char text[160];
  cairo_text_extents_t ext;

  g_snprintf (text, sizeof text, "%u sources in view: rings and numbers on the %u brightest, "
              "points for the rest; zoom in to see them all", in_view, ringed);
  cairo_set_font_size (cr, 11);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_text_extents (cr, text, &ext);
  cairo_rectangle (cr, 4, 4, ext.x_advance + 12, ext.height + 10);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.6);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, 10, 9 - ext.y_bearing);
  cairo_show_text (cr, text);
}

/* The markers' colour, (0.85, 0.1, 0.45) as cairo gives it: opaque
 * ARGB32. */
#define POINT_ARGB 0xffd91a73u

/* The rings one path each, all the light halos first and the lines over
 * them: stroked as one path, cairo took 19-29 ms to rasterise 500 rings in
 * a 755 x 601 view, one by one 8 ms; and the node is drawn again at every
 * frame that draws the view (GTK's cairo renderer replays it), the first
 * after each run among them. */
static void
stroke_rings (cairo_t *cr, const VisibleMarker *marks, guint n)
{
  for (int pass = 0; pass < 2; pass++)
    {
      cairo_set_line_width (cr, pass == 0 ? 3.0 : 1.5);
      if (pass == 0)
        cairo_set_source_rgba (cr, 1, 1, 1, 0.55);
      else
        cairo_set_source_rgb (cr, 0.85, 0.1, 0.45);
      for (guint k = 0; k < n; k++)
        {
          cairo_new_path (cr);
          cairo_arc (cr, marks[k].x, marks[k].y, marks[k].r, 0, 2 * G_PI);
          cairo_stroke (cr);
        }
    }
}

/* Paints a point of one logical pixel per marker on cr (the w x h view):
 * set in an image surface of the view's device pixels and painted at
 * once. An image surface, not a texture: GTK 4.8's cairo renderer
 * converts a texture's every pixel through floats at every frame. */
static void
paint_points (SkyImageView *self, cairo_t *cr, const VisibleMarker *marks, guint n, int w, int h)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  cairo_surface_t *points = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w * scale,
                                                        h * scale);
  int stride = cairo_image_surface_get_stride (points) / 4;
  guint32 *argb;

  cairo_surface_flush (points);
  argb = (guint32 *) cairo_image_surface_get_data (points);
  for (guint k = 0; argb != NULL && k < n; k++)
    {
      double fx = floor (marks[k].x), fy = floor (marks[k].y);
      if (fx < 0 || fy < 0 || fx >= w || fy >= h)
        continue;
      for (int dy = 0; dy < scale; dy++)
        for (int dx = 0; dx < scale; dx++)
          argb[((gsize) fy * scale + dy) * stride + (gsize) fx * scale + dx] = POINT_ARGB;
    }
  cairo_surface_mark_dirty (points);
  cairo_surface_set_device_scale (points, scale, scale);
  cairo_set_source_surface (cr, points, 0, 0);
  cairo_paint (cr);
  cairo_surface_destroy (points);
}

gint64
sky_image_view_get_selected (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), -1);
  return self->selected;
}

GskRenderNode *
sky_image_view_overlay_node (SkyImageView *self)
{
  const SkyCatalogue *cat;
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  int gw = w / CELL + 1, gh = h / CELL + 1;
  g_autofree guint8 *grid = NULL;
  g_autoptr (GArray) in_view = NULL;
  const VisibleMarker *marks;
  VisibleMarker selected = { -1, 0, 0, 0 };
  gboolean selected_in_view = FALSE;
  guint ringed;
  GskRenderNode *node;
  cairo_t *cr;

  if (!self->show_markers || self->run == NULL || self->draw_order == NULL || w <= 0 || h <= 0)
    return NULL;
  cat = &self->run->catalogue;
  in_view = visible_markers (self, w, h);
  marks = (const VisibleMarker *) in_view->data;
  ringed = MIN (in_view->len, SKY_IMAGE_VIEW_MAX_RINGS);
  if (self->selected >= 0)
    {
      selected.index = self->selected;
      selected.r = marker_radius (self, self->selected);
      sky_image_view_to_widget_in (self, w, h, cat->x[self->selected] + 0.5,
                                   cat->y[self->selected] + 0.5, &selected.x, &selected.y);
      selected_in_view = marker_in_view (&selected, w, h);
    }
  grid = g_malloc0 ((gsize) gw * gh);
  node = gsk_cairo_node_new (&GRAPHENE_RECT_INIT (0, 0, w, h));
  cr = gsk_cairo_node_get_draw_context (node);

  /* Past the brightest SKY_IMAGE_VIEW_MAX_RINGS, a point of one pixel per
   * source under the rings, its pixels set: a path of 230,776 pixel
   * squares (a 16384^2 field at 3 sigma, fitted) was recorded and filled
   * by cairo at every frame. */
  if (in_view->len > ringed)
    paint_points (self, cr, marks + ringed, in_view->len - ringed, w, h);
  /* Markers, and the selected one on top. */
  stroke_rings (cr, marks, ringed);
  if (self->selected >= 0)
    {
      cairo_new_path (cr);
      cairo_arc (cr, selected.x, selected.y, selected.r, 0, 2 * G_PI);
      stroke_selected (cr);
    }

  /* Then the numbers, the selected source's first (it always shows), then
   * those of the ringed sources, brightest first, each where it overlaps
   * none placed before. */
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, 10.5);
  for (gint64 k = -1; k < (gint64) ringed; k++)
    {
      const VisibleMarker *m = k < 0 ? &selected : &marks[k];
      char text[32];
      cairo_text_extents_t ext;
      double tx, ty;

      if (k < 0 && !selected_in_view)
        continue;
      g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, m->index + 1);
      cairo_text_extents (cr, text, &ext);
      tx = m->x + m->r * 0.72 + 1;
      ty = m->y - m->r * 0.72 - 1;
      if (!cells_free (grid, gw, gh, tx, ty - ext.height, tx + ext.x_advance, ty) && k >= 0)
        continue;
      cells_take (grid, gw, gh, tx, ty - ext.height, tx + ext.x_advance, ty);
      show_number (cr, tx, ty, text, k < 0);
    }

  if (in_view->len > ringed)
    show_crowd_note (cr, in_view->len + selected_in_view, ringed + selected_in_view);
  cairo_destroy (cr);
  return node;
}

/* The background mesh's boxes: lines at every multiple of the box from
 * pixel (0, 0), where the boxes start (the last column and row of boxes
 * take what is left), and round the image. Only where a box spans 8
 * screen pixels or more: finer, the lines would hide the map. */
static GskRenderNode *
mesh_node (SkyImageView *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  const SkyImage *img;
  GskRenderNode *node;
  cairo_t *cr;

  if (self->mesh_box <= 0 || self->image == NULL || self->mesh_box * self->zoom < 8 || w <= 0
      || h <= 0)
    return NULL;
  img = &self->image->image;
  node = gsk_cairo_node_new (&GRAPHENE_RECT_INIT (0, 0, w, h));
  cr = gsk_cairo_node_get_draw_context (node);
  for (int pass = 0; pass < 2; pass++)
    {
      cairo_new_path (cr);
      for (gint64 x = 0; x <= img->nx; x += x == img->nx ? 1 : MIN (self->mesh_box, img->nx - x))
        {
          double x0, y0, x1, y1;
          sky_image_view_image_to_widget (self, (double) x, 0, &x0, &y0);
          sky_image_view_image_to_widget (self, (double) x, (double) img->ny, &x1, &y1);
          cairo_move_to (cr, floor (x0) + 0.5, y0);
          cairo_line_to (cr, floor (x1) + 0.5, y1);
        }
      for (gint64 y = 0; y <= img->ny; y += y == img->ny ? 1 : MIN (self->mesh_box, img->ny - y))
        {
          double x0, y0, x1, y1;
          sky_image_view_image_to_widget (self, 0, (double) y, &x0, &y0);
          sky_image_view_image_to_widget (self, (double) img->nx, (double) y, &x1, &y1);
          cairo_move_to (cr, x0, floor (y0) + 0.5);
          cairo_line_to (cr, x1, floor (y1) + 0.5);
        }
      /* A dark halo under a cyan line: visible on any colour map. */
      cairo_set_line_width (cr, pass == 0 ? 3.0 : 1.0);
      if (pass == 0)
        cairo_set_source_rgba (cr, 0, 0, 0, 0.45);
      else
        cairo_set_source_rgb (cr, 0.0, 0.85, 0.9);
      cairo_stroke (cr);
    }
  cairo_destroy (cr);
  return node;
}

void
sky_image_view_overlay_snapshot (SkyImageView *self, GtkSnapshot *snapshot)
{
  g_autoptr (GskRenderNode) mesh = mesh_node (self);
  g_autoptr (GskRenderNode) node = sky_image_view_overlay_node (self);

  if (mesh != NULL)
    gtk_snapshot_append_node (snapshot, mesh);
  if (node != NULL)
    gtk_snapshot_append_node (snapshot, node);
}

gint64
sky_image_view_overlay_pick (SkyImageView *self, double wx, double wy)
{
  const SkyCatalogue *cat;
  gint64 best = -1;
  double best_d = G_MAXDOUBLE;

  if (self->run == NULL || !sky_run_has (self->run, SKY_STEP_MEASURE))
    return -1;
  cat = &self->run->catalogue;
  for (gint64 i = 0; i < cat->n; i++)
    {
      double x, y, d, r = marker_radius (self, i);
      if (self->marker_filter && !self->marker_filter (self->run, i, self->marker_filter_data))
        continue;
      sky_image_view_image_to_widget (self, cat->x[i] + 0.5, cat->y[i] + 0.5, &x, &y);
      d = hypot (x - wx, y - wy);
      if (d <= r + 3 && d < best_d)
        {
          best = i;
          best_d = d;
        }
    }
  return best;
}
