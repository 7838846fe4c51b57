/*
 * live_run.h: profopt-analyze --live. Reads a session from lttng-relayd while it records
 * (ingest.h, po_ingest_live_run()), feeds the model event by event, and every --every
 * seconds takes a snapshot of it (po_model_snapshot()), computes the window (live/window.h),
 * judges the alerts (live/alerts.h) and shows the window: the panel on a terminal, one
 * JSON line on stdout otherwise (docs/live.md). Each alert is appended to --alerts FILE
 * and handed to --on-alert CMD.
 */
#ifndef PO_LIVE_RUN_H
#define PO_LIVE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "cli/options.h"
#include "common/status.h"
#include "live/alerts.h"

/* Every raise and clear of a live run, in order, for the report that follows it. */
struct po_live_history {
	struct po_live_alert *alerts; /* owned */
	size_t count;
	size_t capacity;
	int64_t origin_ns; /* the first window's now_ns: alert times are shown from it */
	int64_t windows;   /* windows shown */
};

/*
 * Runs until the session ends (OK), the relay fails (PO_STATUS_DECODE), the session is not
 * found or ends before a profopt event (PO_STATUS_INPUT), or a terminating signal comes
 * (PO_STATUS_INTERRUPTED). history is filled either way; free it with
 * po_live_history_fini().
 */
enum po_status po_live_run(const struct po_cli_options *options, struct po_live_history *history,
			   struct po_error *err) PO_NODISCARD;
void po_live_history_fini(struct po_live_history *history);

#endif /* PO_LIVE_RUN_H */
