/* map.c: the model's open-addressing hash table (linear probing, backward-shift deletion). */
#include <stdlib.h>

#include "model_internal.h"

#define MAP_INITIAL 64

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ (b >> 29);

	/* splitmix64 finalizer */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

void po_sort(void *items, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(items, count, size, compare);
}

static struct po_map_entry *probe(struct po_map_entry *slots, size_t capacity, uint64_t a,
				  uint64_t b)
{
	size_t mask = capacity - 1;

	for (size_t i = mix(a, b) & mask;; i = (i + 1) & mask) {
		struct po_map_entry *slot = &slots[i];

		if (!slot->used || (slot->a == a && slot->b == b))
			return slot;
	}
}

struct po_map_entry *po_map_find(const struct po_map *map, uint64_t a, uint64_t b)
{
	struct po_map_entry *slot;

	if (!map->capacity)
		return NULL;
	slot = probe(map->slots, map->capacity, a, b);
	return slot->used ? slot : NULL;
}

static int grow(struct po_map *map)
{
	size_t capacity = map->capacity ? map->capacity * 2 : MAP_INITIAL;
	struct po_map_entry *slots = calloc(capacity, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < map->capacity; i++) {
		struct po_map_entry *old = &map->slots[i];

		if (old->used)
			*probe(slots, capacity, old->a, old->b) = *old;
	}
	free(map->slots);
	map->slots = slots;
	map->capacity = capacity;
	return 0;
}

struct po_map_entry *po_map_upsert(struct po_map *map, uint64_t a, uint64_t b, bool *created)
{
	struct po_map_entry *slot;

	if ((map->count + 1) * 4 > map->capacity * 3 && grow(map) != 0)
		return NULL;
	slot = probe(map->slots, map->capacity, a, b);
	if (created)
		*created = !slot->used;
	if (!slot->used) {
		*slot = (struct po_map_entry){.a = a, .b = b, .used = true};
		map->count++;
	}
	return slot;
}

/* Shifts later entries of the probe run back so that lookups never stop at a hole. */
void po_map_remove(struct po_map *map, struct po_map_entry *entry)
{
	size_t mask = map->capacity - 1;
	size_t hole = (size_t)(entry - map->slots);

	for (size_t i = (hole + 1) & mask; map->slots[i].used; i = (i + 1) & mask) {
		size_t home = mix(map->slots[i].a, map->slots[i].b) & mask;

		/* The entry may fill the hole when its home is not in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			map->slots[hole] = map->slots[i];
			hole = i;
		}
	}
	map->slots[hole].used = false;
	map->count--;
}

void po_map_free(struct po_map *map)
{
	free(map->slots);
	*map = (struct po_map){0};
}

size_t po_map_bytes(const struct po_map *map)
{
	return map->capacity * sizeof(struct po_map_entry);
}
