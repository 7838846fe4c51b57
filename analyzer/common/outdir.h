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
 * made it; mode 0700), which holds the mark PO_OUTDIR_STAGING_MARK until it is in place.
 * The commit writes the manifest, marks the earlier report PO_OUTDIR_REPLACED_MARK and swaps
 * the staging directory with the report directory in one rename (RENAME_EXCHANGE), so a
 * reader sees the earlier report or the new one, never a mix; the earlier report's files
 * are then removed and the user's files moved back. A later run finishes the work of a run
 * that died (SIGKILL, a crash, a power cut): it removes the staging directories of runs that
 * no longer exist, and only those that prove they are profopt's: a directory, not a link,
 * owned by the effective uid and writable by no one else, holding one of the two marks, a
 * regular file with one link of the same owner. Anyone who can write beside the report
 * directory can make the rest of a staging directory, but not this.
 *
 * profopt-analyze runs as root beside directories others can write (/tmp): below the
 * directory that holds the report, this module reaches nothing through a path string; each
 * component is opened relative to a directory descriptor with O_NOFOLLOW | O_DIRECTORY, so
 * none of its removals, creations, moves or writes follows a symbolic link or opens a FIFO
 * or device, and none leaves the report directory and the staging directories. (The
 * analysis writes its outputs by the staging directory's path, po_outdir_borrow_staging():
 * a directory of mode 0700 that, in a sticky directory such as /tmp, only its owner can
 * rename.)
 */
#ifndef PO_OUTDIR_H
#define PO_OUTDIR_H

#include <stdbool.h>

#include "common/status.h"

#define PO_OUTDIR_MANIFEST ".profopt-report"
#define PO_OUTDIR_STAGING_MARK ".profopt-staging"   /* an incomplete report: removed whole */
#define PO_OUTDIR_REPLACED_MARK ".profopt-replaced" /* an earlier report being replaced */

struct po_outdir;

/*
 * Checks that path can take a report (PO_STATUS_USAGE with a one-line cause naming the
 * directory otherwise: not a directory, not empty and no valid manifest, an earlier report
 * without force, a file of the user's where the report writes one, an entry where the
 * manifest lists a file that is not a regular file or where it implies a directory that is
 * not a directory, a symbolic link above all) after finishing the work of dead runs beside
 * it (po_outdir_borrow_notes() names those it left alone). *out (owned, po_outdir_destroy())
 * remembers path.
 */
enum po_status po_outdir_open(const char *path, bool force, struct po_outdir **out,
			      struct po_error *err) PO_NODISCARD;

/*
 * What po_outdir_open() left alone that looked like profopt's (a staging directory of a dead
 * run without profopt's proof), one line each with why; NULL when nothing. Weak: belongs to
 * outdir.
 */
const char *po_outdir_borrow_notes(const struct po_outdir *outdir);

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

/*
 * Whether the report directory exists now (an earlier report that a commit would replace,
 * with --force): a partial new report is not committed over it (analyzer/main.c).
 */
bool po_outdir_holds_report(const struct po_outdir *outdir);

/* Removes the staging directory unless it was committed, and frees outdir. */
void po_outdir_destroy(struct po_outdir *outdir);

/*
 * A scratch directory of profopt's own (--salvage's shadow copy of a trace, under TMPDIR):
 * po_scratch_mark() puts mark (a file of the effective uid with one link) into dir, made
 * by the caller (mkdtemp: mode 0700); 0, or -1 with errno. po_scratch_remove() removes dir
 * as a staging directory is removed (every entry unlinked as a name, walked from
 * descriptors opened O_NOFOLLOW | O_DIRECTORY), only when it proves to be profopt's: a
 * directory, not a link, owned by the effective uid, writable by no one else, holding mark.
 * Anything else (another user's directory under that name) is left alone.
 */
int po_scratch_mark(const char *dir, const char *mark);
void po_scratch_remove(const char *dir, const char *mark);

#endif /* PO_OUTDIR_H */
