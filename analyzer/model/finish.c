/*
 * finish.c: ends the stream and builds struct po_analysis from the model's state, sorted
 * as result.h says so that the output is deterministic.
 */
#include <errno.h>
#include <strings.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"
#include "stats/stats.h"
#include "common/text.h"

#define WARNING_CAP 16

static int compare_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/*
 * Spans and the step still open when the trace ends were cut off by the end of their
 * process (a crash, a signal, workers terminated at shutdown in the middle of a load), not
 * lost by the tracer: discards are counted apart. The open step is dropped.
 */
static void close_stream(struct po_model *model, struct po_analysis *analysis)
{
	analysis->loop_at_end.step_open = model->loop.step_open;
	analysis->loop_at_end.category = PO_CAT_OTHER;
	analysis->loop_at_end.since_ns = model->loop.last_change_ns;
	for (size_t i = 0; i < model->procs.thread_count; i++) {
		if (model->loop.step_open && spans_is_training(model, &model->procs.threads[i]))
			analysis->loop_at_end.category =
			    spans_open_category(&model->procs.threads[i]);
		model->quality.open_at_end += (int64_t)model->procs.threads[i].depth;
		model->procs.threads[i].depth = 0;
	}
	if (model->loop.step_open) {
		step_tracker_drop_open(&model->loop);
		model->quality.open_at_end++;
	}
}

/* The value of a run_config key, or NULL. */
static const char *config_value(const struct po_model *model, const char *key)
{
	for (size_t i = 0; i < model->run_config_count; i++) {
		if (strcmp(model->run_config[i].key, key) == 0)
			return model->run_config[i].value;
	}
	return NULL;
}

/*
 * How the run ended: from run_begin/run_end, and the run_ending pair a program records before
 * run_end when it ends on an exception ("exception: TYPE") or a signal ("signal: NAME"). A
 * run that ended its run but whose command then exited with a failure status (a worker
 * killed, an error after the loop) failed: profopt-record's exit status says so.
 */
static void build_ending(const struct po_model *model, struct po_analysis *analysis)
{
	const char *said = config_value(model, "run_ending");

	analysis->ending_detail = NULL;
	if (!model->run_begun && !model->run_ended)
		analysis->ending = PO_RUN_NO_RUN;
	else if (!model->run_ended)
		analysis->ending = PO_RUN_NO_RUN_END;
	else if (said && strncmp(said, "exception", 9) == 0)
		analysis->ending = PO_RUN_EXCEPTION;
	else if (said && strncmp(said, "signal", 6) == 0)
		analysis->ending = PO_RUN_SIGNAL;
	else if (model->config.command_exit > 0)
		analysis->ending = PO_RUN_FAILED_EXIT;
	else
		analysis->ending = PO_RUN_CLEAN;
	if (analysis->ending == PO_RUN_FAILED_EXIT) {
		int status = model->config.command_exit;

		analysis->ending_detail =
		    status > 128
			? po_arena_printf(analysis->arena, "the command was killed by signal %d",
					  status - 128)
			: po_arena_printf(analysis->arena, "the command exited with status %d",
					  status);
		return;
	}
	if (said && analysis->ending != PO_RUN_CLEAN) {
		const char *colon = strchr(said, ':');

		analysis->ending_detail = colon ? colon + 1 + strspn(colon + 1, " ") : said;
	}
}

static int compare_kv(const void *left, const void *right)
{
	return strcmp(((const struct po_kv *)left)->key, ((const struct po_kv *)right)->key);
}

static const char *config_text(const struct po_analysis *analysis, const char *key)
{
	for (size_t i = 0; i < analysis->config_count; i++)
		if (analysis->config[i].key && strcmp(analysis->config[i].key, key) == 0)
			return analysis->config[i].value;
	return NULL;
}

static int64_t config_integer(const struct po_analysis *analysis, const char *key)
{
	const char *text = config_text(analysis, key);
	char *end = NULL;
	long long value;

	if (!text)
		return -1;
	errno = 0;
	value = strtoll(text, &end, 10);
	return end != text && *end == '\0' && !errno && value >= 0 ? (int64_t)value : -1;
}

static int config_boolean(const struct po_analysis *analysis, const char *key)
{
	const char *text = config_text(analysis, key);

	if (text && (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0))
		return 1;
	if (text && (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0))
		return 0;
	return -1;
}

/* The FILE:LINE before the first '|' of a memory line, trimmed; length 0 when none. */
static struct po_text_span memory_line_key(const char *value)
{
	const char *bar = value ? strchr(value, '|') : NULL;
	int length = bar ? (int)(bar - value) : 0;

	while (length && value[length - 1] == ' ')
		length--;
	return (struct po_text_span){length ? value : NULL, length};
}

/* The Python module's memory lines under prefix ("python_growth" and "python_kept"). */
static struct po_python_growth python_growth(const struct po_analysis *analysis,
					     const char *growth_key, const char *kept_key)
{
	const char *created = config_text(analysis, growth_key);
	const char *second = created ? strchr(created, '|') : NULL;
	struct po_python_growth growth = {.objects = -1};

	second = second ? strchr(second + 1, '|') : NULL;
	if (!second)
		return growth;
	growth.created_at = memory_line_key(created);
	if (!growth.created_at.length)
		return growth;
	growth.objects = strtoll(second + 1, NULL, 10);
	growth.kept_at = memory_line_key(config_text(analysis, kept_key));
	return growth;
}

