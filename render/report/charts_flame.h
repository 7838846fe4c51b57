/*
 * charts_flame.h: the flame graph's SVG text layer (charts_flame.c), for svg.c; apart from
 * report_priv.h so that the charts' users need not see libxml2.
 */
#ifndef PO_CHARTS_FLAME_H
#define PO_CHARTS_FLAME_H

#include <libxml/tree.h>

#include "report_priv.h"

/*
 * The flame graph's names as SVG text over its drawn bars, and a tooltip for every bar (its
 * whole name, file and line, samples and time), appended to the chart's SVG root: the SVG
 * surface draws no names (charts_flame.c). Fails only on allocation failure.
 */
enum po_status po_chart_flame_svg_text(const struct po_chart *chart, xmlNodePtr root,
				       struct po_error *err) PO_NODISCARD;

#endif /* PO_CHARTS_FLAME_H */
