/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView as a figure for a publication: the image in view in a
 * frame on a white margin, with ticks, the grid's labels outside the frame
 * and the axes named. */
#include "sky-image-view-private.h"

#include <math.h>

#define FIGURE_LEFT 78.0
#define FIGURE_RIGHT 24.0
#define FIGURE_TOP 20.0
#define FIGURE_BOTTOM 52.0

/* The axis titles: the system's names and the frame. */
static void
axis_titles (SkyWcs *wcs, char *lng, char *lat, size_t size)
{
  const char *frame = sky_wcs_frame (wcs);
  switch (sky_wcs_system (wcs))
    {
    case SKY_COORD_EQUATORIAL:
      g_snprintf (lng, size, "Right ascension (%s)", frame);
      g_snprintf (lat, size, "Declination (%s)", frame);
      break;
    case SKY_COORD_GALACTIC:
      g_snprintf (lng, size, "Galactic longitude");
      g_snprintf (lat, size, "Galactic latitude");
      break;
    default:
      g_snprintf (lng, size, "%s", sky_wcs_lng_name (wcs));
      g_snprintf (lat, size, "%s", sky_wcs_lat_name (wcs));
      break;
    }
}

GdkTexture *
sky_image_view_render_figure (SkyImageView *self, GError **error)
{
  GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  double r[4], ax, ay, bx, by, left, right, top, bottom, cw, ch;
  g_autoptr (GskRenderNode) node = NULL;
  GtkSnapshot *snapshot;
  cairo_t *cr;

  if (native == NULL || !gtk_widget_get_mapped (GTK_WIDGET (self)) || self->image == NULL
      || !sky_image_view_visible_rect (self, w, h, r))
    {
      g_set_error_literal (error, SKY_UI_ERROR, SKY_UI_ERROR_NOT_SHOWN,
                           "nothing to render: no image on screen");
      return NULL;
    }
  /* The part of the widget the image covers, then the figure around it. */
  sky_image_view_pix_to_widget (self, w, h, r[0], r[1], &ax, &ay);
  sky_image_view_pix_to_widget (self, w, h, r[2], r[3], &bx, &by);
  left = floor (MAX (MIN (ax, bx), 0));
  right = ceil (MIN (MAX (ax, bx), w));
  top = floor (MAX (MIN (ay, by), 0));
  bottom = ceil (MIN (MAX (ay, by), h));
  cw = right - left + FIGURE_LEFT + FIGURE_RIGHT;
  ch = bottom - top + FIGURE_TOP + FIGURE_BOTTOM;

  snapshot = gtk_snapshot_new ();
  gtk_snapshot_append_color (snapshot, &(GdkRGBA) { 1, 1, 1, 1 },
                             &GRAPHENE_RECT_INIT (0, 0, cw, ch));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (FIGURE_LEFT - left, FIGURE_TOP - top));
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (left, top, right - left, bottom - top));
  /* The view drawn afresh, its own labels left out: they go outside. */
  self->figure_pass = TRUE;
  GTK_WIDGET_GET_CLASS (self)->snapshot (GTK_WIDGET (self), snapshot);
  self->figure_pass = FALSE;
  gtk_snapshot_pop (snapshot);

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (left - FIGURE_LEFT, top - FIGURE_TOP,
                                                                 cw, ch));
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, left - 0.5, top - 0.5, right - left + 1, bottom - top + 1);
  cairo_stroke (cr);
  if (self->image->wcs != NULL)
    {
      char lng[64], lat[64];
      cairo_text_extents_t ext;

      sky_image_view_ensure_grid (self, r);
      if (self->grid_valid)
        sky_image_view_draw_labels (self, cr, w, h, (const double[4]) { left - FIGURE_LEFT, top - FIGURE_TOP,
                                                         right + FIGURE_RIGHT, bottom + FIGURE_BOTTOM },
                     TRUE);
      axis_titles (self->image->wcs, lng, lat, sizeof lng);
      cairo_set_source_rgb (cr, 0, 0, 0);
      cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
      cairo_set_font_size (cr, 12);
      cairo_text_extents (cr, lng, &ext);
      cairo_move_to (cr, (left + right - ext.x_advance) / 2, bottom + FIGURE_BOTTOM - 10);
      cairo_show_text (cr, lng);
      cairo_text_extents (cr, lat, &ext);
      cairo_save (cr);
      cairo_move_to (cr, left - FIGURE_LEFT + 16, (top + bottom + ext.x_advance) / 2);
      cairo_rotate (cr, -G_PI / 2);
      cairo_show_text (cr, lat);
      cairo_restore (cr);
    }
  cairo_destroy (cr);
  gtk_snapshot_restore (snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  return gsk_renderer_render_texture (gtk_native_get_renderer (native), node,
                                      &GRAPHENE_RECT_INIT (0, 0, cw, ch));
}
