/* detect.c: runs the detectors over an analysis, sorts their findings and sets the verdict. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "metrics/metrics.h"

struct po_step det_clean_step(const struct det_ctx *ctx, size_t i)
{
	return po_analysis_step(ctx->analysis, ctx->clean[i]);
}

struct po_step det_all_clean_step(const struct det_ctx *ctx, size_t i)
{
	return po_analysis_step(ctx->analysis, ctx->all_clean[i]);
}

const char *det_config(const struct po_analysis *analysis, const char *key)
{
	for (size_t i = 0; i < analysis->config_count; i++) {
		if (analysis->config[i].key && strcmp(analysis->config[i].key, key) == 0)
			return analysis->config[i].value;
	}
	return NULL;
}

int64_t det_configured_workers(const struct po_analysis *analysis)
{
	return analysis->settings.num_workers >= 0 ? analysis->settings.num_workers
						   : det_live_workers(analysis);
}

const struct po_process *det_main_process(const struct po_analysis *analysis)
{
	for (size_t i = 0; i < analysis->process_count; i++) {
		if (analysis->processes[i].pid == analysis->main_pid)
			return &analysis->processes[i];
	}
	return NULL;
}

double det_main_runq_per_step(const struct det_ctx *ctx)
{
	const struct po_process *process = det_main_process(ctx->analysis);

	if (!process || process->runq_first_ns < 0 ||
	    process->runq_last_ns < process->runq_first_ns || process->last_ns <= process->first_ns)
		return -1;
	return (double)(process->runq_last_ns - process->runq_first_ns) /
	       (double)(process->last_ns - process->first_ns) * ctx->mean_step_ns;
}

double det_clamp(double value, double low, double high)
{
	if (!(value >= low))
		return low;
	return value > high ? high : value;
}

double det_workers_busy_pct(const struct po_analysis *analysis)
{
	double sum = 0;
	size_t counted = 0;

	for (size_t i = 0; i < analysis->worker_count; i++) {
		const struct po_worker *worker = &analysis->workers[i];
		int64_t life_ns = worker->last_ns - worker->first_ns;

		if (worker->first_ns < 0 || life_ns <= 0)
			continue;
		sum += det_clamp((double)worker->busy_ns / (double)life_ns, 0, 1);
		counted++;
	}
	return counted ? 100.0 * sum / (double)counted : NAN;
}

int64_t det_live_workers(const struct po_analysis *analysis)
{
	return po_metric_live_workers(analysis);
}

static void add_steady_step(struct det_ctx *ctx, size_t i, const struct po_step *step,
			    double *walls)
{
	walls[ctx->clean_count] = (double)(step->end_ns - step->begin_ns);
	ctx->clean_wall_ns += walls[ctx->clean_count];
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		ctx->category_mean_ns[c] += (double)step->category_ns[c];
		ctx->category_sum_ns[c] += step->category_ns[c];
	}
	ctx->clean[ctx->clean_count++] = i;
}

/*
 * Collects the clean and steady steps (metrics.h) of the analysis's range (a live window
 * reads its own steps only), and the steady steps' mean breakdown and median.
 */
static enum po_status collect_clean_steps(struct det_ctx *ctx)
{
	const struct po_analysis *analysis = ctx->analysis;
	size_t room = analysis->step_end > analysis->step_first
			  ? analysis->step_end - analysis->step_first
			  : 1;
	double *walls = malloc(room * sizeof(double));
	struct po_metric_steady_walk walk;
	struct po_step step;
	bool steady;
	size_t i;

	ctx->clean = malloc(room * sizeof(size_t));
	ctx->all_clean = malloc(room * sizeof(size_t));
	if (!ctx->clean || !ctx->all_clean || !walls) {
		free(walls);
		return PO_STATUS_NOMEM;
	}
	po_metric_steady_walk_init(&walk, analysis);
	while (po_metric_steady_walk_next(&walk, &step, &i, &steady)) {
		if ((step.flags & PO_STEP_LOSSY) || step.end_ns <= ctx->steps_after_ns ||
		    step.end_ns > ctx->steps_until_ns)
			continue;
		ctx->all_clean[ctx->all_clean_count++] = i;
		if (steady)
			add_steady_step(ctx, i, &step, walls);
	}
	if (ctx->clean_count) {
		ctx->mean_step_ns = ctx->clean_wall_ns / (double)ctx->clean_count;
		for (int c = 0; c < PO_CATEGORY_COUNT; c++)
			ctx->category_mean_ns[c] /= (double)ctx->clean_count;
		ctx->median_step_ns = po_stats_median(walls, ctx->clean_count);
	}
	free(walls);
	return PO_STATUS_OK;
}

