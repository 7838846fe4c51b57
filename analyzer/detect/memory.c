/*
 * memory.c: host-memory-growth, gpu-memory-growth and unfreed-allocations. Growth is a
 * least-squares line through the live bytes at the end of each clean step after warm-up
 * that still rises at the end of the run (a leak, not a plateau), graded by what it would
 * add over a run ten times as long; it is attributed to the allocation sites that still
 * hold memory at the end.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "metrics/metrics.h"

/* Whose memory a resident-set series holds. */
enum growth_scope {
	SCOPE_ALL,     /* allocation events: every process, attributed by site */
	SCOPE_MAIN,    /* the training loop's process */
	SCOPE_WORKERS, /* the loader workers alive at each step */
};

struct growth {
	bool gpu;
	enum po_growth_series series; /* the steps' values it fits (metrics.h) */
	enum growth_scope scope;
	size_t point_count;
	int64_t first_step; /* step numbers of the fitted range */
	int64_t last_step;
	size_t first_position; /* their positions in the step store */
	size_t last_position;
	struct po_stats_fit fit;
	/*
	 * The rise of the last quarter of the fitted points over the quarter before (their
	 * medians), as a percentage of what the fitted line adds between them: about 100
	 * for a leak, about 0 for memory that levelled off. NaN with too few points.
	 */
	double late_pct;
	double projected_run_bytes; /* slope over the whole run's steps */
	double horizon_bytes;	    /* slope over memory-growth.horizon_runs runs */
	double peak_bytes;
};

static int64_t step_value(const struct po_step *step, const struct growth *growth)
{
	return po_metric_series_bytes(step, growth->series);
}

/* The evidence's name of where the bytes come from. */
static const char *source_name(const struct growth *growth)
{
	switch (growth->series) {
	case PO_GROWTH_HOST_ALLOCS:
		return "alloc_events";
	case PO_GROWTH_GPU_ALLOCS:
		return "gpu_alloc_events";
	default:
		return "rss";
	}
}

static const char *scope_name(const struct growth *growth)
{
	return growth->scope == SCOPE_MAIN	? "main"
	       : growth->scope == SCOPE_WORKERS ? "workers"
						: "all";
}

/*
 * The Python lines of a process role, as the Python module records them with
 * python_memory=True (docs/python.md): the program's line that created the most objects
 * still growing ("FILE:LINE | BYTES | OBJECTS") and the line whose container storage grew,
 * which keeps them ("FILE:LINE | BYTES"). kept is created when no container was seen.
 */
struct python_lines {
	const char *created; /* weak: in the detector's arena */
	const char *kept;    /* weak */
	int64_t objects;     /* objects the created line added since warm-up */
};

static bool python_lines(struct det_ctx *ctx, const struct growth *growth,
			 struct python_lines *lines)
{
	const struct po_run_settings *settings = &ctx->analysis->settings;
	const struct po_python_growth *python =
	    growth->scope == SCOPE_WORKERS ? &settings->python_workers : &settings->python_main;

	if (growth->scope == SCOPE_ALL || growth->gpu || !python->created_at.length)
		return false;
	lines->created =
	    det_printf(ctx, "%.*s", python->created_at.length, python->created_at.text);
	lines->kept = python->kept_at.length
			  ? det_printf(ctx, "%.*s", python->kept_at.length, python->kept_at.text)
			  : lines->created;
	lines->objects = python->objects;
	return lines->created && lines->kept;
}

/* "K keeps N more Python objects (created at C) since warm-up", for a summary. */
static const char *python_phrase(struct det_ctx *ctx, const struct python_lines *lines)
{
	if (strcmp(lines->kept, lines->created) == 0)
		return det_printf(ctx, "%s keeps %lld more Python objects since warm-up",
				  lines->kept, (long long)lines->objects);
	return det_printf(ctx, "%s keeps %lld more Python objects, created at %s, since warm-up",
			  lines->kept, (long long)lines->objects, lines->created);
}

