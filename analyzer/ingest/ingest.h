/*
 * ingest.h: reads a directory of LTTng traces with libbabeltrace2 and hands typed events
 * (model/event.h) to a callback, in time order across every trace found below the
 * directory. This module is the only one that includes babeltrace2 headers.
 */
#ifndef PO_INGEST_H
#define PO_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/status.h"
#include "../model/event.h"

typedef enum po_status (*po_event_fn)(void *ctx, const struct po_event *event);

struct po_ingest_options {
	bool salvage; /* skip unreadable streams instead of failing */
};

struct po_ingest_stats {
	int64_t events;        /* every event message */
	int64_t profopt_events;
	int64_t trace_count;   /* CTF traces found (one per process buffer) */
	int64_t streams;
	bool partial;          /* salvage skipped something */
};

/*
 * Checks before decoding, without babeltrace2: the path exists and is a directory, holds
 * at least one CTF trace (a "metadata" file), no stream file is empty or metadata-only,
 * no foreign regular file sits inside a trace directory, and no session is still
 * recording into it. PO_STATUS_INPUT with a one-line cause naming the file otherwise.
 */
enum po_status po_ingest_check(const char *trace_dir, struct po_error *err) PO_NODISCARD;

/* Decodes everything; stops at the first callback status that is not OK and returns it. */
enum po_status po_ingest_run(const char *trace_dir, const struct po_ingest_options *options,
			     po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
			     struct po_error *err) PO_NODISCARD;

#endif /* PO_INGEST_H */