/* The steady-step shares of the result (po_steady_stats), from the collected steps. */
static void fill_steady(struct det_ctx *ctx)
{
	const struct po_analysis *analysis = ctx->analysis;
	struct po_steady_stats *steady = &ctx->diagnosis->steady;
	double busy = 0;

	*steady =
	    (struct po_steady_stats){.count = (int64_t)ctx->clean_count,
				     .startup_steps = (int64_t)po_metric_startup_steps(analysis),
				     .mean_ns = NAN,
				     .gpu_busy_pct = NAN,
				     .input_wait_pct = NAN,
				     .workers_busy_pct = det_workers_busy_pct(analysis)};
	if (!ctx->clean_count)
		return;
	steady->mean_ns = ctx->mean_step_ns;
	steady->input_wait_pct =
	    ctx->mean_step_ns > 0
		? 100.0 * (double)po_metric_input_wait_ns(ctx->category_sum_ns) / ctx->clean_wall_ns
		: NAN;
	if (!analysis->gpu_count)
		return;
	for (size_t i = 0; i < ctx->clean_count; i++)
		busy += (double)det_clean_step(ctx, i).gpu_busy_ns;
	steady->gpu_busy_pct = ctx->clean_wall_ns > 0 ? 100.0 * busy / ctx->clean_wall_ns : 0;
}

/*
 * What other programs used of the machine while it was recorded: the cores they left, and
 * whether they took machine.others_pct of the cores or more. A busy machine is said in the
 * trace quality, with the numbers.
 */
static enum po_status measure_machine(struct det_ctx *ctx)
{
	const struct po_analysis *analysis = ctx->analysis;
	const struct po_machine_load *machine = &analysis->machine;
	double cores = analysis->cpu_count;

	ctx->others_cores = machine->known ? machine->others_cores : NAN;
	ctx->available_cores = cores;
	ctx->machine_busy = false;
	if (!machine->known || cores <= 0)
		return PO_STATUS_OK;
	ctx->available_cores = fmax(cores - machine->others_cores, fmin(cores, 0.1));
	ctx->machine_busy = machine->others_cores >= cores * ctx->rules->machine_others_pct / 100;
	if (!ctx->machine_busy)
		return PO_STATUS_OK;
	return po_diagnosis_add_warning(
	    ctx->diagnosis, analysis->arena, "busy-machine",
	    det_printf(ctx,
		       "other programs used %.2f of the %d cores while this was recorded (the "
		       "machine's busy CPU time from /proc/stat, %.2f cores, less the recorded "
		       "processes' own, %.2f): the program waited for them, and predictions that "
		       "depend on how many cores it gets are withheld",
		       machine->others_cores, analysis->cpu_count, machine->busy_cores,
		       machine->traced_cores));
}

/*
 * What the measurement cost, as a share of the steady mean step: from self-cost.visible_pct
 * the trace quality says that the report's figures include it.
 */
static enum po_status measure_self_cost(struct det_ctx *ctx)
{
	const struct po_self_cost *cost = &ctx->analysis->self_cost;
	struct po_diagnosis *diagnosis = ctx->diagnosis;

