/* digest.c: reduces an analysis or a summary.json to the digest a comparison needs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/summary_keys.h"
#include "compare.h"
#include "json_read.h"
#include "metrics/metrics.h"
#include "stats/stats.h"

/* Grows every per-step series to hold need steps (doubling: realloc moves large ones by
 * remapping, and pages not yet written are not resident). */
static enum po_status digest_reserve(struct po_digest *digest, size_t need)
{
	double **series[3 + PO_CATEGORY_COUNT] = {&digest->step_ms, &digest->gpu_busy_pct,
						  &digest->live_bytes};
	size_t capacity = digest->capacity ? digest->capacity : 1024;

	if (need <= digest->capacity)
		return PO_STATUS_OK;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		series[3 + c] = &digest->category_ms[c];
	while (capacity < need)
		capacity *= 2;
	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
		double *grown = realloc(*series[i], capacity * sizeof(double));

		if (!grown)
			return PO_STATUS_NOMEM;
		*series[i] = grown;
	}
	digest->capacity = capacity;
	return PO_STATUS_OK;
}

static enum po_status digest_create(size_t step_count, const char *label, struct po_digest **out)
{
	struct po_digest *digest = calloc(1, sizeof(*digest));

	*out = NULL;
	if (!digest || !(digest->arena = po_arena_create())) {
		free(digest);
		return PO_STATUS_NOMEM;
	}
	digest->label = po_arena_strdup(digest->arena, label);
	digest->samples_per_s = NAN;
	digest->worker_busy_pct = NAN;
	digest->gpu_busy_share_pct = NAN;
	digest->others_cores = NAN;
	digest->cpu_count = NAN;
	digest->cpu_stretch = NAN;
	if (!digest->label || digest_reserve(digest, step_count ? step_count : 1) != PO_STATUS_OK) {
		po_digest_destroy(digest);
		return PO_STATUS_NOMEM;
	}
	*out = digest;
	return PO_STATUS_OK;
}

void po_digest_destroy(struct po_digest *digest)
{
	if (!digest)
		return;
	free(digest->step_ms);
	free(digest->gpu_busy_pct);
	free(digest->live_bytes);
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		free(digest->category_ms[c]);
	po_arena_destroy(digest->arena);
	free(digest);
}

static enum po_status alloc_findings(struct po_digest *digest, size_t count)
{
	size_t bytes = (count ? count : 1) * sizeof(const char *);

	digest->finding_ids = po_arena_alloc(digest->arena, bytes);
	digest->finding_severities = po_arena_alloc(digest->arena, bytes);
	return digest->finding_ids && digest->finding_severities ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

/* Drops the GPU series when no step saw GPU activity, so it is not compared. */
static void finish_series(struct po_digest *digest, bool any_gpu, bool any_live)
{
	if (!any_gpu) {
		free(digest->gpu_busy_pct);
		digest->gpu_busy_pct = NULL;
	}
	if (!any_live) {
		free(digest->live_bytes);
		digest->live_bytes = NULL;
	}
}

/* (CPU + run-queue wait) / CPU over the processes that recorded both, at least 1 ms of
 * CPU; NaN without. */
static double stretch_of(double cpu_ms, double runq_ms)
{
	return cpu_ms >= 1 && runq_ms >= 0 ? (cpu_ms + runq_ms) / cpu_ms : NAN;
}

static double analysis_cpu_stretch(const struct po_analysis *analysis)
{
	double cpu_ms = 0, runq_ms = 0;

	for (size_t i = 0; i < analysis->process_count; i++) {
		const struct po_process *p = &analysis->processes[i];

		if (p->cpu_first_ns < 0 || p->cpu_last_ns < p->cpu_first_ns ||
		    p->runq_first_ns < 0 || p->runq_last_ns < p->runq_first_ns)
			continue;
		cpu_ms += (double)(p->cpu_last_ns - p->cpu_first_ns) / 1e6;
		runq_ms += (double)(p->runq_last_ns - p->runq_first_ns) / 1e6;
	}
	return stretch_of(cpu_ms, runq_ms);
}

enum po_status po_digest_from_analysis(const struct po_analysis *analysis, const char *label,
				       struct po_digest **out, struct po_error *err)
{
	struct po_digest *digest;
	enum po_status steps_status;
	bool any_gpu = false;

