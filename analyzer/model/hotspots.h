/*
 * hotspots.h: the hotspot tracker, one of the model's trackers. It owns the function-level
 * samples (docs/sampling.md): each process's code objects (profopt:code), and per
 * (process, stage open on the sampled thread, function) the samples and CPU time in which
 * the function ran its own code (innermost frame) and in which it was on the stack. Its
 * build merges processes by role and keeps each (role, stage)'s top functions.
 *
 * It also counts each (process, stage, label of that span)'s samples.
 *
 * Native code (docs/sampling.md) comes two ways: a Python sample's frame of a native object
 * (a code described with first line -1, whose frame's line is the instruction's offset in
 * the object), and libprofopt's own samples of C programs (profopt:native_stack: addresses,
 * placed in objects by the model's map of each process's objects). Each native instruction
 * becomes its object's frame ("[native] libjpeg.so.62") and, where the namer knows it, the
 * function's frame inside it; a C stack's object frame is written once per run of frames in
 * the same object. Each (process, instruction)'s frames are named once.
 *
 * Life: init, consume code descriptions and samples (the model says which stage was open),
 * build at any moment (hotspot_tracker_build changes nothing in the tracker), fini.
 */
#ifndef PO_MODEL_HOTSPOTS_H
#define PO_MODEL_HOTSPOTS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/arena.h"
#include "binmap.h"
#include "event.h"
#include "map.h"
#include "model.h"
#include "result.h"

/* Functions kept per (role, stage) by self share and by total share (their union). */
#define PO_HOTSPOTS_TOP 10
/* Distinct functions kept in all; samples of code past it go to "(other code)". */
#define PO_HOTSPOT_FUNCTION_CAP 65536
/* Native instructions whose names are remembered; past it each is named again. */
#define PO_HOTSPOT_NATIVE_CACHE_CAP (1u << 20)
/* Frames of one sample once native frames are expanded (function and object each). */
#define PO_HOTSPOT_FRAMES_MAX (2 * PO_STACK_DEPTH_MAX)

struct hotspot_function {
	const char *function; /* weak: interned */
	const char *file;     /* weak: interned */
	int32_t line;
};

/* One (pid, stage, function), or with function HOTSPOT_GROUP_TOTAL the (pid, stage) total. */
struct hotspot_cell {
	int32_t pid;
	int stage; /* enum po_stage, or -1 */
	uint32_t function;
	int64_t self_samples, total_samples;
	int64_t self_ns, total_ns;
};

#define HOTSPOT_GROUP_TOTAL UINT32_MAX

/* Labels kept per (role, stage) in the result. */
#define PO_HOTSPOT_LABELS_TOP 5

/* The samples of one (pid, stage, label). */
struct hotspot_label_cell {
	int32_t pid;
	int stage;
	const char *label; /* weak: interned by the model */
	int64_t samples;
	int64_t cpu_ns;
};

/* Call-path nodes kept in all (every process); deeper frames of later paths are cut. */
#define PO_FLAME_NODE_CAP 262144

/* A call path of one process: its parent path (UINT32_MAX: none) and its innermost function. */
struct flame_node {
	int32_t pid;
	uint32_t parent;
	uint32_t function;
	int64_t samples, self_samples;
	int64_t time_ns, self_time_ns; /* the time those samples stand for */
};

struct po_hotspot_tracker {
	struct hotspot_function *functions; /* owned */
	size_t function_count, function_capacity;
	struct po_map function_index; /* (function ptr, file ptr ^ line) -> index */
	struct po_map codes;	      /* (pid, code id) -> function index + 1; aux1 1: native */
	struct po_map natives;	      /* native instruction -> function + 1, aux1 object + 1 */
	struct po_native_namer namer;
	struct hotspot_cell *cells; /* owned */
	size_t cell_count, cell_capacity;
	struct po_map cell_index;	   /* (pid, stage + 1, function) -> index into cells */
	struct hotspot_label_cell *labels; /* owned */
	size_t label_count, label_capacity;
	struct po_map label_index; /* (pid, stage + 1, label ptr) -> index into labels */
	uint32_t *seen;		   /* owned: PO_HOTSPOT_FRAMES_MAX, the functions of one sample */
	uint32_t *frames;	   /* owned: PO_HOTSPOT_FRAMES_MAX, one sample's, innermost first */
	struct flame_node *paths;  /* owned: every process's call paths, parents first */
	size_t path_count, path_capacity;
	struct po_map path_index;    /* (pid, parent + 1, function) -> index into paths */
	int64_t paths_cut;	     /* samples whose deeper frames found no room (the cap) */
	int64_t sample_count;	     /* every sample consumed */
	int64_t malformed_samples;   /* frames that do not fit their bytes */
	int64_t implausible_weights; /* samples left out: a weight no thread could have run */
	/*
	 * (pid, tid) -> aux1: the stamp of the thread's latest sample, aux2: of the one before
	 * it (the process's first event until there are two); see plausible_weight().
	 */
	struct po_map sample_stamps;
	int64_t native_samples;	    /* libprofopt's own samples (C programs) */
	int64_t unmapped_pcs;	    /* their addresses in no object the trace maps */
	uint32_t unknown_function;  /* "(unknown code)": a code id never described */
	uint32_t other_function;    /* "(other code)": past the cap */
	uint32_t unmapped_function; /* "(unmapped native code)": an address in no known object */
	struct po_strtab *strings;  /* weak: the model's */
};

/* namer: how native instructions get function names (its name NULL: objects only). */
enum po_status hotspot_tracker_init(struct po_hotspot_tracker *tracker, struct po_strtab *strings,
				    struct po_native_namer namer) PO_NODISCARD;
void hotspot_tracker_fini(struct po_hotspot_tracker *tracker);
size_t hotspot_tracker_bytes(const struct po_hotspot_tracker *tracker);

/* A profopt:code event: the code object code_id of process pid. */
enum po_status hotspot_tracker_consume_code(struct po_hotspot_tracker *tracker, int32_t pid,
					    const struct po_event *event) PO_NODISCARD;

/*
 * Where a sample was taken: its process pid and that process's first event (first_ns), the
 * innermost stage span open on the sampled thread (stage -1: none), that span's label
 * (weak, interned; NULL: none).
 */
struct po_sample_place {
	int32_t pid;
	int64_t first_ns;
	int stage;
	const char *label;
};

/*
 * A profopt:stack_sample event. A sample whose weight (cpu_ns) no thread could have run
 * since its previous sample is left out whole and counted in implausible_weights.
 */
enum po_status hotspot_tracker_consume_sample(struct po_hotspot_tracker *tracker,
					      const struct po_sample_place *place,
					      const struct po_event *event) PO_NODISCARD;

/*
 * A profopt:native_stack event, likewise (its weight_ns checked the same way); objects: the
 * process's mapped objects (NULL: none known).
 */
enum po_status hotspot_tracker_consume_native(struct po_hotspot_tracker *tracker,
					      const struct po_sample_place *place,
					      const struct po_event *event,
					      const struct po_binmap *objects) PO_NODISCARD;

/*
 * Fills analysis->hotspot_groups (in analysis->arena): the cells merged per (role, stage)
 * with each pid's role from role_of, each group's top functions by self and by total share;
 * and analysis->flames: the call paths merged per role.
 */
enum po_status
hotspot_tracker_build(const struct po_hotspot_tracker *tracker, struct po_analysis *analysis,
		      enum po_role (*role_of)(const struct po_analysis *, int32_t)) PO_NODISCARD;

#endif /* PO_MODEL_HOTSPOTS_H */