/* Where the growth is, in words, when no allocation site says it better. */
static const char *scope_where(struct det_ctx *ctx, const struct growth *growth)
{
	struct python_lines lines;
	bool named = python_lines(ctx, growth, &lines);

	if (growth->scope == SCOPE_MAIN)
		return det_printf(ctx, "the main process (pid %d, the training loop)%s%s",
				  ctx->analysis->main_pid, named ? ", where " : "",
				  named ? python_phrase(ctx, &lines) : "");
	if (growth->scope == SCOPE_WORKERS && det_live_workers(ctx->analysis) > 0)
		return det_printf(ctx, "the %lld loader worker processes%s%s",
				  (long long)det_live_workers(ctx->analysis),
				  named ? ", where " : "", named ? python_phrase(ctx, &lines) : "");
	if (growth->scope == SCOPE_WORKERS)
		return "the processes other than the training loop's (children not marked as "
		       "workers)";
	return "an unknown place";
}

static size_t warmup_steps(const struct det_ctx *ctx)
{
	double skip =
	    ceil(ctx->rules->memory_growth_warmup_pct / 100.0 * (double)ctx->all_clean_count);

	return (size_t)fmax(skip, ctx->rules->memory_growth_warmup_min_steps);
}

/* The median of y over the points [begin, end) and of their x, into *y_median, *x_median. */
static void quarter_medians(const double *x, const double *y, size_t begin, size_t end,
			    double *scratch, double *x_median, double *y_median)
{
	size_t count = end - begin;

	memcpy(scratch, x + begin, count * sizeof(double));
	*x_median = po_stats_median(scratch, count);
	memcpy(scratch, y + begin, count * sizeof(double));
	*y_median = po_stats_median(scratch, count);
}

/*
 * How much the last quarter of the points rises over the quarter before, against what the
 * fitted line adds between them (growth->late_pct). Medians, so that a resident set's
 * jumps by allocator chunks and a restarted worker's dip move neither.
 */
static void late_shape(const double *x, const double *y, struct growth *growth)
{
	size_t count = growth->point_count, quarter = count / 4;
	double *scratch = quarter ? malloc((count - 3 * quarter) * sizeof(double)) : NULL;
	double x3, y3, x4, y4;

	growth->late_pct = NAN;
	if (!scratch)
		return;
	quarter_medians(x, y, 2 * quarter, 3 * quarter, scratch, &x3, &y3);
	quarter_medians(x, y, 3 * quarter, count, scratch, &x4, &y4);
	if (growth->fit.slope > 0 && x4 > x3)
		growth->late_pct = 100.0 * (y4 - y3) / (growth->fit.slope * (x4 - x3));
	free(scratch);
}

/* Fits the series; false when there are too few points. */
static bool fit_growth(const struct det_ctx *ctx, struct growth *growth)
{
	size_t skip = warmup_steps(ctx);
	size_t room = ctx->all_clean_count > skip ? ctx->all_clean_count - skip : 0;
	double *x = malloc((room ? room : 1) * sizeof(double));
	double *y = malloc((room ? room : 1) * sizeof(double));
	bool fitted = false;

	for (size_t i = skip; x && y && i < ctx->all_clean_count; i++) {
		const struct po_step step = det_all_clean_step(ctx, i);
		int64_t value = step_value(&step, growth);

		if (value < 0)
			continue;
		if (!growth->point_count) {
			growth->first_step = step.index;
			growth->first_position = ctx->all_clean[i];
		}
		growth->last_step = step.index;
		growth->last_position = ctx->all_clean[i];
		x[growth->point_count] = (double)step.index;
		y[growth->point_count++] = (double)value;
		growth->peak_bytes = fmax(growth->peak_bytes, (double)value);
	}
	if ((double)growth->point_count >= ctx->rules->memory_growth_min_steps)
		fitted = po_stats_linear_fit(x, y, growth->point_count, &growth->fit);
	if (fitted)
		late_shape(x, y, growth);
	free(x);
	free(y);
	return fitted;
}

