/* comparison.c: the comparison's words and numbers, shared by the HTML, PDF and charts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comparison.h"

enum po_cmp_badge po_cmp_badge_of(const struct po_metric_change *metric)
{
	bool lower;

	if (metric->judgement == PO_CHANGE_UNTESTED)
		return PO_CMP_UNTESTED;
	if (metric->judgement == PO_CHANGE_INCONCLUSIVE)
		return PO_CMP_INCONCLUSIVE;
	if (metric->judgement != PO_CHANGE_SIGNIFICANT)
		return PO_CMP_NOISE;
	lower = metric->delta < 0;
	return lower == po_cmp_metric_lower_is_better(metric->metric) ? PO_CMP_BETTER
								      : PO_CMP_WORSE;
}

const char *po_cmp_badge_key(enum po_cmp_badge badge)
{
	static const char *const keys[] = {
#define PO_X(name, key) [PO_CMP_##name] = key,
	    PO_CMP_BADGES(PO_X)
#undef PO_X
	};

	return (unsigned)badge < sizeof(keys) / sizeof(keys[0]) ? keys[badge] : "untested";
}

uint32_t po_cmp_badge_color(enum po_cmp_badge badge)
{
	switch (badge) {
	case PO_CMP_BETTER:
		return PO_COLOR_OK;
	case PO_CMP_WORSE:
		return PO_COLOR_WARNING;
	default:
		return PO_COLOR_MUTED;
	}
}

bool po_cmp_metric_shown(const struct po_metric_change *metric)
{
	return !(isnan(metric->old_value) && isnan(metric->new_value));
}

void po_cmp_metric_title(enum po_cmp_metric metric, char *out, size_t out_size)
{
	int cat = po_cmp_metric_category(metric);

	if (cat >= 0)
		snprintf(out, out_size, "%s per step", po_report_category_title(cat));
	else
		snprintf(out, out_size, "%s",
			 po_cmp_metric_plain_title(metric) ? po_cmp_metric_plain_title(metric)
							   : po_cmp_metric_name(metric));
}

static void fmt_signed_bytes(double bytes, char *out, size_t out_size)
{
	char magnitude[32];

	po_report_fmt_bytes((int64_t)fabs(bytes), magnitude, sizeof(magnitude));
	snprintf(out, out_size, "%s%s/step", bytes < 0 ? "-" : "", magnitude);
}

void po_cmp_fmt_value(enum po_cmp_metric metric, double value, char *out, size_t out_size)
{
	if (isnan(value)) {
		snprintf(out, out_size, "n/a");
		return;
	}
	switch (po_cmp_metric_unit(metric)) {
	case PO_CMP_UNIT_MS:
		snprintf(out, out_size, value != 0 && fabs(value) < 0.1 ? "%.3f ms" : "%.2f ms",
			 value);
		break;
	case PO_CMP_UNIT_PCT:
		snprintf(out, out_size, "%.1f%%", value);
		break;
	case PO_CMP_UNIT_PER_S:
		snprintf(out, out_size, "%.2f/s", value);
		break;
	case PO_CMP_UNIT_BYTES_PER_STEP:
		fmt_signed_bytes(value, out, out_size);
		break;
	}
}

void po_cmp_fmt_change(const struct po_metric_change *metric, char *out, size_t out_size)
{
	if (isnan(metric->delta_pct))
		snprintf(out, out_size, "n/a");
	else
		snprintf(out, out_size, "%+.1f%%", metric->delta_pct);
}

void po_cmp_fmt_interval(const struct po_metric_change *metric, char *out, size_t out_size)
{
	const char *unit = po_cmp_metric_unit(metric->metric) == PO_CMP_UNIT_PCT ? " pt" : " ms";

	if (isnan(metric->ci_low) || isnan(metric->ci_high))
		snprintf(out, out_size, "\xe2\x80\x94");
	else if (fmax(fabs(metric->ci_low), fabs(metric->ci_high)) < 0.1 && unit[1] == 'm')
		/* Microseconds rather than "-0.00 to +0.00 ms". */
		snprintf(out, out_size, "%+.1f to %+.1f \xc2\xb5s", metric->ci_low * 1e3,
			 metric->ci_high * 1e3);
	else if (fmax(fabs(metric->ci_low), fabs(metric->ci_high)) < 0.1)
		snprintf(out, out_size, "%+.3f to %+.3f%s", metric->ci_low, metric->ci_high, unit);
	else
		snprintf(out, out_size, "%+.2f to %+.2f%s", metric->ci_low, metric->ci_high, unit);
}

const struct po_metric_change *po_cmp_find_metric(const struct po_comparison *comparison,
						  enum po_cmp_metric metric)
{
	for (size_t i = 0; i < comparison->metric_count; i++) {
		if (comparison->metrics[i].metric == metric)
			return &comparison->metrics[i];
	}
	return NULL;
}

void po_cmp_verdict_title(const char *key, char *out, size_t out_size)
{
	for (int verdict = 0; verdict < PO_VERDICT_COUNT; verdict++) {
		if (key && strcmp(key, po_report_verdict_key(verdict)) == 0) {
			snprintf(out, out_size, "%s", po_report_verdict_title(verdict));
			return;
		}
	}
	po_report_clean(key ? key : "unknown", out, out_size, 40);
}

