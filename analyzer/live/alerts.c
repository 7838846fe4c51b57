/*
 * alerts.c: the live alerts. Each kind judges one window against its rule; a small state
 * machine per kind turns those judgements into raises and clears with hysteresis, so that
 * a value hovering at its threshold does not flap and one noisy window is not a trend.
 */
#define _DEFAULT_SOURCE /* strnlen */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "json_writer.h"

#define MIB (1024.0 * 1024.0)
/*
 * Decimals of value and threshold in the JSON line: a thousandth of a percent, a second or
 * a MiB/min is finer than any rule needs (docs/live.md, "Alerts").
 */
#define ALERT_JSON_DECIMALS 3

/*
 * What one window says about one kind, from least to most severe (the memory kinds keep
 * the worse of their two conditions).
 *
 * NONE: the window cannot judge the kind: its value is NaN, or a kind measured over the
 * window's steps has fewer than live.min_window_steps of them (at least one). Such a
 * window neither advances nor resets either count: a loop paused for a checkpoint, or not
 * yet started, is neither a trend nor a recovery, so an open alert stays open through it
 * and a raise in progress resumes after it.
 * OFF: below the clear level, threshold * (1 - live.clear_margin_pct / 100).
 * NEAR: below the threshold, not below the clear level: it stops a raise and resets the
 * count towards a clear, and changes nothing else.
 * HOLDS: the condition holds.
 */
enum judgement {
	JUDGE_NONE,
	JUDGE_OFF,
	JUDGE_NEAR,
	JUDGE_HOLDS,
};

enum transition {
	TRANSITION_STAY,
	TRANSITION_RAISE,
	TRANSITION_CLEAR,
};

struct kind_state {
	struct po_live_alert reading; /* the last window that judged this kind */
	int64_t hold_windows;	      /* windows in a row the condition held */
	int64_t off_windows;	      /* windows in a row below the clear level, while open */
	int64_t raised_ns;	      /* when it was raised, while open */
	bool open;
};

struct po_live_alerts {
	const struct po_rules *rules; /* weak: the caller's, outlives this */
	int64_t last_seq;
	struct kind_state kinds[PO_LIVE_ALERT_KIND_COUNT];
};

const char *po_live_alert_kind_name(enum po_live_alert_kind kind)
{
	static const char *const names[] = {
#define PO_X(name, json, doc) json,
	    PO_LIVE_ALERT_KINDS(PO_X)
#undef PO_X
	};

	return (unsigned)kind < PO_LIVE_ALERT_KIND_COUNT ? names[kind] : "?";
}

enum po_status po_live_alerts_create(const struct po_rules *rules, struct po_live_alerts **out,
				     struct po_error *err)
{
	struct po_live_alerts *alerts = calloc(1, sizeof(*alerts));

	*out = NULL;
	if (!alerts) {
		po_error_set(err, "Failed to allocate the live alerts: out of memory");
		return PO_STATUS_NOMEM;
	}
	alerts->rules = rules;
	alerts->last_seq = INT64_MIN;
	*out = alerts;
	return PO_STATUS_OK;
}

void po_live_alerts_destroy(struct po_live_alerts *alerts)
{
	free(alerts);
}

/* An end or a loss cannot be undone: raised on the first window that shows it, never cleared. */
static bool is_sticky(enum po_live_alert_kind kind)
{
	return kind == PO_LIVE_ALERT_EVENTS_DISCARDED || kind == PO_LIVE_ALERT_PROGRAM_ENDED;
}

/* "Higher is worse" against the threshold and the clear level below it. */
static enum judgement classify(const struct po_rules *rules, double value, double threshold)
{
	if (isnan(value))
		return JUDGE_NONE;
	if (value >= threshold)
		return JUDGE_HOLDS;
	if (value < threshold * (1 - rules->live_clear_margin_pct / 100))
		return JUDGE_OFF;
	return JUDGE_NEAR;
}

/* Whether the window has enough steps to judge a kind measured over its steps. */
static bool steps_enough(const struct po_rules *rules, const struct po_live_window *window)
{
	return window->window_steps > 0 &&
	       (double)window->window_steps >= rules->live_min_window_steps;
}

