/*
 * test_alerts.c: the live alerts over hand-made window sequences: when each kind is
 * raised and cleared, the hysteresis that keeps a hovering value from flapping, windows
 * that cannot be judged, the open list, the JSON lines and --set thresholds.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "alerts.h"
#include "check.h"

#define NS_PER_S 1000000000LL
#define MIB (1024.0 * 1024.0)

struct fixture {
	struct po_rules rules;
	struct po_live_alerts *alerts; /* owned */
	int64_t seq;
	struct po_live_alert changes[PO_LIVE_ALERT_KIND_COUNT];
	size_t change_count;
};

/* rules_set: NULL for the defaults, else "RULE.KEY=VALUE" assignments, NULL-terminated. */
static void fixture_init(struct fixture *fixture, const char *const *rules_set)
{
	struct po_error err = {{0}};

	memset(fixture, 0, sizeof(*fixture));
	po_rules_init(&fixture->rules);
	/* The thresholds these tests were written around; the defaults are tested below. */
	CHECK_INT_EQ(po_rules_set(&fixture->rules, "input-bound.warning_pct=20", &err),
		     PO_STATUS_OK);
	CHECK_INT_EQ(po_rules_set(&fixture->rules, "live.gpu_idle_pct=30", &err), PO_STATUS_OK);
	for (size_t i = 0; rules_set && rules_set[i]; i++)
		CHECK_INT_EQ(po_rules_set(&fixture->rules, rules_set[i], &err), PO_STATUS_OK);
	CHECK_INT_EQ(po_live_alerts_create(&fixture->rules, &fixture->alerts, &err), PO_STATUS_OK);
}

static void fixture_fini(struct fixture *fixture)
{
	po_live_alerts_destroy(fixture->alerts);
}

/*
 * The next window of a 10 s cadence with 100 steps in it and nothing measured: every
 * value NaN, -1 or 0, so no kind has anything to judge but the absence of a silent worker.
 */
static struct po_live_window next_window(struct fixture *fixture)
{
	struct po_live_window window;

	memset(&window, 0, sizeof(window));
	window.seq = ++fixture->seq;
	window.now_ns = window.seq * 10 * NS_PER_S;
	window.begin_ns = window.now_ns - 10 * NS_PER_S;
	window.elapsed_s = (double)window.seq * 10;
	window.steps = window.seq * 100;
	window.window_steps = 100;
	window.step_rate = window.step_rate_all = 10;
	window.p50_ms = window.p50_all_ms = window.baseline_p50_ms = NAN;
	window.baseline_end_ns = -1;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		window.category_pct[c] = NAN;
	window.data_wait_pct = window.workers_busy_pct = window.gpu_busy_pct = NAN;
	window.waiting_steps_pct = 100;
	window.silent_worker_pid = -1;
	window.host_bytes = window.host_limit_bytes = -1;
	window.gpu_bytes = window.gpu_limit_bytes = -1;
	window.host_slope_bps = window.host_oom_s = NAN;
	window.gpu_slope_bps = window.gpu_oom_s = NAN;
	window.events = window.seq * 1000;
	return window;
}

/*
 * The input-bound finding as the detectors would give it over the window's steps
 * (po_live_window_detect), for windows these tests make by hand: a share of at least
 * input-bound.warning_pct in enough steps, enough of them waiting. A window that already
 * says what the detectors found (findings set) is left as it is.
 */
static void detected(const struct po_rules *rules, struct po_live_window *window)
{
	if (window->findings)
		return;
	if (window->data_wait_pct >= rules->input_bound_warning_pct &&
	    (double)window->window_steps >= rules->input_bound_min_steps &&
	    window->waiting_steps_pct >= rules->input_bound_waiting_steps_pct)
		window->findings |= (uint64_t)1 << PO_FINDING_INPUT_BOUND;
}

static size_t judge(struct fixture *fixture, const struct po_live_window *given)
{
	struct po_live_window window = *given;

	detected(&fixture->rules, &window);
	fixture->change_count = po_live_alerts_update(fixture->alerts, &window, fixture->changes);
	return fixture->change_count;
}

