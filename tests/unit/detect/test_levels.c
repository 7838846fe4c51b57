/*
 * test_levels.c: level-shift and the periodic stalls of step-outliers on synthetic runs. A
 * step time that moves to a new level is one change (when, from what to what, which category
 * moved), not slow steps, also when its steps take turns; a drift or noise is no level; a
 * stall every N steps, with or without a span of its own and beside noise in the other
 * categories, is periodic and counted once per stall.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

/* 11 ms steps: forward, backward, optimizer, a little data wait and unmarked time. */
static const struct synth_breakdown loop = {.ms = {[PO_CAT_FORWARD] = 4,
						   [PO_CAT_BACKWARD] = 5,
						   [PO_CAT_OPTIMIZER] = 1,
						   [PO_CAT_DATA_WAIT] = 0.2,
						   [PO_CAT_OTHER] = 0.8}};

static void run_detect(struct po_analysis *analysis)
{
	struct po_error err = {{0}};

	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
}

static size_t count_of(const struct po_analysis *analysis, enum po_finding_id id)
{
	size_t count = 0;

	for (size_t i = 0; i < analysis->diagnosis.finding_count; i++)
		count += analysis->diagnosis.findings[i].id == id;
	return count;
}

static void add_ms(struct po_analysis *analysis, size_t step, enum po_category category, double ms)
{
	SYNTH_STEP(analysis, step).category_ns[category] += (int64_t)(ms * SYNTH_MS);
}

/* A well mixed hash of i (splitmix64's finalizer): no period, no lattice. */
static uint64_t mix(uint64_t i)
{
	i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9ULL;
	i = (i ^ (i >> 27)) * 0x94d049bb133111ebULL;
	return i ^ (i >> 31);
}

/* Whether step i is one of the random tenth that other programs slow. */
static bool noisy(size_t i, unsigned salt)
{
	return mix((uint64_t)i + ((uint64_t)salt << 32)) % 10 == 3;
}

/* Backward takes 10 ms more from step 300 of 400: one shift, no slow steps. */
static void test_late_shift(void)
{
	struct po_analysis *analysis = synth_create(400, &loop, 5);
	const struct po_finding *shift;

	for (size_t i = 300; i < 400; i++)
		add_ms(analysis, i, PO_CAT_BACKWARD, 10);
	synth_relayout(analysis);
	run_detect(analysis);
	shift = synth_finding(analysis, PO_FINDING_LEVEL_SHIFT);
	CHECK_INT_EQ(count_of(analysis, PO_FINDING_LEVEL_SHIFT), 1);
	CHECK(shift != NULL);
	if (shift) {
		CHECK_INT_EQ(shift->severity, PO_SEVERITY_WARNING);
		CHECK_NEAR(synth_number(shift, "step"), 300, 0);
		CHECK_NEAR(synth_number(shift, "before_ms"), 11, 0.5);
		CHECK_NEAR(synth_number(shift, "after_ms"), 21, 0.8);
		CHECK_NEAR(synth_number(shift, "steps_after"), 100, 0);
		CHECK_STR_EQ(synth_text(shift, "category"), "backward");
		CHECK_NEAR(synth_number(shift, "category_after_ms") -
			       synth_number(shift, "category_before_ms"),
			   10, 0.5);
		CHECK(strstr(shift->summary, "From step 300") != NULL);
	}
	/* The later steps are judged against their own level: they are no outliers. */
	CHECK(synth_finding(analysis, PO_FINDING_STEP_OUTLIERS) == NULL);
	synth_destroy(analysis);
}

/*
 * From step 150, every other step waits 30 ms for its batch (two workers, one slow): the
 * steps take turns, the level is their mean.
 */
static void test_shift_in_turns(void)
{
	struct po_analysis *analysis = synth_create(300, &loop, 5);
	const struct po_finding *shift;

	for (size_t i = 150; i < 300; i += 2)
		add_ms(analysis, i, PO_CAT_DATA_WAIT, 30);
	synth_relayout(analysis);
	run_detect(analysis);
	shift = synth_finding(analysis, PO_FINDING_LEVEL_SHIFT);
	CHECK(shift != NULL);
	if (shift) {
		CHECK_NEAR(synth_number(shift, "step"), 150, 2);
		CHECK_NEAR(synth_number(shift, "after_ms"), 26, 3.5);
		CHECK_STR_EQ(synth_text(shift, "category"), "data_wait");
	}
	synth_destroy(analysis);
}

/* A step time that drifts from 11 to 20 ms, and one that only varies, have no level. */
static void test_no_level(void)
{
	struct po_analysis *analysis = synth_create(300, &loop, 5);

	for (size_t i = 0; i < 300; i++)
		add_ms(analysis, i, PO_CAT_BACKWARD, 0.03 * (double)i);
	synth_relayout(analysis);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_LEVEL_SHIFT) == NULL);
	synth_destroy(analysis);
	analysis = synth_create(300, &loop, 25);
	run_detect(analysis);
	CHECK(synth_finding(analysis, PO_FINDING_LEVEL_SHIFT) == NULL);
	synth_destroy(analysis);
}

