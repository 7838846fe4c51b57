/* step_store.c: per-step records in a few cached chunks over an unlinked temporary file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "step_store.h"

#define CHUNK_BYTES (PO_STEP_CHUNK_STEPS * sizeof(struct po_step))
#define NO_CHUNK SIZE_MAX
#define CAUSE_MAX PO_ERROR_MAX

struct chunk_slot {
	size_t chunk;	       /* NO_CHUNK when the slot is free */
	struct po_step *steps; /* owned; PO_STEP_CHUNK_STEPS, allocated at first use */
	uint64_t last_use;
	bool dirty; /* changed since it was read or written */
};

struct po_step_store {
	size_t count;
	int64_t *chunk_begin_ns; /* owned; first step's begin_ns per chunk, for searches */
	size_t chunk_begin_capacity;
	struct chunk_slot slots[PO_STEP_CACHE_CHUNKS];
	size_t recent; /* slot of the last access */
	uint64_t clock;
	int fd; /* the temporary file; -1 until the first eviction */
	/*
	 * A private copy (po_step_store_privatize): the file it was made from, read only
	 * (-1 otherwise), and which chunks the copy wrote to its own file since.
	 */
	int shared_fd;
	bool *own_chunks; /* owned */
	size_t own_capacity;
	char dir[PATH_MAX]; /* where the file goes, for messages */
	enum po_status failure;
	char cause[CAUSE_MAX];
	struct po_step scratch; /* what reads and edits get after a failure */
};

static void record_failure(struct po_step_store *store, enum po_status status, int error)
{
	if (store->failure != PO_STATUS_OK)
		return;
	store->failure = status;
	if (status == PO_STATUS_NOMEM)
		snprintf(store->cause, sizeof(store->cause),
			 "Failed to allocate memory for %d steps", PO_STEP_CHUNK_STEPS);
	else
		snprintf(store->cause, sizeof(store->cause),
			 "Failed to keep steps in a temporary file: path=%.512s: %s", store->dir,
			 strerror(error));
	if (store->fd >= 0)
		close(store->fd);
	store->fd = -1;
}

enum po_status po_step_store_create(struct po_step_store **out)
{
	struct po_step_store *store = calloc(1, sizeof(*store));
	const char *dir = getenv("TMPDIR");

	*out = NULL;
	if (!store)
		return PO_STATUS_NOMEM;
	store->fd = -1;
	store->shared_fd = -1;
	snprintf(store->dir, sizeof(store->dir), "%s", dir && *dir ? dir : "/tmp");
	for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS; i++)
		store->slots[i].chunk = NO_CHUNK;
	*out = store;
	return PO_STATUS_OK;
}

void po_step_store_destroy(struct po_step_store *store)
{
	if (!store)
		return;
	for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS; i++)
		free(store->slots[i].steps);
	free(store->chunk_begin_ns);
	free(store->own_chunks);
	if (store->fd >= 0)
		close(store->fd);
	if (store->shared_fd >= 0)
		close(store->shared_fd);
	free(store);
}

size_t po_step_store_count(const struct po_step_store *store)
{
	return store ? store->count : 0;
}