	diagnosis->self_cost_pct = po_metric_self_cost_pct(cost, diagnosis->steady.mean_ns);
	diagnosis->self_cost_visible =
	    !isnan(diagnosis->self_cost_pct) &&
	    diagnosis->self_cost_pct >= ctx->rules->self_cost_visible_pct;
	if (!diagnosis->self_cost_visible)
		return PO_STATUS_OK;
	return po_diagnosis_add_warning(
	    diagnosis, ctx->analysis->arena, "profiler-cost",
	    det_printf(
		ctx,
		"profopt's own CPU time was %.3f ms per step, %.1f%% of the mean steady step "
		"(%.3f ms in the recorded processes, %s in the recorder): the step times "
		"and shares of this report include it",
		cost->per_step_ns / 1e6, diagnosis->self_cost_pct,
		isnan(cost->processes_per_step_ns) ? 0.0 : cost->processes_per_step_ns / 1e6,
		isnan(cost->recorder_per_step_ns)
		    ? "not known"
		    : det_printf(ctx, "%.3f ms", cost->recorder_per_step_ns / 1e6)));
}

const char *det_withheld_why(struct det_ctx *ctx)
{
	if (!ctx->machine_busy)
		return NULL;
	return det_printf(
	    ctx,
	    "not predicted: other programs used %.2f of the %d cores while this was "
	    "recorded, and how much of the cores they leave to a changed program "
	    "cannot be known from this trace; measure the change on a quieter machine",
	    ctx->others_cores, ctx->analysis->cpu_count);
}

/*
 * How far the trace data can be trusted: discarded events or packets, unknown discard
 * counts, unmatched spans and lossy steps each lower it.
 */
static double quality_factor(const struct po_analysis *analysis, const struct po_rules *rules)
{
	const struct po_quality *quality = &analysis->quality;
	double factor = 1.0;

	if (quality->discarded_events > 0 || quality->discarded_packets > 0)
		factor -= rules->confidence_loss_penalty;
	if (quality->unknown_discards > 0)
		factor -= 2 * rules->confidence_loss_penalty;
	if (quality->unmatched_begins + quality->unmatched_ends > 0)
		factor -= rules->confidence_loss_penalty / 2;
	if (analysis->step_count)
		factor -= 0.5 * (double)quality->lossy_steps / (double)analysis->step_count;
	return det_clamp(factor, 0.1, 1.0);
}

static double steps_factor(size_t clean_count, const struct po_rules *rules)
{
	double full = rules->confidence_full_steps > 0 ? rules->confidence_full_steps : 1;

	return 0.5 + 0.5 * det_clamp((double)clean_count / full, 0.0, 1.0);
}

/* Severity first (critical first), then id; equal keys keep their order. */
static void sort_findings(struct po_finding *findings, size_t count)
{
	for (size_t i = 1; i < count; i++) {
		struct po_finding item = findings[i];
		size_t j = i;

		while (j > 0 && (findings[j - 1].severity > item.severity ||
				 (findings[j - 1].severity == item.severity &&
				  findings[j - 1].id > item.id))) {
			findings[j] = findings[j - 1];
			j--;
		}
		findings[j] = item;
	}
}

typedef enum po_status (*det_fn)(struct det_ctx *ctx);

/*
 * Memory growth runs before unfreed-allocations, which reads its severity; level-shift
 * before step-outliers, which judges each step against its level.
 */
static const det_fn detectors[] = {
    det_trace_data_loss, det_input_bound,      det_gpu_bound,	   det_launch_bound,
    det_gpu_idle,	 det_memory_growth,    det_unfreed,	   det_level_shift,
    det_step_outliers,	 det_cpu_contention,   det_loader_handoff, det_worker_restart,
    det_straggler,	 det_loader_imbalance, det_copy_on_access,
};

static struct po_recommendation *find_rec(const struct po_finding *finding, enum po_knob knob)
{
	for (size_t i = 0; finding && i < finding->recommendation_count; i++) {
		if (finding->recommendations[i].knob == knob)
			return &finding->recommendations[i];
	}
	return NULL;
}

/*
 * A GPU idle while the loop waits for input is fixed where the input-bound finding says:
 * gpu-idle's "more loader workers" becomes input-bound's first advice (or a pointer to it
 * when its predictions were withheld), never a knob it advises against (more workers on
 * saturated cores). gpu-idle keeps its own bound on the gain: the idle time it can recover.
 */