void po_run_settings_resolve(struct po_analysis *analysis)
{
	analysis->settings = (struct po_run_settings){
	    .num_workers = config_integer(analysis, "num_workers"),
	    .prefetch_factor = config_integer(analysis, "prefetch_factor"),
	    .batch_size = config_integer(analysis, "batch_size"),
	    .pin_memory = config_boolean(analysis, "pin_memory"),
	    .persistent_workers = config_boolean(analysis, "persistent_workers"),
	    .num_threads = config_integer(analysis, "torch_num_threads"),
	    .device = config_text(analysis, "device"),
	    .rank = config_integer(analysis, "rank"),
	    .world_size = config_integer(analysis, "world_size"),
	    .python_main = python_growth(analysis, "python_growth.1", "python_kept.1"),
	    .python_workers =
		python_growth(analysis, "python_growth.workers.1", "python_kept.workers.1")};
	analysis->stacks_wall = config_text(analysis, "stacks_clock") &&
				strcmp(config_text(analysis, "stacks_clock"), "wall") == 0;
}

/* The processes' garbage collections summed per role. */
static void build_gc(const struct po_model *model, struct po_analysis *analysis)
{
	memset(analysis->gc, 0, sizeof(analysis->gc));
	for (size_t i = 0; i < model->procs.process_count; i++) {
		const struct process *process = &model->procs.processes[i];
		struct po_gc_counts *gc;

		if (!process->gc_collections && !process->gc_uncollectable)
			continue;
		gc = &analysis->gc[finish_role_of(analysis, process->pid)];
		gc->collections += process->gc_collections;
		gc->collected = po_add_sat(gc->collected, process->gc_collected);
		gc->uncollectable = po_add_sat(gc->uncollectable, process->gc_uncollectable);
	}
}

static enum po_status build_run(struct po_model *model, struct po_analysis *analysis)
{
	analysis->framework = model->framework;
	analysis->cpu_count = model->cpu_count;
	analysis->config = calloc(model->run_config_count + 1, sizeof(*analysis->config));
	if (!analysis->config)
		return PO_STATUS_NOMEM;
	if (model->run_config_count)
		memcpy(analysis->config, model->run_config,
		       model->run_config_count * sizeof(struct po_kv));
	analysis->config_count = model->run_config_count;
	po_sort(analysis->config, analysis->config_count, sizeof(struct po_kv), compare_kv);
	po_run_settings_resolve(analysis);
	build_ending(model, analysis);
	return PO_STATUS_OK;
}

static enum po_role role_of(const struct po_model *model, const struct process *process)
{
	if (model->loop.has_training && process->pid == model->loop.training_pid)
		return PO_ROLE_MAIN;
	if (process->worker_begin || (process->loader_spans && process->step_count == 0))
		return PO_ROLE_WORKER;
	return PO_ROLE_OTHER;
}

static int compare_processes(const void *left, const void *right)
{
	return compare_i64(((const struct po_process *)left)->pid,
			   ((const struct po_process *)right)->pid);
}

/*
 * The one series of the machine's busy CPU the analysis keeps: the main process's, else the
 * one that spans the longest (each process that is not a forked worker records one).
 */
static void build_machine(const struct po_model *model, struct po_analysis *analysis)
{
	const struct machine_series *chosen = NULL;
	struct po_machine_load *machine = &analysis->machine;
	bool chosen_main = false;
	double span_ns;

	*machine = (struct po_machine_load){.pid = -1, .first_ns = -1, .last_ns = -1};
	for (size_t i = 0; i < model->procs.process_count; i++) {
		const struct process *process = &model->procs.processes[i];
		const struct machine_series *series = &process->machine;
		bool main = model->loop.has_training && process->pid == model->loop.training_pid;

		machine->series += series->samples > 0;
		if (series->samples < 2 || series->last_at_ns <= series->first_at_ns ||
		    (chosen && chosen_main && !main) ||
		    (chosen && main == chosen_main &&
		     series->last_at_ns - series->first_at_ns <=
			 chosen->last_at_ns - chosen->first_at_ns))
			continue;
		chosen = series;
		chosen_main = main;
		machine->pid = process->pid;
	}
	if (!chosen)
		return;
	span_ns = (double)(chosen->last_at_ns - chosen->first_at_ns);
	machine->known = true;
	machine->first_ns = chosen->first_at_ns;
	machine->last_ns = chosen->last_at_ns;
	machine->busy_cores = (double)(chosen->last_ns - chosen->first_ns) / span_ns;
	machine->traced_cores =
	    (double)(chosen->traced_last_ns - chosen->traced_first_ns) / span_ns;
	machine->others_cores = machine->busy_cores > machine->traced_cores
				    ? machine->busy_cores - machine->traced_cores
				    : 0;
}

/* A process as the model whose tracker holds it saw it (the owning model or a rank's). */
static struct po_process process_entry(const struct po_model *model, const struct process *process)
{
	return (struct po_process){.pid = process->pid,
				   .name = process->name ? process->name : "",
				   .role = role_of(model, process),
				   .worker_id = process->worker_id,
				   .parent_pid = process->parent_pid,
				   .first_ns = process->first_ns,
				   .last_ns = process->last_ns,
				   .event_count = process->event_count,
				   .rss_first_bytes = process->rss_first_bytes,
				   .rss_last_bytes = process->rss_last_bytes,
				   .rss_peak_bytes = process->rss_peak_bytes,
				   .cpu_first_ns = process->cpu_first_ns,
				   .cpu_last_ns = process->cpu_last_ns,
				   .runq_first_ns = process->runq_first_ns,
				   .runq_last_ns = process->runq_last_ns,
				   .sets = process->sets,
				   .self_cost_total_ns = -1,
				   .self_cost_per_step_ns = NAN,
				   .rank = -1};
}

static int64_t earlier_known(int64_t first, int64_t second)
{
	return first >= 0 ? first : second;
}

static int64_t later_known(int64_t first, int64_t second)
{
	return second >= 0 ? second : first;
}

