/*
 * step_store.h: the per-step records (struct po_step) of a model and of its analysis, kept
 * mostly in a temporary file so that memory does not grow with the number of steps.
 *
 * Steps are appended in trace order into chunks of PO_STEP_CHUNK_STEPS steps. At most
 * PO_STEP_CACHE_CHUNKS chunks are in memory, the least recently used one is evicted (written
 * back when it changed). The others live in an unlinked temporary file in $TMPDIR (default
 * /tmp), created at the first eviction, so a run with fewer steps than the cache holds never
 * touches the disk. The file is read and written with pread/pwrite, never mapped: mapped
 * pages would count in the process's resident memory. It holds sizeof(struct po_step) bytes
 * (240) per step and disappears when the store is destroyed or the process ends.
 *
 * Errors: allocation failures are returned by po_step_store_append() (PO_STATUS_NOMEM). A
 * failure of the temporary file (ENOSPC, EIO, a missing $TMPDIR) or of a chunk allocation
 * on a read cannot be returned by the read and edit accessors, so the store records the
 * first one and stops using the file: later reads of steps that were not in memory give
 * zeroed steps, and edits may go to a scratch record. po_step_store_check() then returns
 * the failure and its one-line cause. po_model_finish() checks it, and so do the detectors
 * and the renderers before they report success, so a result built from lost steps is
 * never written.
 */
#ifndef PO_STEP_STORE_H
#define PO_STEP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "model/result.h"

#define PO_STEP_CHUNK_STEPS 1024 /* steps per chunk, the unit of file I/O */
#define PO_STEP_CACHE_CHUNKS 8	 /* chunks kept in memory: 8 x 1024 x 240 B = 1.9 MiB */

struct po_step_store;

/* An empty store; fails only on allocation failure. */
enum po_status po_step_store_create(struct po_step_store **out) PO_NODISCARD;
void po_step_store_destroy(struct po_step_store *store);

size_t po_step_store_count(const struct po_step_store *store);

/* Appends a copy of the step after the last one. */
enum po_status po_step_store_append(struct po_step_store *store,
				    const struct po_step *step) PO_NODISCARD;

/* Forgets the steps from index count on. */
void po_step_store_truncate(struct po_step_store *store, size_t count);

/* A copy of the step at index (< count). */
struct po_step po_step_store_get(struct po_step_store *store, size_t index);

/*
 * The step at index (< count), to change in place. The pointer is valid until the next
 * call on the store: a later call may evict its chunk. Editing an old step works whether
 * or not its chunk is in memory (it is read back first).
 */
struct po_step *po_step_store_edit(struct po_step_store *store, size_t index);

/* The step at index (< count), to read only; valid as long as an edit's pointer. */
const struct po_step *po_step_store_borrow(struct po_step_store *store, size_t index);

/*
 * The index of the first step whose begin_ns is greater than time_ns (count when none),
 * for steps whose begin_ns never decreases, as the model appends them. Reads one chunk.
 */
size_t po_step_store_upper_bound(struct po_step_store *store, int64_t time_ns);

/*
 * Makes the store a private copy, for a copy of the process made by fork(): from now on it
 * reads the steps it has not changed from the file both share and writes what it changes
 * to a file of its own, so that the other process's steps stay as they were. The shared
 * file is never written again through this store.
 */
void po_step_store_privatize(struct po_step_store *store);

/* PO_STATUS_OK, or the recorded failure with its cause set in err. */
enum po_status po_step_store_check(const struct po_step_store *store,
				   struct po_error *err) PO_NODISCARD;

/* Memory the store holds now (not the file), for the benchmark's accounting. */
size_t po_step_store_bytes(const struct po_step_store *store);

/*
 * For code that builds an analysis by hand (tests, fixtures): gives the analysis a new store
 * holding copies of steps[0 .. count), replacing any it had, and sets step_count, the
 * statistics' range (all of them) and first_epoch_steps.
 */
enum po_status po_analysis_set_steps(struct po_analysis *analysis, const struct po_step *steps,
				     size_t count) PO_NODISCARD;
/* po_step_store_edit() on the analysis's steps. */
struct po_step *po_analysis_edit_step(struct po_analysis *analysis, size_t index);

#endif /* PO_STEP_STORE_H */
