/*
 * merge.h: the job of many hosts from their partial summaries (profopt-analyze --merge,
 * docs/distributed.md). Each host reduces its own trace to partial.json (--partial): its
 * ranks' own loops, and the collectives and wall times of sampled steps. The merge reads
 * any number of them, aligns the hosts' clocks, matches the collectives and finds the
 * straggler, as an analysis of all the traces together would over the same steps.
 *
 * Memory: one partial's parse tree at a time, plus the records kept (bounded per partial:
 * at most PO_PARTIAL_STEPS sampled steps of each rank).
 */
#ifndef PO_MERGE_H
#define PO_MERGE_H

#include <stddef.h>

#include "common/status.h"
#include "detect/rules.h"
#include "model/result.h"

/* The largest partial.json read (a partial of 4096 ranks is a few tens of MiB). */
#define PO_PARTIAL_MAX_BYTES ((size_t)256 << 20)

/*
 * Reads the partial summaries (each a partial.json, or a directory holding one) and builds
 * *out: an analysis that holds only the job's ranks (analysis->distributed) and the
 * straggler finding. PO_STATUS_INPUT with err naming the file for a partial that cannot be
 * read, is not one, is damaged, or repeats a rank another one holds.
 */
enum po_status po_merge_partials(const char *const *paths, size_t count,
				 const struct po_rules *rules, struct po_analysis **out,
				 struct po_error *err) PO_NODISCARD;

#endif /* PO_MERGE_H */