	if (digest_create(analysis->step_count, label, &digest) != PO_STATUS_OK ||
	    alloc_findings(digest, analysis->diagnosis.finding_count) != PO_STATUS_OK) {
		po_digest_destroy(digest);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	for (size_t i = 0; i < analysis->step_count; i++) {
		const struct po_step step = po_analysis_step(analysis, i);
		double wall_ms = (double)(step.end_ns - step.begin_ns) / 1e6;
		size_t k = digest->step_count;
		int64_t host = po_metric_host_bytes(analysis, &step);

		/* Lossy steps are out of every figure, the memory slope's too. */
		if (step.flags & PO_STEP_LOSSY)
			continue;
		if (host >= 0)
			digest->live_bytes[digest->live_count++] = (double)host;
		digest->step_ms[k] = wall_ms;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			digest->category_ms[c][k] = (double)step.category_ns[c] / 1e6;
		digest->gpu_busy_pct[k] =
		    wall_ms > 0 ? (double)step.gpu_busy_ns / 1e4 / wall_ms : 0;
		any_gpu = any_gpu || step.gpu_busy_ns > 0;
		digest->step_count++;
	}
	steps_status = po_analysis_steps_check(analysis, err);
	if (steps_status != PO_STATUS_OK) {
		po_digest_destroy(digest);
		po_error_prepend(err, "Failed to summarize the steps for the comparison");
		return steps_status;
	}
	finish_series(digest, any_gpu, digest->live_count > 1);
	digest->steps_per_s = analysis->step_stats.steps_per_s;
	digest->samples_per_s =
	    analysis->step_stats.samples_per_s >= 0 ? analysis->step_stats.samples_per_s : NAN;
	digest->worker_busy_pct = analysis->diagnosis.steady.workers_busy_pct;
	digest->gpu_busy_share_pct = analysis->diagnosis.steady.gpu_busy_pct;
	digest->cpu_stretch = analysis_cpu_stretch(analysis);
	if (analysis->machine.known && analysis->cpu_count > 0) {
		digest->others_cores = analysis->machine.others_cores;
		digest->cpu_count = analysis->cpu_count;
	}
	digest->verdict = po_verdict_name(analysis->diagnosis.verdict);
	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++) {
		digest->finding_ids[i] = po_finding_id_name(analysis->diagnosis.findings[i].id);
		digest->finding_severities[i] =
		    po_severity_name(analysis->diagnosis.findings[i].severity);
	}
	digest->finding_count = analysis->diagnosis.finding_count;
	*out = digest;
	return PO_STATUS_OK;
}

/* The summary.json at path, open for reading: a regular file. */
static enum po_status open_summary(const char *path, int *fd, struct po_error *err)
{
	struct stat st;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0 && fstat(*fd, &st) == 0 && !S_ISREG(st.st_mode))
		errno = EISDIR;
	else if (*fd >= 0)
		return PO_STATUS_OK;
	po_error_set(err, "Failed to read %s: %s", path, strerror(errno));
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return PO_STATUS_INPUT;
}

static bool step_is_lossy(const struct po_json_value *step)
{
	const struct po_json_value *flags = po_json_get(step, PO_SK_FLAGS);

	for (size_t i = 0; flags && flags->type == PO_JSON_ARRAY && i < flags->count; i++)
		if (strcmp(po_json_string(flags->items[i], ""), PO_SK_FLAG_LOSSY) == 0)
			return true;
	return false;
}

static bool add_summary_step(struct po_digest *digest, const struct po_json_value *step)
{
	const struct po_json_value *categories = po_json_get(step, PO_SK_CATEGORIES_MS);
	double wall_ms = po_json_number(po_json_get(step, PO_SK_WALL_MS), NAN);
	double live = po_json_number(po_json_get(step, PO_SK_HOST_LIVE_BYTES), NAN);
	double gpu_ms = po_json_number(po_json_get(step, PO_SK_GPU_BUSY_MS), 0);
	size_t k = digest->step_count;

	if (isnan(live))
		live = po_json_number(po_json_get(step, PO_SK_RSS_BYTES), NAN);
	if (!isnan(live))
		digest->live_bytes[digest->live_count++] = live;
	if (isnan(wall_ms) || step_is_lossy(step))
		return false;
	digest->step_ms[k] = wall_ms;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++)
		digest->category_ms[c][k] =
		    po_json_number(po_json_get(categories, po_category_name(c)), 0);
	digest->gpu_busy_pct[k] = wall_ms > 0 ? 100.0 * gpu_ms / wall_ms : 0;
	digest->step_count++;
	return gpu_ms > 0;
}