/*
 * One process seen by the owning model until its rank event and by its rank's model after
 * (`later`): one entry, with the rank's model's role and the counters' first and last values
 * across both (the CPU clock was handed over, process_tracker_continue_cpu).
 */
static void merge_process(struct po_process *into, const struct po_process *later)
{
	if (*later->name)
		into->name = later->name;
	into->role = later->role;
	into->worker_id = later->worker_id >= 0 ? later->worker_id : into->worker_id;
	into->parent_pid = later->parent_pid >= 0 ? later->parent_pid : into->parent_pid;
	into->first_ns = into->first_ns < later->first_ns ? into->first_ns : later->first_ns;
	into->last_ns = into->last_ns > later->last_ns ? into->last_ns : later->last_ns;
	into->event_count += later->event_count;
	into->rss_first_bytes = earlier_known(into->rss_first_bytes, later->rss_first_bytes);
	into->rss_last_bytes = later_known(into->rss_last_bytes, later->rss_last_bytes);
	if (later->rss_peak_bytes > into->rss_peak_bytes)
		into->rss_peak_bytes = later->rss_peak_bytes;
	into->cpu_first_ns = earlier_known(into->cpu_first_ns, later->cpu_first_ns);
	into->cpu_last_ns = later_known(into->cpu_last_ns, later->cpu_last_ns);
	into->runq_first_ns = earlier_known(into->runq_first_ns, later->runq_first_ns);
	into->runq_last_ns = later_known(into->runq_last_ns, later->runq_last_ns);
	if (later->sets.uss_first_bytes >= 0 || later->sets.pss_first_bytes >= 0)
		into->sets = later->sets;
	into->rank = later->rank;
	into->other_rank = later->other_rank;
}

/* The processes of the ranks this model does not analyse, held by their ranks' models. */
static size_t other_rank_process_count(const struct po_rank_tracker *ranks)
{
	size_t count = 0;

	for (size_t i = 0; i < ranks->lane_count; i++)
		if (ranks->lanes[i].rank != ranks->primary_rank)
			count += ranks->lanes[i].model->procs.process_count;
	return count;
}

/*
 * Every rank's processes and their workers are the recorded program's: the other ranks'
 * join the table from their own models, as one entry per pid with whatever the owning model
 * saw of them before their rank event. `owned` entries (sorted by pid) come first.
 */
static enum po_status add_other_ranks(const struct po_model *model, struct po_analysis *analysis,
				      size_t owned)
{
	const struct po_rank_tracker *ranks = &model->ranks;

	for (size_t i = 0; i < ranks->lane_count; i++) {
		const struct rank_lane *lane = &ranks->lanes[i];
		const struct po_process_tracker *procs = &lane->model->procs;

		if (lane->rank == ranks->primary_rank)
			continue;
		for (size_t p = 0; p < procs->process_count; p++) {
			struct po_process entry = process_entry(lane->model, &procs->processes[p]);
			struct po_process *found;

			if (!entry.event_count)
				continue; /* handed a CPU clock, never heard of after */
			found = bsearch(&entry, analysis->processes, owned, sizeof(entry),
					compare_processes);

			entry.name = po_arena_strdup(analysis->arena, entry.name);
			if (!entry.name)
				return PO_STATUS_NOMEM;
			entry.rank = lane->rank;
			entry.other_rank = true;
			if (found)
				merge_process(found, &entry);
			else
				analysis->processes[analysis->process_count++] = entry;
		}
	}
	return PO_STATUS_OK;
}

static enum po_status build_processes(struct po_model *model, struct po_analysis *analysis)
{
	size_t capacity = model->procs.process_count + other_rank_process_count(&model->ranks);
	enum po_status status;

	analysis->processes = calloc(capacity + 1, sizeof(*analysis->processes));
	if (!analysis->processes)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->procs.process_count; i++) {
		const struct process *process = &model->procs.processes[i];
		struct po_process *entry = &analysis->processes[i];
		bool primary;

		*entry = process_entry(model, process);
		memcpy(entry->self_cost_ns, process->self_cost_ns, sizeof(process->self_cost_ns));
		if (rank_tracker_borrow_model(&model->ranks, process->pid, &entry->rank, &primary))
			entry->other_rank = !primary;
	}
	analysis->process_count = model->procs.process_count;
	po_sort(analysis->processes, analysis->process_count, sizeof(struct po_process),
		compare_processes);
	status = add_other_ranks(model, analysis, analysis->process_count);
	if (status != PO_STATUS_OK)
		return status;
	po_sort(analysis->processes, analysis->process_count, sizeof(struct po_process),
		compare_processes);
	analysis->main_pid = model->loop.has_training ? model->loop.training_pid : -1;
	build_machine(model, analysis);
	return PO_STATUS_OK;
}

enum po_role finish_role_of(const struct po_analysis *analysis, int32_t pid)
{
	struct po_process key = {.pid = pid};
	const struct po_process *found = bsearch(&key, analysis->processes, analysis->process_count,
						 sizeof(key), compare_processes);

	return found ? found->role : PO_ROLE_OTHER;
}

static int compare_threads(const void *left, const void *right)
{
	const struct po_thread *a = left, *b = right;

	return a->pid != b->pid ? compare_i64(a->pid, b->pid) : compare_i64(a->tid, b->tid);
}

static enum po_status build_threads(struct po_model *model, struct po_analysis *analysis)
{
	analysis->threads = calloc(model->procs.thread_count + 1, sizeof(*analysis->threads));
	if (!analysis->threads)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->procs.thread_count; i++) {
		const struct thread *thread = &model->procs.threads[i];
		const char *name = model->procs.processes[thread->process].name;

		analysis->threads[i] =
		    (struct po_thread){.pid = thread->pid,
				       .tid = thread->tid,
				       .name = name ? name : "",
				       .is_training_loop = step_tracker_is_training(
					   &model->loop, thread->pid, thread->tid)};
	}
	analysis->thread_count = model->procs.thread_count;
	po_sort(analysis->threads, analysis->thread_count, sizeof(struct po_thread),
		compare_threads);
	return PO_STATUS_OK;
}