static const struct po_live_alert *change_of(const struct fixture *fixture,
					     enum po_live_alert_kind kind)
{
	for (size_t i = 0; i < fixture->change_count; i++) {
		if (fixture->changes[i].kind == kind)
			return &fixture->changes[i];
	}
	return NULL;
}

static bool is_open(const struct fixture *fixture, enum po_live_alert_kind kind)
{
	struct po_live_alert open[PO_LIVE_ALERT_KIND_COUNT];
	size_t open_count = po_live_alerts_open(fixture->alerts, open);

	for (size_t i = 0; i < open_count; i++) {
		if (open[i].kind == kind)
			return true;
	}
	return false;
}

/* One window with the given data-wait share; returns the number of changes. */
static size_t feed_wait(struct fixture *fixture, double wait_pct)
{
	struct po_live_window window = next_window(fixture);

	window.data_wait_pct = wait_pct;
	return judge(fixture, &window);
}

static void test_kind_names(void)
{
	CHECK_STR_EQ(po_live_alert_kind_name(PO_LIVE_ALERT_INPUT_BOUND), "input-bound");
	CHECK_STR_EQ(po_live_alert_kind_name(PO_LIVE_ALERT_GPU_MEMORY_GROWTH), "gpu-memory-growth");
	CHECK_STR_EQ(po_live_alert_kind_name(PO_LIVE_ALERT_PROGRAM_ENDED), "program-ended");
	CHECK_STR_EQ(po_live_alert_kind_name(PO_LIVE_ALERT_KIND_COUNT), "?");
}

/* live.raise_windows (2) windows in a row, not one, and not two apart. */
static void test_raise_after_windows(void)
{
	struct fixture fixture;
	const struct po_live_alert *raised;

	fixture_init(&fixture, NULL);
	CHECK_INT_EQ(feed_wait(&fixture, 34.2), 0);
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	CHECK_INT_EQ(feed_wait(&fixture, 5), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 34.2), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 34.2), 1);
	raised = change_of(&fixture, PO_LIVE_ALERT_INPUT_BOUND);
	CHECK(raised && raised->raised);
	if (raised) {
		CHECK_INT_EQ(raised->seq, 4);
		CHECK_INT_EQ(raised->at_ns, 40 * NS_PER_S);
		CHECK_INT_EQ(raised->since_ns, 40 * NS_PER_S);
		CHECK_NEAR(raised->value, 34.2, 1e-9);
		CHECK_NEAR(raised->threshold, 20, 0);
		CHECK_STR_EQ(raised->unit, "%");
		CHECK_STR_EQ(raised->evidence, "the loop waited for data 34.2% of its step time "
					       "over the last 10 s (threshold 20%), in 100% of its "
					       "steps");
	}
	CHECK(is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	CHECK_INT_EQ(feed_wait(&fixture, 40), 0); /* raised once */
	fixture_fini(&fixture);
}

/* A value oscillating around the threshold raises at most once and never clears. */
static void test_no_flapping(void)
{
	struct fixture fixture;
	size_t changes = 0;

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 20; i++)
		changes += feed_wait(&fixture, i % 2 ? 19 : 21); /* ends at 19 */
	CHECK_INT_EQ(changes, 0); /* never two windows in a row at 20% */

	CHECK_INT_EQ(feed_wait(&fixture, 21), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 21), 1);
	/* The clear level is 20 * (1 - 20%) = 16: 16.5 to 19 is near, not off. */
	for (int i = 0; i < 30; i++)
		changes += feed_wait(&fixture, i % 3 == 0 ? 21 : (i % 3 == 1 ? 19 : 16.5));
	CHECK_INT_EQ(changes, 0);
	CHECK(is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	fixture_fini(&fixture);
}