/* The live allocation site that holds the most on this kind of memory, or NULL. */
static const struct po_mem_site *top_site(const struct po_analysis *analysis, bool gpu)
{
	for (size_t i = 0; i < analysis->mem_site_count; i++) {
		const struct po_mem_site *site = &analysis->mem_sites[i];

		if (site->live_bytes > 0 && (site->device >= 0) == gpu)
			return site;
	}
	return NULL;
}

/* The last component of a path: objects and source files are named as a user knows them. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * A libc site as "libfoo.so+0x1a2b (function at file.c:123)", or with why it has no name;
 * the raw address only when no mapped object holds it.
 */
static const char *site_code(struct det_ctx *ctx, const struct po_mem_site *site)
{
	const char *object;

	if (!site->object)
		return det_printf(ctx, "0x%" PRIx64, site->ip);
	object = det_printf(ctx, "%s+0x%" PRIx64, base_name(site->object), site->offset);
	if (site->symbol && site->source_file && site->source_line > 0)
		return det_printf(ctx, "%s (%s at %s:%" PRId64 ")", object, site->symbol,
				  base_name(site->source_file), site->source_line);
	if (site->symbol)
		return det_printf(ctx, "%s (%s)", object, site->symbol);
	if (site->symbol_note)
		return det_printf(ctx, "%s (%s)", object, site->symbol_note);
	return object;
}

static const char *site_where(struct det_ctx *ctx, const struct po_mem_site *site)
{
	const char *stage = site->stage >= 0 ? po_stage_name((enum po_stage)site->stage) : "none";

	if (site->label)
		return det_printf(ctx, "%s process %d, stage %s, label %s",
				  po_role_name(site->role), site->pid, stage, site->label);
	return det_printf(ctx, "%s process %d, stage %s, site %s", po_role_name(site->role),
			  site->pid, stage, site_code(ctx, site));
}

/* What to do about a site, naming the function and object when they are known. */
static const char *site_action(struct det_ctx *ctx, const struct po_mem_site *site)
{
	if (site->label || !site->object)
		return det_printf(ctx, "free or reuse what is allocated in %s",
				  site_where(ctx, site));
	if (site->symbol && site->source_file && site->source_line > 0)
		return det_printf(ctx, "free or reuse what %s in %s allocates (%s:%" PRId64 ")",
				  site->symbol, base_name(site->object),
				  base_name(site->source_file), site->source_line);
	if (site->symbol)
		return det_printf(ctx, "free or reuse what %s in %s allocates", site->symbol,
				  base_name(site->object));
	return det_printf(ctx, "free or reuse what the code at %s allocates", site_code(ctx, site));
}

static void add_site_evidence(struct det_ctx *ctx, struct po_finding *finding,
			      const struct po_mem_site *site)
{
	det_ev_int(ctx, finding, PO_EVIDENCE_SITE_PID, site->pid);
	det_ev_text(ctx, finding, PO_EVIDENCE_SITE_ROLE, po_role_name(site->role));
	det_ev_text(ctx, finding, PO_EVIDENCE_STAGE,
		    site->stage >= 0 ? po_stage_name((enum po_stage)site->stage) : "none");
	if (site->label)
		det_ev_text(ctx, finding, PO_EVIDENCE_LABEL, site->label);
	else
		det_ev_text(ctx, finding, PO_EVIDENCE_IP, site_code(ctx, site));
	det_ev_number(ctx, finding, PO_EVIDENCE_SITE_LIVE_MIB, (double)site->live_bytes / DET_MIB);
	det_ev_int(ctx, finding, PO_EVIDENCE_SITE_LIVE_ALLOCATIONS, site->live_count);
}

