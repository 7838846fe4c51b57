/*
 * arena.h: a bump allocator that owns the strings and small objects of one analysis, and a
 * string table that interns byte strings into it. Everything is freed at once with
 * po_arena_destroy(). Allocation failures return NULL.
 */
#ifndef PO_ARENA_H
#define PO_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

struct po_arena;

struct po_arena *po_arena_create(void);
void po_arena_destroy(struct po_arena *arena);

/* Zeroed memory aligned for any type. */
void *po_arena_alloc(struct po_arena *arena, size_t size);
/* A NUL-terminated copy of len bytes. */
char *po_arena_strndup(struct po_arena *arena, const char *text, size_t len);
char *po_arena_strdup(struct po_arena *arena, const char *text);
char *po_arena_printf(struct po_arena *arena, const char *fmt, ...) PO_PRINTF(2, 3);
/* Bytes held by the arena, for memory accounting. */
size_t po_arena_bytes(const struct po_arena *arena);

/* FNV-1a hash of len bytes. */
uint64_t po_hash_bytes(const char *text, size_t len);

/* Interns byte strings: equal bytes give the same pointer, stored in the arena. */
struct po_strtab;

struct po_strtab *po_strtab_create(struct po_arena *arena /* weak */);
void po_strtab_destroy(struct po_strtab *table);
/* The interned copy of the bytes, or NULL on allocation failure. */
const char *po_strtab_intern(struct po_strtab *table, const char *text, size_t len);
size_t po_strtab_count(const struct po_strtab *table);

/*
 * Grows a malloc'ed array so that it holds at least need items; *capacity is updated.
 * Returns PO_STATUS_NOMEM on failure, leaving the array as it was.
 */
enum po_status po_array_reserve(void **items, size_t *capacity, size_t need,
				size_t item_size) PO_NODISCARD;

#endif /* PO_ARENA_H */