/* live.clear_windows (3) windows in a row below the clear level; a near window resets them. */
static void test_clear_after_windows(void)
{
	struct fixture fixture;
	const struct po_live_alert *cleared;

	fixture_init(&fixture, NULL);
	feed_wait(&fixture, 30);
	feed_wait(&fixture, 30); /* raised at 20 s */
	CHECK_INT_EQ(feed_wait(&fixture, 10), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 10), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 17), 0); /* near: the off count starts again */
	CHECK_INT_EQ(feed_wait(&fixture, 10), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 15.9), 0);
	CHECK(is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	CHECK_INT_EQ(feed_wait(&fixture, 2), 1);
	cleared = change_of(&fixture, PO_LIVE_ALERT_INPUT_BOUND);
	CHECK(cleared && !cleared->raised);
	if (cleared) {
		CHECK_INT_EQ(cleared->seq, 8);
		CHECK_INT_EQ(cleared->at_ns, 80 * NS_PER_S);
		CHECK_INT_EQ(cleared->since_ns, 20 * NS_PER_S);
		CHECK_NEAR(cleared->value, 2, 1e-9);
	}
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	CHECK_INT_EQ(feed_wait(&fixture, 2), 0); /* cleared once */
	/* Raised again from scratch: the raise count does not remember the first episode. */
	CHECK_INT_EQ(feed_wait(&fixture, 30), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 30), 1);
	fixture_fini(&fixture);
}

/* The window kinds NaN values, too few steps and no steps at all leave unjudged. */
static struct po_live_window unjudged_window(struct fixture *fixture, int variant)
{
	struct po_live_window window = next_window(fixture);

	window.data_wait_pct = 90;
	if (variant == 0) {
		window.data_wait_pct = NAN;
	} else if (variant == 1) {
		window.window_steps = 4; /* live.min_window_steps is 5 */
	} else {
		window.window_steps = 0; /* a stalled loop: not evidence of recovery */
		window.data_wait_pct = window.p50_ms = NAN;
		window.step_rate = NAN;
	}
	return window;
}

/* Unjudged windows neither raise nor clear, and neither reset the counts in progress. */
static void test_unjudged_windows(void)
{
	struct fixture fixture;
	struct po_live_window window;
	size_t changes = 0;

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 30; i++) {
		window = unjudged_window(&fixture, i % 3);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 0);
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));

	/* Held, unjudged, held: two in a row. */
	CHECK_INT_EQ(feed_wait(&fixture, 30), 0);
	window = unjudged_window(&fixture, 1);
	CHECK_INT_EQ(judge(&fixture, &window), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 30), 1);

	/* Off, off, then a stall of every unjudged kind, then off: cleared by the third. */
	CHECK_INT_EQ(feed_wait(&fixture, 1), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 1), 0);
	for (int i = 0; i < 9; i++) {
		window = unjudged_window(&fixture, i % 3);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 0);
	CHECK(is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	CHECK_INT_EQ(feed_wait(&fixture, 1), 1);
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	fixture_fini(&fixture);
}

/* A kind's clean shape and the shape of its condition, on an otherwise neutral window. */
struct kind_case {
	enum po_live_alert_kind kind;
	void (*clean)(struct po_live_window *window);
	void (*bad)(struct po_live_window *window);
	const char *evidence_part; /* in the raise's evidence */
};

static void wait_clean(struct po_live_window *window)
{
	window->data_wait_pct = 5;
}

static void wait_bad(struct po_live_window *window)
{
	window->data_wait_pct = 45;
}

static void gpu_clean(struct po_live_window *window)
{
	window->has_gpu = true;
	window->gpu_busy_pct = 92;
}

static void gpu_bad(struct po_live_window *window)
{
	window->has_gpu = true;
	window->gpu_busy_pct = 40;
}

static void host_clean(struct po_live_window *window)
{
	window->host_bytes = (int64_t)(2048 * MIB);
	window->host_slope_bps = 1 * MIB / 60;
	window->host_limit_bytes = (int64_t)(16384 * MIB);
	window->host_oom_s = 14336.0 * 60; /* 14336 MiB at 1 MiB/min */
}

static void host_bad(struct po_live_window *window)
{
	host_clean(window);
	window->host_slope_bps = 128 * MIB / 60;
	window->host_oom_s = 112.0 * 60;
}

/* A slope under the threshold that still runs out of memory within live.oom_warning_s. */
static void host_near_oom(struct po_live_window *window)
{
	host_clean(window);
	window->host_bytes = (int64_t)(16300 * MIB);
	window->host_slope_bps = 2.8 * MIB / 60;
	window->host_oom_s = 30.0 * 60; /* the last 84 MiB */
}

