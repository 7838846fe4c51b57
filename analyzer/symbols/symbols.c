/* symbols.c: (object, offset) to function and source line with elfutils' libdwfl. */
#define _DEFAULT_SOURCE /* strdup */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/result.h"
#include "symbols.h"
#include "common/text.h"

#define NOTE_MISSING "object not found where the recording saw it"
#define NOTE_CHANGED "object changed since the recording"
#define NOTE_NO_SYMBOL "no symbol at this address"

/* One object, opened on first use and kept for every later lookup. */
struct sym_object {
	char *path;		    /* owned */
	char *build_id;		    /* owned; NULL: not checked */
	Dwfl *dwfl;		    /* owned; NULL when the object could not be used */
	Dwfl_Module *module;	    /* weak: belongs to dwfl */
	GElf_Addr bias;		    /* libdwfl's address minus the ELF virtual address */
	GElf_Addr first_load_vaddr; /* the ELF address that the recorded base maps to */
	const char *note;	    /* static: why the object cannot be used; NULL */
};

struct po_symbolizer {
	struct po_arena *arena;	    /* weak */
	struct sym_object *objects; /* owned */
	size_t object_count;
	size_t object_capacity;
	char *demangled; /* owned: po_symbolizer_function's latest C++ name */
	/* owned: cleaned copies of the latest names (clean_name), function's and file's */
	char *cleaned[2];
	size_t cleaned_capacity[2];
};

enum { CLEAN_FUNCTION, CLEAN_FILE };

/* libstdc++'s demangler: a malloc'd name, or NULL when name is no C++ name. */
extern char *__cxa_demangle(const char *name, char *buffer, size_t *length, int *status);

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct po_symbolizer *po_symbolizer_create(struct po_arena *arena)
{
	struct po_symbolizer *symbolizer = calloc(1, sizeof(*symbolizer));

	if (symbolizer)
		symbolizer->arena = arena;
	return symbolizer;
}

void po_symbolizer_destroy(struct po_symbolizer *symbolizer)
{
	if (!symbolizer)
		return;
	for (size_t i = 0; i < symbolizer->object_count; i++) {
		free(symbolizer->objects[i].path);
		free(symbolizer->objects[i].build_id);
		if (symbolizer->objects[i].dwfl)
			dwfl_end(symbolizer->objects[i].dwfl);
	}
	free(symbolizer->objects);
	free(symbolizer->demangled);
	free(symbolizer->cleaned[CLEAN_FUNCTION]);
	free(symbolizer->cleaned[CLEAN_FILE]);
	free(symbolizer);
}

/*
 * A name from an object's ELF symbols or DWARF made clean (common/text.h), as every text of
 * the trace is at ingest: name itself when it is, else a copy in the slot's buffer, valid
 * until the next name of that slot. NULL for NULL, or when out of memory (*nomem set).
 */
static const char *clean_name(struct po_symbolizer *symbolizer, int slot, const char *name,
			      bool *nomem)
{
	size_t len = name ? strlen(name) : 0;
	size_t size = PO_TEXT_CLEAN_BYTES_MAX(len) + 1;

	if (!name || po_text_is_clean(name, len))
		return name;
	if (symbolizer->cleaned_capacity[slot] < size) {
		char *bigger = realloc(symbolizer->cleaned[slot], size);

		if (!bigger) {
			*nomem = true;
			return NULL;
		}
		symbolizer->cleaned[slot] = bigger;
		symbolizer->cleaned_capacity[slot] = size;
	}
	po_text_clean(name, len, symbolizer->cleaned[slot], size, NULL);
	return symbolizer->cleaned[slot];
}

static bool build_id_matches(Dwfl_Module *module, const char *expected)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int length = dwfl_module_build_id(module, &bits, &vaddr);

	if (length <= 0 || strlen(expected) != 2 * (size_t)length)
		return false;
	for (int i = 0; i < length; i++) {
		if (expected[2 * i] != digits[bits[i] >> 4] ||
		    expected[2 * i + 1] != digits[bits[i] & 0xf])
			return false;
	}
	return true;
}

/* The virtual address of the first loadable segment: where the recorded base points. */
static GElf_Addr first_load_vaddr(Elf *elf)
{
	size_t count = 0;

	if (elf_getphdrnum(elf, &count) != 0)
		return 0;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr header;

		if (gelf_getphdr(elf, (int)i, &header) && header.p_type == PT_LOAD)
			return header.p_vaddr;
	}
	return 0;
}