static void read_summary_findings(struct po_digest *digest, const struct po_json_value *findings)
{
	for (size_t i = 0; findings && i < findings->count; i++) {
		const struct po_json_value *finding = findings->items[i];

		digest->finding_ids[i] = po_json_string(po_json_get(finding, PO_SK_ID), "?");
		digest->finding_severities[i] =
		    po_json_string(po_json_get(finding, PO_SK_SEVERITY), "?");
		digest->finding_count++;
	}
}

static double mean_worker_busy(const struct po_json_value *workers)
{
	double sum = 0;

	if (!workers || workers->type != PO_JSON_ARRAY || workers->count == 0)
		return NAN;
	for (size_t i = 0; i < workers->count; i++)
		sum += po_json_number(po_json_get(workers->items[i], PO_SK_BUSY_PCT), 0);
	return sum / (double)workers->count;
}

/*
 * The run's GPU busy and worker busy shares as its own analysis defined them (the steady
 * object); a summary.json written before it had one gives the older approximations: the
 * mean of the workers' busy shares, and of the steps' GPU busy shares.
 */
static void read_steady(struct po_digest *digest, const struct po_json_value *root)
{
	const struct po_json_value *steady = po_json_get(root, PO_SK_STEADY);

	if (steady && steady->type == PO_JSON_OBJECT) {
		digest->worker_busy_pct =
		    po_json_number(po_json_get(steady, PO_SK_WORKERS_BUSY_PCT), NAN);
		digest->gpu_busy_share_pct =
		    po_json_number(po_json_get(steady, PO_SK_GPU_BUSY_PCT), NAN);
		return;
	}
	digest->worker_busy_pct = mean_worker_busy(po_json_get(root, PO_SK_WORKERS));
	digest->gpu_busy_share_pct =
	    digest->gpu_busy_pct ? po_stats_mean(digest->gpu_busy_pct, digest->step_count) : NAN;
}

/* What other programs used of the machine (unknown without a machine object), and the
 * stretch of the processes' CPU work. */
static void read_machine(struct po_digest *digest, const struct po_json_value *root)
{
	const struct po_json_value *machine = po_json_get(root, PO_SK_MACHINE);
	const struct po_json_value *processes = po_json_get(root, PO_SK_PROCESSES);
	double others, cpus, cpu_ms = 0, runq_ms = 0;

	for (size_t i = 0; processes && processes->type == PO_JSON_ARRAY && i < processes->count;
	     i++) {
		double cpu = po_json_number(po_json_get(processes->items[i], PO_SK_CPU_MS), NAN);
		double runq =
		    po_json_number(po_json_get(processes->items[i], PO_SK_RUNQ_WAIT_MS), NAN);

		if (isnan(cpu) || isnan(runq) || cpu < 0 || runq < 0)
			continue;
		cpu_ms += cpu;
		runq_ms += runq;
	}
	digest->cpu_stretch = stretch_of(cpu_ms, runq_ms);

	if (!machine || machine->type != PO_JSON_OBJECT)
		return;
	others = po_json_number(po_json_get(machine, PO_SK_OTHERS_CORES), NAN);
	cpus = po_json_number(po_json_get(machine, PO_SK_CPU_COUNT), NAN);
	if (isnan(others) || !(cpus > 0))
		return;
	digest->others_cores = others;
	digest->cpu_count = cpus;
}

/* step_series, read one step at a time as the parser hands them over. */
struct series_reader {
	struct po_digest *digest; /* weak */
	bool any_gpu;
};