static void gpu_memory_clean(struct po_live_window *window)
{
	window->gpu_bytes = (int64_t)(4096 * MIB);
	window->gpu_slope_bps = 0;
	window->gpu_limit_bytes = (int64_t)(81920 * MIB);
}

static void gpu_memory_bad(struct po_live_window *window)
{
	gpu_memory_clean(window);
	window->gpu_slope_bps = 600 * MIB / 60;
	window->gpu_oom_s = 77824.0 / 600 * 60;
}

static void regression_clean(struct po_live_window *window)
{
	window->baseline_p50_ms = 10;
	window->baseline_end_ns = window->begin_ns;
	window->p50_ms = 11;
}

static void regression_bad(struct po_live_window *window)
{
	regression_clean(window);
	window->p50_ms = 14.5;
}

static void worker_clean(struct po_live_window *window)
{
	window->silent_worker_pid = 4242;
	window->silent_worker_s = 2;
}

static void worker_bad(struct po_live_window *window)
{
	window->silent_worker_pid = 4242;
	window->silent_worker_s = 45;
}

/* An in-order loader with a hung worker: the loop waits, no step ends, no worker speaks. */
static void loop_waits_clean(struct po_live_window *window)
{
	window->window_steps = 0;
	window->loop_wait_s = 0.5;
}

static void loop_waits_bad(struct po_live_window *window)
{
	window->window_steps = 0;
	window->loop_wait_s = 40;
}

static void discarded_bad(struct po_live_window *window)
{
	window->discarded_events = 1200;
	window->discard_windows = 3;
}

static void ended_bad(struct po_live_window *window)
{
	window->ended = true;
	snprintf(window->ending, sizeof(window->ending), "exception");
}

static const struct kind_case kind_cases[] = {
    {PO_LIVE_ALERT_INPUT_BOUND, wait_clean, wait_bad, "waited for data 45.0%"},
    {PO_LIVE_ALERT_GPU_IDLE, gpu_clean, gpu_bad, "idle 60.0%"},
    {PO_LIVE_ALERT_HOST_MEMORY_GROWTH, host_clean, host_bad,
     "host memory grew 128.0 MiB/min over the last 10 s to 2048 MiB (threshold 64 MiB/min); "
     "at this rate it reaches its 16384 MiB in 112.0 min (warning within 60.0 min)"},
    {PO_LIVE_ALERT_HOST_MEMORY_GROWTH, host_clean, host_near_oom, "in 30.0 min"},
    {PO_LIVE_ALERT_GPU_MEMORY_GROWTH, gpu_memory_clean, gpu_memory_bad,
     "GPU memory grew 600.0 MiB/min"},
    {PO_LIVE_ALERT_STEP_REGRESSION, regression_clean, regression_bad,
     "14.50 ms over the last 10 s, 45.0% over the 10.00 ms"},
    {PO_LIVE_ALERT_WORKER_STOPPED, worker_clean, worker_bad,
     "worker 4242 has sent no event for 45.0 s"},
    {PO_LIVE_ALERT_WORKER_STOPPED, loop_waits_clean, loop_waits_bad,
     "the loop has waited 40.0 s for its next batch"},
    {PO_LIVE_ALERT_EVENTS_DISCARDED, NULL, discarded_bad, "discarded 1200 events"},
    {PO_LIVE_ALERT_PROGRAM_ENDED, NULL, ended_bad, "ended (exception) after"},
};

static void check_kind_case(const struct kind_case *test)
{
	struct fixture fixture;
	struct po_live_window window;
	const struct po_live_alert *raised;
	size_t changes = 0;
	int windows_to_raise = test->clean ? 2 : 1; /* the sticky kinds raise at once */

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 5; i++) {
		window = next_window(&fixture);
		if (test->clean)
			test->clean(&window);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 0);
	for (int i = 0; i < windows_to_raise; i++) {
		window = next_window(&fixture);
		test->bad(&window);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 1);
	raised = change_of(&fixture, test->kind);
	CHECK(raised && raised->raised);
	if (raised && !strstr(raised->evidence, test->evidence_part)) {
		fprintf(stderr, "%s: evidence \"%s\" lacks \"%s\"\n",
			po_live_alert_kind_name(test->kind), raised->evidence, test->evidence_part);
		CHECK(false);
	}
	fixture_fini(&fixture);
}

