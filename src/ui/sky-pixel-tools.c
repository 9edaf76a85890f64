/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyPixelTools: the pixel table and the magnifier. Both read the view's
 * image and its display settings (limits, stretch, colour map, mirroring)
 * so that they show what the view shows, laid out as the view lays it out:
 * rows go up the screen, columns run the way the view runs x. */
#include "sky-pixel-tools.h"

#include <math.h>

#include "sky-colormap.h"

#define MAX_SIZE 9

struct _SkyPixelTools {
  GtkWindow parent_instance;

  GtkLabel *caption;
  GtkGrid *table;
  GtkDrawingArea *magnifier;

  SkyImageView *view;           /* not owned: the window dies with its parent */
  GtkLabel *cell[MAX_SIZE][MAX_SIZE];
  GtkLabel *col_head[MAX_SIZE], *row_head[MAX_SIZE];
  int size;
  gboolean show_magnifier;
  gboolean inside;
  gint64 cx, cy;                /* the pixel under the pointer, 0-based */
};

G_DEFINE_FINAL_TYPE (SkyPixelTools, sky_pixel_tools, GTK_TYPE_WINDOW)

static gboolean
view_flipped (SkyPixelTools *self)
{
  gboolean flip = FALSE;
  g_object_get (self->view, "flip-x", &flip, NULL);
  return flip;
}

/* The image pixel at the table's column col and row row. */
static void
cell_pixel (SkyPixelTools *self, int col, int row, gint64 *x, gint64 *y)
{
  int half = self->size / 2;
  *x = self->cx + (col - half) * (view_flipped (self) ? -1 : 1);
  *y = self->cy + (half - row);
}

static void
refresh_table (SkyPixelTools *self)
{
  SkyImageData *data = sky_image_view_get_image (self->view);
  const SkyImage *img = data ? &data->image : NULL;

  for (int r = 0; r < MAX_SIZE; r++)
    {
      gboolean row_on = r < self->size;
      gtk_widget_set_visible (GTK_WIDGET (self->row_head[r]), row_on);
      gtk_widget_set_visible (GTK_WIDGET (self->col_head[r]), row_on);
      for (int c = 0; c < MAX_SIZE; c++)
        gtk_widget_set_visible (GTK_WIDGET (self->cell[r][c]), row_on && c < self->size);
    }
  for (int k = 0; k < self->size; k++)
    {
      gint64 x, y;
      char text[32] = "";
      cell_pixel (self, k, k, &x, &y);
      /* Headers count from 1, as FITS and the readout do. */
      if (self->inside)
        g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, x + 1);
      gtk_label_set_text (self->col_head[k], text);
      if (self->inside)
        g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, y + 1);
      gtk_label_set_text (self->row_head[k], text);
    }
  for (int r = 0; r < self->size; r++)
    for (int c = 0; c < self->size; c++)
      {
        gint64 x, y;
        char text[32] = "";
        /* The centre cell stands out, as the magnifier's outlined pixel. */
        if (r == self->size / 2 && c == self->size / 2)
          gtk_widget_add_css_class (GTK_WIDGET (self->cell[r][c]), "heading");
        else
          gtk_widget_remove_css_class (GTK_WIDGET (self->cell[r][c]), "heading");
        cell_pixel (self, c, r, &x, &y);
        if (self->inside && img != NULL && x >= 0 && y >= 0 && x < img->nx && y < img->ny)
          {
            float v = img->pixels[y * img->nx + x];
            if (isnan (v))
              g_snprintf (text, sizeof text, "blank");
            else
              g_snprintf (text, sizeof text, "%.5g", v);
          }
        gtk_label_set_text (self->cell[r][c], text);
      }
}

static void
draw_magnifier (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SkyPixelTools *self = data;
  SkyImageData *image = sky_image_view_get_image (self->view);
  const int n = SKY_PIXEL_TOOLS_MAGNIFIED, half = n / 2, cell = SKY_PIXEL_TOOLS_CELL;
  guint8 cmap[SKY_CMAP_SIZE * 4];
  guint stretch = 0, colormap = 0;
  gboolean flip = view_flipped (self);
  const float *eq = NULL;
  double lo, hi;

  cairo_set_source_rgb (cr, 0.23, 0.23, 0.24);
  cairo_paint (cr);
  if (image == NULL || !self->inside)
    return;
  g_object_get (self->view, "stretch", &stretch, "colormap", &colormap, NULL);
  sky_image_view_get_scale (self->view, &lo, &hi, &eq);
  sky_colormap_fill (colormap, cmap);
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++)
      {
        gint64 x = self->cx + (c - half) * (flip ? -1 : 1), y = self->cy + (half - r);
        const SkyImage *img = &image->image;
        float v;
        double t;
        int k;

        if (x < 0 || y < 0 || x >= img->nx || y >= img->ny || isnan (v = img->pixels[y * img->nx + x]))
          continue;
        t = hi > lo ? CLAMP ((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
        k = (int) lround (sky_stretch_apply (stretch, t, eq) * (SKY_CMAP_SIZE - 1));
        cairo_set_source_rgb (cr, cmap[4 * k] / 255.0, cmap[4 * k + 1] / 255.0,
                              cmap[4 * k + 2] / 255.0);
        cairo_rectangle (cr, c * cell, r * cell, cell, cell);
        cairo_fill (cr);
      }
  /* The pixel under the pointer, outlined in both black and white. */
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgb (cr, 1, 0.15, 0.1);
  cairo_rectangle (cr, half * cell + 0.5, half * cell + 0.5, cell - 1, cell - 1);
  cairo_stroke (cr);
}

void
sky_pixel_tools_follow (SkyPixelTools *self, gboolean inside, double x, double y)
{
  SkyImageData *image = sky_image_view_get_image (self->view);

  self->inside = inside && image != NULL && x >= 0 && y >= 0 && x < image->image.nx
    && y < image->image.ny;
  if (self->inside)
    {
      g_autofree char *text = NULL;
      self->cx = (gint64) floor (x);
      self->cy = (gint64) floor (y);
      text = g_strdup_printf ("Around x %" G_GINT64_FORMAT ", y %" G_GINT64_FORMAT
                              " (FITS, from 1)%s%s", self->cx + 1, self->cy + 1,
                              image->image.bunit[0] ? "; values in " : "", image->image.bunit);
      gtk_label_set_text (self->caption, text);
    }
  else
    {
      self->cx = self->cy = -1;
      gtk_label_set_text (self->caption, "Move the pointer over the image");
    }
  refresh_table (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->magnifier));
}

