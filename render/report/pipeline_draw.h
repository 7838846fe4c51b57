/* pipeline_draw.h: draws a laid-out Graphviz graph with cairo, for the PDF report. */
#ifndef PO_PIPELINE_DRAW_H
#define PO_PIPELINE_DRAW_H

#include <cairo.h>
#include <graphviz/gvc.h>

/* The graph's size in points once laid out (gvLayout), including a small margin. */
void po_pipeline_size(Agraph_t *graph /* weak */, double *width, double *height);
/* Draws clusters, edges and nodes with their labels; (x, y) is the top-left corner. */
void po_pipeline_draw(cairo_t *cr, Agraph_t *graph /* weak */, double x, double y, double scale);

#endif /* PO_PIPELINE_DRAW_H */
