/*
 * gate.c: --fail-if expressions, METRIC OP VALUE. VALUE "+10%" or "-5%": the relative
 * change; "+2" or "-2": the absolute change; a plain number: the new value itself. Gates on
 * a change trip only when the change is significant (beyond run-to-run noise), so a repeat
 * run does not trip a CI gate by chance.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"

#define VALUE_NEW 0
#define VALUE_DELTA 1
#define VALUE_DELTA_PCT 2

struct gate {
	char metric[64];
	char op[3];
	double threshold;
	int value_kind; /* VALUE_* */
};

/* The counts of finding changes a gate can test besides the metrics (compare.h). */
static const char *const finding_counts[] = {"findings.new", "findings.resolved"};

static bool is_findings_count(const char *metric)
{
	for (size_t i = 0; i < sizeof(finding_counts) / sizeof(finding_counts[0]); i++)
		if (strcmp(metric, finding_counts[i]) == 0)
			return true;
	return false;
}

/* The names a gate can test: the comparison's metrics and the finding counts. */
static bool known_metric(const char *metric)
{
	return po_cmp_metric_by_name(metric) >= 0 || is_findings_count(metric);
}

static enum po_status parse_gate(const char *expression, struct gate *gate, struct po_error *err)
{
	const char *cursor = expression;
	size_t len = 0;
	char *end;

	while (isalnum((unsigned char)cursor[len]) || cursor[len] == '_' || cursor[len] == '.')
		len++;
	if (len == 0 || len >= sizeof(gate->metric))
		goto bad;
	memcpy(gate->metric, cursor, len);
	gate->metric[len] = '\0';
	cursor += len;
	len = (cursor[0] == '>' || cursor[0] == '<') ? (cursor[1] == '=' ? 2 : 1) : 0;
	if (len == 0)
		goto bad;
	memcpy(gate->op, cursor, len);
	gate->op[len] = '\0';
	cursor += len;
	gate->value_kind = (*cursor == '+' || *cursor == '-') ? VALUE_DELTA : VALUE_NEW;
	gate->threshold = strtod(cursor, &end);
	if (end == cursor || !isfinite(gate->threshold))
		goto bad;
	if (*end == '%') {
		if (gate->value_kind != VALUE_DELTA)
			goto bad;
		gate->value_kind = VALUE_DELTA_PCT;
		end++;
	}
	if (*end != '\0')
		goto bad;
	if (!known_metric(gate->metric)) {
		po_error_set(err,
			     "--fail-if \"%s\": no metric %s (see README: steps.p50_ms, "
			     "breakdown.<category>_ms, gpu.busy_pct, findings.new, ...)",
			     expression, gate->metric);
		return PO_STATUS_USAGE;
	}
	if (is_findings_count(gate->metric) && gate->value_kind != VALUE_NEW) {
		po_error_set(err,
			     "--fail-if \"%s\": %s is a count: compare it with a plain "
			     "number, e.g. %s>0",
			     expression, gate->metric, gate->metric);
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
bad:
	po_error_set(err,
		     "--fail-if \"%s\": expected METRIC OP VALUE, e.g. steps.p50_ms>+10%% "
		     "or findings.new>0",
		     expression);
	return PO_STATUS_USAGE;
}

enum po_status po_gate_check(const char *expression, struct po_error *err)
{
	struct gate gate;

	return parse_gate(expression, &gate, err);
}

static bool holds(double value, const char *op, double threshold)
{
	if (strcmp(op, ">") == 0)
		return value > threshold;
	if (strcmp(op, ">=") == 0)
		return value >= threshold;
	if (strcmp(op, "<") == 0)
		return value < threshold;
	return value <= threshold;
}

static const struct po_metric_change *find_metric(const struct po_comparison *comparison,
						  const char *name)
{
	int wanted = po_cmp_metric_by_name(name);

	for (size_t i = 0; i < comparison->metric_count; i++)
		if ((int)comparison->metrics[i].metric == wanted)
			return &comparison->metrics[i];
	return NULL;
}

enum po_status po_gate_evaluate(const struct po_comparison *comparison, const char *expression,
				enum po_gate_outcome *outcome, struct po_error *err)
{
	const struct po_metric_change *metric;
	struct gate gate;
	double value;

	if (parse_gate(expression, &gate, err) != PO_STATUS_OK)
		return PO_STATUS_USAGE;
	if (is_findings_count(gate.metric)) {
		value = (double)(gate.metric[9] == 'n' ? comparison->new_findings
						       : comparison->resolved_findings);
		*outcome = gate.value_kind == VALUE_NEW && holds(value, gate.op, gate.threshold)
			       ? PO_GATE_TRUE
			       : PO_GATE_FALSE;
		return PO_STATUS_OK;
	}
	metric = find_metric(comparison, gate.metric);
	if (!metric) {
		/* A known metric with no data in either run (no GPU, an empty category). */
		*outcome = PO_GATE_FALSE;
		return PO_STATUS_OK;
	}
	value = gate.value_kind == VALUE_NEW	 ? metric->new_value
		: gate.value_kind == VALUE_DELTA ? metric->delta
						 : metric->delta_pct;
	if (isnan(value) || !holds(value, gate.op, gate.threshold))
		*outcome = PO_GATE_FALSE;
	else if (gate.value_kind == VALUE_NEW)
		*outcome = PO_GATE_TRUE;
	else if (metric->judgement == PO_CHANGE_NOISE)
		*outcome = PO_GATE_FALSE;
	else if (metric->judgement == PO_CHANGE_INCONCLUSIVE)
		*outcome = PO_GATE_INCONCLUSIVE;
	else
		*outcome = PO_GATE_TRUE;
	return PO_STATUS_OK;
}
