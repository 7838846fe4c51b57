/* arena.c: the bump allocator, string interning and array growth of arena.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define CHUNK_BYTES (64 * 1024)
#define ALIGNMENT 16

struct chunk {
	struct chunk *next; /* owned */
	size_t size;
	size_t used;
	_Alignas(ALIGNMENT) unsigned char bytes[];
};

struct po_arena {
	struct chunk *head; /* owned list, newest first */
	size_t total_bytes;
};

struct po_arena *po_arena_create(void)
{
	return calloc(1, sizeof(struct po_arena));
}

void po_arena_destroy(struct po_arena *arena)
{
	struct chunk *chunk, *next;

	if (!arena)
		return;
	for (chunk = arena->head; chunk; chunk = next) {
		next = chunk->next;
		free(chunk);
	}
	free(arena);
}

void *po_arena_alloc(struct po_arena *arena, size_t size)
{
	struct chunk *chunk = arena->head;
	size_t rounded = (size + ALIGNMENT - 1) & ~(size_t)(ALIGNMENT - 1);
	void *result;

	if (!chunk || chunk->size - chunk->used < rounded) {
		size_t chunk_size = rounded > CHUNK_BYTES ? rounded : CHUNK_BYTES;

		chunk = malloc(sizeof(*chunk) + chunk_size);
		if (!chunk)
			return NULL;
		chunk->size = chunk_size;
		chunk->used = 0;
		chunk->next = arena->head;
		arena->head = chunk;
		arena->total_bytes += sizeof(*chunk) + chunk_size;
	}
	result = chunk->bytes + chunk->used;
	chunk->used += rounded;
	memset(result, 0, rounded);
	return result;
}

char *po_arena_strndup(struct po_arena *arena, const char *text, size_t len)
{
	char *copy = po_arena_alloc(arena, len + 1);

	if (!copy)
		return NULL;
	if (len)
		memcpy(copy, text, len);
	copy[len] = '\0';
	return copy;
}

char *po_arena_strdup(struct po_arena *arena, const char *text)
{
	return po_arena_strndup(arena, text, strlen(text));
}

char *po_arena_printf(struct po_arena *arena, const char *fmt, ...)
{
	va_list args;
	int len;
	char *copy;

	va_start(args, fmt);
	len = vsnprintf(NULL, 0, fmt, args);
	va_end(args);
	if (len < 0)
		return NULL;
	copy = po_arena_alloc(arena, (size_t)len + 1);
	if (!copy)
		return NULL;
	va_start(args, fmt);
	vsnprintf(copy, (size_t)len + 1, fmt, args);
	va_end(args);
	return copy;
}

size_t po_arena_bytes(const struct po_arena *arena)
{
	return arena->total_bytes;
}

struct slot {
	const char *text; /* weak: in the arena; NULL for an empty slot */
	size_t len;
	uint64_t hash;
};

struct po_strtab {
	struct po_arena *arena; /* weak */
	struct slot *slots;	/* owned; open addressing, power-of-two size */
	size_t capacity;
	size_t count;
};

uint64_t po_hash_bytes(const char *text, size_t len)
{
	uint64_t hash = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		hash ^= (unsigned char)text[i];
		hash *= 1099511628211ULL;
	}
	return hash;
}

struct po_strtab *po_strtab_create(struct po_arena *arena)
{
	struct po_strtab *table = calloc(1, sizeof(*table));

	if (!table)
		return NULL;
	table->arena = arena;
	table->capacity = 256;
	table->slots = calloc(table->capacity, sizeof(struct slot));
	if (!table->slots) {
		free(table);
		return NULL;
	}
	return table;
}

void po_strtab_destroy(struct po_strtab *table)
{
	if (!table)
		return;
	free(table->slots);
	free(table);
}

static struct slot *find_slot(struct slot *slots, size_t capacity, const char *text, size_t len,
			      uint64_t hash)
{
	size_t mask = capacity - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct slot *slot = &slots[i];

		if (!slot->text)
			return slot;
		if (slot->hash == hash && slot->len == len &&
		    (len == 0 || memcmp(slot->text, text, len) == 0))
			return slot;
	}
}

static int grow(struct po_strtab *table)
{
	size_t capacity = table->capacity * 2;
	struct slot *slots = calloc(capacity, sizeof(struct slot));

	if (!slots)
		return -1;
	for (size_t i = 0; i < table->capacity; i++) {
		struct slot *old = &table->slots[i];

		if (old->text)
			*find_slot(slots, capacity, old->text, old->len, old->hash) = *old;
	}
	free(table->slots);
	table->slots = slots;
	table->capacity = capacity;
	return 0;
}

const char *po_strtab_intern(struct po_strtab *table, const char *text, size_t len)
{
	uint64_t hash = po_hash_bytes(text, len);
	struct slot *slot = find_slot(table->slots, table->capacity, text, len, hash);

	if (slot->text)
		return slot->text;
	if ((table->count + 1) * 4 > table->capacity * 3) {
		if (grow(table) != 0)
			return NULL;
		slot = find_slot(table->slots, table->capacity, text, len, hash);
	}
	slot->text = po_arena_strndup(table->arena, text, len);
	if (!slot->text)
		return NULL;
	slot->len = len;
	slot->hash = hash;
	table->count++;
	return slot->text;
}

size_t po_strtab_count(const struct po_strtab *table)
{
	return table->count;
}

enum po_status po_array_reserve(void **items, size_t *capacity, size_t need, size_t item_size)
{
	size_t new_capacity = *capacity ? *capacity : 16;
	void *grown;

	if (need <= *capacity)
		return PO_STATUS_OK;
	while (new_capacity < need)
		new_capacity *= 2;
	if (new_capacity > SIZE_MAX / item_size)
		return PO_STATUS_NOMEM;
	grown = realloc(*items, new_capacity * item_size);
	if (!grown)
		return PO_STATUS_NOMEM;
	*items = grown;
	*capacity = new_capacity;
	return PO_STATUS_OK;
}