static void defer_gpu_idle_to_input(struct det_ctx *ctx, const struct po_finding *input)
{
	struct po_finding *idle = (struct po_finding *)det_find(ctx, PO_FINDING_GPU_IDLE);
	struct po_recommendation *feed = find_rec(idle, PO_KNOB_NUM_WORKERS);

	if (!feed || !input)
		return;
	if (input->recommendation_count > 0) {
		feed->knob = input->recommendations[0].knob;
		feed->action =
		    det_printf(ctx,
			       "feed the GPU faster: %s (the input-bound finding's first "
			       "advice)",
			       input->recommendations[0].action);
		return;
	}
	feed->knob = (enum po_knob)(PO_KNOB_CATEGORY + PO_CAT_DATA_WAIT);
	feed->action = "feed the GPU faster: the input-bound finding says what limits the loader";
}

/*
 * One answer per knob in a report: cpu-contention models the cores the workers and the loop
 * share, so where it recommends a num_workers, input-bound's recommendation of another one
 * gives way to it (it could say "set num_workers=6" beside "keep num_workers=4"); and
 * gpu-idle's advice for a GPU that waits on input is input-bound's.
 */
static void reconcile(struct det_ctx *ctx)
{
	const struct po_finding *contention = det_find(ctx, PO_FINDING_CPU_CONTENTION);
	const struct po_finding *input = det_find(ctx, PO_FINDING_INPUT_BOUND);
	const struct po_recommendation *cores = find_rec(contention, PO_KNOB_NUM_WORKERS);
	struct po_recommendation *workers = find_rec(input, PO_KNOB_NUM_WORKERS);

	if (cores && workers && strcmp(cores->action, workers->action) != 0) {
		*workers = *cores;
		workers->why =
		    det_printf(ctx, "%s (the cpu-contention finding models the cores)", cores->why);
	}
	defer_gpu_idle_to_input(ctx, input);
}

static enum po_status run_detectors(struct det_ctx *ctx)
{
	for (size_t i = 0; i < sizeof(detectors) / sizeof(detectors[0]); i++) {
		enum po_status status = detectors[i](ctx);

		if (status == PO_STATUS_OK && ctx->nomem)
			status = PO_STATUS_NOMEM;
		if (status != PO_STATUS_OK)
			return status;
	}
	reconcile(ctx);
	return ctx->nomem ? PO_STATUS_NOMEM : PO_STATUS_OK;
}

/* Whether the steps the detectors read came back from their temporary file intact. */
static enum po_status steps_readable(const struct po_analysis *analysis, struct po_error *err)
{
	enum po_status status = po_analysis_steps_check(analysis, err);

	if (status != PO_STATUS_OK)
		po_error_prepend(err, "Failed to run the detectors");
	return status;
}

/* Records in the result the rules that differ from their defaults, in table order. */
static enum po_status note_rule_changes(struct po_diagnosis *diagnosis,
					const struct po_rules *rules)
{
	static const char *const names[] = {
#define PO_X(member, rule, key, value, unit, what, source) rule "." key,
	    PO_RULES(PO_X)
#undef PO_X
	};
	struct po_rules defaults;
	double now[sizeof(names) / sizeof(names[0])], before[sizeof(names) / sizeof(names[0])];
	size_t count = 0, i = 0;

	po_rules_init(&defaults);
#define PO_X(member, rule, key, value, unit, what, source)                                         \
	now[i] = rules->member;                                                                    \
	before[i++] = defaults.member;
	PO_RULES(PO_X)
#undef PO_X
	free(diagnosis->rule_changes);
	diagnosis->rule_changes = calloc(i, sizeof(*diagnosis->rule_changes));
	if (!diagnosis->rule_changes)
		return PO_STATUS_NOMEM;
	for (size_t r = 0; r < i; r++)
		if (now[r] != before[r])
			diagnosis->rule_changes[count++] =
			    (struct po_rule_change){names[r], now[r], before[r]};
	diagnosis->rule_change_count = count;
	return PO_STATUS_OK;
}

/*
 * Empties what the detectors write of a diagnosis (findings, verdict, growth lines, the
 * input cause, their warnings), so that a second run starts clean; the comparison and the
 * live alerts are the program's and stay.
 */
