/*
 * alerts_file.h: --alerts FILE, where profopt-analyze --live appends each alert as one
 * JSON line (docs/live.md, "Alerts").
 *
 * profopt runs as root beside directories others can write, so the target is checked
 * before the live view attaches, and refused unless it is a regular file whose mode lets
 * this user write it (root's override of the permissions is not used), a FIFO that a
 * process reads, or /dev/null. It is opened O_NOFOLLOW | O_APPEND: a symbolic link is
 * refused, never followed, and a dangling one never creates its target. A regular file is
 * synced to disk after each alert; a FIFO or /dev/null cannot be (fsync fails there).
 */
#ifndef PO_LIVE_ALERTS_FILE_H
#define PO_LIVE_ALERTS_FILE_H

#include "alerts.h"
#include "common/status.h"

struct po_live_alerts_file;

/*
 * Opens path for appending, creating a regular file (mode 0644 less the umask) when
 * nothing is there. PO_STATUS_USAGE with a one-line cause ("--alerts PATH: ...") when the
 * target is refused or cannot be opened. *out is owned: po_live_alerts_file_destroy().
 */
enum po_status po_live_alerts_file_create(const char *path, struct po_live_alerts_file **out,
					  struct po_error *err) PO_NODISCARD;

/*
 * Appends alert as one line and, for a regular file, syncs it to disk. A FIFO whose reader
 * does not take the line within PO_LIVE_ALERTS_FILE_WAIT_MS, or whose reader went away
 * (no SIGPIPE is raised), fails. PO_STATUS_OUTPUT with the cause ("--alerts PATH: No
 * space left on device") on failure; the line may then be in the file in part.
 */
#define PO_LIVE_ALERTS_FILE_WAIT_MS 2000
enum po_status po_live_alerts_file_append(struct po_live_alerts_file *file,
					  const struct po_live_alert *alert,
					  struct po_error *err) PO_NODISCARD;

void po_live_alerts_file_destroy(struct po_live_alerts_file *file);

#endif /* PO_LIVE_ALERTS_FILE_H */
