/*
 * isolate.h: runs the decoding and analysis in a child process with CPU, memory and
 * wall-clock limits, so that a trace that makes libbabeltrace2 abort, divide by zero, loop
 * forever or allocate without bound ends in a one-line error instead of a crash or hang.
 *
 * The child reports what it is reading through po_isolate_progress(); when it dies, the
 * parent's error names that file and the signal or limit ("the trace decoder crashed
 * (SIGFPE) while reading <file>; ..."). Text the child writes to the FILE it is given is
 * handed to the parent only when the child succeeds.
 *
 * The child dies with its parent (PR_SET_PDEATHSIG, checked against a parent that died
 * before it was set), so a profopt-analyze killed even by SIGKILL leaves no analysis behind.
 * The signals that stop profopt-analyze (PO_TERMINATING_SIGNALS) are caught while it works,
 * so that it can remove what it wrote before it exits with status 130.
 */
#ifndef PO_ISOLATE_H
#define PO_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

/*
 * The catchable signals whose default action ends a process and that people and
 * supervisors send to stop one (terminal hang-up, Ctrl-C, Ctrl-\, a closed pipe, timers,
 * kill(1), the user signals). X(name); expanded where <signal.h> is included.
 */
#define PO_TERMINATING_SIGNALS(X)                                                                  \
	X(SIGHUP) X(SIGINT) X(SIGQUIT) X(SIGPIPE) X(SIGALRM) X(SIGTERM) X(SIGUSR1) X(SIGUSR2)

/*
 * From po_signals_catch() to the matching po_signals_release(), each terminating signal is
 * only recorded: the process goes on and checks po_signals_caught() at its next step. A
 * signal ignored when it is called stays ignored (nohup). Calls nest; the outermost pair
 * saves and restores the previous dispositions.
 */
void po_signals_catch(void);
void po_signals_release(void);
/* The last terminating signal recorded, 0 when none was. */
int po_signals_caught(void);
/* How many were recorded so far: a change tells that one came meanwhile. */
unsigned po_signals_count(void);
/* Holds the terminating signals back (while a report is moved into place); not nested. */
void po_signals_block(void);
void po_signals_unblock(void);
/* "SIGHUP"; "an unexpected signal" for one not named here. */
const char *po_signal_name(int signo);

struct po_isolate_limits {
	unsigned cpu_seconds;  /* RLIMIT_CPU of the child; 0: none */
	size_t memory_bytes;   /* RLIMIT_AS of the child; 0: none */
	unsigned wall_seconds; /* the parent kills the child after this; 0: none */
	/*
	 * The parent draws one updating progress line on stderr (a terminal) once the child
	 * has run for progress_after_ms: its phase, the events decoded, the share of the trace's
	 * time they reach, their rate and an estimate of the time left (po_isolate_count()).
	 */
	bool progress;
	unsigned progress_after_ms;
};

/*
 * Defaults (generous enough for multi-GB traces, finite on a bad one), changed by the
 * environment variable PROFOPT_DECODE_LIMITS=cpu=S,mem=MiB,wall=S. A malformed value is
 * PO_STATUS_USAGE with a message naming it; the defaults are then set.
 */
enum po_status po_isolate_limits_init(struct po_isolate_limits *limits,
				      struct po_error *err) PO_NODISCARD;

typedef enum po_status (*po_isolated_fn)(void *ctx, FILE *output, struct po_error *err);

/*
 * Runs fn(ctx, output, err) in a forked child and waits for it. Returns the child's status
 * and error; PO_STATUS_DECODE when it was killed by a signal or a limit, PO_STATUS_INTERRUPTED
 * when the parent got a terminating signal meanwhile (the child is killed and reaped first),
 * or when the child died of one (someone stopped it). On success, and
 * on PO_STATUS_GATE (an analysis that completed but tripped a --fail-if gate) or
 * PO_STATUS_OUTPUT_PARTIAL (one output failed, the others were written), *output_text
 * (owned by the caller, free()) holds what the child wrote to output.
 */
enum po_status po_isolate_run(po_isolated_fn fn, void *ctx, const struct po_isolate_limits *limits,
			      char **output_text, struct po_error *err) PO_NODISCARD;

/*
 * In the child: what it is doing now ("decoding", "rendering") and on which file. A file
 * below the copy po_isolate_scratch_make() names is named as the user's file it copies.
 */
void po_isolate_progress(const char *phase, const char *file);
/*
 * In the child: makes a scratch directory from dir (a mkdtemp() template, "...XXXXXX",
 * replaced by the name made; mode 0700) with profopt's mark in it, and tells the parent,
 * which removes it (po_scratch_remove()) once the child has ended, however it ended (a
 * crash, a limit, a signal). Messages name the files below dir/copy_name (a copy of
 * shown_root: --salvage's shadow trace) as below shown_root. Outside po_isolate_run() the
 * directory is made and marked alone. 0, or -1 with errno (nothing is left then).
 */
int po_isolate_scratch_make(char *dir, const char *copy_name, const char *shown_root);
/* Removes a directory po_isolate_scratch_make() made (only if it carries the mark). */
void po_isolate_scratch_remove(const char *dir);
/* In a process forked from the child (a probe): its progress is not the child's. */
void po_isolate_detach(void);
/*
 * In the child, for the progress line: the trace's time range (the first event, the end of
 * its streams), then now and then the events decoded so far and the newest one's time.
 * Events come in time order, so the share of the range they reach is the share done.
 */
void po_isolate_time_range(int64_t begin_ns, int64_t end_ns);
void po_isolate_count(int64_t events, int64_t time_ns);

#endif /* PO_ISOLATE_H */
