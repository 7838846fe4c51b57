/* fixture.h: synthetic analyses for the report tests, built the way the model fills them. */
#ifndef PO_REPORT_FIXTURE_H
#define PO_REPORT_FIXTURE_H

#include "model/result.h"

enum fixture_kind {
	FIXTURE_NORMAL,	    /* an input-bound run: two workers, one GPU, memory growth */
	FIXTURE_HOSTILE,    /* the same, with markup, invalid UTF-8 and control bytes in labels */
	FIXTURE_EMPTY,	    /* no step, no GPU, no worker, no finding */
	FIXTURE_COMPARISON, /* the normal run compared with a faster baseline (--baseline) */
	FIXTURE_COMPARISON_HOSTILE, /* the hostile run, with a hostile baseline label and ids */
};

/* Everything, the analysis included, lives in its arena; free with fixture_destroy(). */
struct po_analysis *fixture_create(enum fixture_kind kind);
void fixture_destroy(struct po_analysis *analysis);
/* Attaches a synthetic comparison (fixture_comparison.c), allocated in the analysis' arena. */
void fixture_add_comparison(struct po_analysis *analysis, bool hostile);

#endif /* PO_REPORT_FIXTURE_H */