static void add_growth_evidence(struct det_ctx *ctx, struct po_finding *finding,
				const struct growth *growth)
{
	double projection = ctx->rules->memory_growth_projection_steps;
	struct python_lines lines;

	det_ev_number(ctx, finding, PO_EVIDENCE_SLOPE_BYTES_PER_STEP, growth->fit.slope);
	det_ev_number(ctx, finding, PO_EVIDENCE_R2, growth->fit.r2);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)growth->point_count);
	det_ev_int(ctx, finding, PO_EVIDENCE_FIRST_STEP, growth->first_step);
	det_ev_int(ctx, finding, PO_EVIDENCE_LAST_STEP, growth->last_step);
	det_ev_text(ctx, finding, PO_EVIDENCE_SOURCE, source_name(growth));
	det_ev_text(ctx, finding, PO_EVIDENCE_PROCESS_ROLE, scope_name(growth));
	if (growth->scope == SCOPE_MAIN)
		det_ev_int(ctx, finding, PO_EVIDENCE_PID, ctx->analysis->main_pid);
	if (python_lines(ctx, growth, &lines)) {
		det_ev_text(ctx, finding, PO_EVIDENCE_PYTHON_LINE, lines.kept);
		det_ev_text(ctx, finding, PO_EVIDENCE_PYTHON_CREATED_LINE, lines.created);
		det_ev_int(ctx, finding, PO_EVIDENCE_PYTHON_OBJECTS_KEPT, lines.objects);
	}
	det_ev_number(ctx, finding, PO_EVIDENCE_LATE_GROWTH_PCT, growth->late_pct);
	det_ev_number(ctx, finding, PO_EVIDENCE_GROWTH_OVER_RUN_MIB,
		      growth->projected_run_bytes / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_HORIZON_RUNS,
		      ctx->rules->memory_growth_horizon_runs);
	det_ev_number(ctx, finding, PO_EVIDENCE_HORIZON_GROWTH_MIB,
		      growth->horizon_bytes / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_PEAK_MIB, growth->peak_bytes / DET_MIB);
	det_ev_number(ctx, finding, PO_EVIDENCE_PROJECTION_STEPS, projection);
	det_ev_number(ctx, finding, PO_EVIDENCE_PROJECTED_GROWTH_MIB,
		      growth->fit.slope * projection / DET_MIB);
}

/* What to do about the Python lines that keep the growing objects. */
static const char *python_action(struct det_ctx *ctx, const struct growth *growth,
				 const struct python_lines *lines)
{
	const char *created = strcmp(lines->kept, lines->created) == 0
				  ? ""
				  : det_printf(ctx, ", created at %s,", lines->created);

	if (growth->scope == SCOPE_WORKERS)
		return det_printf(ctx,
				  "bound what %s keeps%s in the loader workers: a cache of "
				  "samples grows with every sample a worker reads; bound it, or "
				  "fill it in the main process before the workers start",
				  lines->kept, created);
	return det_printf(ctx,
			  "release what %s keeps%s from each step (a tensor appended to a list, "
			  "a loss kept with its graph: keep loss.item() instead)",
			  lines->kept, created);
}

/* What to do, as a sentence a user can act on, for growth known only by its process. */
static const char *action_without_site(struct det_ctx *ctx, const struct growth *growth)
{
	struct python_lines lines;

	if (python_lines(ctx, growth, &lines))
		return python_action(ctx, growth, &lines);
	if (growth->scope == SCOPE_WORKERS)
		return "look for what the dataset keeps per sample in the workers (caches, lists "
		       "of decoded items) and bound it; record with profopt-record --heap to get "
		       "the allocation sites";
	if (growth->scope == SCOPE_MAIN)
		return "look for what the training loop keeps from each step (a tensor appended "
		       "to a list, a loss kept with its graph: keep loss.item() instead) and "
		       "release it; record with profopt-record --heap to get the allocation sites";
	return "record with profopt-record --heap to find the allocation sites that are never "
	       "freed, then free or reuse them";
}

