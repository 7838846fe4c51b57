/*
 * binmap.h: the objects (executable, shared libraries) mapped in each process over time,
 * from lttng-ust's base-address state dump and liblttng-ust-dl's load, unload, dlopen and
 * dlclose events, so that an instruction address becomes (object, offset in it), stable
 * across runs where the raw address changes with ASLR.
 *
 * Memory is bounded: at most PO_BINMAP_OBJECTS_CAP objects per process and
 * PO_BINMAP_TOTAL_CAP in all are kept (unmapped ones included, so that a late lookup still
 * finds an object closed since); objects past the caps are counted and not kept, and
 * addresses in them stay unresolved.
 */
#ifndef PO_BINMAP_H
#define PO_BINMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/arena.h"
#include "event.h"

#define PO_BINMAP_OBJECTS_CAP 4096
#define PO_BINMAP_TOTAL_CAP 65536

struct po_binmap;

/* Where an address lies. Strings are weak: interned in the string table given at create. */
struct po_binmap_hit {
	const char *path;     /* the object's path as the trace gives it */
	const char *build_id; /* lower-case hex, or NULL when the trace gave none */
	uint64_t offset;      /* address - the object's base address */
};

/* NULL when out of memory. strings: weak, must outlive the map. */
struct po_binmap *po_binmap_create(struct po_strtab *strings);
void po_binmap_destroy(struct po_binmap *map);

/*
 * Takes one BIN_*, LIB_* or DL_* event into the map. An object mapped again at the same
 * base with the same path is the same mapping; a different path at that base replaces it.
 */
enum po_status po_binmap_consume(struct po_binmap *map, const struct po_event *event) PO_NODISCARD;

/*
 * The object holding ip in process pid at time_ns: one mapped then, else (a state dump that
 * came after the first allocations, an object closed since) the latest object of that
 * process covering ip. false when none is known.
 */
bool po_binmap_lookup(const struct po_binmap *map, int32_t pid, uint64_t ip, int64_t time_ns,
		      struct po_binmap_hit *hit);

int64_t po_binmap_dropped(const struct po_binmap *map); /* objects not kept past the caps */
size_t po_binmap_bytes(const struct po_binmap *map);

#endif /* PO_BINMAP_H */
