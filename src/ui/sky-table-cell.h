/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-table-cell.h: a number in the source table, right-aligned on one
 * line. Unlike a GtkLabel it measures without laying its text out: its
 * size comes from the font's digit width and line height, so binding and
 * measuring the few hundred rows a GTK 4.8 column view keeps costs no
 * text shaping; only the rows drawn lay theirs out. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SKY_TYPE_TABLE_CELL (sky_table_cell_get_type ())
G_DECLARE_FINAL_TYPE (SkyTableCell, sky_table_cell, SKY, TABLE_CELL, GtkWidget)

GtkWidget *sky_table_cell_new (void);

/* The text shown (digits, signs, '.', ':', 'e'; at most 47 bytes). */
void sky_table_cell_set_text (SkyTableCell *self, const char *text);
const char *sky_table_cell_get_text (SkyTableCell *self);

G_END_DECLS
