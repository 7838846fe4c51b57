/* fixture_comparison.c: a synthetic --baseline comparison attached to a fixture analysis. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare/compare.h"
#include "fixture.h"

#define BASELINE_STEPS 80

static int compare_double(const void *x, const void *y)
{
	double left = *(const double *)x, right = *(const double *)y;

	return (left > right) - (left < right);
}

static double median(const double *values, size_t count)
{
	double *sorted = malloc(count * sizeof(*sorted));
	double middle;

	memcpy(sorted, values, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), compare_double);
	middle = count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
	free(sorted);
	return middle;
}

/* The baseline was a faster run: steps of about 76 ms with a little spread. */
static double *baseline_steps(struct po_arena *arena)
{
	double *steps = po_arena_alloc(arena, BASELINE_STEPS * sizeof(*steps));
	uint32_t seed = 777;

	for (size_t i = 0; i < BASELINE_STEPS; i++) {
		seed = seed * 1103515245u + 12345u;
		steps[i] = 72.0 + 8.0 * (((seed >> 8) & 0xffff) / 65535.0) + (i % 17 == 0 ? 9 : 0);
	}
	return steps;
}

static double *new_steps(struct po_analysis *analysis, size_t *count)
{
	double *steps =
	    po_arena_alloc(analysis->arena, (analysis->step_count + 1) * sizeof(*steps));

	*count = 0;
	for (size_t i = 0; i < analysis->step_count; i++) {
		const struct po_step step = po_analysis_step(analysis, i);

		if (!(step.flags & PO_STEP_LOSSY))
			steps[(*count)++] = (step.end_ns - step.begin_ns) / 1e6;
	}
	return steps;
}

static void set_metric(struct po_metric_change *metric, const char *name, double old_value,
		       double new_value, int judgement, double ci_low, double ci_high,
		       bool lower_is_better)
{
	/* The metric by its name; the direction the test expects is the table's. */
	CHECK(po_cmp_metric_by_name(name) >= 0);
	metric->metric = (enum po_cmp_metric)po_cmp_metric_by_name(name);
	CHECK(po_cmp_metric_lower_is_better(metric->metric) == lower_is_better);
	metric->old_value = old_value;
	metric->new_value = new_value;
	metric->delta = new_value - old_value;
	metric->delta_pct = old_value != 0 ? 100 * metric->delta / fabs(old_value) : NAN;
	metric->judgement = judgement;
	metric->p_value = judgement == PO_CHANGE_UNTESTED      ? NAN
			  : judgement == PO_CHANGE_SIGNIFICANT ? 2.4e-7
							       : 0.41;
	metric->ci_low = ci_low;
	metric->ci_high = ci_high;
}

static void add_metrics(struct po_comparison *c)
{
	struct po_metric_change *m = c->metrics;
	double old_p50 = median(c->old_step_ms, c->old_step_count);
	double new_p50 = median(c->new_step_ms, c->new_step_count);
	size_t k = 0;

	set_metric(&m[k++], "steps.p50_ms", old_p50, new_p50, PO_CHANGE_SIGNIFICANT,
		   new_p50 - old_p50 - 1.2, new_p50 - old_p50 + 1.1, true);
	set_metric(&m[k++], "steps.p95_ms", 84.6, 124.3, PO_CHANGE_SIGNIFICANT, 36.2, 42.7, true);
	set_metric(&m[k++], "steps.mean_ms", 76.6, 117.9, PO_CHANGE_SIGNIFICANT, 39.4, 41.8, true);
	set_metric(&m[k++], "steps.steps_per_s", 13.05, 8.19, PO_CHANGE_SIGNIFICANT, NAN, NAN,
		   false);
	set_metric(&m[k++], "steps.samples_per_s", 835.2, 523.9, PO_CHANGE_UNTESTED, NAN, NAN,
		   false);
	set_metric(&m[k++], "breakdown.data_wait_ms", 6.9, 47.8, PO_CHANGE_SIGNIFICANT, 39.8, 42.0,
		   true);
	set_metric(&m[k++], "breakdown.preprocess_ms", 4.2, 3.1, PO_CHANGE_SIGNIFICANT, -1.3, -0.8,
		   true);
	set_metric(&m[k++], "breakdown.h2d_copy_ms", 2.2, 2.3, PO_CHANGE_NOISE, -0.1, 0.2, true);
	set_metric(&m[k++], "breakdown.forward_ms", 24.8, 25.0, PO_CHANGE_NOISE, -0.3, 0.6, true);
	set_metric(&m[k++], "breakdown.backward_ms", 31.1, 31.0, PO_CHANGE_NOISE, -0.5, 0.4, true);
	set_metric(&m[k++], "breakdown.optimizer_ms", 3.4, 3.8, PO_CHANGE_NOISE, -0.1, 0.7, true);
	set_metric(&m[k++], "gpu.busy_pct", 71.7, 46.4, PO_CHANGE_SIGNIFICANT, -27.5, -23.0, false);
	set_metric(&m[k++], "workers.busy_pct", 63.0, 97.5, PO_CHANGE_UNTESTED, NAN, NAN, false);
	set_metric(&m[k++], "memory.growth_bytes_per_step", 0, 1572864, PO_CHANGE_UNTESTED, NAN,
		   NAN, true);
	c->metric_count = k;
}

static void add_findings(struct po_comparison *c, bool hostile)
{
	static const struct po_finding_change normal[] = {
	    {"input-bound", PO_FINDING_NEW, NULL, "critical"},
	    {"host-memory-growth", PO_FINDING_NEW, NULL, "warning"},
	    {"gpu-idle", PO_FINDING_PERSISTING, "info", "warning"},
	    {"step-outliers", PO_FINDING_RESOLVED, "info", NULL},
	};
	size_t count = sizeof(normal) / sizeof(normal[0]);

	memcpy(c->findings, normal, sizeof(normal));
	if (hostile)
		c->findings[count++] = (struct po_finding_change){
		    "<b onmouseover=alert(5)>bold</b>\x1b[1m\xff", PO_FINDING_NEW, NULL, "warning"};
	c->finding_count = count;
	c->new_findings = hostile ? 3 : 2;
	c->resolved_findings = 1;
}

void fixture_add_comparison(struct po_analysis *analysis, bool hostile)
{
	struct po_arena *arena = analysis->arena;
	struct po_comparison *c = po_arena_alloc(arena, sizeof(*c));
	const char **gates = po_arena_alloc(arena, 2 * sizeof(*gates));

	memset(c, 0, sizeof(*c));
	c->baseline = hostile ? "</script><script>alert(3)</script>\"'><img src=x onerror=alert(4)>"
				"\x01\x1b[31m\xc3("
			      : "runs/resnet50-4-workers";
	c->old_verdict = "gpu-bound";
	c->new_verdict = hostile ? "<i>input-bound</i>" : "input-bound";
	c->old_step_ms = baseline_steps(arena);
	c->old_step_count = BASELINE_STEPS;
	c->new_step_ms = new_steps(analysis, &c->new_step_count);
	po_compare_step_histograms(c);
	c->metrics = po_arena_alloc(arena, 20 * sizeof(*c->metrics));
	c->findings = po_arena_alloc(arena, 8 * sizeof(*c->findings));
	add_metrics(c);
	add_findings(c, hostile);
	gates[0] = "steps.p50_ms>+10%";
	gates[1] = "findings.new><script>alert(6)</script>";
	c->gates_tripped = gates;
	c->gates_tripped_count = hostile ? 2 : 1;
	analysis->diagnosis.comparison = c;
}