/*
 * The analysis takes the model's step store; the model's passes over old steps (details,
 * gaps) still read it through model->loop.steps (weak from here on) until it is destroyed.
 */
/* The index of the first step that ended after time_ns (count when none). */
static size_t first_ended_after(struct po_step_store *store, size_t count, int64_t time_ns)
{
	size_t first;

	if (time_ns == INT64_MIN)
		return 0;
	if (time_ns == INT64_MAX)
		return count;
	/* Steps of one loop follow each other: the last step begun by time_ns may end after. */
	first = po_step_store_upper_bound(store, time_ns);
	if (first && po_step_store_borrow(store, first - 1)->end_ns > time_ns)
		first--;
	return first;
}

/* Hands the steps over, with the range the statistics cover (model config steps range). */
static void build_steps(struct po_model *model, struct po_analysis *analysis)
{
	size_t count = model->loop.step_count;

	analysis->step_store = model->loop.steps;
	analysis->step_count = count;
	analysis->step_first =
	    first_ended_after(model->loop.steps, count, model->config.steps_after_ns);
	analysis->step_end =
	    first_ended_after(model->loop.steps, count, model->config.steps_until_ns);
	if (analysis->step_end < analysis->step_first)
		analysis->step_end = analysis->step_first;
	analysis->first_epoch_steps = model->loop.first_epoch_steps;
	model->loop.steps_given = true;
}

static int compare_ns(const void *left, const void *right)
{
	return compare_i64(*(const int64_t *)left, *(const int64_t *)right);
}

/* The quantile q of n sorted durations (po_stats_quantile_position), to the nanosecond. */
static int64_t quantile_ns(const int64_t *sorted, size_t n, double q)
{
	size_t lower;
	double fraction;

	po_stats_quantile_position(n, q, &lower, &fraction);
	if (fraction == 0)
		return sorted[lower];
	return sorted[lower] + llround(fraction * (double)(sorted[lower + 1] - sorted[lower]));
}

static void sum_clean(const struct po_analysis *analysis, int64_t *durations,
		      struct po_step_stats *stats, double *total_ns, double *samples,
		      double *sampled_ns)
{
	for (size_t i = analysis->step_first; i < analysis->step_end; i++) {
		const struct po_step *step = po_step_store_borrow(analysis->step_store, i);
		int64_t step_ns = step->end_ns - step->begin_ns;

		if (step->flags & PO_STEP_LOSSY)
			continue;
		durations[stats->clean_count++] = step_ns;
		*total_ns += (double)step_ns;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			stats->category_mean_ns[c] += (double)step->category_ns[c];
		if (step->batch_size >= 0) {
			*samples += (double)step->batch_size;
			*sampled_ns += (double)step_ns;
		}
	}
}

/* The steps' coverage of the time from the first step's begin to the last step's end. */
static void coverage(const struct po_analysis *analysis, struct po_step_stats *stats)
{
	const struct po_step *first, *last;
	double covered_ns = 0;

	stats->coverage_pct = -1;
	stats->span_ns = -1;
	if (analysis->step_end <= analysis->step_first)
		return;
	for (size_t i = analysis->step_first; i < analysis->step_end; i++) {
		const struct po_step *step = po_step_store_borrow(analysis->step_store, i);

		covered_ns += (double)(step->end_ns - step->begin_ns);
	}
	first = po_step_store_borrow(analysis->step_store, analysis->step_first);
	stats->span_ns = first->begin_ns;
	last = po_step_store_borrow(analysis->step_store, analysis->step_end - 1);
	stats->span_ns = last->end_ns - stats->span_ns;
	stats->coverage_pct =
	    stats->span_ns > 0 ? fmin(100.0, 100.0 * covered_ns / (double)stats->span_ns) : 100.0;
}

static enum po_status build_stats(struct po_analysis *analysis)
{
	struct po_step_stats *stats = &analysis->step_stats;
	int64_t *durations = calloc(analysis->step_end - analysis->step_first + 1, sizeof(int64_t));
	double total_ns = 0, samples = 0, sampled_ns = 0;
	size_t clean;

	if (!durations)
		return PO_STATUS_NOMEM;
	*stats =
	    (struct po_step_stats){.count = (int64_t)(analysis->step_end - analysis->step_first),
				   .min_ns = -1,
				   .p50_ns = -1,
				   .p90_ns = -1,
				   .p95_ns = -1,
				   .p99_ns = -1,
				   .max_ns = -1,
				   .samples_per_s = -1};
	sum_clean(analysis, durations, stats, &total_ns, &samples, &sampled_ns);
	coverage(analysis, stats);
	clean = (size_t)stats->clean_count;
	if (clean) {
		po_sort(durations, clean, sizeof(int64_t), compare_ns);
		stats->min_ns = durations[0];
		stats->max_ns = durations[clean - 1];
		stats->p50_ns = quantile_ns(durations, clean, 0.50);
		stats->p90_ns = quantile_ns(durations, clean, 0.90);
		stats->p95_ns = quantile_ns(durations, clean, 0.95);
		stats->p99_ns = quantile_ns(durations, clean, 0.99);
		stats->mean_ns = total_ns / (double)clean;
		stats->steps_per_s =
		    total_ns > 0 ? (double)clean * 1e9 / total_ns * stats->coverage_pct / 100 : 0;
		if (sampled_ns > 0)
			stats->samples_per_s =
			    samples * 1e9 / sampled_ns * stats->coverage_pct / 100;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			stats->category_mean_ns[c] /= (double)clean;
		if (po_stats_histogram_axis(&stats->histogram, PO_STEP_HISTOGRAM_BINS,
					    (double)durations[0], (double)durations[clean - 1]))
			for (size_t i = 0; i < clean; i++)
				po_stats_histogram_add(&stats->histogram,
						       &(double){(double)durations[i]}, 1);
	}
	free(durations);
	return PO_STATUS_OK;
}

