/*
 * isolate.h: runs the decoding and analysis in a child process with CPU, memory and
 * wall-clock limits, so that a trace that makes libbabeltrace2 abort, divide by zero, loop
 * forever or allocate without bound ends in a one-line error instead of a crash or hang.
 *
 * The child reports what it is reading through po_isolate_progress(); when it dies, the
 * parent's error names that file and the signal or limit ("the trace decoder crashed
 * (SIGFPE) while reading <file>; ..."). Text the child writes to the FILE it is given is
 * handed to the parent only when the child succeeds.
 */
#ifndef PO_ISOLATE_H
#define PO_ISOLATE_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

struct po_isolate_limits {
	unsigned cpu_seconds;   /* RLIMIT_CPU of the child; 0: none */
	size_t memory_bytes;    /* RLIMIT_AS of the child; 0: none */
	unsigned wall_seconds;  /* the parent kills the child after this; 0: none */
};

/* Defaults: generous enough for multi-GB traces, finite on a bad one. */
void po_isolate_limits_init(struct po_isolate_limits *limits);

typedef enum po_status (*po_isolated_fn)(void *ctx, FILE *output, struct po_error *err);

/*
 * Runs fn(ctx, output, err) in a forked child and waits for it. Returns the child's status
 * and error; PO_STATUS_DECODE when it was killed by a signal or a limit, PO_STATUS_INTERRUPTED
 * when the parent got SIGINT or SIGTERM meanwhile (the child is killed). On success, and
 * on PO_STATUS_GATE (an analysis that completed but tripped a --fail-if gate), *output_text
 * (owned by the caller, free()) holds what the child wrote to output.
 */
enum po_status po_isolate_run(po_isolated_fn fn, void *ctx, const struct po_isolate_limits *limits,
			      char **output_text, struct po_error *err) PO_NODISCARD;

/* In the child: what it is doing now ("decoding", "rendering") and on which file. */
void po_isolate_progress(const char *phase, const char *file);

#endif /* PO_ISOLATE_H */