/* Each kind raises on its condition and not on a clean window. */
static void test_each_kind(void)
{
	for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++)
		check_kind_case(&kind_cases[i]);
}

/* The conditions each kind must not judge: no GPU, no baseline yet, a window over it. */
static void test_kinds_not_judged(void)
{
	struct fixture fixture;
	struct po_live_window window;
	size_t changes = 0;

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 6; i++) {
		window = next_window(&fixture);
		window.gpu_busy_pct = 0; /* has_gpu false */
		window.p50_ms = 100;
		window.baseline_p50_ms = i < 2 ? NAN : 10;
		window.baseline_end_ns = i < 2 ? -1 : window.now_ns; /* overlaps the window */
		window.silent_worker_pid = -1;
		window.window_steps = i % 2 ? 100 : 0;
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 0);
	fixture_fini(&fixture);
}

/* GPU idle: the hysteresis is on the idle share (threshold 30%, clear below 24%). */
static void test_gpu_idle_hysteresis(void)
{
	struct fixture fixture;
	struct po_live_window window;
	size_t changes = 0;
	const double busy[] = {60, 60, 72, 80, 80, 75, 80, 80, 80};
	const size_t expected[] = {0, 1, 0, 0, 0, 0, 0, 0, 1};

	fixture_init(&fixture, NULL);
	for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
		window = next_window(&fixture);
		gpu_clean(&window);
		window.gpu_busy_pct = busy[i];
		changes = judge(&fixture, &window);
		CHECK_INT_EQ(changes, expected[i]);
	}
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_GPU_IDLE));
	fixture_fini(&fixture);
}

/* Memory growth stays raised while the projection is within the margin of the warning. */
static void test_memory_oom_hysteresis(void)
{
	struct fixture fixture;
	struct po_live_window window;
	size_t changes = 0;

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 2; i++) {
		window = next_window(&fixture);
		host_near_oom(&window);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 1);
	for (int i = 0; i < 5; i++) {
		window = next_window(&fixture);
		host_near_oom(&window);
		window.host_oom_s = 4000; /* past 3600 s, within 3600 * 1.2 */
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 1);
	for (int i = 0; i < 3; i++) {
		window = next_window(&fixture);
		host_clean(&window);
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 2);
	CHECK(!is_open(&fixture, PO_LIVE_ALERT_HOST_MEMORY_GROWTH));
	fixture_fini(&fixture);
}

/* PROGRAM_ENDED and EVENTS_DISCARDED raise once, at the first window, and never clear. */
static void test_sticky(void)
{
	struct fixture fixture;
	struct po_live_window window;
	size_t changes = 0;

	fixture_init(&fixture, NULL);
	window = next_window(&fixture);
	window.discard_windows = 1; /* a lost packet, count unknown */
	CHECK_INT_EQ(judge(&fixture, &window), 1);
	CHECK(change_of(&fixture, PO_LIVE_ALERT_EVENTS_DISCARDED) != NULL);
	CHECK(strstr(fixture.changes[0].evidence, "count unknown") != NULL);
	window = next_window(&fixture);
	window.discard_windows = 1;
	window.ended = true;
	memset(window.ending, 'x', sizeof(window.ending)); /* unterminated text from the pipe */
	CHECK_INT_EQ(judge(&fixture, &window), 1);
	CHECK(change_of(&fixture, PO_LIVE_ALERT_PROGRAM_ENDED) != NULL);
	CHECK(strlen(fixture.changes[0].evidence) < sizeof(fixture.changes[0].evidence));
	for (int i = 0; i < 20; i++) {
		window = next_window(&fixture);
		window.window_steps = 0;
		window.discard_windows = 1;
		window.ended = true;
		changes += judge(&fixture, &window);
	}
	for (int i = 0; i < 5; i++) {
		window = next_window(&fixture); /* a window that would not show them at all */
		changes += judge(&fixture, &window);
	}
	CHECK_INT_EQ(changes, 0);
	CHECK(is_open(&fixture, PO_LIVE_ALERT_EVENTS_DISCARDED));
	CHECK(is_open(&fixture, PO_LIVE_ALERT_PROGRAM_ENDED));
	fixture_fini(&fixture);
}