static void reset_diagnosis(struct po_diagnosis *diagnosis)
{
	diagnosis->findings = NULL;
	diagnosis->finding_count = 0;
	memset(diagnosis->growth_lines, 0, sizeof(diagnosis->growth_lines));
	diagnosis->input_cause = PO_INPUT_CAUSE_NONE;
	diagnosis->has_bottleneck = false;
	diagnosis->verdict = PO_VERDICT_UNKNOWN;
	diagnosis->verdict_reason = NULL;
	diagnosis->warning_count = 0;
	diagnosis->self_cost_pct = NAN;
	diagnosis->self_cost_visible = false;
}

enum po_status po_detect_run(struct po_analysis *analysis, const struct po_rules *rules,
			     struct po_error *err)
{
	return po_detect_run_steps(analysis, rules, INT64_MIN, INT64_MAX, err);
}

enum po_status po_detect_run_steps(struct po_analysis *analysis, const struct po_rules *rules,
				   int64_t after_ns, int64_t until_ns, struct po_error *err)
{
	struct det_ctx ctx = {.analysis = analysis,
			      .diagnosis = &analysis->diagnosis,
			      .rules = rules,
			      .steps_after_ns = after_ns,
			      .steps_until_ns = until_ns};
	enum po_status status;

	reset_diagnosis(&analysis->diagnosis);
	status = note_rule_changes(&analysis->diagnosis, rules);
	if (status == PO_STATUS_OK)
		status = collect_clean_steps(&ctx);
	if (status == PO_STATUS_OK)
		status = measure_machine(&ctx);
	if (status == PO_STATUS_OK) {
		fill_steady(&ctx);
		status = measure_self_cost(&ctx);
	}
	if (status == PO_STATUS_OK) {
		det_fill_gpu_work(&ctx);
		ctx.quality_factor = quality_factor(analysis, rules);
		ctx.steps_factor = steps_factor(ctx.clean_count, rules);
		status = run_detectors(&ctx);
	}
	if (status == PO_STATUS_OK) {
		sort_findings(ctx.findings, ctx.finding_count);
		analysis->diagnosis.findings = ctx.findings;
		analysis->diagnosis.finding_count = ctx.finding_count;
		analysis->diagnosis.verdict = det_verdict(&ctx);
		analysis->diagnosis.verdict_reason =
		    det_verdict_reason(&ctx, analysis->diagnosis.verdict);
	} else {
		po_error_set(err, "Failed to run the detectors: %s", po_status_description(status));
	}
	free(ctx.clean);
	free(ctx.all_clean);
	return status == PO_STATUS_OK ? steps_readable(analysis, err) : status;
}

enum po_status po_detect_distributed(struct po_analysis *analysis, const struct po_rules *rules,
				     struct po_error *err)
{
	struct det_ctx ctx = {.analysis = analysis,
			      .diagnosis = &analysis->diagnosis,
			      .rules = rules,
			      .steps_after_ns = INT64_MIN,
			      .steps_until_ns = INT64_MAX,
			      .quality_factor = 1,
			      .steps_factor = 1};
	enum po_status status;

	reset_diagnosis(&analysis->diagnosis);
	status = note_rule_changes(&analysis->diagnosis, rules);

	if (status == PO_STATUS_OK)
		status = det_straggler(&ctx);
	if (status == PO_STATUS_OK && ctx.nomem)
		status = PO_STATUS_NOMEM;
	if (status != PO_STATUS_OK) {
		po_error_set(err, "Failed to run the detectors: %s", po_status_description(status));
		return status;
	}
	sort_findings(ctx.findings, ctx.finding_count);
	analysis->diagnosis.findings = ctx.findings;
	analysis->diagnosis.finding_count = ctx.finding_count;
	analysis->diagnosis.verdict = PO_VERDICT_UNKNOWN;
	analysis->diagnosis.verdict_reason =
	    det_printf(&ctx, "a merge holds the ranks' collectives and breakdowns, not their "
			     "steps: each host's own report (profopt-analyze TRACE_DIR) gives the "
			     "verdict of its loop");
	return ctx.nomem ? PO_STATUS_NOMEM : PO_STATUS_OK;
}
