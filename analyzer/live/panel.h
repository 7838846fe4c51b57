/*
 * panel.h: what profopt-analyze --live writes for people and programs: the terminal panel
 * redrawn every window, one JSON line per window, and the end-of-run "Alerts" section
 * (docs/live.md). They format a window (window.h) and the alerts (alerts.h) and compute
 * nothing of their own beyond unit conversions.
 */
#ifndef PO_LIVE_PANEL_H
#define PO_LIVE_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "alerts.h"
#include "window.h"

/* The panel never has more lines than this, however many alerts are open. */
#define PO_LIVE_PANEL_MAX_LINES 12

/*
 * The state of a panel between redraws: how many lines the last draw left on the
 * terminal, so that the next one moves the cursor back up over them and overwrites them
 * instead of scrolling. Zero-initialize it: {0} draws the first panel where the cursor is.
 */
struct po_live_panel {
	int drawn_lines; /* lines of the panel on screen above the cursor; 0: none */
};

/*
 * Draws the panel for window on tty, a terminal, over the previous one. columns is the
 * terminal's width (0 or less: 80); every line is cut to columns - 1 characters, so that
 * no line wraps and the cursor-up count stays exact. Text from the program (the verdict's
 * reason, the alerts' evidence) has its control characters shown as '?'. open: the alerts
 * open now (po_live_alerts_open()), weak, open_count of them. Flushes tty.
 */
void po_live_panel_draw(struct po_live_panel *panel, FILE *tty, const struct po_live_window *window,
			const struct po_live_alert *open, size_t open_count, int columns);

/*
 * Leaves the panel on screen: the next draw starts below it. Call it after writing
 * anything else to the same terminal (which the next draw would otherwise overwrite), and
 * at the end of the run before printing the summary.
 */
void po_live_panel_keep(struct po_live_panel *panel);

/*
 * Writes window as one JSON object on one newline-terminated line and flushes out
 * (docs/live.md, "JSON lines", schema "profopt-live/1"): every field of the window, NaN,
 * infinities and the -1 "unknown" of counts as null, and "alerts", the kind names of the
 * open alerts. Returns false when the line could not be written.
 */
bool po_live_window_write_json(FILE *out, const struct po_live_window *window,
			       const struct po_live_alert *open, size_t open_count);

/*
 * The end-of-run text section: "Alerts: none", or "Alerts (N):" and one line per raise
 * and clear of history (in order), with its time since start_ns (the run's first window;
 * an alert raised then shows +0.0 s), its kind and its evidence.
 */
void po_live_alerts_section(FILE *out, const struct po_live_alert *history, size_t count,
			    int64_t start_ns);

#endif /* PO_LIVE_PANEL_H */
