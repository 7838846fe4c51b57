/*
 * window.c: the numbers of one live window, from a snapshot's analysis whose range is the
 * window's steps (po_model_config steps range). Those steps are read once, in trace order;
 * everything here is a share, a rate, a median or a slope of the steps that ended in the
 * window, with the offline report's definitions, or a figure since the first step from
 * the view's tally (po_live_tally). Nothing here reads the whole run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "detect/detect.h"
#include "metrics/metrics.h"
#include "stats/stats.h"
#include "window.h"

/* The steps of a window, gathered in one pass over them. */
struct gathered {
	double *window_ms; /* owned: wall times of the window's steady steps */
	double *host_t;	   /* owned: the window's steps' end, seconds from begin_ns */
	double *host_y;
	double *gpu_t;
	double *gpu_y;
	size_t window_count; /* steady steps of the window: its shares and median */
	size_t rate_count;   /* every step of the window: its rate */
	size_t host_count, gpu_count;
	int64_t category_ns[PO_CATEGORY_COUNT];
	int64_t wall_ns, gpu_busy_ns;
	size_t waiting_count; /* window steps whose own input time is over the waiting limit */
	int64_t host_last, gpu_last;
};

static void gathered_fini(struct gathered *g)
{
	free(g->window_ms);
	free(g->host_t);
	free(g->host_y);
	free(g->gpu_t);
	free(g->gpu_y);
}

static bool gathered_init(struct gathered *g, size_t steps)
{
	size_t n = steps ? steps : 1;

	*g = (struct gathered){.host_last = -1, .gpu_last = -1};
	g->window_ms = malloc(n * sizeof(double));
	g->host_t = malloc(n * sizeof(double));
	g->host_y = malloc(n * sizeof(double));
	g->gpu_t = malloc(n * sizeof(double));
	g->gpu_y = malloc(n * sizeof(double));
	if (g->window_ms && g->host_t && g->host_y && g->gpu_t && g->gpu_y)
		return true;
	gathered_fini(g);
	return false;
}

void po_live_tally_init(struct po_live_tally *tally)
{
	*tally = (struct po_live_tally){
	    .first_begin_ns = -1, .baseline_p50_ms = NAN, .baseline_end_ns = -1};
}

void po_live_tally_fini(struct po_live_tally *tally)
{
	po_stats_running_median_fini(&tally->wall_ms);
}

bool po_live_tally_add(struct po_live_tally *tally, const struct po_step *step)
{
	if (!po_stats_running_median_add(&tally->wall_ms,
					 (double)(step->end_ns - step->begin_ns) / 1e6))
		return false;
	if (tally->first_begin_ns < 0)
		tally->first_begin_ns = step->begin_ns;
	tally->steps++;
	return true;
}

void po_live_tally_keep(struct po_live_tally *tally, const struct po_live_window *window)
{
	if (tally->baseline_final || !window->baseline_final)
		return;
	tally->baseline_final = true;
	tally->baseline_p50_ms = window->baseline_p50_ms;
	tally->baseline_end_ns = window->baseline_end_ns;
}

/*
 * The run's first steady window: the live.window_s seconds after the first epoch's
 * start-up steps (metrics.h), once that much of the run has passed and it holds
 * live.min_window_steps steps. Reads the run's first steps up to its end, once: the view
 * keeps it (po_live_tally_keep) when it is final.
 */
static void fill_baseline(const struct po_analysis *analysis, const struct po_rules *rules,
			  struct po_live_window *window)
{
	size_t startup = po_metric_startup_steps(analysis), count = 0;
	int64_t window_ns = (int64_t)(rules->live_window_s * 1e9), from, to;
	double *walls;

