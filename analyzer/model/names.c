/* names.c: the names of the event and result enums, from their X-macro tables, and the
 * destructor of the analysis result. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "model.h"
#include "profopt.h"
#include "step_store.h"

/*
 * The trace carries stages, counters and GPU kinds as the numbers of the public header
 * (profopt.h); the analyzer's tables (event.h) must give every one the same number, and
 * know the last one. A value added to one side and not the other fails the build here.
 */
#define PO_SAME_STAGE(name, json)                                                                  \
	_Static_assert((int)PO_STAGE_##name == (int)PROFOPT_STAGE_##name,                          \
		       "PROFOPT_STAGE_" #name " differs from the analyzer's");
#define PO_SAME_COUNTER(name, json)                                                                \
	_Static_assert((int)PO_COUNTER_##name == (int)PROFOPT_COUNTER_##name,                      \
		       "PROFOPT_COUNTER_" #name " differs from the analyzer's");
#define PO_SAME_GPU_KIND(name, json)                                                               \
	_Static_assert((int)PO_GPU_##name == (int)PROFOPT_GPU_##name,                              \
		       "PROFOPT_GPU_" #name " differs from the analyzer's");
#define PO_SAME_COLLECTIVE(name, json)                                                             \
	_Static_assert((int)PO_COLLECTIVE_##name == (int)PROFOPT_COLLECTIVE_##name,                \
		       "PROFOPT_COLLECTIVE_" #name " differs from the analyzer's");
PO_STAGES(PO_SAME_STAGE)
PO_COLLECTIVE_OPS(PO_SAME_COLLECTIVE)
PO_COUNTERS(PO_SAME_COUNTER)
PO_GPU_KINDS(PO_SAME_GPU_KIND)
_Static_assert(PO_STAGE_COUNT == PROFOPT_STAGE_GC + 1, "a stage the analyzer does not know");
_Static_assert(PO_COUNTER_COUNT == PROFOPT_COUNTER_GC_UNCOLLECTABLE + 1,
	       "a counter the analyzer does not know");
_Static_assert(PO_GPU_KIND_COUNT == PROFOPT_GPU_MEMSET + 1,
	       "a GPU activity kind the analyzer does not know");

#define PO_NAME_TABLE(fn, type, count, table_macro, entry)                                         \
	const char *fn(type value)                                                                 \
	{                                                                                          \
		static const char *const names[] = {table_macro(entry)};                           \
		return (unsigned)value < (unsigned)(count) ? names[value] : "?";                   \
	}

#define PO_JSON(name, json) json,

PO_NAME_TABLE(po_stage_name, enum po_stage, PO_STAGE_COUNT, PO_STAGES, PO_JSON)
PO_NAME_TABLE(po_counter_name, enum po_counter, PO_COUNTER_COUNT, PO_COUNTERS, PO_JSON)
PO_NAME_TABLE(po_gpu_kind_name, enum po_gpu_kind, PO_GPU_KIND_COUNT, PO_GPU_KINDS, PO_JSON)
PO_NAME_TABLE(po_event_kind_name, enum po_event_kind, PO_EV_COUNT, PO_EVENT_KINDS, PO_JSON)
PO_NAME_TABLE(po_collective_op_name, enum po_collective_op, PO_COLLECTIVE_OP_COUNT,
	      PO_COLLECTIVE_OPS, PO_JSON)
PO_NAME_TABLE(po_straggler_cause_name, enum po_straggler_cause, PO_STRAGGLER_CAUSE_COUNT,
	      PO_STRAGGLER_CAUSES, PO_JSON)
PO_NAME_TABLE(po_role_name, enum po_role, PO_ROLE_COUNT, PO_ROLES, PO_JSON)
PO_NAME_TABLE(po_category_name, enum po_category, PO_CATEGORY_COUNT, PO_CATEGORIES, PO_JSON)
PO_NAME_TABLE(po_finding_id_name, enum po_finding_id, PO_FINDING_ID_COUNT, PO_FINDING_IDS, PO_JSON)
PO_NAME_TABLE(po_severity_name, enum po_severity, PO_SEVERITY_COUNT, PO_SEVERITIES, PO_JSON)
PO_NAME_TABLE(po_verdict_name, enum po_verdict, PO_VERDICT_COUNT, PO_VERDICTS, PO_JSON)
PO_NAME_TABLE(po_input_cause_name, enum po_input_cause, PO_INPUT_CAUSE_COUNT, PO_INPUT_CAUSES,
	      PO_JSON)
PO_NAME_TABLE(po_kernel_class_name, enum po_kernel_class, PO_KERNEL_CLASS_COUNT, PO_KERNEL_CLASSES,
	      PO_JSON)
PO_NAME_TABLE(po_precision_name, enum po_precision, PO_PRECISION_COUNT, PO_PRECISIONS, PO_JSON)
PO_NAME_TABLE(po_run_ending_name, enum po_run_ending, PO_RUN_ENDING_COUNT, PO_RUN_ENDINGS, PO_JSON)
PO_NAME_TABLE(po_implausible_text, enum po_implausible, PO_IMPLAUSIBLE_COUNT, PO_IMPLAUSIBLE_KINDS,
	      PO_JSON)

/* Whether name is the pattern with its "#" as digits (no leading zero), which go to number. */
static bool number_matches(const char *pattern, size_t hole, const char *name, unsigned *number)
{
	size_t digits;

	if (strncmp(name, pattern, hole) != 0)
		return false;
	digits = strspn(name + hole, "0123456789");
	if (digits == 0 || digits > 9 || name[hole] == '0' ||
	    strcmp(name + hole + digits, pattern + hole + 1) != 0)
		return false;
	*number = (unsigned)strtoul(name + hole, NULL, 10);
	return true;
}

/* Whether name is the pattern with its "@" as a category's JSON name, which goes to category. */
static bool category_matches(const char *pattern, size_t hole, const char *name,
			     enum po_category *category)
{
	if (strncmp(name, pattern, hole) != 0)
		return false;
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		const char *json = po_category_name((enum po_category)c);
		size_t length = strlen(json);

		if (strncmp(name + hole, json, length) == 0 &&
		    strcmp(name + hole + length, pattern + hole + 1) == 0) {
			*category = (enum po_category)c;
			return true;
		}
	}
	return false;
}

/* Whether name spells key, with param what fills its "#" or "@". */
static bool key_matches(enum po_evidence_key key, const char *name, union po_evidence_param *param)
{
	const char *pattern = po_evidence_key_pattern(key);
	size_t hole = strcspn(pattern, "#@");

	*param = (union po_evidence_param){0};
	switch (po_evidence_key_param_kind(key)) {
	case PO_EVIDENCE_PARAM_NUMBER:
		return number_matches(pattern, hole, name, &param->number);
	case PO_EVIDENCE_PARAM_CATEGORY:
		return category_matches(pattern, hole, name, &param->category);
	default:
		return strcmp(pattern, name) == 0;
	}
}

/* Keys without a parameter first, so that they win where a parameterised key spells them too. */
bool po_evidence_key_lookup(const char *name, enum po_evidence_key *key,
			    union po_evidence_param *param)
{
	for (int pass = 0; pass < 2 && name; pass++) {
		for (int k = 0; k < PO_EVIDENCE_KEY_COUNT; k++) {
			bool plain = po_evidence_key_param_kind((enum po_evidence_key)k) ==
				     PO_EVIDENCE_PARAM_NONE;

			if (plain == (pass == 0) &&
			    key_matches((enum po_evidence_key)k, name, param)) {
				*key = (enum po_evidence_key)k;
				return true;
			}
		}
	}
	return false;
}

static void destroy_details(struct po_step_detail *details, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(details[i].spans);
		free(details[i].counters);
	}
	free(details);
}

/*
 * Every array the model builds is malloc'ed and owned by the analysis; strings live in its
 * arena. Findings are the exception: the detectors allocate the findings array and every
 * string and array inside it (evidence, recommendations, steps, windows) from
 * analysis->arena, so they go with the arena and are not freed one by one.
 */
void po_analysis_destroy(struct po_analysis *analysis)
{
	if (!analysis)
		return;
	free(analysis->config);
	free(analysis->discard_windows);
	free(analysis->excluded_processes);
	free(analysis->missing_windows);
	free(analysis->diagnosis.rule_changes);
	free(analysis->diagnosis.warnings);
	free(analysis->warnings);
	free(analysis->processes);
	free(analysis->threads);
	po_step_store_destroy(analysis->step_store);
	free(analysis->workers);
	free(analysis->label_stats);
	free(analysis->gpus);
	free(analysis->streams);
	free(analysis->kernels);
	free(analysis->gaps);
	free(analysis->mem_sites);
	destroy_details(analysis->details, analysis->detail_count);
	po_arena_destroy(analysis->arena);
	free(analysis);
}

/* Appends a warning to a list (owned), its code and text copied into the arena. */
static enum po_status add_warning(struct po_arena *arena, struct po_warning **warnings,
				  size_t *count, const char *code, const char *text)
{
	struct po_warning *grown = realloc(*warnings, (*count + 1) * sizeof(*grown));
	const char *code_copy, *text_copy;

	if (!grown)
		return PO_STATUS_NOMEM;
	*warnings = grown;
	code_copy = po_arena_strdup(arena, code);
	text_copy = po_arena_strdup(arena, text);
	if (!code_copy || !text_copy)
		return PO_STATUS_NOMEM;
	grown[(*count)++] = (struct po_warning){code_copy, text_copy};
	return PO_STATUS_OK;
}

enum po_status po_analysis_add_warning(struct po_analysis *analysis, const char *code,
				       const char *text)
{
	return add_warning(analysis->arena, &analysis->warnings, &analysis->warning_count, code,
			   text);
}

enum po_status po_diagnosis_add_warning(struct po_diagnosis *diagnosis, struct po_arena *arena,
					const char *code, const char *text)
{
	return add_warning(arena, &diagnosis->warnings, &diagnosis->warning_count, code, text);
}

size_t po_analysis_warning_count(const struct po_analysis *analysis)
{
	return analysis->warning_count + analysis->diagnosis.warning_count;
}

const struct po_warning *po_analysis_warning(const struct po_analysis *analysis, size_t i)
{
	if (i < analysis->warning_count)
		return &analysis->warnings[i];
	return &analysis->diagnosis.warnings[i - analysis->warning_count];
}