/* The window's length for the evidence: shorter than live.window_s early in a run. */
static double span_s(const struct po_rules *rules, const struct po_live_window *window)
{
	if (window->now_ns > window->begin_ns)
		return (double)(window->now_ns - window->begin_ns) / 1e9;
	return rules->live_window_s;
}

static void append(char *text, size_t size, const char *fmt, ...) PO_PRINTF(3, 4);

static void append(char *text, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(text, size);
	va_list args;

	if (used + 1 >= size)
		return;
	va_start(args, fmt);
	vsnprintf(text + used, size - used, fmt, args);
	va_end(args);
}

static void set_reading(struct po_live_alert *reading, double value, double threshold,
			const char *unit, const char *fmt, ...) PO_PRINTF(5, 6);

static void set_reading(struct po_live_alert *reading, double value, double threshold,
			const char *unit, const char *fmt, ...)
{
	va_list args;

	reading->value = value;
	reading->threshold = threshold;
	reading->unit = unit;
	va_start(args, fmt);
	vsnprintf(reading->evidence, sizeof(reading->evidence), fmt, args);
	va_end(args);
}

/* A duration for people: seconds, minutes or hours. */
static void format_duration(char *text, size_t size, double seconds)
{
	if (seconds < 120)
		snprintf(text, size, "%.0f s", seconds);
	else if (seconds < 7200)
		snprintf(text, size, "%.1f min", seconds / 60);
	else
		snprintf(text, size, "%.1f h", seconds / 3600);
}

static enum judgement judge_input_bound(const struct po_rules *rules,
					const struct po_live_window *window,
					struct po_live_alert *reading)
{
	double threshold = rules->input_bound_warning_pct;
	enum judgement judgement;

	/*
	 * The offline input-bound finding, over the window's steps (po_live_window_detect): the
	 * alert holds when the detector raised it. Below the clear margin of its share it is
	 * off; in between (or where the detector held back: sporadic waits, too few steps) an
	 * open alert stays open (hysteresis).
	 */
	if (!steps_enough(rules, window) ||
	    (double)window->window_steps < rules->input_bound_min_steps)
		return JUDGE_NONE;
	set_reading(reading, window->data_wait_pct, threshold, "%",
		    "the loop waited for data %.1f%% of its step time over the last %.3g s "
		    "(threshold %g%%), in %.0f%% of its steps",
		    window->data_wait_pct, span_s(rules, window), threshold,
		    window->waiting_steps_pct);
	if (window->findings & ((uint64_t)1 << PO_FINDING_INPUT_BOUND))
		return JUDGE_HOLDS;
	judgement = classify(rules, window->data_wait_pct, threshold);
	return judgement == JUDGE_HOLDS ? JUDGE_NEAR : judgement;
}

static enum judgement judge_gpu_idle(const struct po_rules *rules,
				     const struct po_live_window *window,
				     struct po_live_alert *reading)
{
	double threshold = rules->live_gpu_idle_pct;
	double idle_pct = 100 - window->gpu_busy_pct;

	if (!window->has_gpu || !steps_enough(rules, window))
		return JUDGE_NONE;
	set_reading(
	    reading, idle_pct, threshold, "%",
	    "the GPU was idle %.1f%% of the step time over the last %.3g s (threshold %g%%)",
	    idle_pct, span_s(rules, window), threshold);
	return classify(rules, idle_pct, threshold);
}

/* One memory (host or GPU) as the window gives it. */
struct memory_reading {
	const char *what; /* "host" or "GPU" */
	int64_t bytes;
	double slope_bps;
	int64_t limit_bytes;
	double oom_s;
};

/* The projection is "lower is worse": its clear level lies above the warning time. */
static enum judgement classify_oom(const struct po_rules *rules, double oom_s)
{
	double warning_s = rules->live_oom_warning_s;

	if (!(oom_s > 0)) /* flat, shrinking or no known limit */
		return JUDGE_OFF;
	if (oom_s <= warning_s)
		return JUDGE_HOLDS;
	if (oom_s <= warning_s * (1 + rules->live_clear_margin_pct / 100))
		return JUDGE_NEAR;
	return JUDGE_OFF;
}

