/*
 * window.h: what profopt-analyze --live shows and judges every --every seconds. A window
 * is computed from a snapshot of the model (po_model_snapshot()): the steps that ended in
 * the last live.window_s seconds of the run, set against everything since the first
 * step. The struct is plain data with fixed-size text, because the snapshot's process
 * sends it back through a pipe; the alerts (alerts.h), the terminal panel and the JSON
 * lines (panel.h) read it and compute nothing of their own.
 *
 * Every share here has the offline report's definition (result.h, po_steady_stats): a
 * window's data_wait_pct is what input_wait_pct would be over the window's steps, so an
 * alert and the offline finding it anticipates measure the same thing.
 */
#ifndef PO_LIVE_WINDOW_H
#define PO_LIVE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "model/result.h"
#include "detect/rules.h"
#include "stats/stats.h"

#define PO_LIVE_TEXT_MAX 64

struct po_live_window {
	int64_t seq;	  /* 1 for the first window shown, then 2, 3, ... (set by the caller) */
	int64_t now_ns;	  /* the newest event consumed (trace clock, CLOCK_MONOTONIC) */
	int64_t begin_ns; /* the window: (begin_ns, now_ns]; steps that ended in it count */
	double elapsed_s; /* from the first step's begin to now_ns; 0 before any step */

	/* steps */
	int64_t steps;		 /* every step so far */
	int64_t window_steps;	 /* steady steps (result.h) that ended in the window: its shares' */
	double step_rate;	 /* steps per second in the window; NaN without steps in it */
	double step_rate_all;	 /* since the first step; NaN without steps */
	double p50_ms;		 /* median step wall time in the window; NaN */
	double p50_all_ms;	 /* since the first step; NaN */
	double baseline_p50_ms;	 /* the run's first steady window (below); NaN until there is one */
	int64_t baseline_end_ns; /* where that window ends; -1 */
	bool baseline_final;	 /* that window has passed: the two above never change */
	/* Share of the window's step time per category (sums to 100); NaN without steps. */
	double category_pct[PO_CATEGORY_COUNT];
	/* data wait and main-process loading, and the hand-off where handoff_is_input: the
	 * offline steady input_wait_pct over the window's steps; NaN */
	double data_wait_pct;
	/* The detectors counted the hand-off as input time over the window's steps
	 * (po_steady_stats.handoff_is_input: saturated cores held by the workers) */
	bool handoff_is_input;
	/* Steps of the window whose own input time (as data_wait_pct counts it) is over half
	 * input-bound.warning_pct; NaN */
	double waiting_steps_pct;

	/* loader workers */
	int32_t workers_seen;	   /* worker processes since the start */
	int32_t workers_alive;	   /* with an event in the window */
	double workers_busy_pct;   /* mean busy share of the live ones over their lifetime; NaN */
	int32_t silent_worker_pid; /* the worker silent longest while a worker started before
				      it went quiet had events long after (window.c); -1 */
	double silent_worker_s;	   /* how long; 0 */
	/* How long the loop has been waiting for its next batch now (an open step in data
	 * wait since); 0 when it is not waiting */
	double loop_wait_s;

	/* GPU */
	bool has_gpu;
	double gpu_busy_pct; /* share of the window's step time with any device busy; NaN */

	/* memory: the newest value, and its slope over the window (least squares) */
	int64_t host_bytes;	  /* RSS of every process (or live bytes from events); -1 */
	double host_slope_bps;	  /* bytes per second; NaN with fewer than 3 steps */
	int64_t host_limit_bytes; /* physical memory of the machine; -1 unknown */
	double host_oom_s;	  /* projected seconds until host_limit_bytes; NaN if flat */
	int64_t gpu_bytes;	  /* live device bytes; -1 */
	double gpu_slope_bps;	  /* NaN */
	int64_t gpu_limit_bytes;  /* device memory; -1 unknown */
	double gpu_oom_s;	  /* NaN */