static enum po_status read_series_step(void *context, const struct po_json_value *step,
				       size_t index, struct po_error *err)
{
	struct series_reader *reader = context;

	if (digest_reserve(reader->digest, index + 1) != PO_STATUS_OK) {
		po_error_set(err, "out of memory at step_series[%zu]", index);
		return PO_STATUS_NOMEM;
	}
	reader->any_gpu = add_summary_step(reader->digest, step) || reader->any_gpu;
	return PO_STATUS_OK;
}

/* What the digest takes from the summary's members other than step_series. */
static enum po_status digest_from_tree(const struct po_json_value *root, bool any_gpu,
				       struct po_digest *digest)
{
	const struct po_json_value *findings = po_json_get(root, PO_SK_FINDINGS);
	const struct po_json_value *steps = po_json_get(root, PO_SK_STEPS);

	if (alloc_findings(digest, findings && findings->type == PO_JSON_ARRAY ? findings->count
									       : 0) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	finish_series(digest, any_gpu, digest->live_count > 1);
	digest->steps_per_s = po_json_number(po_json_get(steps, PO_SK_STEPS_PER_S), NAN);
	digest->samples_per_s = po_json_number(po_json_get(steps, PO_SK_SAMPLES_PER_S), NAN);
	read_steady(digest, root);
	read_machine(digest, root);
	digest->verdict = po_arena_strdup(
	    digest->arena, po_json_string(po_json_get(root, PO_SK_VERDICT), "unknown"));
	if (findings && findings->type == PO_JSON_ARRAY)
		read_summary_findings(digest, findings);
	for (size_t i = 0; i < digest->finding_count; i++) {
		digest->finding_ids[i] = po_arena_strdup(digest->arena, digest->finding_ids[i]);
		digest->finding_severities[i] =
		    po_arena_strdup(digest->arena, digest->finding_severities[i]);
	}
	return PO_STATUS_OK;
}

/*
 * A summary.json, from text (fd < 0) or from the file fd: its steps are digested as they are
 * read, so that neither the file's text nor a tree of its steps is held (docs/performance.md).
 */
static enum po_status digest_summary(const char *text, size_t len, int fd, const char *label,
				     struct po_digest **out, struct po_error *err)
{
	struct po_arena *arena = po_arena_create();
	struct series_reader reader = {0};
	const struct po_json_stream stream = {PO_SK_STEP_SERIES, read_series_step, &reader};
	struct po_json_value *root = NULL;
	const struct po_json_value *series;
	enum po_status status = arena ? digest_create(0, label, &reader.digest) : PO_STATUS_NOMEM;

	if (status == PO_STATUS_OK)
		status = fd >= 0 ? po_json_parse_file(fd, &stream, arena, &root, err)
				 : po_json_parse_stream(text, len, &stream, arena, &root, err);
	if (status == PO_STATUS_OK) {
		series = po_json_get(root, PO_SK_STEP_SERIES);
		if (strcmp(po_json_string(po_json_get(root, PO_SK_SCHEMA), ""),
			   PO_SUMMARY_SCHEMA) != 0 ||
		    !series || series->type != PO_JSON_ARRAY) {
			po_error_set(err,
				     "not a profopt summary.json (schema profopt.summary/1 with "
				     "step_series)");
			status = PO_STATUS_INPUT;
		} else {
			status = digest_from_tree(root, reader.any_gpu, reader.digest);
		}
	}
	po_arena_destroy(arena);
	if (status != PO_STATUS_OK) {
		po_digest_destroy(reader.digest);
		return status;
	}
	*out = reader.digest;
	return PO_STATUS_OK;
}

enum po_status po_digest_from_summary_text(const char *text, size_t len, const char *label,
					   struct po_digest **out, struct po_error *err)
{
	*out = NULL;
	return digest_summary(text, len, -1, label, out, err);
}

enum po_status po_digest_from_summary(const char *path, struct po_digest **out,
				      struct po_error *err)
{
	int fd = -1;
	enum po_status status = open_summary(path, &fd, err);

	*out = NULL;
	if (status == PO_STATUS_OK)
		status = digest_summary(NULL, 0, fd, path, out, err);
	if (status != PO_STATUS_OK && status != PO_STATUS_NOMEM)
		po_error_prepend(err, "Failed to read the baseline %s", path);
	if (fd >= 0)
		close(fd);
	return status;
}
