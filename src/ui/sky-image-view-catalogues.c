/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView: the loaded catalogues and region files drawn over the
 * image, each in its colour, the cross-match with the run's sources, and
 * a legend in the top right corner. Sizes follow the zoom; a catalogue's
 * rows are squares of a fixed size, as DS9 draws box points. */
#include "sky-image-view-private.h"

#include <math.h>

#define POINT_HALF 5.0       /* logical pixels */
#define LEGEND_PAD 6.0

void
sky_image_view_set_overlays (SkyImageView *self, SkyOverlaySet *overlays)
{
  self->overlays = overlays;
  sky_image_view_state_changed (self, FALSE);
}

/* Only what is drawn on top changed: no new picture of the image, but
 * the frame that shows it releases sky_image_view_when_drawn's waiters. */
void
sky_image_view_overlays_changed (SkyImageView *self)
{
  sky_image_view_state_changed (self, FALSE);
}

void
sky_image_view_set_marker_filter (SkyImageView *self, SkyMarkerFilter func, gpointer data)
{
  self->marker_filter = func;
  self->marker_filter_data = data;
  sky_image_view_state_changed (self, FALSE);
}

/* Cairo's user space as image pixels centred on (ix, iy), rows up the
 * screen and mirrored as the view is. */
static void
to_image_space (SkyImageView *self, cairo_t *cr, double w, double h, double ix, double iy)
{
  double wx, wy;
  cairo_matrix_t m;

  sky_image_view_to_widget_in (self, w, h, ix + 0.5, iy + 0.5, &wx, &wy);
  cairo_matrix_init (&m, self->flip_x ? -self->zoom : self->zoom, 0, 0, -self->zoom, wx, wy);
  cairo_transform (cr, &m);
}

static void
draw_shape (SkyImageView *self, cairo_t *cr, const SkyOverlayEntry *e, gint64 i, gint64 v0,
            double w, double h)
{
  const SkyShape *s = &e->overlay.shapes[i];
  double scale = s->frame == SKY_FRAME_PIXEL ? 1.0 : e->pixel_scale;
  double a = s->a * scale, b = s->b * scale, wx, wy;

  sky_image_view_to_widget_in (self, w, h, e->px[i] + 0.5, e->py[i] + 0.5, &wx, &wy);
  cairo_save (cr);
  cairo_new_path (cr);
  if (s->exclude)
    {
      static const double dash[] = { 4, 3 };
      cairo_set_dash (cr, dash, 2, 0);
    }
  switch (s->kind)
    {
    case SKY_SHAPE_CIRCLE:
    case SKY_SHAPE_ELLIPSE:
    case SKY_SHAPE_BOX:
      if (!isfinite (a) || !isfinite (b))
        break;
      to_image_space (self, cr, w, h, e->px[i], e->py[i]);
      cairo_rotate (cr, e->pangle[i] * G_PI / 180.0);
      if (s->kind == SKY_SHAPE_BOX)
        cairo_rectangle (cr, -a / 2, -b / 2, a, b);
      else
        {
          cairo_scale (cr, MAX (a, 1e-9), MAX (b, 1e-9));
          cairo_arc (cr, 0, 0, 1, 0, 2 * G_PI);
        }
      break;
    case SKY_SHAPE_POLYGON:
      for (int k = 0; k < s->nvertices; k++)
        {
          double vx, vy;
          sky_image_view_to_widget_in (self, w, h, e->vpx[v0 + k] + 0.5, e->vpy[v0 + k] + 0.5,
                                       &vx, &vy);
          if (isfinite (vx) && isfinite (vy))
            cairo_line_to (cr, vx, vy);
        }
      cairo_close_path (cr);
      break;
    case SKY_SHAPE_POINT:
      cairo_rectangle (cr, wx - POINT_HALF, wy - POINT_HALF, 2 * POINT_HALF, 2 * POINT_HALF);
      /* Only theirs: crossed, so that it reads without colour too. */
      if (e->match_theirs && e->match_theirs[i] < 0)
        {
          cairo_move_to (cr, wx - POINT_HALF, wy - POINT_HALF);
          cairo_line_to (cr, wx + POINT_HALF, wy + POINT_HALF);
          cairo_move_to (cr, wx - POINT_HALF, wy + POINT_HALF);
          cairo_line_to (cr, wx + POINT_HALF, wy - POINT_HALF);
        }
      break;
    case SKY_SHAPE_TEXT:
      break;
    }
  cairo_restore (cr);   /* the path stays, in widget space */
  cairo_set_line_width (cr, e->match_theirs && e->match_theirs[i] >= 0 ? 2.5 : 1.5);
  cairo_stroke (cr);
  if (s->text != NULL && *s->text)
    {
      cairo_move_to (cr, wx + POINT_HALF + 2, wy - POINT_HALF - 2);
      cairo_show_text (cr, s->text);
    }
}