	/* trace and run */
	int64_t events; /* events consumed */
	/*
	 * What taking this window cost the view, in ms of its own time: the snapshot (fork,
	 * finish over the window's steps, detectors, window). Set by the caller; NaN
	 */
	double snapshot_ms;
	int64_t discarded_events;      /* discarded by the tracer so far (known counts) */
	int64_t discard_windows;       /* windows of discarded events or packets so far */
	bool ended;		       /* the program's run_end came, or its processes all ended */
	char ending[PO_LIVE_TEXT_MAX]; /* po_run_ending_name() once ended, else "" */
	/* The program's words for an exception or signal end (its run_ending), or "" */
	char ending_detail[PO_LIVE_TEXT_MAX];
	/*
	 * The detectors over the window's steps (po_live_window_detect): a bit (1 << id) per
	 * finding (enum po_finding_id) they raised at warning or above, and the verdict.
	 */
	uint64_t findings;
	char verdict[PO_LIVE_TEXT_MAX]; /* the analysis so far: its verdict's JSON name */
	char verdict_reason[160];	/* its cause in words, or "" */
};

/*
 * The run since its first step, tallied by the view as steps end (po_live_tally_add), so
 * that a window reads only its own steps: the figures "since the first step" of every
 * window, and the run's first steady window once it has passed (po_live_tally_keep).
 * Zero-initialised with first_begin_ns -1 and baseline_end_ns -1 is empty (po_live_tally_init).
 */
struct po_live_tally {
	int64_t steps;		/* steps tallied, every one (lossy and start-up too) */
	int64_t first_begin_ns; /* the first step's begin; -1 */
	struct po_stats_running_median wall_ms;
	bool baseline_final; /* the run's first steady window has passed: */
	double baseline_p50_ms;
	int64_t baseline_end_ns;
};

void po_live_tally_init(struct po_live_tally *tally);
void po_live_tally_fini(struct po_live_tally *tally);
/* Tallies an ended step, in order; false when out of memory (the step is not tallied). */
bool po_live_tally_add(struct po_live_tally *tally, const struct po_step *step);
/* Keeps the baseline of a window whose baseline_final is set, for the windows after it. */
void po_live_tally_keep(struct po_live_tally *tally, const struct po_live_window *window);

/* What the window needs besides the analysis; the rules give live.window_s. */
struct po_live_window_config {
	const struct po_rules *rules; /* weak */
	/*
	 * weak: every step that ended so far tallied (the analysis's steps); the view's
	 * memory, read by the snapshot's copy (fork copies it)
	 */
	const struct po_live_tally *tally;
	int64_t now_ns;		  /* the newest event; the analysis's last event if 0 */
	int64_t host_limit_bytes; /* -1: unknown */
	int64_t gpu_limit_bytes;  /* -1: unknown */
	int64_t events;		  /* events consumed so far */
};

/*
 * Runs the offline detectors, with their rules, over the steps of the window config
 * describes (po_detect_run_steps): what a window reports as findings and verdict is what
 * profopt-analyze --steps-in reports over the same steps.
 */
enum po_status po_live_window_detect(struct po_analysis *analysis,
				     const struct po_live_window_config *config,
				     struct po_error *err) PO_NODISCARD;

/*
 * Fills window from an analysis on which po_live_window_detect() (or po_detect_run()) has
 * run (its findings, verdict and steady statistics); seq is left 0. Reads the steps of the
 * analysis's range that ended in the window, and, until the tally holds the baseline, the
 * run's first steps up to the baseline window's end (po_analysis_step()): the cost does not
 * grow with the run. A failed read is PO_STATUS_IO with the cause.
 */
enum po_status po_live_window_compute(const struct po_analysis *analysis,
				      const struct po_live_window_config *config,
				      struct po_live_window *window,
				      struct po_error *err) PO_NODISCARD;

#endif /* PO_LIVE_WINDOW_H */