static int compare_workers(const void *left, const void *right)
{
	const struct po_worker *a = left, *b = right;

	if (a->worker_id != b->worker_id)
		return compare_i64(a->worker_id, b->worker_id);
	return compare_i64(a->pid, b->pid);
}

struct lifetime_edge {
	int64_t time_ns;
	int delta; /* +1 a worker starts, -1 it ends */
};

static int compare_edges(const void *left, const void *right)
{
	const struct lifetime_edge *a = left, *b = right;

	if (a->time_ns != b->time_ns)
		return compare_i64(a->time_ns, b->time_ns);
	return compare_i64(a->delta, b->delta); /* an end before a start at the same time */
}

/* Sweeps the workers' lifetimes: the most alive at once, generations, time any is alive. */
static enum po_status worker_lifetimes(struct po_analysis *analysis)
{
	size_t count = analysis->worker_count * 2;
	struct lifetime_edge *edges = malloc((count ? count : 1) * sizeof(*edges));
	int64_t alive = 0, since_ns = 0;

	if (!edges)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < analysis->worker_count; i++) {
		edges[2 * i] = (struct lifetime_edge){analysis->workers[i].first_ns, +1};
		edges[2 * i + 1] = (struct lifetime_edge){analysis->workers[i].last_ns, -1};
	}
	po_sort(edges, count, sizeof(*edges), compare_edges);
	for (size_t i = 0; i < count; i++) {
		if (edges[i].delta > 0 && alive == 0) {
			analysis->worker_generations++;
			since_ns = edges[i].time_ns;
		}
		alive += edges[i].delta;
		if (alive > analysis->concurrent_workers)
			analysis->concurrent_workers = alive;
		if (edges[i].delta < 0 && alive == 0)
			analysis->worker_alive_ns += edges[i].time_ns - since_ns;
	}
	free(edges);
	return PO_STATUS_OK;
}

static enum po_status build_workers(struct po_model *model, struct po_analysis *analysis)
{
	analysis->workers = calloc(model->procs.process_count + 1, sizeof(*analysis->workers));
	if (!analysis->workers)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->procs.process_count; i++) {
		const struct process *process = &model->procs.processes[i];
		struct po_worker *worker;

		if (role_of(model, process) != PO_ROLE_WORKER)
			continue;
		worker = &analysis->workers[analysis->worker_count++];
		*worker = (struct po_worker){.pid = process->pid,
					     .worker_id = process->worker_id,
					     .batches = process->batches,
					     .busy_ns = process->busy_ns,
					     .first_ns = process->first_ns,
					     .last_ns = process->last_ns};
		memcpy(worker->stage_ns, process->stage_ns, sizeof(worker->stage_ns));
		memcpy(worker->stage_cpu_ns, process->stage_cpu_ns, sizeof(worker->stage_cpu_ns));
	}
	po_sort(analysis->workers, analysis->worker_count, sizeof(struct po_worker),
		compare_workers);
	return worker_lifetimes(analysis);
}

static void warn(struct po_analysis *analysis, const char *code, const char *text)
{
	if (text && analysis->warning_count < WARNING_CAP)
		analysis->warnings[analysis->warning_count++] = (struct po_warning){code, text};
}

/* The kinds of the values refused as implausible, with their counts: "2 KIND; 1 KIND". */
static const char *implausible_kinds(struct po_arena *arena, const struct po_quality *quality)
{
	const char *text = "";

	for (int kind = 0; kind < PO_IMPLAUSIBLE_COUNT; kind++) {
		if (!quality->implausible[kind])
			continue;
		text = po_arena_printf(arena, "%s%s%lld: %s", text, *text ? "; " : "",
				       (long long)quality->implausible[kind],
				       po_implausible_text((enum po_implausible)kind));
		if (!text)
			return "their kinds not kept: out of memory";
	}
	return text;
}

static void context_warning(struct po_analysis *analysis)
{
	const struct po_quality *quality = &analysis->quality;

	if (!quality->missing_vpid && !quality->missing_vtid && !quality->missing_procname)
		return;
	warn(analysis, "missing-context",
	     po_arena_printf(analysis->arena,
			     "the trace lacks the%s%s%s context, so processes and threads cannot "
			     "be told apart; record with: lttng add-context -u -t vpid -t vtid "
			     "-t procname (profopt-record adds them)",
			     quality->missing_vpid ? " vpid" : "",
			     quality->missing_vtid ? " vtid" : "",
			     quality->missing_procname ? " procname" : ""));
}

static int64_t late_records(const struct po_analysis *analysis)
{
	int64_t late = 0;

	for (size_t i = 0; i < analysis->gpu_count; i++)
		late += analysis->gpus[i].late_records;
	return late;
}