	window->baseline_p50_ms = NAN;
	window->baseline_end_ns = -1;
	if (analysis->step_count <= startup)
		return;
	from = po_analysis_step(analysis, startup - 1).end_ns;
	to = from + window_ns;
	if (window->now_ns < to)
		return;
	window->baseline_final = true;
	walls = malloc(analysis->step_count * sizeof(double));
	if (!walls)
		return;
	for (size_t i = startup; i < analysis->step_count; i++) {
		struct po_step step = po_analysis_step(analysis, i);

		if (step.end_ns > to)
			break;
		if (step.end_ns > from)
			walls[count++] = (double)(step.end_ns - step.begin_ns) / 1e6;
	}
	if (count && (double)count >= rules->live_min_window_steps) {
		window->baseline_p50_ms = po_stats_quantile(walls, count, 0.5);
		window->baseline_end_ns = to;
	}
	free(walls);
}

/*
 * The window's steps: the shares and medians are over steady steps (metrics.h), as the
 * offline statistics; rate and memory over every step that ended in the window.
 */
static void gather(const struct po_analysis *analysis, const struct po_rules *rules,
		   const struct po_live_window *window, struct gathered *g)
{
	struct po_metric_steady_walk walk;
	struct po_step step;
	bool steady;
	size_t i;

	po_metric_steady_walk_init(&walk, analysis);
	while (po_metric_steady_walk_next(&walk, &step, &i, &steady)) {
		double ms = (double)(step.end_ns - step.begin_ns) / 1e6;
		int64_t host, gpu;

		if (step.end_ns <= window->begin_ns || step.end_ns > window->now_ns)
			continue;
		g->rate_count++;
		host = po_metric_host_bytes(analysis, &step);
		if (host >= 0) {
			g->host_t[g->host_count] = (double)(step.end_ns - window->begin_ns) / 1e9;
			g->host_y[g->host_count++] = (double)host;
			g->host_last = host;
		}
		gpu = po_metric_series_bytes(&step, PO_GROWTH_GPU_ALLOCS);
		if (gpu >= 0) {
			g->gpu_t[g->gpu_count] = (double)(step.end_ns - window->begin_ns) / 1e9;
			g->gpu_y[g->gpu_count++] = (double)gpu;
			g->gpu_last = gpu;
		}
		if (!steady)
			continue;
		g->window_ms[g->window_count++] = ms;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			g->category_ns[c] += step.category_ns[c];
		g->wall_ns += step.end_ns - step.begin_ns;
		g->waiting_count +=
		    po_metric_step_waits(&step, rules->input_bound_warning_pct,
					 analysis->diagnosis.steady.handoff_is_input);
		g->gpu_busy_ns += step.gpu_busy_ns;
	}
}

/* Least-squares slope in bytes per second; NaN with fewer than 3 points. */
static double slope_of(const double *t, const double *y, size_t n)
{
	struct po_stats_fit fit;

	if (n < 3 || !po_stats_linear_fit(t, y, n, &fit))
		return NAN;
	return fit.slope;
}

/* Seconds until limit at slope, from bytes; NaN when flat, shrinking or the limit unknown. */
static double seconds_to_limit(int64_t bytes, double slope, int64_t limit)
{
	if (limit <= 0 || bytes < 0 || !(slope > 0))
		return NAN;
	return bytes >= limit ? 0 : (double)(limit - bytes) / slope;
}

/* The newest event of any process: what the analysis has seen up to. */
static int64_t newest_event(const struct po_analysis *analysis)
{
	int64_t newest = 0;

	for (size_t i = 0; i < analysis->process_count; i++)
		if (analysis->processes[i].last_ns > newest)
			newest = analysis->processes[i].last_ns;
	return newest;
}

/*
 * Loader workers: those with an event in the window are alive; their busy share is over
 * their lifetime so far (the analysis keeps no per-window busy time). A worker is silent
 * when a worker that started before it went quiet (one of its generation) still had
 * events long after: a worker that died or hangs while its peers and the loop go on.
 * Workers that end together at an epoch's end are not silent.
 */
