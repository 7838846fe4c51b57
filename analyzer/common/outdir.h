/*
 * outdir.h: the report directory, and how a new report replaces an earlier one without
 * touching anything else in it.
 *
 * A report directory is marked by a manifest, PO_OUTDIR_MANIFEST ("profopt-report/1" and
 * then the path of every file profopt-analyze wrote, one a line), written with the report.
 * Only a directory that does not exist, is empty, or holds a valid manifest is used; with
 * --force, only the files the manifest lists are replaced or removed, and the user's other
 * files stay where they are.
 *
 * Outputs are written to a staging directory beside the report directory,
 * ".NAME.profopt-PID-START-XXXXXX" (PID and START, the /proc start time, name the run that
 * made it), which holds the marker PO_OUTDIR_STAGING_MARK until it is complete. The commit
 * writes the manifest and swaps the staging directory with the report directory in one
 * rename (RENAME_EXCHANGE), so a reader sees the earlier report or the new one, never a mix;
 * the earlier report's files are then removed and the user's files moved back. A later run
 * finishes the work of a run that died (SIGKILL, a crash, a power cut): it removes the
 * staging directories of runs that no longer exist, and only those.
 */
#ifndef PO_OUTDIR_H
#define PO_OUTDIR_H

#include <stdbool.h>

#include "common/status.h"

#define PO_OUTDIR_MANIFEST ".profopt-report"
#define PO_OUTDIR_STAGING_MARK ".profopt-staging"

struct po_outdir;

/*
 * Checks that path can take a report (PO_STATUS_USAGE with a one-line cause naming the
 * directory otherwise: not a directory, not empty and no valid manifest, an earlier report
 * without force, a file of the user's where the report writes one) after finishing the
 * work of dead runs beside it. *out (owned, po_outdir_destroy()) remembers path.
 */
enum po_status po_outdir_open(const char *path, bool force, struct po_outdir **out,
			      struct po_error *err) PO_NODISCARD;

/* Creates the staging directory (and the missing parents of the report directory). */
enum po_status po_outdir_stage(struct po_outdir *outdir, struct po_error *err) PO_NODISCARD;

/* The staging directory, NULL before po_outdir_stage(); weak: belongs to outdir. */
const char *po_outdir_borrow_staging(const struct po_outdir *outdir);

/*
 * Writes the manifest of what the staging directory holds and moves it into place,
 * checking the report directory again first (it may have changed during the analysis).
 * The terminating signals are held back meanwhile. On failure the earlier report is intact.
 */
enum po_status po_outdir_commit(struct po_outdir *outdir, struct po_error *err) PO_NODISCARD;

/* Removes the staging directory unless it was committed, and frees outdir. */
void po_outdir_destroy(struct po_outdir *outdir);

#endif /* PO_OUTDIR_H */
