/*
 * kineto_map.h: Kineto records (kineto_read.h) to profopt's own events (docs/kineto.md):
 * steps from ProfilerStep#N, the stage spans of each step from the operator tree, GPU
 * records and their launches, memory, the device and the rank. The events are profopt's
 * classes with profopt's members (docs/trace-format.md), so that the decoder resolves
 * them as it resolves a recording's.
 */
#ifndef PO_KINETO_MAP_H
#define PO_KINETO_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "kineto_read.h"
#include "model/event.h"

/*
 * A member's type in the emitted class; integers are 64-bit. CODE_IDS and LINES are a
 * stack sample's frames (dynamic arrays of uint32): po_kineto_map_borrow_frames().
 */
enum po_kineto_member_type {
	PO_KINETO_INT,
	PO_KINETO_UINT,
	PO_KINETO_TEXT,
	PO_KINETO_CODE_IDS,
	PO_KINETO_LINES
};

#define PO_KINETO_MEMBERS_MAX 14

/*
 * The members of each emitted class, in the order of struct po_kineto_event's values;
 * a text member takes the event's text (the first) or text2 (the second).
 */
struct po_kineto_class {
	enum po_event_kind kind;
	size_t member_count;
	struct {
		const char *name;
		enum po_kineto_member_type type;
	} members[PO_KINETO_MEMBERS_MAX];
};

/* The classes a Kineto trace becomes; count in *count. */
const struct po_kineto_class *po_kineto_classes(size_t *count);

/* One emitted event. Integer members in values[] in the class's member order. */
struct po_kineto_event {
	int64_t time_ns;
	uint64_t order; /* ties: the order the mapping made them in */
	int32_t pid, tid;
	enum po_event_kind kind;
	uint8_t rank;	      /* ties at one time: ends before begins (po_kineto_map.c) */
	uint32_t text, text2; /* interned strings; 0 is "" */
	uint32_t procname;    /* interned: the process's name */
	int64_t values[PO_KINETO_MEMBERS_MAX];
};

/* What the mapping saw that the report should say (counts of records left out). */
struct po_kineto_map_stats {
	int64_t records;
	int64_t steps;
	int64_t impossible_times; /* negative durations, times out of range: left out */
	int64_t unknown_records;  /* categories and names that map to nothing */
	int64_t names_cut;
	int64_t collectives_without_kernel; /* calls whose communication kernel is not in it */
	int64_t runs_spilled;		    /* sorted runs written to the temporary file */
	int64_t python_calls;		    /* python_function records read as calls */
	int64_t python_calls_too_deep;	    /* nested past PO_KINETO_PYTHON_DEPTH_MAX: left out;
					       final once po_kineto_map_next() ended */
	int64_t gpu_annotations;	    /* gpu_user_annotation ranges: left out (kineto.md) */
};

/* Python calls open at once on one thread past which a call is left out (and counted). */
#define PO_KINETO_PYTHON_DEPTH_MAX 4096

struct po_kineto_map;

enum po_status po_kineto_map_create(struct po_kineto_map **out) PO_NODISCARD;
void po_kineto_map_destroy(struct po_kineto_map *map);

/* Reads path (po_kineto_read()) into the map; errors as po_kineto_read()'s. */
enum po_status po_kineto_map_read(struct po_kineto_map *map, const char *path,
				  struct po_error *err) PO_NODISCARD;

/*
 * Makes the step stages, the collectives and the run's own events, and sorts what is left
 * in memory; then po_kineto_map_next() hands the events over in time order. Events are
 * kept as sorted runs, full runs in an unnamed temporary file (TMPDIR), so memory does
 * not grow with the trace. PO_STATUS_INTERNAL when the temporary file failed.
 */
enum po_status po_kineto_map_finish(struct po_kineto_map *map) PO_NODISCARD;

/*
 * The next event in time order into *out (ties: the run's own first, stage ends, step
 * ends, step begins, stage begins, the rest, the run's end; then the order they were
 * made in); *ended at the end. The python_function calls of each thread become stack
 * samples here, where the events come in time order: one STACK_SAMPLE for each stretch of
 * time between two boundaries (a call's begin or end, a stage's begin or end on that
 * thread) in which the thread had a call open, weighing that stretch's wall time, with the
 * calls open in it as its frames. PO_STATUS_INTERNAL when the temporary file cannot be
 * read, PO_STATUS_NOMEM.
 */
enum po_status po_kineto_map_next(struct po_kineto_map *map, struct po_kineto_event *out,
				  bool *ended) PO_NODISCARD;

/*
 * The frames of the STACK_SAMPLE event po_kineto_map_next() handed over last: *depth code
 * ids (the interned names of python_function records), innermost first. Weak: valid until
 * the next call of po_kineto_map_next().
 */
const uint32_t *po_kineto_map_borrow_frames(const struct po_kineto_map *map, size_t *depth);

/* An interned string; weak: belongs to the map. */
const char *po_kineto_map_text(const struct po_kineto_map *map, uint32_t id, size_t *len);

const struct po_kineto_map_stats *po_kineto_map_borrow_stats(const struct po_kineto_map *map);

#endif /* PO_KINETO_MAP_H */