static void recommend_free(struct det_ctx *ctx, struct po_finding *finding,
			   const struct growth *growth, const struct po_mem_site *site)
{
	double projection = ctx->rules->memory_growth_projection_steps;
	const char *action = site ? site_action(ctx, site) : action_without_site(ctx, growth);

	det_recommend(ctx, finding, PO_KNOB_ALLOCATION, action,
		      det_printf(ctx,
				 "%s memory grows by %.1f KiB per step (R^2 %.2f) and is "
				 "never given back",
				 growth->gpu ? "GPU" : "host", growth->fit.slope / 1024.0,
				 growth->fit.r2),
		      det_printf(ctx, "left as is, %.0f more steps hold %.1f MiB more", projection,
				 growth->fit.slope * projection / DET_MIB),
		      NAN, NAN);
}

static double run_steps(const struct po_analysis *analysis)
{
	if (analysis->step_end <= analysis->step_first)
		return 0;
	return (double)(po_analysis_step(analysis, analysis->step_end - 1).index -
			po_analysis_step(analysis, analysis->step_first).index + 1);
}

/* The growth over a run horizon_runs times as long, as a percentage of the peak. */
static double horizon_pct(const struct growth *growth)
{
	return growth->peak_bytes > 0 ? 100.0 * growth->horizon_bytes / growth->peak_bytes
				      : INFINITY;
}

/* Graded by what a run memory-growth.horizon_runs times as long would add. */
static enum po_severity growth_severity(const struct det_ctx *ctx, const struct growth *growth)
{
	const struct po_rules *rules = ctx->rules;

	if (growth->horizon_bytes >= rules->memory_growth_critical_mib * DET_MIB ||
	    horizon_pct(growth) >= rules->memory_growth_critical_peak_pct)
		return PO_SEVERITY_CRITICAL;
	if (horizon_pct(growth) >= rules->memory_growth_warning_horizon_pct)
		return PO_SEVERITY_WARNING;
	return PO_SEVERITY_INFO;
}

/*
 * Fits the series and tells whether it grows steadily: a line that explains it, a slope
 * above the flat level, and a rise that goes on to the end of the fitted steps. How large
 * the growth is does not decide whether it is one; what a run memory-growth.horizon_runs
 * times as long would add must only reach memory-growth.min_horizon_pct of the peak.
 */
static bool grows(const struct det_ctx *ctx, struct growth *growth)
{
	const struct po_rules *rules = ctx->rules;
	const struct po_memory *memory = &ctx->analysis->memory;

	if (!fit_growth(ctx, growth) || growth->fit.slope < rules->memory_growth_min_slope_bytes ||
	    growth->fit.r2 < rules->memory_growth_min_r2 ||
	    !(growth->late_pct >= rules->memory_growth_late_pct))
		return false;
	growth->projected_run_bytes = growth->fit.slope * run_steps(ctx->analysis);
	growth->horizon_bytes = growth->projected_run_bytes * rules->memory_growth_horizon_runs;
	/* A resident set is graded against its own process's (or workers') peak. */
	if (growth->gpu || growth->scope == SCOPE_ALL)
		growth->peak_bytes =
		    fmax(growth->peak_bytes,
			 (double)(growth->gpu ? memory->gpu_peak_bytes : memory->host_peak_bytes));
	return horizon_pct(growth) >= rules->memory_growth_min_horizon_pct;
}

/* The finding's line, for the memory chart. */
static void note_line(struct det_ctx *ctx, const struct growth *growth)
{
	ctx->diagnosis->growth_lines[growth->gpu ? 1 : 0] = (struct po_growth_line){
	    .present = true,
	    .series = growth->series,
	    .first_position = growth->first_position,
	    .last_position = growth->last_position,
	    .first_bytes = growth->fit.intercept + growth->fit.slope * (double)growth->first_step,
	    .last_bytes = growth->fit.intercept + growth->fit.slope * (double)growth->last_step};
}