/* Only ours: a diamond on each source the catalogue has no partner for. */
static void
draw_only_ours (SkyImageView *self, cairo_t *cr, const SkyOverlayEntry *e, double w, double h)
{
  const SkyCatalogue *cat;

  if (e->match_ours == NULL || self->run == NULL || self->run->catalogue.n != e->nours)
    return;
  cat = &self->run->catalogue;
  cairo_new_path (cr);
  for (gint64 i = 0; i < cat->n; i++)
    {
      double wx, wy;
      if (e->match_ours[i] >= 0)
        continue;
      sky_image_view_to_widget_in (self, w, h, cat->x[i] + 0.5, cat->y[i] + 0.5, &wx, &wy);
      if (wx < -10 || wy < -10 || wx > w + 10 || wy > h + 10)
        continue;
      cairo_move_to (cr, wx, wy - 7);
      cairo_line_to (cr, wx + 7, wy);
      cairo_line_to (cr, wx, wy + 7);
      cairo_line_to (cr, wx - 7, wy);
      cairo_close_path (cr);
    }
  cairo_set_line_width (cr, 1.5);
  cairo_stroke (cr);
}

static void
draw_legend (SkyImageView *self, cairo_t *cr, double w)
{
  const SkyOverlaySet *set = self->overlays;
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  double width = 0, line_h = 14, x, y;

  for (guint k = 0; k < set->entries->len; k++)
    {
      const SkyOverlayEntry *e = g_ptr_array_index (set->entries, k);
      g_autofree char *base = g_path_get_basename (e->overlay.path);
      char *text;
      if (e->matched_run && !e->overlay.is_regions)
        text = g_strdup_printf ("%s: %" G_GINT64_FORMAT " rows; matched %" G_GINT64_FORMAT
                                ", only ours %" G_GINT64_FORMAT " \u25c7, only theirs %"
                                G_GINT64_FORMAT " \u22a0 (%g%s)", base, e->overlay.n,
                                e->matched, e->only_ours, e->only_theirs, set->radius_arcsec,
                                set->radius_in_pixels ? " px" : "\u2033");
      else
        text = g_strdup_printf ("%s: %" G_GINT64_FORMAT " %s", base, e->overlay.n,
                                e->overlay.is_regions ? "regions" : "rows");
      g_ptr_array_add (lines, text);
    }
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 11);
  for (guint k = 0; k < lines->len; k++)
    {
      cairo_text_extents_t ext;
      cairo_text_extents (cr, g_ptr_array_index (lines, k), &ext);
      width = MAX (width, ext.x_advance);
    }
  width += 20 + 2 * LEGEND_PAD;
  x = MAX (0, w - width - 8);
  y = 8;
  cairo_rectangle (cr, x, y, width, lines->len * line_h + 2 * LEGEND_PAD);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.65);
  cairo_fill (cr);
  for (guint k = 0; k < lines->len; k++)
    {
      const SkyOverlayEntry *e = g_ptr_array_index (set->entries, k);
      double ly = y + LEGEND_PAD + k * line_h;
      cairo_set_source_rgb (cr, e->rgb[0], e->rgb[1], e->rgb[2]);
      cairo_rectangle (cr, x + LEGEND_PAD, ly + 2, 12, 10);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_move_to (cr, x + LEGEND_PAD + 18, ly + 11);
      cairo_show_text (cr, g_ptr_array_index (lines, k));
    }
}

void
sky_image_view_catalogues_snapshot (SkyImageView *self, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));
  cairo_t *cr;

  if (self->overlays == NULL || self->overlays->entries->len == 0 || self->image == NULL
      || w <= 0 || h <= 0)
    return;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, 10.5);
  for (guint k = 0; k < self->overlays->entries->len; k++)
    {
      const SkyOverlayEntry *e = g_ptr_array_index (self->overlays->entries, k);
      gint64 v0 = 0;

      cairo_set_source_rgb (cr, e->rgb[0], e->rgb[1], e->rgb[2]);
      for (gint64 i = 0; i < e->overlay.n; i++)
        {
          double wx, wy;
          v0 += i > 0 ? e->overlay.shapes[i - 1].nvertices : 0;
          if (!isfinite (e->px[i]) || !isfinite (e->py[i]))
            continue;
          sky_image_view_to_widget_in (self, w, h, e->px[i] + 0.5, e->py[i] + 0.5, &wx, &wy);
          /* Shapes far outside the view are skipped; big ones may reach in. */
          if (e->overlay.shapes[i].kind == SKY_SHAPE_POINT
              && (wx < -20 || wy < -20 || wx > w + 20 || wy > h + 20))
            continue;
          draw_shape (self, cr, e, i, v0, w, h);
        }
      draw_only_ours (self, cr, e, w, h);
    }
  draw_legend (self, cr, w);
  cairo_destroy (cr);
}
