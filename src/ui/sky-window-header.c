/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's header window: every card of the HDU shown, the cards that
 * hold the searched text (any case) with the matches highlighted, and
 * Copy for the cards shown. */
#include "sky-window-private.h"

#include <string.h>

char *
sky_window_get_header_text (SkyWindow *self)
{
  GString *out = g_string_new (NULL);
  const SkyImage *img = self->image ? &self->image->image : NULL;

  if (img == NULL || img->header == NULL)
    return g_string_free (out, FALSE);
  for (int i = 0; i < img->nheader_cards; i++)
    {
      const char *card = img->header + 80 * (gsize) i;
      int len = 80;
      while (len > 0 && card[len - 1] == ' ')
        len--;
      g_string_append_len (out, card, len);
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/* The header's cards whose text holds the search (any case), each match
 * highlighted; the count of cards shown beside the entry. */
void
sky_window_header_refresh (SkyWindow *self)
{
  g_autofree char *text = NULL;
  g_autofree char *needle = NULL;
  g_auto (GStrv) lines = NULL;
  GtkTextBuffer *buffer;
  GtkTextIter end;
  int shown = 0, total = 0;

  if (self->header_window == NULL)
    return;
  text = sky_window_get_header_text (self);
  needle = g_utf8_casefold (gtk_editable_get_text (GTK_EDITABLE (self->header_search)), -1);
  lines = g_strsplit (text, "\n", -1);
  buffer = gtk_text_view_get_buffer (self->header_view);
  gtk_text_buffer_set_text (buffer, "", 0);
  for (int i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *folded = NULL;
      const char *at;
      if (lines[i][0] == '\0' && lines[i + 1] == NULL)
        break;
      total++;
      folded = g_utf8_casefold (lines[i], -1);
      if (*needle && strstr (folded, needle) == NULL)
        continue;
      shown++;
      gtk_text_buffer_get_end_iter (buffer, &end);
      gtk_text_buffer_insert (buffer, &end, lines[i], -1);
      /* Cards are ASCII: casefolding keeps byte offsets. */
      for (at = *needle ? strstr (folded, needle) : NULL; at; at = strstr (at + 1, needle))
        {
          GtkTextIter a, b;
          int line = gtk_text_buffer_get_line_count (buffer) - 1;
          gtk_text_buffer_get_iter_at_line_index (buffer, &a, line, (int) (at - folded));
          gtk_text_buffer_get_iter_at_line_index (buffer, &b, line,
                                                  (int) (at - folded + strlen (needle)));
          gtk_text_buffer_apply_tag_by_name (buffer, "match", &a, &b);
        }
      gtk_text_buffer_get_end_iter (buffer, &end);
      gtk_text_buffer_insert (buffer, &end, "\n", 1);
    }
  self->header_shown = shown;
  self->header_total = total;
  {
    g_autofree char *count = g_strdup_printf ("%d of %d cards", shown, total);
    gtk_label_set_text (self->header_count, count);
  }
  if (self->image)
    {
      g_autofree char *title = g_strdup_printf ("Header — %s (HDU %d)", self->image->display_name,
                                                self->image->image.hdu);
      gtk_window_set_title (GTK_WINDOW (self->header_window), title);
    }
  sky_window_changed (self);
}

static void
on_header_search (GtkSearchEntry *entry, SkyWindow *self)
{
  sky_window_header_refresh (self);
}

/* Copies the cards shown, as they are shown. */
static void
on_header_copy (GtkButton *button, SkyWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->header_view);
  GtkTextIter a, b;
  g_autofree char *text = NULL;

  gtk_text_buffer_get_bounds (buffer, &a, &b);
  text = gtk_text_buffer_get_text (buffer, &a, &b, FALSE);
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (button)), text);
}

static void
on_header_destroy (GtkWidget *window, SkyWindow *self)
{
  self->header_window = NULL;
}

void
sky_window_show_header (SkyWindow *self, const char *search)
{
  if (self->header_window == NULL)
    {
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
      GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *scroll = gtk_scrolled_window_new ();
      GtkWidget *copy = gtk_button_new_with_mnemonic ("_Copy");
      GtkWidget *window = gtk_window_new ();

      gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (self));
      gtk_window_set_default_size (GTK_WINDOW (window), 720, 560);
      self->header_search = GTK_SEARCH_ENTRY (gtk_search_entry_new ());
      gtk_widget_set_hexpand (GTK_WIDGET (self->header_search), TRUE);
      gtk_search_entry_set_key_capture_widget (self->header_search, window);
      self->header_count = GTK_LABEL (gtk_label_new (""));
      gtk_widget_set_tooltip_text (copy, "Copy the cards shown");
      self->header_view = GTK_TEXT_VIEW (gtk_text_view_new ());
      gtk_text_view_set_editable (self->header_view, FALSE);
      gtk_text_view_set_monospace (self->header_view, TRUE);
      gtk_text_view_set_left_margin (self->header_view, 6);
      gtk_text_buffer_create_tag (gtk_text_view_get_buffer (self->header_view), "match",
                                  "background", "#ffe066", "foreground", "#000000", NULL);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll),
                                     GTK_WIDGET (self->header_view));
      gtk_widget_set_vexpand (scroll, TRUE);
      gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->header_search));
      gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->header_count));
      gtk_box_append (GTK_BOX (bar), copy);
      gtk_box_append (GTK_BOX (box), bar);
      gtk_box_append (GTK_BOX (box), scroll);
      gtk_widget_set_margin_start (box, 6);
      gtk_widget_set_margin_end (box, 6);
      gtk_widget_set_margin_top (box, 6);
      gtk_widget_set_margin_bottom (box, 6);
      gtk_window_set_child (GTK_WINDOW (window), box);
      g_signal_connect (self->header_search, "search-changed", G_CALLBACK (on_header_search),
                        self);
      g_signal_connect (copy, "clicked", G_CALLBACK (on_header_copy), self);
      g_signal_connect (window, "destroy", G_CALLBACK (on_header_destroy), self);
      self->header_window = window;
    }
  if (search != NULL)
    gtk_editable_set_text (GTK_EDITABLE (self->header_search), search);
  sky_window_header_refresh (self);
  gtk_window_present (GTK_WINDOW (self->header_window));
}