void po_cmp_finding_title(const char *id, char *out, size_t out_size)
{
	for (int finding = 0; finding < PO_FINDING_ID_COUNT; finding++) {
		const char *title = po_report_finding_title(finding);

		if (id && title && strcmp(id, po_report_finding_key(finding)) == 0) {
			snprintf(out, out_size, "%s", title);
			return;
		}
	}
	po_report_clean(id, out, out_size, 60);
}

const char *po_cmp_finding_change_key(int change)
{
	return change == PO_FINDING_NEW	       ? "new"
	       : change == PO_FINDING_RESOLVED ? "resolved"
					       : "persisting";
}

void po_cmp_baseline_label(const struct po_comparison *comparison, char *out, size_t out_size)
{
	po_report_clean(comparison->baseline ? comparison->baseline : "the baseline", out, out_size,
			PO_REPORT_LABEL_CHARS);
}

/* "41.2% shorter (a 1.70x speed-up) than"-style words for the median step's change. */
static void speed_words(const struct po_metric_change *p50, char *out, size_t out_size)
{
	if (fabs(p50->delta_pct) < 0.05)
		snprintf(out, out_size, "as long as");
	else if (p50->delta < 0)
		snprintf(out, out_size, "%.1f%% shorter (a %.2f\xc3\x97 speed-up) than",
			 -p50->delta_pct, p50->old_value / p50->new_value);
	else
		snprintf(out, out_size, "%.1f%% longer (a %.2f\xc3\x97 slow-down) than",
			 p50->delta_pct, p50->new_value / p50->old_value);
}

void po_cmp_headline(const struct po_comparison *comparison, char *out, size_t out_size)
{
	const struct po_metric_change *p50 = po_cmp_find_metric(comparison, PO_CMP_STEPS_P50);
	enum po_cmp_badge badge = p50 ? po_cmp_badge_of(p50) : PO_CMP_UNTESTED;
	bool large = p50 && fabs(p50->delta_pct) >= 50;

	if (badge == PO_CMP_BETTER && large)
		snprintf(out, out_size, "%.2f\xc3\x97 faster than the baseline",
			 p50->old_value / p50->new_value);
	else if (badge == PO_CMP_BETTER)
		snprintf(out, out_size, "%.1f%% faster than the baseline", -p50->delta_pct);
	else if (badge == PO_CMP_WORSE && large)
		snprintf(out, out_size, "%.2f\xc3\x97 slower than the baseline",
			 p50->new_value / p50->old_value);
	else if (badge == PO_CMP_WORSE)
		snprintf(out, out_size, "%.1f%% slower than the baseline", p50->delta_pct);
	else if (badge == PO_CMP_NOISE)
		snprintf(out, out_size, "No change beyond run-to-run noise");
	else if (badge == PO_CMP_INCONCLUSIVE)
		snprintf(out, out_size, "Inconclusive: other programs' load differed");
	else
		snprintf(out, out_size, "Step times not tested against noise");
}

static const char *noise_words(const struct po_metric_change *p50)
{
	switch (p50->judgement) {
	case PO_CHANGE_SIGNIFICANT:
		return "a change beyond run-to-run noise";
	case PO_CHANGE_NOISE:
		return "within run-to-run noise";
	case PO_CHANGE_INCONCLUSIVE:
		return "a change beyond noise that may be other programs' (their load differed "
		       "between the runs)";
	default:
		return "too few steps to test against noise";
	}
}

void po_cmp_summary(const struct po_comparison *comparison, char *out, size_t out_size)
{
	const struct po_metric_change *p50 = po_cmp_find_metric(comparison, PO_CMP_STEPS_P50);
	char label[PO_REPORT_TEXT_MAX], old_verdict[64], new_verdict[64], speed[96];
	char p_text[48] = "";

	po_cmp_baseline_label(comparison, label, sizeof(label));
	po_cmp_verdict_title(comparison->old_verdict, old_verdict, sizeof(old_verdict));
	po_cmp_verdict_title(comparison->new_verdict, new_verdict, sizeof(new_verdict));
	if (!p50 || isnan(p50->old_value) || isnan(p50->new_value) || isnan(p50->delta_pct)) {
		snprintf(out, out_size,
			 "The step times of this run and of the baseline (%s) could not be "
			 "compared. Verdict: %s \xe2\x86\x92 %s.",
			 label, old_verdict, new_verdict);
		return;
	}
	speed_words(p50, speed, sizeof(speed));
	if (!isnan(p50->p_value))
		snprintf(p_text, sizeof(p_text), ", p = %.2g", p50->p_value);
	snprintf(out, out_size,
		 "This run's median step is %s the baseline's (%.2f ms against %.2f ms in %s), "
		 "%s%s. Verdict: %s \xe2\x86\x92 %s.%s%s",
		 speed, p50->new_value, p50->old_value, label, noise_words(p50), p_text,
		 old_verdict, new_verdict, comparison->load.note ? " Inconclusive: " : "",
		 comparison->load.note ? comparison->load.note : "");
}
