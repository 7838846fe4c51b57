/*
 * map.h: the model's open-addressing hash table from a 128-bit key (a, b) to a value and
 * two more integers. Each user gives the fields a typed meaning through accessors of its
 * own (memory.c's live allocations, for one); nothing outside the model sees it.
 */
#ifndef PO_MODEL_MAP_H
#define PO_MODEL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An open-addressing hash table from a 128-bit key to three integers. */
struct po_map_entry {
	uint64_t a;
	uint64_t b;
	uint64_t value;
	int64_t aux1;
	int64_t aux2;
	bool used;
};

struct po_map {
	struct po_map_entry *slots; /* owned; power-of-two size */
	size_t capacity;
	size_t count;
};

struct po_map_entry *po_map_find(const struct po_map *map, uint64_t a, uint64_t b);
/* The entry for the key, created zeroed (with used set) when absent; NULL when out of memory.
 * Invalidates earlier entry pointers. */
struct po_map_entry *po_map_upsert(struct po_map *map, uint64_t a, uint64_t b, bool *created);
void po_map_remove(struct po_map *map, struct po_map_entry *entry);
void po_map_free(struct po_map *map);
size_t po_map_bytes(const struct po_map *map);
/* qsort that accepts an empty (possibly NULL) array. */
void po_sort(void *items, size_t count, size_t size, int (*compare)(const void *, const void *));

#endif /* PO_MODEL_MAP_H */