static void memory_evidence(const struct po_rules *rules, const struct po_live_window *window,
			    const struct memory_reading *memory, double slope_mib_per_min,
			    struct po_live_alert *reading)
{
	char oom[32], warning[32];

	set_reading(reading, slope_mib_per_min, rules->live_memory_slope_mib_per_min, "MiB/min",
		    "%s memory grew %.1f MiB/min over the last %.3g s", memory->what,
		    slope_mib_per_min, span_s(rules, window));
	if (memory->bytes >= 0)
		append(reading->evidence, sizeof(reading->evidence), " to %.0f MiB",
		       (double)memory->bytes / MIB);
	append(reading->evidence, sizeof(reading->evidence), " (threshold %g MiB/min)",
	       rules->live_memory_slope_mib_per_min);
	if (!(memory->oom_s > 0) || !isfinite(memory->oom_s))
		return;
	format_duration(oom, sizeof(oom), memory->oom_s);
	format_duration(warning, sizeof(warning), rules->live_oom_warning_s);
	if (memory->limit_bytes > 0)
		append(reading->evidence, sizeof(reading->evidence),
		       "; at this rate it reaches its %.0f MiB in %s (warning within %s)",
		       (double)memory->limit_bytes / MIB, oom, warning);
	else
		append(reading->evidence, sizeof(reading->evidence),
		       "; at this rate it runs out in %s (warning within %s)", oom, warning);
}

static enum judgement judge_memory(const struct po_rules *rules,
				   const struct po_live_window *window,
				   const struct memory_reading *memory,
				   struct po_live_alert *reading)
{
	double slope_mib_per_min = memory->slope_bps * 60 / MIB;
	enum judgement by_slope, by_oom;

	if (!steps_enough(rules, window) || isnan(slope_mib_per_min))
		return JUDGE_NONE;
	memory_evidence(rules, window, memory, slope_mib_per_min, reading);
	by_slope = classify(rules, slope_mib_per_min, rules->live_memory_slope_mib_per_min);
	by_oom = classify_oom(rules, memory->oom_s);
	return by_slope > by_oom ? by_slope : by_oom;
}

static enum judgement judge_host_memory(const struct po_rules *rules,
					const struct po_live_window *window,
					struct po_live_alert *reading)
{
	const struct memory_reading memory = {"host", window->host_bytes, window->host_slope_bps,
					      window->host_limit_bytes, window->host_oom_s};

	return judge_memory(rules, window, &memory, reading);
}

static enum judgement judge_gpu_memory(const struct po_rules *rules,
				       const struct po_live_window *window,
				       struct po_live_alert *reading)
{
	const struct memory_reading memory = {"GPU", window->gpu_bytes, window->gpu_slope_bps,
					      window->gpu_limit_bytes, window->gpu_oom_s};

	return judge_memory(rules, window, &memory, reading);
}

/*
 * The value is the window's median step over the baseline's in percent, set against
 * live.regression_pct; only windows that begin after the baseline window are judged.
 */
static enum judgement judge_regression(const struct po_rules *rules,
				       const struct po_live_window *window,
				       struct po_live_alert *reading)
{
	double threshold = rules->live_regression_pct;
	double baseline_ms = window->baseline_p50_ms;
	double over_pct;

	if (!steps_enough(rules, window) || !(baseline_ms > 0) || window->baseline_end_ns < 0 ||
	    window->begin_ns < window->baseline_end_ns || isnan(window->p50_ms))
		return JUDGE_NONE;
	over_pct = (window->p50_ms / baseline_ms - 1) * 100;
	set_reading(reading, over_pct, threshold, "% over baseline",
		    "the median step took %.2f ms over the last %.3g s, %.1f%% over the %.2f ms of "
		    "the run's first steady window (threshold %g%%)",
		    window->p50_ms, span_s(rules, window), over_pct, baseline_ms, threshold);
	return classify(rules, over_pct, threshold);
}

/*
 * No silent worker counts as 0 s of silence, but only while the loop runs: a window
 * without steps says nothing about the workers that feed it.
 */
static enum judgement judge_worker(const struct po_rules *rules,
				   const struct po_live_window *window,
				   struct po_live_alert *reading)
{
	double threshold = rules->live_worker_silent_s;

