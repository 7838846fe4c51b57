/* finding.c: builds findings in the analysis arena; an allocation failure is remembered. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "detect_internal.h"

static void *ctx_alloc(struct det_ctx *ctx, size_t size)
{
	void *memory = po_arena_alloc(ctx->analysis->arena, size ? size : 1);

	if (!memory)
		ctx->nomem = true;
	return memory;
}

static const char *ctx_strdup(struct det_ctx *ctx, const char *text)
{
	char *copy;

	if (!text)
		return NULL;
	copy = po_arena_strdup(ctx->analysis->arena, text);
	if (!copy)
		ctx->nomem = true;
	return copy;
}

char *det_printf(struct det_ctx *ctx, const char *fmt, ...)
{
	char buffer[1024];
	va_list args;

	va_start(args, fmt);
	vsnprintf(buffer, sizeof(buffer), fmt, args);
	va_end(args);
	return (char *)ctx_strdup(ctx, buffer);
}

static bool grow_findings(struct det_ctx *ctx)
{
	size_t capacity = ctx->finding_capacity ? ctx->finding_capacity * 2 : 16;
	struct po_finding *grown = ctx_alloc(ctx, capacity * sizeof(*grown));

	if (!grown)
		return false;
	if (ctx->finding_count)
		memcpy(grown, ctx->findings, ctx->finding_count * sizeof(*grown));
	ctx->findings = grown;
	ctx->finding_capacity = capacity;
	return true;
}

struct po_finding *det_finding_add(struct det_ctx *ctx, enum po_finding_id id,
				   enum po_severity severity, double own_confidence)
{
	struct po_finding *finding;

	if (ctx->finding_count == ctx->finding_capacity && !grow_findings(ctx))
		return NULL;
	finding = &ctx->findings[ctx->finding_count];
	*finding = (struct po_finding){.id = id, .severity = severity, .summary = ""};
	finding->confidence =
	    det_clamp(own_confidence * ctx->quality_factor * ctx->steps_factor, 0.0, 1.0);
	finding->evidence = ctx_alloc(ctx, DET_MAX_EVIDENCE * sizeof(struct po_evidence));
	finding->recommendations =
	    ctx_alloc(ctx, DET_MAX_RECOMMENDATIONS * sizeof(struct po_recommendation));
	if (!finding->evidence || !finding->recommendations)
		return NULL;
	ctx->finding_count++;
	return finding;
}

void det_summary(struct det_ctx *ctx, struct po_finding *finding, const char *fmt, ...)
{
	char buffer[2048];
	va_list args;

	va_start(args, fmt);
	vsnprintf(buffer, sizeof(buffer), fmt, args);
	va_end(args);
	finding->summary = ctx_strdup(ctx, buffer);
	if (!finding->summary)
		finding->summary = "";
}

/*
 * The next evidence slot for key and param, or NULL when the finding holds DET_MAX_EVIDENCE
 * already. A parameter of the wrong kind for the key is a programmer error.
 */
static struct po_evidence *next_evidence(struct po_finding *finding, enum po_evidence_key key,
					 enum po_evidence_param_kind kind,
					 union po_evidence_param param)
{
	struct po_evidence *evidence;

	assert((unsigned)key < PO_EVIDENCE_KEY_COUNT && po_evidence_key_param_kind(key) == kind);
	(void)kind;
	if (finding->evidence_count >= DET_MAX_EVIDENCE)
		return NULL;
	evidence = &finding->evidence[finding->evidence_count++];
	*evidence = (struct po_evidence){.key = key, .param = param};
	return evidence;
}

static void set_number(struct po_evidence *evidence, double value)
{
	if (!evidence)
		return;
	evidence->type = PO_EVIDENCE_NUMBER;
	evidence->number = value;
}

/* The text is copied into the arena; NULL is written as "". */
static void set_text(struct det_ctx *ctx, struct po_evidence *evidence, const char *value)
{
	if (!evidence)
		return;
	evidence->type = PO_EVIDENCE_TEXT;
	evidence->text = value ? ctx_strdup(ctx, value) : "";
	if (!evidence->text)
		evidence->text = "";
}

void det_ev_number(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		   double value)
{
	set_number(
	    next_evidence(finding, key, PO_EVIDENCE_PARAM_NONE, (union po_evidence_param){0}),
	    value);
}