static void fill_workers(const struct po_analysis *analysis, struct po_live_window *window)
{
	double busy = 0;
	int alive = 0;

	window->workers_seen = (int32_t)analysis->worker_count;
	window->silent_worker_pid = -1;
	for (size_t i = 0; i < analysis->worker_count; i++) {
		const struct po_worker *w = &analysis->workers[i];
		int64_t peers_last = -1;

		if (w->last_ns > window->begin_ns) {
			alive++;
			if (w->last_ns > w->first_ns)
				busy +=
				    100.0 * (double)w->busy_ns / (double)(w->last_ns - w->first_ns);
			continue;
		}
		for (size_t j = 0; j < analysis->worker_count; j++) {
			const struct po_worker *peer = &analysis->workers[j];

			if (j != i && peer->first_ns <= w->last_ns && peer->last_ns > peers_last)
				peers_last = peer->last_ns;
		}
		if (peers_last > window->begin_ns && window->window_steps > 0 &&
		    (double)(peers_last - w->last_ns) / 1e9 > window->silent_worker_s) {
			window->silent_worker_s = (double)(peers_last - w->last_ns) / 1e9;
			window->silent_worker_pid = w->pid;
		}
	}
	window->workers_alive = alive;
	window->workers_busy_pct = alive ? busy / alive : NAN;
}

static void fill_steps(const struct po_analysis *analysis, const struct po_rules *rules,
		       const struct po_live_tally *tally, const struct gathered *g,
		       struct po_live_window *window)
{
	double covered_s;

	window->steps = (int64_t)analysis->step_count;
	window->window_steps = (int64_t)g->window_count;
	window->elapsed_s =
	    tally->first_begin_ns >= 0 ? (double)(window->now_ns - tally->first_begin_ns) / 1e9 : 0;
	/* A window that began before the first step covers only the time since. */
	covered_s = (double)(window->now_ns - window->begin_ns) / 1e9;
	if (window->elapsed_s < covered_s)
		covered_s = window->elapsed_s;
	window->step_rate =
	    g->rate_count && covered_s > 0 ? (double)g->rate_count / covered_s : NAN;
	window->step_rate_all =
	    tally->steps && window->elapsed_s > 0 ? (double)tally->steps / window->elapsed_s : NAN;
	window->p50_ms = po_stats_quantile(g->window_ms, g->window_count, 0.5);
	window->p50_all_ms = po_stats_running_median_value(&tally->wall_ms);
	if (tally->baseline_final) {
		window->baseline_final = true;
		window->baseline_p50_ms = tally->baseline_p50_ms;
		window->baseline_end_ns = tally->baseline_end_ns;
	} else {
		fill_baseline(analysis, rules, window);
	}
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		window->category_pct[c] =
		    g->wall_ns > 0 ? 100.0 * (double)g->category_ns[c] / (double)g->wall_ns : NAN;
	/*
	 * The offline steady input wait's definition: with the hand-off where input-bound
	 * counted it over these steps (saturated cores held by the workers).
	 */
	window->handoff_is_input = analysis->diagnosis.steady.handoff_is_input;
	window->data_wait_pct =
	    g->wall_ns > 0
		? 100.0 *
		      (double)(po_metric_input_wait_ns(g->category_ns) +
			       (window->handoff_is_input ? g->category_ns[PO_CAT_HANDOFF] : 0)) /
		      (double)g->wall_ns
		: NAN;
	window->waiting_steps_pct =
	    g->window_count ? 100.0 * (double)g->waiting_count / (double)g->window_count : NAN;
}

