/*
 * alerts.h: the live alerts. Each kind is a condition on one window (window.h) with a
 * threshold from the rules (docs/rules.md, "live"). An alert is raised once when its
 * condition has held for live.raise_windows windows in a row, and cleared once it has
 * not held for live.clear_windows windows in a row, where "not held" for a raised alert
 * means below its threshold by live.clear_margin_pct (hysteresis: a value that hovers
 * at the threshold does not flap). Plain C over windows, unit-tested without a trace.
 */
#ifndef PO_LIVE_ALERTS_H
#define PO_LIVE_ALERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "detect/rules.h"
#include "window.h"

/* X(NAME, "json name", "what it means") */
#define PO_LIVE_ALERT_KINDS(X)                                                                     \
	X(INPUT_BOUND, "input-bound", "the training loop waits for data")                          \
	X(GPU_IDLE, "gpu-idle", "the GPU idles during steps")                                      \
	X(HOST_MEMORY_GROWTH, "host-memory-growth", "host memory keeps growing")                   \
	X(GPU_MEMORY_GROWTH, "gpu-memory-growth", "GPU memory keeps growing")                      \
	X(STEP_REGRESSION, "step-regression",                                                      \
	  "steps are slower than in the run's first steady window")                                \
	X(WORKER_STOPPED, "worker-stopped", "a loader worker died or stopped producing")           \
	X(EVENTS_DISCARDED, "events-discarded", "the tracer discarded events")                     \
	X(PROGRAM_ENDED, "program-ended", "the program ended")

enum po_live_alert_kind {
#define PO_X(name, json, doc) PO_LIVE_ALERT_##name,
	PO_LIVE_ALERT_KINDS(PO_X)
#undef PO_X
	    PO_LIVE_ALERT_KIND_COUNT
};

const char *po_live_alert_kind_name(enum po_live_alert_kind kind);

/* A change: an alert raised or cleared at a window. */
struct po_live_alert {
	enum po_live_alert_kind kind;
	bool raised;	    /* false: cleared */
	int64_t seq;	    /* the window's seq */
	int64_t at_ns;	    /* the window's now_ns */
	int64_t since_ns;   /* cleared: when it was raised; raised: at_ns */
	double value;	    /* the measured value (unit below); NaN when none */
	double threshold;   /* the rule's value it was set against; NaN when none */
	const char *unit;   /* "%", "s", "MiB/min", "events", ...; static */
	char evidence[320]; /* one sentence with the numbers, for people */
};

struct po_live_alerts;

/* rules: weak, must outlive the state. */
enum po_status po_live_alerts_create(const struct po_rules *rules, struct po_live_alerts **out,
				     struct po_error *err) PO_NODISCARD;
void po_live_alerts_destroy(struct po_live_alerts *alerts);

/*
 * Judges one window; writes the raises and clears it causes (at most
 * PO_LIVE_ALERT_KIND_COUNT) to changes and returns their number. Windows must come in
 * seq order. PROGRAM_ENDED and EVENTS_DISCARDED are raised on the first window that shows
 * them and never cleared (an end or a loss cannot be undone).
 */
size_t po_live_alerts_update(struct po_live_alerts *alerts, const struct po_live_window *window,
			     struct po_live_alert *changes);

/* The alerts open now, in kind order; returns their number (at most the kind count). */
size_t po_live_alerts_open(const struct po_live_alerts *alerts, struct po_live_alert *open);

/*
 * One alert as one JSON object on one line, newline-terminated (docs/live.md "Alerts"):
 * {"alert":KIND,"state":"raised"|"cleared","window":SEQ,"at_ns":N,"since_ns":N,
 *  "value":X|null,"threshold":X|null,"unit":U,"evidence":TEXT}. Returns false when it
 * could not be written.
 */
bool po_live_alert_write_json(FILE *out, const struct po_live_alert *alert);

#endif /* PO_LIVE_ALERTS_H */