void det_ev_int(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		int64_t value)
{
	struct po_evidence *evidence =
	    next_evidence(finding, key, PO_EVIDENCE_PARAM_NONE, (union po_evidence_param){0});

	if (!evidence)
		return;
	evidence->type = PO_EVIDENCE_INTEGER;
	evidence->integer = value;
}

void det_ev_text(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		 const char *value)
{
	set_text(ctx,
		 next_evidence(finding, key, PO_EVIDENCE_PARAM_NONE, (union po_evidence_param){0}),
		 value);
}

void det_ev_number_at(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		      unsigned number, double value)
{
	set_number(next_evidence(finding, key, PO_EVIDENCE_PARAM_NUMBER,
				 (union po_evidence_param){.number = number}),
		   value);
}

void det_ev_text_at(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		    unsigned number, const char *value)
{
	set_text(ctx,
		 next_evidence(finding, key, PO_EVIDENCE_PARAM_NUMBER,
			       (union po_evidence_param){.number = number}),
		 value);
}

void det_ev_number_in(struct det_ctx *ctx, struct po_finding *finding, enum po_evidence_key key,
		      enum po_category category, double value)
{
	set_number(next_evidence(finding, key, PO_EVIDENCE_PARAM_CATEGORY,
				 (union po_evidence_param){.category = category}),
		   value);
}

void det_recommend(struct det_ctx *ctx, struct po_finding *finding, enum po_knob knob,
		   const char *action, const char *why, const char *effect, double step_ms,
		   double speedup)
{
	struct po_recommendation *rec;

	/* A real check, not an assert that NDEBUG removes: a full list keeps its first ones. */
	if (finding->recommendation_count >= DET_MAX_RECOMMENDATIONS)
		return;
	/*
	 * A prediction is a positive step time and a positive speedup, or none: a model that
	 * comes out at zero or below has left its domain, and saying nothing is honest.
	 */
	if (!(step_ms > 0) || !isfinite(step_ms) || !(speedup > 0) || !isfinite(speedup)) {
		step_ms = NAN;
		speedup = NAN;
	}
	/*
	 * Advice predicts a gain: a change predicted to slow the loop or to leave it as it is
	 * is not listed. A prediction withheld (NaN, the effect says why) is not judged here.
	 */
	if (!isnan(speedup) && speedup < 1.0 + ctx->rules->recommend_min_gain_pct / 100.0)
		return;
	rec = &finding->recommendations[finding->recommendation_count++];
	rec->knob = knob;
	rec->action = ctx_strdup(ctx, action);
	rec->why = ctx_strdup(ctx, why);
	rec->effect = ctx_strdup(ctx, effect);
	rec->predicted_step_ms = step_ms;
	rec->predicted_speedup = speedup;
}

void det_recommend_cores(struct det_ctx *ctx, struct po_finding *finding, enum po_knob knob,
			 const char *action, const char *why, const char *effect, double step_ms,
			 double speedup)
{
	const char *withheld = det_withheld_why(ctx);

	/*
	 * Withheld is not "no gain", but a change the model itself sees no gain in is no
	 * advice on a busy machine either.
	 */
	if (withheld && isfinite(speedup) && speedup > 0 &&
	    speedup < 1.0 + ctx->rules->recommend_min_gain_pct / 100.0)
		return;
	if (withheld)
		det_recommend(ctx, finding, knob, action, why, withheld, NAN, NAN);
	else
		det_recommend(ctx, finding, knob, action, why, effect, step_ms, speedup);
}

void det_set_steps(struct det_ctx *ctx, struct po_finding *finding, const int64_t *steps,
		   size_t count)
{
	finding->steps = ctx_alloc(ctx, count * sizeof(*steps));
	if (!finding->steps)
		return;
	if (count)
		memcpy(finding->steps, steps, count * sizeof(*steps));
	finding->step_count = count;
}

void det_set_windows(struct det_ctx *ctx, struct po_finding *finding,
		     const struct po_window *windows, size_t count)
{
	finding->windows = ctx_alloc(ctx, count * sizeof(*windows));
	if (!finding->windows)
		return;
	if (count)
		memcpy(finding->windows, windows, count * sizeof(*windows));
	finding->window_count = count;
}

const struct po_finding *det_find(const struct det_ctx *ctx, enum po_finding_id id)
{
	for (size_t i = 0; i < ctx->finding_count; i++) {
		if (ctx->findings[i].id == id)
			return &ctx->findings[i];
	}
	return NULL;
}