	/*
	 * A loader that hands out batches in order (PyTorch's) stops the loop when one worker
	 * stops: the loop then waits for its next batch, however long.
	 */
	if (window->loop_wait_s > window->silent_worker_s) {
		set_reading(reading, window->loop_wait_s, threshold, "s",
			    "the loop has waited %.1f s for its next batch (threshold %g s): a "
			    "loader worker died or hangs",
			    window->loop_wait_s, threshold);
		return classify(rules, window->loop_wait_s, threshold);
	}
	if (window->silent_worker_pid < 0) {
		if (window->window_steps <= 0)
			return JUDGE_NONE;
		set_reading(reading, 0, threshold, "s",
			    "no loader worker is silent while the loop goes on (threshold %g s)",
			    threshold);
		return classify(rules, 0, threshold);
	}
	set_reading(reading, window->silent_worker_s, threshold, "s",
		    "loader worker %" PRId32 " has sent no event for %.1f s while the loop went on "
		    "(threshold %g s)",
		    window->silent_worker_pid, window->silent_worker_s, threshold);
	return classify(rules, window->silent_worker_s, threshold);
}

/* A sticky kind is judged only by the windows that show it. */
static enum judgement judge_discarded(const struct po_live_window *window,
				      struct po_live_alert *reading)
{
	if (window->discarded_events <= 0 && window->discard_windows <= 0)
		return JUDGE_NONE;
	if (window->discarded_events > 0)
		set_reading(reading, (double)window->discarded_events, NAN, "events",
			    "the tracer discarded %" PRId64 " events so far, in %" PRId64
			    " window(s) of lost events or packets: the numbers may miss steps",
			    window->discarded_events, window->discard_windows);
	else
		set_reading(reading, 0, NAN, "events",
			    "the tracer lost events or packets in %" PRId64
			    " window(s) so far, count unknown: the numbers may miss steps",
			    window->discard_windows);
	return JUDGE_HOLDS;
}

static enum judgement judge_ended(const struct po_live_window *window,
				  struct po_live_alert *reading)
{
	char ending[PO_LIVE_TEXT_MAX + 1], detail[PO_LIVE_TEXT_MAX + 1];

	if (!window->ended)
		return JUDGE_NONE;
	/* The texts came through a pipe: bounded, whether or not they are terminated. */
	snprintf(ending, sizeof(ending), "%.*s",
		 (int)strnlen(window->ending, sizeof(window->ending)), window->ending);
	snprintf(detail, sizeof(detail), "%.*s",
		 (int)strnlen(window->ending_detail, sizeof(window->ending_detail)),
		 window->ending_detail);
	/* detail is the program's own text (an exception's type): data, shown as is */
	set_reading(reading, window->elapsed_s, NAN, "s",
		    "the program ended (%s%s%s) after %.1f s and %" PRId64 " steps",
		    ending[0] ? ending : "unknown", detail[0] ? ": " : "", detail,
		    window->elapsed_s, window->steps);
	return JUDGE_HOLDS;
}

static enum judgement judge(const struct po_rules *rules, enum po_live_alert_kind kind,
			    const struct po_live_window *window, struct po_live_alert *reading)
{
	switch (kind) {
	case PO_LIVE_ALERT_INPUT_BOUND:
		return judge_input_bound(rules, window, reading);
	case PO_LIVE_ALERT_GPU_IDLE:
		return judge_gpu_idle(rules, window, reading);
	case PO_LIVE_ALERT_HOST_MEMORY_GROWTH:
		return judge_host_memory(rules, window, reading);
	case PO_LIVE_ALERT_GPU_MEMORY_GROWTH:
		return judge_gpu_memory(rules, window, reading);
	case PO_LIVE_ALERT_STEP_REGRESSION:
		return judge_regression(rules, window, reading);
	case PO_LIVE_ALERT_WORKER_STOPPED:
		return judge_worker(rules, window, reading);
	case PO_LIVE_ALERT_EVENTS_DISCARDED:
		return judge_discarded(window, reading);
	case PO_LIVE_ALERT_PROGRAM_ENDED:
		return judge_ended(window, reading);
	case PO_LIVE_ALERT_KIND_COUNT:
		break;
	}
	return JUDGE_NONE;
}