/* "pid 4242 python3 (another recording), ...": the first few processes left out. */
static const char *excluded_list(const struct po_analysis *analysis)
{
	static const char *const reasons[PO_EXCLUDED_REASON_COUNT] = {
	    [PO_EXCLUDED_OTHER_RECORDING] = "another recording",
	    [PO_EXCLUDED_OUTSIDE_COMMAND] = "not started by the command",
	    [PO_EXCLUDED_NO_ANNOUNCEMENT] =
		"running before the recording, or a libprofopt too old to announce itself",
	};
	char text[600];
	size_t length = 0,
	       shown = analysis->excluded_process_count < 4 ? analysis->excluded_process_count : 4;

	text[0] = '\0';
	for (size_t i = 0; i < shown && length < sizeof(text); i++) {
		const struct po_excluded_process *entry = &analysis->excluded_processes[i];

		length += (size_t)snprintf(
		    text + length, sizeof(text) - length, "%spid %d %.*s (%s)", i ? ", " : "",
		    (int)entry->pid, entry->name ? po_text_precision(entry->name, 40) : 1,
		    entry->name ? entry->name : "?",
		    (unsigned)entry->reason < PO_EXCLUDED_REASON_COUNT ? reasons[entry->reason]
								       : "?");
	}
	if (analysis->quality.excluded_processes > (int64_t)shown && length < sizeof(text))
		snprintf(text + length, sizeof(text) - length, ", and %lld more",
			 (long long)(analysis->quality.excluded_processes - (int64_t)shown));
	return po_arena_printf(analysis->arena, "%s", text);
}

/* Seconds from the trace's first event, for the warnings' windows. */
static double seconds_in(const struct po_analysis *analysis, int64_t time_ns)
{
	int64_t origin = analysis->quality.first_ns >= 0 ? analysis->quality.first_ns : 0;

	return (double)(time_ns - origin) / 1e9;
}

static void missing_warnings(struct po_analysis *analysis)
{
	const struct po_missing_window *recording = NULL, *stream = NULL;
	int64_t streams = 0;

	for (size_t i = 0; i < analysis->missing_window_count; i++) {
		const struct po_missing_window *window = &analysis->missing_windows[i];

		if (window->kind == PO_MISSING_RECORDING_ENDS_EARLY) {
			recording = window;
		} else if (window->kind != PO_MISSING_STREAM_DAMAGED) { /* said by salvage */
			streams++;
			if (!stream)
				stream = window;
		}
	}
	if (recording)
		warn(
		    analysis, "recording-ends-early",
		    po_arena_printf(analysis->arena,
				    "the trace ends %.1f s before the recorded command did (at "
				    "%.1f s of %.1f s): the end of the recording is missing (a "
				    "full disk, or a consumer that was stopped); the result covers "
				    "only the recorded part",
				    (double)(recording->end_ns - recording->begin_ns) / 1e9,
				    seconds_in(analysis, recording->begin_ns),
				    seconds_in(analysis, recording->end_ns)));
	if (stream)
		warn(
		    analysis, "truncated-streams",
		    po_arena_printf(analysis->arena,
				    "%lld stream(s) were cut short at a packet boundary (a full "
				    "disk, or a consumer that was stopped): %s lost %.1f s to "
				    "%.1f s%s; the %lld steps overlapping missing windows are kept "
				    "out of the statistics and the result is partial",
				    (long long)streams, stream->path ? stream->path : "?",
				    seconds_in(analysis, stream->begin_ns),
				    seconds_in(analysis, stream->end_ns),
				    stream->kind == PO_MISSING_STREAM_SHORTER_THAN_INDEX
					? " (its index lists packets the file no longer holds)"
					: " (the other streams of its trace go on)",
				    (long long)analysis->quality.lossy_steps));
}

/*
 * Fewer worker processes than the run configured (num_workers) recorded events: workers
 * that never reached the trace (per-process buffers on a busy machine register late).
 */
static void worker_warnings(struct po_analysis *analysis)
{
	int64_t configured = analysis->settings.num_workers;

	if (configured <= 0 || analysis->step_count == 0 ||
	    (int64_t)analysis->worker_count >= configured)
		return;
	warn(
	    analysis, "missing-workers",
	    po_arena_printf(analysis->arena,
			    "the run configured num_workers=%lld but %zu worker processes "
			    "recorded events: the others recorded nothing (with --buffers pid, "
			    "workers that start while the machine is busy can miss their "
			    "registration with the tracer); worker figures cover the recorded ones",
			    (long long)configured, analysis->worker_count));
}

static void membership_warnings(struct po_analysis *analysis)
{
	const struct po_quality *quality = &analysis->quality;

	if (quality->excluded_processes)
		warn(analysis, "other-processes",
		     po_arena_printf(analysis->arena,
				     "%lld processes that are not the recorded command's were "
				     "left out with their %lld events: %s",
				     (long long)quality->excluded_processes,
				     (long long)quality->excluded_events, excluded_list(analysis)));
	if (quality->late_announced_events)
		warn(analysis, "late-announcement",
		     po_arena_printf(analysis->arena,
				     "%lld events came from processes of the command before they "
				     "announced themselves and are not in the analysis",
				     (long long)quality->late_announced_events));
	if (quality->unannounced_kept)
		warn(analysis, "unannounced-kept",
		     po_arena_printf(
			 analysis->arena,
			 "%lld processes whose announcement was not found were kept as "
			 "the command's: packets are missing from the trace (streams cut "
			 "short, or damaged packets --salvage left out), which may have "
			 "held it; processes of other programs that recorded at the same "
			 "time cannot be told from them",
			 (long long)quality->unannounced_kept));
	if (quality->recording_unannounced)
		warn(analysis, "processes-unannounced",
		     "no process announced its recording (a libprofopt older than "
		     "profopt-record): processes of other programs that recorded at the same "
		     "time cannot be told apart and are analysed with the command's");
}