static void
on_pointer_moved (SkyImageView *view, gboolean inside, double x, double y, SkyPixelTools *self)
{
  sky_pixel_tools_follow (self, inside, x, y);
}

static void
on_display_changed (SkyImageView *view, SkyPixelTools *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self->magnifier));
}

void
sky_pixel_tools_set_size (SkyPixelTools *self, int size)
{
  g_return_if_fail (size == 0 || size == 5 || size == 7 || size == 9);
  self->size = size;
  gtk_widget_set_visible (GTK_WIDGET (self->table), size > 0);
  refresh_table (self);
}

int
sky_pixel_tools_get_size (SkyPixelTools *self)
{
  return self->size;
}

void
sky_pixel_tools_set_magnifier (SkyPixelTools *self, gboolean show)
{
  self->show_magnifier = show;
  gtk_widget_set_visible (GTK_WIDGET (self->magnifier), show);
}

gboolean
sky_pixel_tools_get_magnifier (SkyPixelTools *self)
{
  return self->show_magnifier;
}

const char *
sky_pixel_tools_get_text (SkyPixelTools *self, int col, int row)
{
  g_return_val_if_fail (col >= 0 && row >= 0 && col < self->size && row < self->size, NULL);
  return gtk_label_get_text (self->cell[row][col]);
}

void
sky_pixel_tools_get_centre (SkyPixelTools *self, gint64 *x, gint64 *y)
{
  *x = self->inside ? self->cx : -1;
  *y = self->inside ? self->cy : -1;
}

GtkWidget *
sky_pixel_tools_get_magnifier_widget (SkyPixelTools *self)
{
  return GTK_WIDGET (self->magnifier);
}

static void
sky_pixel_tools_class_init (SkyPixelToolsClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-pixel-tools.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyPixelTools, caption);
  gtk_widget_class_bind_template_child (widget_class, SkyPixelTools, table);
  gtk_widget_class_bind_template_child (widget_class, SkyPixelTools, magnifier);
}

static GtkLabel *
new_cell (gboolean heading)
{
  GtkWidget *label = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (label), 1);
  gtk_label_set_width_chars (GTK_LABEL (label), heading ? 5 : 10);
  if (heading)
    gtk_widget_add_css_class (label, "dim-label");
  else
    gtk_widget_add_css_class (label, "monospace");
  return GTK_LABEL (label);
}

static void
sky_pixel_tools_init (SkyPixelTools *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  for (int k = 0; k < MAX_SIZE; k++)
    {
      self->col_head[k] = new_cell (TRUE);
      self->row_head[k] = new_cell (TRUE);
      gtk_grid_attach (self->table, GTK_WIDGET (self->col_head[k]), k + 1, 0, 1, 1);
      gtk_grid_attach (self->table, GTK_WIDGET (self->row_head[k]), 0, k + 1, 1, 1);
      for (int c = 0; c < MAX_SIZE; c++)
        {
          self->cell[k][c] = new_cell (FALSE);
          gtk_grid_attach (self->table, GTK_WIDGET (self->cell[k][c]), c + 1, k + 1, 1, 1);
        }
    }
  self->size = 5;
  self->show_magnifier = TRUE;
  self->cx = self->cy = -1;
  gtk_drawing_area_set_draw_func (self->magnifier, draw_magnifier, self, NULL);
}

SkyPixelTools *
sky_pixel_tools_new (GtkWindow *parent, SkyImageView *view)
{
  SkyPixelTools *self = g_object_new (SKY_TYPE_PIXEL_TOOLS, "transient-for", parent,
                                      "destroy-with-parent", TRUE, NULL);
  self->view = view;
  g_signal_connect_object (view, "pointer-moved", G_CALLBACK (on_pointer_moved), self, 0);
  g_signal_connect_object (view, "display-changed", G_CALLBACK (on_display_changed), self, 0);
  refresh_table (self);
  return self;
}
