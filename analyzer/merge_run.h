/*
 * merge_run.h: profopt-analyze --merge (merge_run.c): the partial summaries named by the
 * arguments merged into -o DIR/summary.json; *text (owned, malloc'd) is what main()
 * prints on success.
 */
#ifndef PO_MERGE_RUN_H
#define PO_MERGE_RUN_H

#include "cli/options.h"
#include "common/status.h"

enum po_status po_merge_run(const struct po_cli_options *options, char **text,
			    struct po_error *err) PO_NODISCARD;

#endif /* PO_MERGE_RUN_H */