static void fill_memory(const struct po_live_window_config *config, const struct gathered *g,
			struct po_live_window *window)
{
	window->host_bytes = g->host_last;
	window->host_slope_bps = slope_of(g->host_t, g->host_y, g->host_count);
	window->host_limit_bytes = config->host_limit_bytes;
	window->host_oom_s =
	    seconds_to_limit(window->host_bytes, window->host_slope_bps, window->host_limit_bytes);
	window->gpu_bytes = g->gpu_last;
	window->gpu_slope_bps = slope_of(g->gpu_t, g->gpu_y, g->gpu_count);
	window->gpu_limit_bytes = config->gpu_limit_bytes;
	window->gpu_oom_s =
	    seconds_to_limit(window->gpu_bytes, window->gpu_slope_bps, window->gpu_limit_bytes);
}

static void fill_run(const struct po_analysis *analysis, const struct po_live_window_config *config,
		     struct po_live_window *window)
{
	window->events = config->events;
	window->discarded_events = analysis->quality.discarded_events;
	window->discard_windows = (int64_t)analysis->quality.window_count;
	window->ended = analysis->ending == PO_RUN_CLEAN || analysis->ending == PO_RUN_EXCEPTION ||
			analysis->ending == PO_RUN_SIGNAL;
	snprintf(window->ending, sizeof(window->ending), "%s",
		 window->ended ? po_run_ending_name(analysis->ending) : "");
	snprintf(window->ending_detail, sizeof(window->ending_detail), "%s",
		 window->ended && analysis->ending_detail ? analysis->ending_detail : "");
	po_text_trim_cut(window->ending_detail); /* the program's text: cut between characters */
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++)
		if (analysis->diagnosis.findings[i].severity <= PO_SEVERITY_WARNING &&
		    (unsigned)analysis->diagnosis.findings[i].id < 64)
			window->findings |= (uint64_t)1 << analysis->diagnosis.findings[i].id;
	snprintf(window->verdict, sizeof(window->verdict), "%s",
		 po_verdict_name(analysis->diagnosis.verdict));
	snprintf(window->verdict_reason, sizeof(window->verdict_reason), "%s",
		 analysis->diagnosis.verdict_reason ? analysis->diagnosis.verdict_reason : "");
}

/* The window: (now - live.window_s, now], now the newest event when config gives none. */
static void window_span(const struct po_analysis *analysis,
			const struct po_live_window_config *config, int64_t *begin_ns,
			int64_t *now_ns)
{
	*now_ns = config->now_ns > 0 ? config->now_ns : newest_event(analysis);
	*begin_ns = *now_ns - (int64_t)(config->rules->live_window_s * 1e9);
}

enum po_status po_live_window_detect(struct po_analysis *analysis,
				     const struct po_live_window_config *config,
				     struct po_error *err)
{
	int64_t begin_ns, now_ns;

	window_span(analysis, config, &begin_ns, &now_ns);
	return po_detect_run_steps(analysis, config->rules, begin_ns, now_ns, err);
}

enum po_status po_live_window_compute(const struct po_analysis *analysis,
				      const struct po_live_window_config *config,
				      struct po_live_window *window, struct po_error *err)
{
	struct gathered g;

	*window = (struct po_live_window){.snapshot_ms = NAN};
	window_span(analysis, config, &window->begin_ns, &window->now_ns);
	if (!gathered_init(&g, analysis->step_end - analysis->step_first)) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	gather(analysis, config->rules, window, &g);
	fill_steps(analysis, config->rules, config->tally, &g, window);
	fill_workers(analysis, window);
	if (analysis->loop_at_end.step_open && analysis->loop_at_end.category == PO_CAT_DATA_WAIT &&
	    window->now_ns > analysis->loop_at_end.since_ns)
		window->loop_wait_s =
		    (double)(window->now_ns - analysis->loop_at_end.since_ns) / 1e9;
	window->has_gpu = analysis->gpu_count > 0;
	window->gpu_busy_pct = window->has_gpu && g.wall_ns > 0
				   ? 100.0 * (double)g.gpu_busy_ns / (double)g.wall_ns
				   : NAN;
	fill_memory(config, &g, window);
	fill_run(analysis, config, window);
	gathered_fini(&g);
	return po_analysis_steps_check(analysis, err);
}