/* The open list: kind order, raised, since when raised, the latest judged reading. */
static void test_open_list(void)
{
	struct fixture fixture;
	struct po_live_window window;
	struct po_live_alert open[PO_LIVE_ALERT_KIND_COUNT];
	size_t open_count;

	fixture_init(&fixture, NULL);
	CHECK_INT_EQ(po_live_alerts_open(fixture.alerts, open), 0);
	for (int i = 0; i < 3; i++) {
		window = next_window(&fixture);
		worker_bad(&window);
		window.silent_worker_s = 45 + i * 10;
		window.data_wait_pct = i == 0 ? 5 : 25 + i;
		judge(&fixture, &window);
	}
	open_count = po_live_alerts_open(fixture.alerts, open);
	CHECK_INT_EQ(open_count, 2);
	if (open_count == 2) {
		CHECK_INT_EQ(open[0].kind, PO_LIVE_ALERT_INPUT_BOUND);
		CHECK(open[0].raised);
		CHECK_INT_EQ(open[0].since_ns, 30 * NS_PER_S);
		CHECK_INT_EQ(open[0].at_ns, 30 * NS_PER_S);
		CHECK_NEAR(open[0].value, 27, 1e-9);
		CHECK_INT_EQ(open[1].kind, PO_LIVE_ALERT_WORKER_STOPPED);
		CHECK(open[1].raised);
		CHECK_INT_EQ(open[1].since_ns, 20 * NS_PER_S);
		CHECK_INT_EQ(open[1].seq, 3);
		CHECK_NEAR(open[1].value, 65, 1e-9);
		CHECK_NEAR(open[1].threshold, 30, 0);
		CHECK_STR_EQ(open[1].unit, "s");
	}
	/* An unjudged window keeps the reading that raised it. */
	window = next_window(&fixture);
	window.window_steps = 0;
	judge(&fixture, &window);
	open_count = po_live_alerts_open(fixture.alerts, open);
	CHECK_INT_EQ(open_count, 2);
	CHECK_NEAR(open[0].value, 27, 1e-9);
	CHECK_INT_EQ(open[0].seq, 3);
	for (int i = 0; i < 3; i++)
		feed_wait(&fixture, 1); /* no silent worker while the loop runs: off too */
	CHECK_INT_EQ(fixture.change_count, 2);
	CHECK_INT_EQ(po_live_alerts_open(fixture.alerts, open), 0);
	fixture_fini(&fixture);
}

/* A JSON string's value after "key": decoded (\", \\, \uXXXX below 0x100 and the short escapes). */
static bool json_string_value(const char *line, const char *key, char *out, size_t size)
{
	char pattern[64];
	const char *c;
	size_t used = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\":\"", key);
	c = strstr(line, pattern);
	if (!c)
		return false;
	for (c += strlen(pattern); *c && *c != '"' && used + 1 < size; c++) {
		if ((unsigned char)*c < 0x20)
			return false; /* a raw control character inside a string */
		if (*c != '\\') {
			out[used++] = *c;
			continue;
		}
		c++;
		if (*c == 'u') {
			unsigned int code;

			if (sscanf(c + 1, "%4x", &code) != 1 || code > 0xff)
				return false;
			out[used++] = (char)code;
			c += 4;
		} else if (*c && strchr("\"\\/", *c)) {
			out[used++] = *c;
		} else if (*c == 'n') {
			out[used++] = '\n';
		} else if (*c == 't') {
			out[used++] = '\t';
		} else {
			return false;
		}
	}
	out[used] = '\0';
	return *c == '"';
}

static char *write_line(const struct po_live_alert *alert, bool *ok)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out) {
		*ok = false;
		return NULL;
	}
	*ok = po_live_alert_write_json(out, alert);
	fclose(out);
	return text;
}

