/* fixture.h: synthetic analyses for the report tests, built the way the model fills them. */
#ifndef PO_REPORT_FIXTURE_H
#define PO_REPORT_FIXTURE_H

#include "model/result.h"

enum fixture_kind {
	FIXTURE_NORMAL,	 /* an input-bound run: two workers, one GPU, memory growth */
	FIXTURE_HOSTILE, /* the same, with markup, invalid UTF-8 and control bytes in labels */
	FIXTURE_EMPTY,	 /* no step, no GPU, no worker, no finding */
};

/* Everything, the analysis included, lives in its arena; free with fixture_destroy(). */
struct po_analysis *fixture_create(enum fixture_kind kind);
void fixture_destroy(struct po_analysis *analysis);

#endif /* PO_REPORT_FIXTURE_H */