/* The hysteresis: what one judged window does to a kind's counts. */
static enum transition advance(const struct po_rules *rules, struct kind_state *state,
			       enum judgement judgement, bool sticky)
{
	switch (judgement) {
	case JUDGE_NONE:
		break;
	case JUDGE_HOLDS:
		state->hold_windows++;
		state->off_windows = 0;
		if (!state->open &&
		    (sticky || (double)state->hold_windows >= rules->live_raise_windows))
			return TRANSITION_RAISE;
		break;
	case JUDGE_NEAR:
		state->hold_windows = 0;
		state->off_windows = 0;
		break;
	case JUDGE_OFF:
		state->hold_windows = 0;
		if (!state->open || sticky)
			break;
		state->off_windows++;
		if ((double)state->off_windows >= rules->live_clear_windows)
			return TRANSITION_CLEAR;
		break;
	}
	return TRANSITION_STAY;
}

size_t po_live_alerts_update(struct po_live_alerts *alerts, const struct po_live_window *window,
			     struct po_live_alert *changes)
{
	size_t change_count = 0;

	assert(window->seq > alerts->last_seq);
	alerts->last_seq = window->seq;
	for (int kind = 0; kind < PO_LIVE_ALERT_KIND_COUNT; kind++) {
		struct kind_state *state = &alerts->kinds[kind];
		struct po_live_alert reading = {.kind = (enum po_live_alert_kind)kind,
						.seq = window->seq,
						.at_ns = window->now_ns,
						.since_ns = window->now_ns,
						.value = NAN,
						.threshold = NAN,
						.unit = ""};
		enum judgement judgement = judge(alerts->rules, reading.kind, window, &reading);

		if (judgement == JUDGE_NONE)
			continue;
		state->reading = reading;
		switch (advance(alerts->rules, state, judgement, is_sticky(reading.kind))) {
		case TRANSITION_STAY:
			continue;
		case TRANSITION_RAISE:
			state->open = true;
			state->raised_ns = window->now_ns;
			reading.raised = true;
			break;
		case TRANSITION_CLEAR:
			state->open = false;
			state->off_windows = 0;
			reading.raised = false;
			reading.since_ns = state->raised_ns;
			break;
		}
		changes[change_count++] = reading;
	}
	return change_count;
}

/*
 * Each open alert with the reading of the last window that judged it (its seq, at_ns,
 * value, threshold and evidence) and since_ns when it was raised.
 */
size_t po_live_alerts_open(const struct po_live_alerts *alerts, struct po_live_alert *open)
{
	size_t open_count = 0;

	for (int kind = 0; kind < PO_LIVE_ALERT_KIND_COUNT; kind++) {
		const struct kind_state *state = &alerts->kinds[kind];

		if (!state->open)
			continue;
		open[open_count] = state->reading;
		open[open_count].raised = true;
		open[open_count].since_ns = state->raised_ns;
		open_count++;
	}
	return open_count;
}

bool po_live_alert_write_json(FILE *out, const struct po_live_alert *alert)
{
	struct po_json_writer json;
	struct po_error err; /* unused: callers report a false result in their own words */

	po_json_writer_init_stream(&json, out, "the alert's JSON line");
	po_json_write_begin_object(&json);
	/* The object on one line; closing the writer adds its newline and flushes. */
	po_json_write_inline(&json);
	po_json_write_kv_string(&json, "alert", po_live_alert_kind_name(alert->kind));
	po_json_write_kv_string(&json, "state", alert->raised ? "raised" : "cleared");
	po_json_write_kv_int(&json, "window", alert->seq);
	po_json_write_kv_int(&json, "at_ns", alert->at_ns);
	po_json_write_kv_int(&json, "since_ns", alert->since_ns);
	po_json_write_kv_double(&json, "value", alert->value, ALERT_JSON_DECIMALS);
	po_json_write_kv_double(&json, "threshold", alert->threshold, ALERT_JSON_DECIMALS);
	po_json_write_kv_string(&json, "unit", alert->unit);
	po_json_write_key(&json, "evidence");
	po_json_write_string_len(&json, alert->evidence,
				 strnlen(alert->evidence, sizeof(alert->evidence)));
	po_json_write_end_object(&json);
	return po_json_writer_close(&json, &err) == PO_STATUS_OK;
}