static void test_json_line(void)
{
	const char *hostile = "a \"quoted\" C:\\path\nnext\tline\x01 end";
	struct po_live_alert alert = {.kind = PO_LIVE_ALERT_WORKER_STOPPED,
				      .raised = true,
				      .seq = 3,
				      .at_ns = 30 * NS_PER_S,
				      .since_ns = 30 * NS_PER_S,
				      .value = 45.5,
				      .threshold = 30,
				      .unit = "s"};
	char decoded[sizeof(alert.evidence)];
	char *line;
	bool ok;

	snprintf(alert.evidence, sizeof(alert.evidence), "worker 7 is silent");
	line = write_line(&alert, &ok);
	CHECK(ok && line);
	if (line)
		CHECK_STR_EQ(line,
			     "{\"alert\":\"worker-stopped\",\"state\":\"raised\",\"window\":3,"
			     "\"at_ns\":30000000000,\"since_ns\":30000000000,\"value\":45.500,"
			     "\"threshold\":30.000,\"unit\":\"s\",\"evidence\":\"worker 7 is "
			     "silent\"}\n");
	free(line);

	snprintf(alert.evidence, sizeof(alert.evidence), "%s", hostile);
	alert.raised = false;
	alert.value = NAN;
	alert.threshold = INFINITY;
	line = write_line(&alert, &ok);
	CHECK(ok && line);
	if (!line)
		return;
	CHECK(strchr(line, '\n') == line + strlen(line) - 1); /* one line, newline-terminated */
	CHECK(strstr(line, "\"state\":\"cleared\"") != NULL);
	CHECK(strstr(line, "\"value\":null,\"threshold\":null,") != NULL);
	CHECK(strstr(line, "a \\\"quoted\\\" C:\\\\path\\u000anext\\u0009line\\u0001 end") != NULL);
	CHECK(json_string_value(line, "evidence", decoded, sizeof(decoded)));
	CHECK_STR_EQ(decoded, hostile);
	CHECK(line[0] == '{' && strcmp(line + strlen(line) - 3, "\"}\n") == 0);
	free(line);

	/* A byte that is not UTF-8 becomes U+FFFD: the line stays valid UTF-8. */
	snprintf(alert.evidence, sizeof(alert.evidence),
		 "a\xff"
		 "b");
	line = write_line(&alert, &ok);
	CHECK(ok && line);
	if (line)
		CHECK(strstr(line, "\"evidence\":\"a\xef\xbf\xbd"
				   "b\"}\n") != NULL);
	free(line);
}

/* A write error is reported, not swallowed. */
static void test_json_write_error(void)
{
	struct po_live_alert alert = {.kind = PO_LIVE_ALERT_PROGRAM_ENDED, .value = 1, .unit = "s"};
	FILE *read_only = fopen("/dev/null", "r");

	CHECK(read_only != NULL);
	if (!read_only)
		return;
	CHECK(!po_live_alert_write_json(read_only, &alert));
	fclose(read_only);
}

/* The engine's own raise, written as JSON, carries its evidence unchanged. */
static void test_json_of_change(void)
{
	struct fixture fixture;
	char decoded[sizeof(fixture.changes[0].evidence)];
	const char *prefix = "{\"alert\":\"input-bound\",\"state\":\"raised\",\"window\":2,";
	char *line = NULL;
	bool ok = false;

	fixture_init(&fixture, NULL);
	feed_wait(&fixture, 34.2);
	feed_wait(&fixture, 34.2);
	CHECK_INT_EQ(fixture.change_count, 1);
	if (fixture.change_count == 1)
		line = write_line(&fixture.changes[0], &ok);
	CHECK(ok && line);
	if (line) {
		CHECK(strncmp(line, prefix, strlen(prefix)) == 0);
		CHECK(strstr(line, "\"value\":34.200,\"threshold\":20.000,\"unit\":\"%\",") !=
		      NULL);
		CHECK(json_string_value(line, "evidence", decoded, sizeof(decoded)));
		CHECK_STR_EQ(decoded, fixture.changes[0].evidence);
	}
	free(line);
	fixture_fini(&fixture);
}

/*
 * input-bound follows the detectors' finding over the window's steps, whatever the share
 * shown: raised where the finding is (also under the share's threshold, as when the
 * hand-off counts as input time), never where it is not (also over the threshold).
 */