/*
 * A collection every 50 steps (40 ms outside every span) beside noise: a tenth of the steps
 * take 8-20 ms more in backward (other programs on the machine). The stall is periodic and
 * counted once each: 8 of 400, not the noise's slow steps too.
 */
static void test_periodic_without_span(void)
{
	struct po_analysis *analysis = synth_create(400, &loop, 5);
	const struct po_finding *finding;

	for (size_t i = 49; i < 400; i += 50)
		add_ms(analysis, i, PO_CAT_OTHER, 40);
	for (size_t i = 0; i < 400; i++) {
		if (noisy(i, 99))
			add_ms(analysis, i, PO_CAT_BACKWARD, 8 + (double)(mix(i) % 13));
	}
	synth_relayout(analysis);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "pattern"), "periodic");
		CHECK_NEAR(synth_number(finding, "period_steps"), 50, 0);
		CHECK_NEAR(synth_number(finding, "outliers"), 8, 0);
		CHECK_NEAR(synth_number(finding, "excess_ms_per_outlier"), 40, 2);
		CHECK_STR_EQ(synth_text(finding, "cause"), "other");
	}
	CHECK(synth_finding(analysis, PO_FINDING_LEVEL_SHIFT) == NULL);
	synth_destroy(analysis);
}

/*
 * A checkpoint of 20 ms outside every span each 25 steps, where other programs also slow a
 * tenth of the steps by 60-90 ms, also outside every span: the noise holds most of the extra
 * time, but 8 of 8 checkpoint steps cannot fall on one phase by chance. Noise alone makes
 * no period.
 */
static void test_periodic_in_heavy_noise(void)
{
	struct po_analysis *analysis = synth_create(200, &loop, 5);
	const struct po_finding *finding;

	for (size_t i = 24; i < 200; i += 25)
		add_ms(analysis, i, PO_CAT_OTHER, 20);
	for (size_t i = 0; i < 200; i++) {
		if (noisy(i, 0) && i % 25 != 24)
			add_ms(analysis, i, PO_CAT_OTHER, 60 + (double)(i % 31));
	}
	synth_relayout(analysis);
	run_detect(analysis);
	finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_NEAR(synth_number(finding, "period_steps"), 25, 0);
		CHECK_NEAR(synth_number(finding, "outliers"), 8, 0);
		CHECK_NEAR(synth_number(finding, "excess_ms_per_outlier"), 20, 1.5);
	}
	synth_destroy(analysis);
	for (unsigned salt = 0; salt < 20; salt++) {
		analysis = synth_create(200, &loop, 5);
		for (size_t i = 0; i < 200; i++) {
			if (noisy(i, salt * 977))
				add_ms(analysis, i, PO_CAT_OTHER, 60 + (double)(i % 31));
		}
		synth_relayout(analysis);
		run_detect(analysis);
		finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
		CHECK(finding && strcmp(synth_text(finding, "pattern"), "sporadic") == 0);
		synth_destroy(analysis);
	}
}

/*
 * A moderate checkpoint (6 ms) every 25 steps in a run whose forward takes 10 ms more from
 * step 200: one shift, and the checkpoint periodic against each level.
 */
static void test_periodic_across_shift(void)
{
	struct po_analysis *analysis = synth_create(400, &loop, 5);
	const struct po_finding *finding, *shift;

	for (size_t i = 24; i < 400; i += 25)
		add_ms(analysis, i, PO_CAT_CHECKPOINT, 6);
	for (size_t i = 200; i < 400; i++)
		add_ms(analysis, i, PO_CAT_FORWARD, 10);
	synth_relayout(analysis);
	run_detect(analysis);
	shift = synth_finding(analysis, PO_FINDING_LEVEL_SHIFT);
	CHECK(shift != NULL);
	if (shift)
		CHECK_NEAR(synth_number(shift, "step"), 200, 0);
	CHECK(shift && strcmp(synth_text(shift, "category"), "forward") == 0);
	finding = synth_finding(analysis, PO_FINDING_STEP_OUTLIERS);
	CHECK(finding != NULL);
	if (finding) {
		CHECK_NEAR(synth_number(finding, "period_steps"), 25, 0);
		CHECK_NEAR(synth_number(finding, "outliers"), 16, 0);
		CHECK_NEAR(synth_number(finding, "excess_ms_per_outlier"), 6, 0.8);
		CHECK_STR_EQ(synth_text(finding, "cause"), "checkpoint");
	}
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_late_shift);
	RUN(test_shift_in_turns);
	RUN(test_no_level);
	RUN(test_periodic_without_span);
	RUN(test_periodic_in_heavy_noise);
	RUN(test_periodic_across_shift);
	return CHECK_SUMMARY();
}
