/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyTableCell (sky-table-cell.h). */
#include "sky-table-cell.h"

#include <string.h>

#define TEXT_SIZE 48

struct _SkyTableCell {
  GtkWidget parent_instance;
  char text[TEXT_SIZE];
  int n_chars;
  PangoLayout *layout;       /* made when first drawn */
  gboolean layout_stale;
};

G_DEFINE_FINAL_TYPE (SkyTableCell, sky_table_cell, GTK_TYPE_WIDGET)

/* A font's digit width and line height, in pixels: pango_context_get_metrics
 * shapes a sample text, too slow to ask for each of thousands of cells,
 * which share a handful of fonts. Main thread only. */
typedef struct {
  int digit_width, line_height;
} FontSize;

static GHashTable *font_sizes;   /* PangoFontDescription -> FontSize */

static const FontSize *
font_size (SkyTableCell *self)
{
  PangoContext *context = gtk_widget_get_pango_context (GTK_WIDGET (self));
  const PangoFontDescription *desc = pango_context_get_font_description (context);
  FontSize *size;

  if (font_sizes == NULL)
    font_sizes = g_hash_table_new_full ((GHashFunc) pango_font_description_hash,
                                        (GEqualFunc) pango_font_description_equal,
                                        (GDestroyNotify) pango_font_description_free, g_free);
  size = g_hash_table_lookup (font_sizes, desc);
  if (size == NULL)
    {
      PangoFontMetrics *metrics = pango_context_get_metrics (context, desc, NULL);
      size = g_new (FontSize, 1);
      size->digit_width = PANGO_PIXELS_CEIL (pango_font_metrics_get_approximate_digit_width (metrics));
      size->line_height = PANGO_PIXELS_CEIL (pango_font_metrics_get_height (metrics));
      if (size->line_height <= 0)
        size->line_height = PANGO_PIXELS_CEIL (pango_font_metrics_get_ascent (metrics)
                                               + pango_font_metrics_get_descent (metrics));
      pango_font_metrics_unref (metrics);
      g_hash_table_insert (font_sizes, pango_font_description_copy (desc), size);
    }
  return size;
}

/* Wide enough for the text in the column's tabular digits, with a
 * digit's room for signs and points that are wider than a digit. */
static void
sky_table_cell_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                        int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  SkyTableCell *self = SKY_TABLE_CELL (widget);
  const FontSize *size = font_size (self);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = (self->n_chars + 1) * size->digit_width;
  else
    *minimum = *natural = size->line_height;
}

static void
sky_table_cell_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SkyTableCell *self = SKY_TABLE_CELL (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  int text_w, text_h;
  GdkRGBA color;

  if (self->n_chars == 0)
    return;
  if (self->layout == NULL)
    self->layout = gtk_widget_create_pango_layout (widget, NULL);
  if (self->layout_stale)
    {
      pango_layout_set_text (self->layout, self->text, -1);
      self->layout_stale = FALSE;
    }
  pango_layout_get_pixel_size (self->layout, &text_w, &text_h);
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &color);
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (width - text_w, (height - text_h) / 2));
  gtk_snapshot_append_layout (snapshot, self->layout, &color);
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
}

/* A new font or direction: the layout is made again when next drawn. */
static void
sky_table_cell_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  SkyTableCell *self = SKY_TABLE_CELL (widget);

  GTK_WIDGET_CLASS (sky_table_cell_parent_class)->css_changed (widget, change);
  g_clear_object (&self->layout);
  self->layout_stale = TRUE;
}

static void
sky_table_cell_direction_changed (GtkWidget *widget, GtkTextDirection previous)
{
  SkyTableCell *self = SKY_TABLE_CELL (widget);
  g_clear_object (&self->layout);
  self->layout_stale = TRUE;
}

static void
sky_table_cell_finalize (GObject *object)
{
  g_clear_object (&SKY_TABLE_CELL (object)->layout);
  G_OBJECT_CLASS (sky_table_cell_parent_class)->finalize (object);
}

static void
sky_table_cell_class_init (SkyTableCellClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = sky_table_cell_finalize;
  widget_class->measure = sky_table_cell_measure;
  widget_class->snapshot = sky_table_cell_snapshot;
  widget_class->css_changed = sky_table_cell_css_changed;
  widget_class->direction_changed = sky_table_cell_direction_changed;
  gtk_widget_class_set_css_name (widget_class, "label");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_LABEL);
}

static void
sky_table_cell_init (SkyTableCell *self)
{
}

GtkWidget *
sky_table_cell_new (void)
{
  return g_object_new (SKY_TYPE_TABLE_CELL, NULL);
}

void
sky_table_cell_set_text (SkyTableCell *self, const char *text)
{
  int n_chars;

  if (strcmp (self->text, text) == 0)
    return;
  g_strlcpy (self->text, text, sizeof self->text);
  n_chars = (int) g_utf8_strlen (self->text, -1);
  self->layout_stale = TRUE;
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  self->text, -1);
  if (n_chars != self->n_chars)
    {
      self->n_chars = n_chars;
      gtk_widget_queue_resize (GTK_WIDGET (self));
    }
  else
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

const char *
sky_table_cell_get_text (SkyTableCell *self)
{
  return self->text;
}
