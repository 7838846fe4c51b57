/*
 * pipeline.h: one analysis, from the trace directory to the files of the report: decode
 * (ingest) -> model -> symbols -> detect -> compare with a baseline -> render. It runs in
 * the isolated child of profopt-analyze (common/isolate.h) and writes only into the
 * staging directory it is given; main.c checks the inputs before and commits the outputs
 * after.
 */
#ifndef PO_PIPELINE_H
#define PO_PIPELINE_H

#include <stdint.h>
#include <stdio.h>

#include "cli/options.h"
#include "common/status.h"
#include "live_run.h"

/* Trace directories the input check left out (--salvage), for the result's warnings. */
struct po_skipped_traces {
	const char *note; /* weak: belongs to the input check's watch */
	int64_t count;
};

/* What the analysis needs; it writes only below staging_dir. */
struct po_pipeline_job {
	const struct po_cli_options *options;	  /* weak */
	const char *staging_dir;		  /* weak */
	struct po_skipped_traces checked_skipped; /* of the trace, not of the baseline */
	/*
	 * After profopt-analyze --live: its alerts, written beside the report (alerts.json)
	 * and after the text summary; weak; NULL offline. The report's other files are the
	 * offline analysis's, byte for byte.
	 */
	const struct po_live_history *live;
};

/*
 * Runs the whole analysis of job (a struct po_pipeline_job, as po_isolate_run() passes
 * it) into its staging directory; the text summary goes to output unless --quiet.
 * PO_STATUS_GATE when a --fail-if condition is true, PO_STATUS_GATE_INCONCLUSIVE when none is
 * and one cannot be judged (other programs' load differed between the runs); the report is
 * written either way.
 */
enum po_status po_pipeline_run(void *job, FILE *output, struct po_error *err) PO_NODISCARD;

#endif /* PO_PIPELINE_H */
