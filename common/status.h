/*
 * status.h: status codes and the error chain shared by every profopt program (the analyzer,
 * profopt-record, profopt-sim).
 *
 * Functions return enum po_status (marked PO_NODISCARD) and, on failure, describe the cause
 * in a struct po_error; each level prepends its own context, so the message reads from the
 * outermost action to the root cause. Only main() prints it. The exit status of
 * profopt-analyze comes from the same table and is documented in its --help and man page.
 */
#ifndef PO_STATUS_H
#define PO_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#define PO_NODISCARD __attribute__((warn_unused_result))
#define PO_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* X(name, description, exit status) */
#define PO_STATUSES(X)                                                                             \
	X(OK, "success", 0)                                                                        \
	X(INTERNAL, "internal error", 1)                                                           \
	X(NOMEM, "out of memory", 1)                                                               \
	X(USAGE, "bad command line", 2)                                                            \
	X(INPUT, "the input is not a usable profopt trace", 3)                                     \
	X(DECODE, "the trace could not be decoded", 4)                                             \
	X(OUTPUT, "an output could not be written", 5)                                             \
	X(OUTPUT_PARTIAL, "an output could not be written; the others were", 5)                    \
	X(GATE, "a --fail-if condition is true", 6)                                                \
	X(BASELINE, "the baseline could not be used", 7)                                           \
	X(GATE_INCONCLUSIVE,                                                                       \
	  "a --fail-if condition cannot be judged: other programs' load differed between the "     \
	  "runs",                                                                                  \
	  8)                                                                                       \
	X(INTERRUPTED, "interrupted", 130)

enum po_status {
#define PO_X(name, text, exit_status) PO_STATUS_##name,
	PO_STATUSES(PO_X)
#undef PO_X
	    PO_STATUS_COUNT
};

/*
 * Whether an analysis with this status completed and its report is kept: success, a tripped
 * --fail-if gate or one that could not be judged, or an output that failed while the others were
 * written.
 */
static inline int po_status_completed(enum po_status status)
{
	return status == PO_STATUS_OK || status == PO_STATUS_GATE ||
	       status == PO_STATUS_GATE_INCONCLUSIVE || status == PO_STATUS_OUTPUT_PARTIAL;
}

const char *po_status_name(enum po_status status);
const char *po_status_description(enum po_status status);
int po_status_exit_code(enum po_status status);

#define PO_ERROR_MAX 1024

struct po_error {
	char message[PO_ERROR_MAX]; /* empty when no error has been described */
};

/* Replaces the message. */
void po_error_set(struct po_error *err, const char *fmt, ...) PO_PRINTF(2, 3);
/* Adds context in front: "context: previous message". */
void po_error_prepend(struct po_error *err, const char *fmt, ...) PO_PRINTF(2, 3);
/* Adds text at the end of the message (cut to fit). */
void po_error_append(struct po_error *err, const char *fmt, ...) PO_PRINTF(2, 3);
void po_error_clear(struct po_error *err);

/* Actions that go on when one fails (the outputs of a report): what came of them. */
struct po_outcome {
	size_t tried;
	size_t failures;
	enum po_status first; /* the first failure's status; PO_STATUS_OK while none failed */
};

/*
 * Counts one action of outcome (zeroed at first). A failure's cause goes into err: the
 * first one as it is, each later one appended after "; ".
 */
void po_outcome_add(struct po_outcome *outcome, enum po_status status, const struct po_error *cause,
		    struct po_error *err);

/* What kind of file a stat() mode is, for messages: "a FIFO (named pipe)", "a directory"... */
const char *po_file_type_text(unsigned int st_mode);

#endif /* PO_STATUS_H */
