/*
 * symbols.h: names native code offline, for the model (profopt-analyze hands it a
 * po_native_namer over these lookups: the model names the function samples' frames as it
 * reads them and the allocation sites when it finishes, so its result is complete there). A
 * site located in a mapped object (path, offset) gets the function holding the call from
 * the object's ELF symbol tables (.symtab, else .dynsym) and, where DWARF line information
 * exists (in the object or its separate debug file), the source file and line. Each object
 * is opened once. An object that no longer exists, or whose build id differs from the one
 * recorded, is left unresolved and the site says why.
 */
#ifndef PO_SYMBOLS_H
#define PO_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"

/* What a lookup found. Strings are weak: in the arena given at create, or static text. */
struct po_symbol {
	const char *function; /* NULL when unresolved */
	const char *file;     /* source file as DWARF names it; NULL without line information */
	int64_t line;	      /* -1 without line information */
	const char *note;     /* why function is NULL; NULL when resolved */
};

struct po_symbolizer;

/* NULL when out of memory. arena: weak, holds the strings the lookups return. */
struct po_symbolizer *po_symbolizer_create(struct po_arena *arena);
void po_symbolizer_destroy(struct po_symbolizer *symbolizer);

/*
 * The function and line of a call whose return address lies at offset in the object at
 * path (offset from the base address the trace recorded). build_id: lower-case hex, or NULL
 * to skip the check. PO_STATUS_NOMEM is the only failure; an unreadable object is a note.
 */
enum po_status po_symbolizer_lookup(struct po_symbolizer *symbolizer, const char *path,
				    const char *build_id, uint64_t offset,
				    struct po_symbol *symbol) PO_NODISCARD;

/*
 * The function holding an instruction of a function sample (docs/sampling.md): at offset
 * in the object at path, the instruction a signal interrupted (interrupted) or a return
 * address (the call before it). C++ names are demangled. file and line are where the
 * function begins, from DWARF. The strings stay valid until the next call or destroy.
 */
enum po_status po_symbolizer_function(struct po_symbolizer *symbolizer, const char *path,
				      const char *build_id, uint64_t offset, bool interrupted,
				      struct po_symbol *symbol) PO_NODISCARD;

#endif /* PO_SYMBOLS_H */