static void test_input_bound_follows_finding(void)
{
	struct fixture fixture;
	struct po_live_window window;

	fixture_init(&fixture, NULL);
	for (int i = 0; i < 4; i++) {
		window = next_window(&fixture);
		window.data_wait_pct = 60;
		window.findings = (uint64_t)1 << PO_FINDING_CPU_CONTENTION;
		CHECK_INT_EQ(judge(&fixture, &window), 0);
	}
	for (int i = 0; i < 2; i++) {
		window = next_window(&fixture);
		window.data_wait_pct = 3;
		window.findings = (uint64_t)1 << PO_FINDING_INPUT_BOUND;
		judge(&fixture, &window);
	}
	CHECK(is_open(&fixture, PO_LIVE_ALERT_INPUT_BOUND));
	fixture_fini(&fixture);
}

/*
 * input-bound follows the offline finding's rules over the window: input-bound.warning_pct
 * by default, enough steps (input-bound.min_steps), and enough of them waiting (spikes in
 * a few steps are not input-bound).
 */
static void test_input_bound_offline_rules(void)
{
	struct fixture fixture;
	struct po_live_window window;
	struct po_error err = {{0}};

	memset(&fixture, 0, sizeof(fixture));
	po_rules_init(&fixture.rules);
	CHECK_INT_EQ(po_live_alerts_create(&fixture.rules, &fixture.alerts, &err), PO_STATUS_OK);
	for (int i = 0; i < 3; i++) { /* 4% is under the default warning share, 5% */
		window = next_window(&fixture);
		window.data_wait_pct = 4;
		CHECK_INT_EQ(judge(&fixture, &window), 0);
	}
	for (int i = 0; i < 3; i++) { /* spikes: 40% of the time, in 10% of the steps */
		window = next_window(&fixture);
		window.data_wait_pct = 40;
		window.waiting_steps_pct = 10;
		CHECK_INT_EQ(judge(&fixture, &window), 0);
	}
	for (int i = 0; i < 3; i++) { /* too few steps to judge */
		window = next_window(&fixture);
		window.data_wait_pct = 40;
		window.window_steps = 19;
		CHECK_INT_EQ(judge(&fixture, &window), 0);
	}
	window = next_window(&fixture);
	window.data_wait_pct = 6;
	CHECK_INT_EQ(judge(&fixture, &window), 0);
	window = next_window(&fixture);
	window.data_wait_pct = 6;
	CHECK_INT_EQ(judge(&fixture, &window), 1);
	CHECK(change_of(&fixture, PO_LIVE_ALERT_INPUT_BOUND) != NULL);
	CHECK_NEAR(fixture.changes[0].threshold, 5, 0);
	fixture_fini(&fixture);
}

/* --set live.* changes the thresholds and the hysteresis. */
static void test_set_rules(void)
{
	static const char *const strict[] = {"live.raise_windows=1", "input-bound.warning_pct=50",
					     "live.clear_windows=1", "live.clear_margin_pct=0",
					     NULL};
	static const char *const steps[] = {"live.min_window_steps=200", NULL};
	struct fixture fixture;

	fixture_init(&fixture, strict);
	CHECK_INT_EQ(feed_wait(&fixture, 45), 0);
	CHECK_INT_EQ(feed_wait(&fixture, 55), 1); /* one window is enough */
	CHECK_NEAR(fixture.changes[0].threshold, 50, 0);
	CHECK_INT_EQ(feed_wait(&fixture, 49.9), 1); /* no margin, one window to clear */
	CHECK(!fixture.changes[0].raised);
	fixture_fini(&fixture);

	fixture_init(&fixture, steps);
	for (int i = 0; i < 4; i++)
		CHECK_INT_EQ(feed_wait(&fixture, 90), 0); /* 100 steps are too few now */
	fixture_fini(&fixture);
}

int main(void)
{
	RUN(test_kind_names);
	RUN(test_raise_after_windows);
	RUN(test_no_flapping);
	RUN(test_clear_after_windows);
	RUN(test_unjudged_windows);
	RUN(test_each_kind);
	RUN(test_kinds_not_judged);
	RUN(test_gpu_idle_hysteresis);
	RUN(test_memory_oom_hysteresis);
	RUN(test_sticky);
	RUN(test_open_list);
	RUN(test_json_line);
	RUN(test_json_write_error);
	RUN(test_json_of_change);
	RUN(test_input_bound_offline_rules);
	RUN(test_input_bound_follows_finding);
	RUN(test_set_rules);
	return CHECK_SUMMARY();
}