/* Opens the object's ELF and debug information; a failure is a note, not an error. */
static void object_open(struct sym_object *object)
{
	Elf *elf;

	object->dwfl = dwfl_begin(&offline_callbacks);
	if (!object->dwfl) {
		object->note = NOTE_MISSING;
		return;
	}
	object->module = dwfl_report_offline(object->dwfl, object->path, object->path, -1);
	dwfl_report_end(object->dwfl, NULL, NULL);
	elf = object->module ? dwfl_module_getelf(object->module, &object->bias) : NULL;
	if (!elf) {
		object->note = NOTE_MISSING;
		return;
	}
	if (object->build_id && !build_id_matches(object->module, object->build_id)) {
		object->note = NOTE_CHANGED;
		return;
	}
	object->first_load_vaddr = first_load_vaddr(elf);
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The cached object for (path, build id), opened when new; NULL when out of memory. */
static struct sym_object *object_get(struct po_symbolizer *symbolizer, const char *path,
				     const char *build_id)
{
	struct sym_object *object;

	for (size_t i = 0; i < symbolizer->object_count; i++) {
		object = &symbolizer->objects[i];
		if (strcmp(object->path, path) == 0 && same_text(object->build_id, build_id))
			return object;
	}
	if (po_array_reserve((void **)&symbolizer->objects, &symbolizer->object_capacity,
			     symbolizer->object_count + 1,
			     sizeof(*symbolizer->objects)) != PO_STATUS_OK)
		return NULL;
	object = &symbolizer->objects[symbolizer->object_count];
	*object = (struct sym_object){.path = strdup(path),
				      .build_id = build_id ? strdup(build_id) : NULL};
	if (!object->path || (build_id && !object->build_id)) {
		free(object->path);
		free(object->build_id);
		return NULL;
	}
	symbolizer->object_count++;
	object_open(object);
	return object;
}

enum po_status po_symbolizer_lookup(struct po_symbolizer *symbolizer, const char *path,
				    const char *build_id, uint64_t offset, struct po_symbol *symbol)
{
	struct sym_object *object = object_get(symbolizer, path, build_id);
	const char *name, *file;
	Dwarf_Addr address;
	Dwfl_Line *line;
	int line_number = -1;
	bool nomem = false;

	*symbol = (struct po_symbol){.line = -1};
	if (!object)
		return PO_STATUS_NOMEM;
	if (object->note) {
		symbol->note = object->note;
		return PO_STATUS_OK;
	}
	/* A return address: the call is the instruction before it. */
	address = object->first_load_vaddr + offset + object->bias - (offset ? 1 : 0);
	name = dwfl_module_addrname(object->module, address);
	if (!name) {
		symbol->note = NOTE_NO_SYMBOL;
		return PO_STATUS_OK;
	}
	name = clean_name(symbolizer, CLEAN_FUNCTION, name, &nomem);
	symbol->function = name ? po_arena_strdup(symbolizer->arena, name) : NULL;
	line = dwfl_module_getsrc(object->module, address);
	file = line ? dwfl_lineinfo(line, &address, &line_number, NULL, NULL, NULL) : NULL;
	file = clean_name(symbolizer, CLEAN_FILE, file, &nomem);
	if (file && line_number > 0) {
		symbol->file = po_arena_strdup(symbolizer->arena, file);
		symbol->line = line_number;
	}
	if (nomem || !symbol->function || (file && line_number > 0 && !symbol->file))
		return PO_STATUS_NOMEM;
	return PO_STATUS_OK;
}

/*
 * Where the function at entry is declared, from its DWARF subprogram (an inlined call's
 * scopes come first; the out-of-line function is the symbol's); false without one.
 */
static bool declared_at(Dwfl_Module *module, Dwarf_Addr entry, const char **file, int *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *unit = dwfl_module_addrdie(module, entry, &bias), *scopes = NULL;
	int count = unit ? dwarf_getscopes(unit, entry - bias, &scopes) : 0;
	const char *decl_file = NULL;
	int decl_line = 0;

	for (int i = 0; i < count; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		decl_file = dwarf_decl_file(&scopes[i]);
		if (!decl_file || dwarf_decl_line(&scopes[i], &decl_line) != 0 || decl_line <= 0)
			decl_file = NULL;
		break;
	}
	free(scopes);
	if (!decl_file)
		return false;
	*file = decl_file;
	*line = decl_line;
	return true;
}

enum po_status po_symbolizer_function(struct po_symbolizer *symbolizer, const char *path,
				      const char *build_id, uint64_t offset, bool interrupted,
				      struct po_symbol *symbol)
{
	struct sym_object *object = object_get(symbolizer, path, build_id);
	GElf_Off into = 0;
	GElf_Sym sym;
	Dwarf_Addr address, entry;
	Dwfl_Line *line;
	const char *name;
	int line_number = -1, status = -1;
	bool nomem = false;

	*symbol = (struct po_symbol){.line = -1};
	if (!object)
		return PO_STATUS_NOMEM;
	if (object->note) {
		symbol->note = object->note;
		return PO_STATUS_OK;
	}
	address = object->first_load_vaddr + offset + object->bias - (!interrupted && offset);
	name = dwfl_module_addrinfo(object->module, address, &into, &sym, NULL, NULL, NULL);
	if (!name) {
		symbol->note = NOTE_NO_SYMBOL;
		return PO_STATUS_OK;
	}
	free(symbolizer->demangled);
	symbolizer->demangled =
	    strncmp(name, "_Z", 2) == 0 ? __cxa_demangle(name, NULL, NULL, &status) : NULL;
	symbol->function = symbolizer->demangled && status == 0 ? symbolizer->demangled : name;
	entry = address - into;
	line = declared_at(object->module, entry, &symbol->file, &line_number)
		   ? NULL
		   : dwfl_module_getsrc(object->module, entry);
	if (line) /* no subprogram: the line of its first instruction */
		symbol->file = dwfl_lineinfo(line, &entry, &line_number, NULL, NULL, NULL);
	symbol->line = symbol->file && line_number > 0 ? line_number : -1;
	if (symbol->line < 0)
		symbol->file = NULL;
	symbol->function = clean_name(symbolizer, CLEAN_FUNCTION, symbol->function, &nomem);
	symbol->file = clean_name(symbolizer, CLEAN_FILE, symbol->file, &nomem);
	return nomem ? PO_STATUS_NOMEM : PO_STATUS_OK;
}