/* An unlinked file in the store's directory: O_TMPFILE, else mkstemp and unlink. */
static int open_temporary(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	snprintf(path, sizeof(path), "%s/profopt-steps-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static size_t steps_in_chunk(const struct po_step_store *store, size_t chunk)
{
	size_t first = chunk * PO_STEP_CHUNK_STEPS;

	if (store->count <= first)
		return 0;
	return store->count - first < PO_STEP_CHUNK_STEPS ? store->count - first
							  : PO_STEP_CHUNK_STEPS;
}

static bool file_io(struct po_step_store *store, int fd, bool writing, void *bytes, size_t size,
		    off_t offset)
{
	size_t done = 0;

	while (done < size) {
		ssize_t moved =
		    writing ? pwrite(fd, (char *)bytes + done, size - done, offset + (off_t)done)
			    : pread(fd, (char *)bytes + done, size - done, offset + (off_t)done);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved <= 0) {
			record_failure(store, PO_STATUS_OUTPUT, moved < 0 ? errno : EIO);
			return false;
		}
		done += (size_t)moved;
	}
	return true;
}

/* Writes a changed chunk back; after a failure, its contents are dropped. */
static void write_back(struct po_step_store *store, struct chunk_slot *slot)
{
	size_t size = steps_in_chunk(store, slot->chunk) * sizeof(struct po_step);

	slot->dirty = false;
	if (size)
		store->chunk_begin_ns[slot->chunk] = slot->steps[0].begin_ns;
	if (store->failure != PO_STATUS_OK || !size)
		return;
	if (store->shared_fd >= 0) {
		size_t known = store->own_capacity;

		if (po_array_reserve((void **)&store->own_chunks, &store->own_capacity,
				     slot->chunk + 1, sizeof(bool)) != PO_STATUS_OK) {
			record_failure(store, PO_STATUS_NOMEM, ENOMEM);
			return;
		}
		memset(store->own_chunks + known, 0, store->own_capacity - known);
		store->own_chunks[slot->chunk] = true;
	}
	if (store->fd < 0) {
		store->fd = open_temporary(store->dir);
		if (store->fd < 0) {
			record_failure(store, PO_STATUS_OUTPUT, errno);
			return;
		}
	}
	file_io(store, store->fd, true, slot->steps, size, (off_t)(slot->chunk * CHUNK_BYTES));
}

/* The file holding an evicted chunk: a private copy's own, or the one it was made from. */
static int chunk_fd(const struct po_step_store *store, size_t chunk)
{
	if (store->shared_fd < 0 || (chunk < store->own_capacity && store->own_chunks[chunk]))
		return store->fd;
	return store->shared_fd;
}

/* A free slot, else the least recently used one, written back and emptied. */
static struct chunk_slot *free_slot(struct po_step_store *store)
{
	struct chunk_slot *victim = &store->slots[0];

	for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS; i++) {
		struct chunk_slot *slot = &store->slots[i];

		if (slot->chunk == NO_CHUNK) {
			victim = slot;
			break;
		}
		if (slot->last_use < victim->last_use)
			victim = slot;
	}
	if (victim->chunk != NO_CHUNK && victim->dirty)
		write_back(store, victim);
	victim->chunk = NO_CHUNK;
	return victim;
}

/* Brings a chunk into a slot; NULL only when its memory cannot be allocated. */
static struct chunk_slot *load_chunk(struct po_step_store *store, size_t chunk, bool fresh)
{
	struct chunk_slot *slot = free_slot(store);
	size_t size = steps_in_chunk(store, chunk) * sizeof(struct po_step);

	if (!slot->steps)
		slot->steps = malloc(CHUNK_BYTES);
	if (!slot->steps)
		return NULL;
	slot->chunk = chunk;
	if (fresh || !size)
		return slot;
	if (store->failure == PO_STATUS_OK && chunk_fd(store, chunk) < 0)
		record_failure(store, PO_STATUS_OUTPUT, EIO); /* evicted, yet never written */
	if (store->failure != PO_STATUS_OK ||
	    !file_io(store, chunk_fd(store, chunk), false, slot->steps, size,
		     (off_t)(chunk * CHUNK_BYTES)))
		memset(slot->steps, 0, size); /* lost with the failure that is reported */
	return slot;
}

/* The slot holding the chunk, read back when needed; NULL on allocation failure. */
static struct chunk_slot *find_chunk(struct po_step_store *store, size_t chunk, bool fresh)
{
	struct chunk_slot *slot = &store->slots[store->recent];

	if (slot->chunk != chunk) {
		slot = NULL;
		for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS && !slot; i++)
			if (store->slots[i].chunk == chunk)
				slot = &store->slots[i];
		if (!slot)
			slot = load_chunk(store, chunk, fresh);
		if (!slot)
			return NULL;
		store->recent = (size_t)(slot - store->slots);
	}
	slot->last_use = ++store->clock;
	return slot;
}

enum po_status po_step_store_append(struct po_step_store *store, const struct po_step *step)
{
	size_t chunk = store->count / PO_STEP_CHUNK_STEPS;
	bool fresh = store->count % PO_STEP_CHUNK_STEPS == 0;
	struct chunk_slot *slot;

