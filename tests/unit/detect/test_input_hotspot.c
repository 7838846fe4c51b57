/*
 * test_input_hotspot.c: the input-bound finding names the function that dominates its
 * slowest stage from the function samples of the role that loads (the training loop with
 * num_workers=0), once the stage has input-bound.hotspot_min_samples samples; with fewer,
 * or samples of another role only, it names none.
 */
#include <string.h>

#include "check.h"
#include "synth.h"

static struct po_rules rules;

static const struct synth_breakdown main_loading = {.ms = {[PO_CAT_LOAD] = 10,
							   [PO_CAT_PREPROCESS] = 5,
							   [PO_CAT_COLLATE] = 1,
							   [PO_CAT_FORWARD] = 4,
							   [PO_CAT_BACKWARD] = 4,
							   [PO_CAT_OPTIMIZER] = 1}};

static struct po_hotspot hotspots[] = {
    {"decode_jpeg", "/data/project/dataset.py", 42, 71, 71, 71.0, 71.0, 0, true},
    {"Dataset.__getitem__", "/data/project/dataset.py", 30, 29, 100, 29.0, 100.0, 0, true},
};

/* A run loading in the main process whose load stage has samples of role in group. */
static const struct po_finding *detect_hotspots(struct po_analysis *analysis, enum po_role role,
						int64_t samples, struct po_hotspot *listed,
						size_t count)
{
	static struct po_hotspot_group group;
	struct synth_loader loader = {{10, 5, 1}, {1, 5, 1}, {"read_file", "decode", "stack"}};
	struct po_error err = {{0}};

	group = (struct po_hotspot_group){.role = role,
					  .stage = PO_STAGE_LOAD,
					  .samples = samples,
					  .cpu_ns = samples * 10000000,
					  .hotspots = listed,
					  .hotspot_count = count};
	synth_config(analysis, "num_workers", "0");
	synth_main_labels(analysis, &loader);
	analysis->hotspot_groups = &group; /* weak: the test's */
	analysis->hotspot_group_count = 1;
	analysis->stack_samples = samples;
	CHECK_INT_EQ(po_detect_run(analysis, &rules, &err), PO_STATUS_OK);
	return synth_finding(analysis, PO_FINDING_INPUT_BOUND);
}

static const struct po_finding *detect_with(struct po_analysis *analysis, enum po_role role,
					    int64_t samples)
{
	return detect_hotspots(analysis, role, samples, hotspots, 2);
}

static void test_named(void)
{
	struct po_analysis *analysis = synth_create(100, &main_loading, 0);
	const struct po_finding *finding = detect_with(analysis, PO_ROLE_MAIN, 100);

	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "stage"), "load");
		CHECK_STR_EQ(synth_text(finding, "hotspot_function"), "decode_jpeg");
		CHECK_STR_EQ(synth_text(finding, "hotspot_file"), "/data/project/dataset.py");
		CHECK_NEAR(synth_number(finding, "hotspot_self_pct"), 71.0, 1e-9);
		CHECK(synth_evidence(finding, "hotspot_line") != NULL &&
		      synth_evidence(finding, "hotspot_line")->integer == 42);
		CHECK(strstr(finding->summary, "; load: 71% in decode_jpeg (dataset.py:42).") !=
		      NULL);
	}
	synth_destroy(analysis);
}

static void test_not_named(void)
{
	struct po_analysis *few = synth_create(100, &main_loading, 0);
	struct po_analysis *other_role = synth_create(100, &main_loading, 0);
	const struct po_finding *finding = detect_with(few, PO_ROLE_MAIN, 19);

	CHECK(finding && synth_evidence(finding, "hotspot_function") == NULL);
	CHECK(finding && !strstr(finding->summary, " in decode_jpeg"));
	finding = detect_with(other_role, PO_ROLE_WORKER, 100);
	CHECK(finding && synth_evidence(finding, "hotspot_function") == NULL);
	synth_destroy(few);
	synth_destroy(other_role);
}

/*
 * Native code: a library whose functions together take more than the top function is what
 * dominates (its frame's total share), with its largest function when that holds a quarter
 * of it; a native function without line information is named with its object.
 */
static void test_native(void)
{
	static struct po_hotspot library[] = {
	    {"augment", "/data/project/dataset.py", 12, 35, 35, 35.0, 35.0, 0, true},
	    {"decode_mcu", "/lib/libjpeg.so.62", 0, 30, 30, 30.0, 30.0, 0, true},
	    {"[native] libjpeg.so.62", "/lib/libjpeg.so.62", 0, 5, 60, 5.0, 60.0, 0, true},
	};
	static struct po_hotspot own[] = {
	    {"spin", "/bin/prog", 0, 70, 70, 70.0, 70.0, 0, true},
	    {"[native] prog", "/bin/prog", 0, 0, 100, 0.0, 100.0, 0, true},
	};
	struct po_analysis *analysis = synth_create(100, &main_loading, 0);
	const struct po_finding *finding = detect_hotspots(analysis, PO_ROLE_MAIN, 100, library, 3);

	CHECK(finding != NULL);
	if (finding) {
		CHECK_STR_EQ(synth_text(finding, "hotspot_function"), "[native] libjpeg.so.62");
		CHECK_NEAR(synth_number(finding, "hotspot_self_pct"), 60.0, 1e-9);
		CHECK(strstr(finding->summary, "; load: 60% in libjpeg.so.62's native code (JPEG "
					       "decoding), 30% in decode_mcu.") != NULL);
	}
	synth_destroy(analysis);
	library[1].self_pct = 14.0; /* under a quarter of 60%: not named */
	analysis = synth_create(100, &main_loading, 0);
	finding = detect_hotspots(analysis, PO_ROLE_MAIN, 100, library, 3);
	CHECK(finding && strstr(finding->summary, "(JPEG decoding).") != NULL);
	synth_destroy(analysis);
	analysis = synth_create(100, &main_loading, 0);
	finding = detect_hotspots(analysis, PO_ROLE_MAIN, 100, own, 2);
	CHECK(finding && strstr(finding->summary, "; load: 70% in spin (prog).") != NULL);
	synth_destroy(analysis);
}

int main(void)
{
	po_rules_init(&rules);
	RUN(test_named);
	RUN(test_native);
	RUN(test_not_named);
	return CHECK_SUMMARY();
}