static void quality_warnings(const struct po_model *model, struct po_analysis *analysis)
{
	const struct po_quality *quality = &analysis->quality;
	struct po_arena *arena = analysis->arena;

	missing_warnings(analysis);
	membership_warnings(analysis);
	worker_warnings(analysis);

	if (quality->unmatched_begins || quality->unmatched_ends)
		warn(analysis, "unmatched-spans",
		     po_arena_printf(arena,
				     "%lld span begins and %lld span ends had no match; "
				     "steps with one on the training thread are flagged unmatched",
				     (long long)quality->unmatched_begins,
				     (long long)quality->unmatched_ends));
	if (config_text(analysis, "stacks_stopped"))
		/* libprofopt's sampler stopped itself (docs/sampling.md, "What it leaves alone") */
		warn(analysis, "stacks-stopped",
		     po_arena_printf(arena,
				     "function sampling stopped during the run (%s): the "
				     "hotspots hold only the samples taken before",
				     config_text(analysis, "stacks_stopped")));
	if (quality->gpu_records_dropped)
		warn(analysis, "gpu-records-dropped",
		     po_arena_printf(arena,
				     "%lld GPU activity records were dropped by the CUPTI "
				     "collector (its buffers filled faster than they were "
				     "flushed): GPU busy time is a lower bound there",
				     (long long)quality->gpu_records_dropped));
	if (quality->implausible_values) {
		/* a value that feeds a verdict was left out: the result says it is partial */
		analysis->quality.partial = true;
		warn(analysis, "implausible-values",
		     po_arena_printf(arena,
				     "%lld values could not be physical and were ignored (%s): "
				     "the trace is damaged there, and the result is partial",
				     (long long)quality->implausible_values,
				     implausible_kinds(arena, quality)));
	}
	if (quality->unmatched_mem_frees)
		warn(analysis, "unmatched-frees",
		     po_arena_printf(arena,
				     "%lld mem_free events named an address with no live "
				     "allocation (freed twice, allocated before the recording "
				     "started, or a damaged address): allocations reported as "
				     "still live may have been freed there",
				     (long long)quality->unmatched_mem_frees));
	if (quality->open_at_end)
		warn(analysis, "open-at-end",
		     po_arena_printf(arena,
				     "%lld spans were still open when their process's events "
				     "ended (the program ended, crashed or was stopped in the "
				     "middle of them)%s",
				     (long long)quality->open_at_end,
				     quality->missing_windows
					 ? ", or the trace is missing their end (see the missing "
					   "windows)"
					 : "; the tracer lost nothing there"));
	if (quality->step_mismatches)
		warn(analysis, "step-mismatch",
		     po_arena_printf(arena,
				     "%lld step_end events named another step than the "
				     "open one",
				     (long long)quality->step_mismatches));
	if (quality->time_inversions)
		warn(analysis, "time-inversions",
		     po_arena_printf(arena,
				     "%lld events were older than the previous event of "
				     "their thread",
				     (long long)quality->time_inversions));
	if (analysis->step_stats.coverage_pct >= 0 &&
	    analysis->step_stats.coverage_pct < PO_COVERAGE_WARN_PCT)
		warn(analysis, "steps-coverage",
		     po_arena_printf(arena,
				     "steps cover %.1f%% of the time from the first step to the "
				     "last; the rest (work outside the step marker, evaluation, "
				     "epoch starts) is in no breakdown, and throughput comes from "
				     "the step period",
				     analysis->step_stats.coverage_pct));
	if (model->loop.steps_other_threads)
		warn(analysis, "steps-on-several-threads",
		     po_arena_printf(arena,
				     "%lld steps came from other threads than the "
				     "training loop and were not analysed",
				     (long long)model->loop.steps_other_threads));
	if (late_records(analysis))
		warn(analysis, "late-gpu-records",
		     po_arena_printf(arena,
				     "%lld GPU records arrived too late to be merged "
				     "exactly; GPU busy time is approximate",
				     (long long)late_records(analysis)));
}

static enum po_status build_quality(struct po_model *model, struct po_analysis *analysis)
{
	analysis->quality = model->quality;
	analysis->discard_windows =
	    calloc(model->quality.window_count + 1, sizeof(*analysis->discard_windows));
	analysis->warnings = calloc(WARNING_CAP, sizeof(*analysis->warnings));
	if (!analysis->discard_windows || !analysis->warnings)
		return PO_STATUS_NOMEM;
	memcpy(analysis->discard_windows, model->windows,
	       model->quality.window_count * sizeof(*model->windows));
	analysis->quality.recording_known = model->config.recording_id[0] != '\0';
	for (size_t k = 0; k < model->config.recording_count; k++)
		analysis->quality.recording_known |= model->config.recordings[k].id[0] != '\0';
	analysis->quality.recording_unannounced =
	    analysis->quality.recording_known && !model->any_announced;
	if (model->missing_count) {
		analysis->missing_windows =
		    calloc(model->missing_count, sizeof(*analysis->missing_windows));
		if (!analysis->missing_windows)
			return PO_STATUS_NOMEM;
		memcpy(analysis->missing_windows, model->missing,
		       model->missing_count * sizeof(*model->missing));
		analysis->missing_window_count = model->missing_count;
	}
	if (model->excluded_count) {
		analysis->excluded_processes =
		    calloc(model->excluded_count, sizeof(*analysis->excluded_processes));
		if (!analysis->excluded_processes)
			return PO_STATUS_NOMEM;
		memcpy(analysis->excluded_processes, model->excluded,
		       model->excluded_count * sizeof(*model->excluded));
		analysis->excluded_process_count = model->excluded_count;
	}
	return PO_STATUS_OK;
}