	if (fresh && po_array_reserve((void **)&store->chunk_begin_ns, &store->chunk_begin_capacity,
				      chunk + 1, sizeof(int64_t)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	slot = find_chunk(store, chunk, fresh);
	if (!slot)
		return PO_STATUS_NOMEM;
	slot->steps[store->count % PO_STEP_CHUNK_STEPS] = *step;
	slot->dirty = true;
	if (fresh)
		store->chunk_begin_ns[chunk] = step->begin_ns;
	store->count++;
	return PO_STATUS_OK;
}

void po_step_store_truncate(struct po_step_store *store, size_t count)
{
	if (count < store->count)
		store->count = count;
}

struct po_step *po_step_store_edit(struct po_step_store *store, size_t index)
{
	struct chunk_slot *slot = find_chunk(store, index / PO_STEP_CHUNK_STEPS, false);

	if (!slot) {
		record_failure(store, PO_STATUS_NOMEM, ENOMEM);
		store->scratch = (struct po_step){0};
		return &store->scratch;
	}
	slot->dirty = true;
	return &slot->steps[index % PO_STEP_CHUNK_STEPS];
}

const struct po_step *po_step_store_borrow(struct po_step_store *store, size_t index)
{
	struct chunk_slot *slot = find_chunk(store, index / PO_STEP_CHUNK_STEPS, false);

	if (!slot) {
		record_failure(store, PO_STATUS_NOMEM, ENOMEM);
		store->scratch = (struct po_step){0};
		return &store->scratch;
	}
	return &slot->steps[index % PO_STEP_CHUNK_STEPS];
}

struct po_step po_step_store_get(struct po_step_store *store, size_t index)
{
	return *po_step_store_borrow(store, index);
}

/* Chunks in memory may have changed their first step since it was noted. */
static void refresh_chunk_keys(struct po_step_store *store)
{
	for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS; i++) {
		const struct chunk_slot *slot = &store->slots[i];

		if (slot->chunk != NO_CHUNK && steps_in_chunk(store, slot->chunk))
			store->chunk_begin_ns[slot->chunk] = slot->steps[0].begin_ns;
	}
}

size_t po_step_store_upper_bound(struct po_step_store *store, int64_t time_ns)
{
	size_t chunk_count = (store->count + PO_STEP_CHUNK_STEPS - 1) / PO_STEP_CHUNK_STEPS;
	size_t low = 0, high = chunk_count, first;
	const struct chunk_slot *slot;

	if (!store->count)
		return 0;
	slot = find_chunk(store, chunk_count - 1, false);
	if (slot && slot->steps[(store->count - 1) % PO_STEP_CHUNK_STEPS].begin_ns <= time_ns)
		return store->count; /* the common case: a time in the newest step */
	refresh_chunk_keys(store);
	while (low < high) { /* the first chunk that begins after time_ns */
		size_t mid = low + (high - low) / 2;

		if (store->chunk_begin_ns[mid] <= time_ns)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0)
		return 0;
	first = (low - 1) * PO_STEP_CHUNK_STEPS;
	slot = find_chunk(store, low - 1, false);
	if (!slot)
		return first; /* the failure is recorded; any answer will do */
	low = 0;
	high = steps_in_chunk(store, slot->chunk);
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (slot->steps[mid].begin_ns <= time_ns)
			low = mid + 1;
		else
			high = mid;
	}
	return first + low;
}

enum po_status po_step_store_check(const struct po_step_store *store, struct po_error *err)
{
	if (!store || store->failure == PO_STATUS_OK)
		return PO_STATUS_OK;
	po_error_set(err, "%s", store->cause);
	return store->failure;
}

size_t po_step_store_bytes(const struct po_step_store *store)
{
	size_t bytes = sizeof(*store) + store->chunk_begin_capacity * sizeof(int64_t);

	for (size_t i = 0; i < PO_STEP_CACHE_CHUNKS; i++)
		bytes += store->slots[i].steps ? CHUNK_BYTES : 0;
	return bytes;
}

struct po_step po_analysis_step(const struct po_analysis *analysis, size_t index)
{
	return po_step_store_get(analysis->step_store, index);
}

enum po_status po_analysis_steps_check(const struct po_analysis *analysis, struct po_error *err)
{
	return po_step_store_check(analysis->step_store, err);
}

enum po_status po_analysis_set_steps(struct po_analysis *analysis, const struct po_step *steps,
				     size_t count)
{
	struct po_step_store *store;

	if (po_step_store_create(&store) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++) {
		if (po_step_store_append(store, &steps[i]) != PO_STATUS_OK) {
			po_step_store_destroy(store);
			return PO_STATUS_NOMEM;
		}
	}
	po_step_store_destroy(analysis->step_store);
	analysis->step_store = store;
	analysis->step_count = count;
	analysis->step_first = 0;
	analysis->step_end = count;
	analysis->first_epoch_steps = SIZE_MAX;
	for (size_t i = 1; i < count && analysis->first_epoch_steps == SIZE_MAX; i++)
		if (steps[i].epoch != steps[i - 1].epoch)
			analysis->first_epoch_steps = i;
	return PO_STATUS_OK;
}

struct po_step *po_analysis_edit_step(struct po_analysis *analysis, size_t index)
{
	return po_step_store_edit(analysis->step_store, index);
}

void po_step_store_privatize(struct po_step_store *store)
{
	if (!store || store->shared_fd >= 0 || store->fd < 0)
		return; /* nothing was written to a file yet: nothing is shared */
	store->shared_fd = store->fd;
	store->fd = -1;
}