static enum po_status growth_finding(struct det_ctx *ctx, struct growth *growth)
{
	enum po_finding_id id =
	    growth->gpu ? PO_FINDING_GPU_MEMORY_GROWTH : PO_FINDING_HOST_MEMORY_GROWTH;
	const struct po_mem_site *site = top_site(ctx->analysis, growth->gpu);
	struct po_finding *finding;

	finding = det_finding_add(ctx, id, growth_severity(ctx, growth), growth->fit.r2);
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(ctx, finding,
		    "%s memory grows by %.1f KiB per step after warm-up (R^2 %.2f over %zu steps, "
		    "still rising at the end), %.1f MiB over the run, %.1f MiB over a run %g times "
		    "as long; the most still held at the end was allocated in %s.",
		    growth->gpu ? "GPU" : "Host", growth->fit.slope / 1024.0, growth->fit.r2,
		    growth->point_count, growth->projected_run_bytes / DET_MIB,
		    growth->horizon_bytes / DET_MIB, ctx->rules->memory_growth_horizon_runs,
		    site ? site_where(ctx, site) : scope_where(ctx, growth));
	add_growth_evidence(ctx, finding, growth);
	note_line(ctx, growth);
	if (site) {
		int64_t steps[2] = {site->first_live_step, site->last_live_step};

		add_site_evidence(ctx, finding, site);
		if (site->first_live_step >= 0)
			det_set_steps(ctx, finding, steps,
				      site->last_live_step > site->first_live_step ? 2 : 1);
	}
	recommend_free(ctx, finding, growth, site);
	return PO_STATUS_OK;
}

/*
 * Host growth from the resident sets: the training loop's process and the loader workers
 * alive at each step are fitted apart, so a leak is attributed to the process that has it
 * and workers that exit (non-persistent workers) never add up; the steeper steady growth
 * is reported.
 */
static enum po_status rss_growth_finding(struct det_ctx *ctx)
{
	struct growth main = {.series = PO_GROWTH_RSS_MAIN, .scope = SCOPE_MAIN};
	struct growth workers = {.series = PO_GROWTH_RSS_WORKERS, .scope = SCOPE_WORKERS};
	bool main_grows = grows(ctx, &main), workers_grow = grows(ctx, &workers);

	if (main_grows && (!workers_grow || main.fit.slope >= workers.fit.slope))
		return growth_finding(ctx, &main);
	if (workers_grow)
		return growth_finding(ctx, &workers);
	return PO_STATUS_OK;
}

static enum po_status events_growth_finding(struct det_ctx *ctx, struct growth *growth)
{
	if (!grows(ctx, growth))
		return PO_STATUS_OK;
	return growth_finding(ctx, growth);
}

enum po_status det_memory_growth(struct det_ctx *ctx)
{
	const struct po_memory *memory = &ctx->analysis->memory;
	struct growth host = {.gpu = false, .series = PO_GROWTH_HOST_ALLOCS};
	struct growth gpu = {.gpu = true, .series = PO_GROWTH_GPU_ALLOCS};
	enum po_status status;

	status =
	    memory->has_alloc_events ? events_growth_finding(ctx, &host) : rss_growth_finding(ctx);
	if (status == PO_STATUS_OK)
		status = events_growth_finding(ctx, &gpu);
	return status;
}

/* ---- unfreed-allocations ---- */

/*
 * Device memory and pinned host memory still allocated at the end are not counted:
 * caching allocators (PyTorch's, JAX's, the pinned-memory pool of pin_memory) keep what
 * they got from the driver until the program ends, and the driver takes it back with the
 * context. Their growth during the run is the growth findings' to judge.
 */
static bool unfreed_counts(const struct po_mem_site *site)
{
	return site->live_bytes > 0 && site->device < 0 && !site->pinned;
}