void po_analysis_build_pipeline(struct po_analysis *analysis)
{
	static const enum po_stage loader_stages[3] = {PO_STAGE_LOAD, PO_STAGE_PREPROCESS,
						       PO_STAGE_COLLATE};
	struct po_pipeline_stats *pipeline = &analysis->pipeline;
	double depth_sum = 0;
	int64_t depth_count = 0;

	pipeline->worker_batches = 0;
	for (size_t i = 0; i < analysis->worker_count; i++)
		pipeline->worker_batches += analysis->workers[i].batches;
	for (int s = 0; s < 3; s++) {
		int64_t total = 0;

		for (size_t i = 0; i < analysis->worker_count; i++)
			total += analysis->workers[i].stage_ns[loader_stages[s]];
		pipeline->loader_stage_mean_ns[s] =
		    pipeline->worker_batches > 0 ? (double)total / pipeline->worker_batches : -1;
	}
	pipeline->window_s = -1;
	if (analysis->step_end > analysis->step_first)
		pipeline->window_s = (po_analysis_step(analysis, analysis->step_end - 1).end_ns -
				      po_analysis_step(analysis, analysis->step_first).begin_ns) /
				     1e9;
	for (size_t i = analysis->step_first; i < analysis->step_end; i++) {
		int64_t queue_depth = po_analysis_step(analysis, i).queue_depth;

		if (queue_depth >= 0) {
			depth_sum += (double)queue_depth;
			depth_count++;
		}
	}
	pipeline->mean_queue_depth = depth_count ? depth_sum / depth_count : -1;
}

/* A figure spread over the run's steps; NaN without steps or without the figure. */
static double per_step(int64_t total_ns, size_t step_count)
{
	return total_ns >= 0 && step_count > 0 ? (double)total_ns / (double)step_count : NAN;
}

/* One process's own cost: its sources summed; -1 when it reported none. */
static int64_t process_self_cost(struct po_process *process, struct po_self_cost *cost)
{
	int64_t total_ns = -1;

	for (int i = 0; i < PO_COST_SOURCE_COUNT; i++) {
		int64_t ns = process->self_cost_ns[i];

		if (ns < 0)
			continue;
		total_ns = po_add_sat(total_ns < 0 ? 0 : total_ns, ns);
		cost->source_ns[i] =
		    po_add_sat(cost->source_ns[i] < 0 ? 0 : cost->source_ns[i], ns);
	}
	return total_ns;
}

/*
 * What the measurement cost (po_self_cost): every process's own report and the
 * recorder's, spread over the run's steps (every step of the training loop: the costs are
 * the whole run's too).
 */
static void build_self_cost(const struct po_model *model, struct po_analysis *analysis)
{
	struct po_self_cost *cost = &analysis->self_cost;

	*cost = (struct po_self_cost){.processes_ns = -1,
				      .recorder_ns = model->config.recorder_cpu_ns,
				      .step_count = (int64_t)analysis->step_count};
	for (int i = 0; i < PO_COST_SOURCE_COUNT; i++)
		cost->source_ns[i] = -1;
	for (size_t i = 0; i < analysis->process_count; i++) {
		struct po_process *process = &analysis->processes[i];
		int64_t total_ns = process_self_cost(process, cost);

		if (total_ns < 0)
			continue;
		process->self_cost_total_ns = total_ns;
		process->self_cost_per_step_ns = per_step(total_ns, analysis->step_count);
		cost->processes_ns =
		    po_add_sat(cost->processes_ns < 0 ? 0 : cost->processes_ns, total_ns);
		cost->reporting_processes++;
	}
	cost->known = cost->processes_ns >= 0 || cost->recorder_ns >= 0;
	cost->processes_per_step_ns = per_step(cost->processes_ns, analysis->step_count);
	cost->recorder_per_step_ns = per_step(cost->recorder_ns, analysis->step_count);
	cost->per_step_ns = isnan(cost->processes_per_step_ns) ? cost->recorder_per_step_ns
			    : isnan(cost->recorder_per_step_ns)
				? cost->processes_per_step_ns
				: cost->processes_per_step_ns + cost->recorder_per_step_ns;
}

enum po_status finish_build(struct po_model *model, struct po_analysis *analysis)
{
	enum po_status status;

	analysis->arena = model->arena; /* the interned strings go with the analysis */
	model->arena = NULL;
	analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	analysis->diagnosis.steady = (struct po_steady_stats){0, 0, NAN, NAN, NAN, NAN, false};
	analysis->diagnosis.self_cost_pct = NAN;
	close_stream(model, analysis);
	status = gpu_tracker_flush(&model->gpu);
	if (status == PO_STATUS_OK)
		status = model->deferred;
	if (status == PO_STATUS_OK)
		status = build_quality(model, analysis);
	if (status == PO_STATUS_OK)
		status = build_run(model, analysis);
	if (status == PO_STATUS_OK)
		status = build_processes(model, analysis);
	if (status == PO_STATUS_OK)
		status = build_threads(model, analysis);
	if (status == PO_STATUS_OK)
		status = model_gpu_build(model, analysis);
	if (status == PO_STATUS_OK) {
		build_steps(model, analysis);
		build_self_cost(model, analysis);
		status = build_stats(analysis);
	}
	if (status == PO_STATUS_OK)
		status = build_workers(model, analysis);
	if (status == PO_STATUS_OK)
		status = label_tracker_build(&model->labels, analysis, finish_role_of);
	if (status == PO_STATUS_OK)
		status = hotspot_tracker_build(&model->hotspots, analysis, finish_role_of);
	if (status == PO_STATUS_OK) {
		po_analysis_build_pipeline(analysis);
		status = memory_tracker_build(&model->memory, analysis, finish_role_of,
					      model->config.native_namer);
		analysis->memory.machine_bytes = model->procs.machine_memory_bytes;
		build_gc(model, analysis);
	}
	if (status == PO_STATUS_OK)
		status = detail_tracker_build(&model->timeline, analysis);
	if (status != PO_STATUS_OK)
		return status;
	context_warning(analysis);
	quality_warnings(model, analysis);
	return PO_STATUS_OK;
}
