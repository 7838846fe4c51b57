/*
 * fixture.h: a fixed synthetic analysis result for the renderer tests: three processes,
 * four steps (one lossy), a GPU with two streams and gaps, memory sites, two kept step
 * timelines that share a span, findings with unsorted and repeated evidence keys, and
 * strings holding quotes, backslashes, control bytes, invalid UTF-8 and "</script>".
 */
#ifndef PO_TEST_JSON_FIXTURE_H
#define PO_TEST_JSON_FIXTURE_H

#include "model/result.h"

/* Bytes of the hostile label; tests/unit/json/check_outputs.py knows how it must decode. */
#define FIXTURE_NASTY                                                                              \
	"q\"b\\s/</script>\x01\x1f\x7f\xff\xc3\x28\xe2\x80\xa8\xc3\xa9\xf0\x9f\x98\x80"

/* The trace's first event: far from 0, so that absolute times would show. */
#define FIXTURE_FIRST_NS 1700000000000000000LL

/* A new analysis (owned by the caller: fixture_destroy()), or NULL when out of memory. */
struct po_analysis *fixture_create(void);
void fixture_destroy(struct po_analysis *analysis);

#endif /* PO_TEST_JSON_FIXTURE_H */