static void add_unfreed_sites(struct det_ctx *ctx, struct po_finding *finding)
{
	const struct po_analysis *analysis = ctx->analysis;
	unsigned listed = 0; /* sites named so far; the first is site1 */

	for (size_t i = 0; i < analysis->mem_site_count; i++) {
		const struct po_mem_site *site = &analysis->mem_sites[i];

		if (!unfreed_counts(site) || (double)listed >= ctx->rules->unfreed_max_sites)
			continue;
		listed++;
		det_ev_text_at(ctx, finding, PO_EVIDENCE_SITE_N_WHERE, listed,
			       site_where(ctx, site));
		det_ev_number_at(ctx, finding, PO_EVIDENCE_SITE_N_LIVE_MIB, listed,
				 (double)site->live_bytes / DET_MIB);
		det_ev_text_at(ctx, finding, PO_EVIDENCE_SITE_N_DEVICE, listed,
			       site->device >= 0 ? det_printf(ctx, "gpu%d", site->device) : "host");
	}
}

/* The site holding the most (sites are sorted by live bytes); one counts, or none would. */
static const struct po_mem_site *largest_unfreed(const struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->mem_site_count; i++)
		if (unfreed_counts(&analysis->mem_sites[i]))
			return &analysis->mem_sites[i];
	return &analysis->mem_sites[0];
}

enum po_status det_unfreed(struct det_ctx *ctx)
{
	const struct po_analysis *analysis = ctx->analysis;
	const struct po_finding *host = det_find(ctx, PO_FINDING_HOST_MEMORY_GROWTH);
	const struct po_finding *gpu = det_find(ctx, PO_FINDING_GPU_MEMORY_GROWTH);
	int64_t live_bytes = 0, live_count = 0, sites = 0;
	struct po_finding *finding;

	/*
	 * A run cut short (a signal, an exception, a crash, a failed exit) ends with the memory
	 * of the step it was in still held: no leak to blame on the program's frees.
	 */
	if (analysis->ending != PO_RUN_CLEAN && analysis->ending != PO_RUN_NO_RUN)
		return PO_STATUS_OK;
	for (size_t i = 0; i < analysis->mem_site_count; i++) {
		if (!unfreed_counts(&analysis->mem_sites[i]))
			continue;
		live_bytes += analysis->mem_sites[i].live_bytes;
		live_count += analysis->mem_sites[i].live_count;
		sites++;
	}
	if ((double)live_bytes < ctx->rules->unfreed_min_mib * DET_MIB || !live_bytes)
		return PO_STATUS_OK;
	finding = det_finding_add(ctx, PO_FINDING_UNFREED_ALLOCATIONS,
				  host || gpu ? PO_SEVERITY_WARNING : PO_SEVERITY_INFO, 0.9);
	if (!finding)
		return PO_STATUS_NOMEM;
	det_summary(ctx, finding,
		    "%.1f MiB in %lld allocations from %lld sites were still allocated at the end "
		    "of the trace%s; the largest: %s.",
		    (double)live_bytes / DET_MIB, (long long)live_count, (long long)sites,
		    host || gpu ? ", and memory grew steadily: a leak" : "",
		    site_where(ctx, largest_unfreed(analysis)));
	det_ev_number(ctx, finding, PO_EVIDENCE_LIVE_MIB, (double)live_bytes / DET_MIB);
	det_ev_int(ctx, finding, PO_EVIDENCE_LIVE_ALLOCATIONS, live_count);
	det_ev_int(ctx, finding, PO_EVIDENCE_SITES, sites);
	add_unfreed_sites(ctx, finding);
	det_recommend(ctx, finding, PO_KNOB_ALLOCATION,
		      "free these allocations when they are no longer needed",
		      "memory still held at the end was never given back; if it grows with the "
		      "steps it is a leak",
		      "no change to the step time; lower peak memory", NAN, NAN);
	return PO_STATUS_OK;
}
