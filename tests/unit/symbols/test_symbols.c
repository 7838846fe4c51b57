/*
 * test_symbols.c LIBRARY: the symbolizer names the function and line at an offset in a
 * library built with -g (the offset found from the library loaded here), says when the
 * object is missing or its build id differs, and fills the sites of an analysis; names in a
 * copy of the library patched to hold an escape character and an invalid byte come back
 * clean (common/text.h).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "result.h"
#include "symbols.h"

static const char *library;
static uint64_t function_offset; /* of symbols_test_function in library */
static int function_line;

/* Loads the library to learn where its function lies relative to its base address. */
static void locate_function(void)
{
	void *handle = dlopen(library, RTLD_NOW);
	void *function = handle ? dlsym(handle, "symbols_test_function") : NULL;
	const int *line = handle ? dlsym(handle, "symbols_test_line") : NULL;
	Dl_info info;

	CHECK(function && line && dladdr(function, &info) && info.dli_fbase);
	if (!function || !line)
		exit(1);
	function_offset = (uint64_t)((char *)function - (char *)info.dli_fbase);
	function_line = *line;
}

static void test_lookup(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_symbolizer *symbolizer = po_symbolizer_create(arena);
	struct po_symbol symbol;

	/* a return address 4 bytes into the function: the call is inside it */
	CHECK(po_symbolizer_lookup(symbolizer, library, NULL, function_offset + 4, &symbol) ==
	      PO_STATUS_OK);
	CHECK(symbol.function && strcmp(symbol.function, "symbols_test_function") == 0);
	CHECK(symbol.file && strstr(symbol.file, "known.c"));
	CHECK_INT_EQ(symbol.line, function_line);
	CHECK(!symbol.note);
	/* the same object again comes from the cache, with the same answer */
	CHECK(po_symbolizer_lookup(symbolizer, library, NULL, function_offset + 4, &symbol) ==
	      PO_STATUS_OK);
	CHECK(symbol.function && strcmp(symbol.function, "symbols_test_function") == 0);
	/* a build id other than the file's: changed since the recording */
	CHECK(po_symbolizer_lookup(symbolizer, library, "0011223344556677889900112233445566778899",
				   function_offset + 4, &symbol) == PO_STATUS_OK);
	CHECK(!symbol.function && symbol.note &&
	      strcmp(symbol.note, "object changed since the recording") == 0);
	/* an object that is gone */
	CHECK(po_symbolizer_lookup(symbolizer, "/nonexistent/libgone.so", NULL, 0x1000, &symbol) ==
	      PO_STATUS_OK);
	CHECK(!symbol.function && symbol.note && strstr(symbol.note, "not found"));
	po_symbolizer_destroy(symbolizer);
	po_arena_destroy(arena);
}

/* Replaces every occurrence of old in data (size bytes) by new, of the same length. */
static int replace_all(char *data, size_t size, const char *old, const char *new)
{
	size_t len = strlen(old);
	int count = 0;

	for (size_t i = 0; i + len <= size; i++) {
		if (memcmp(data + i, old, len) == 0) {
			memcpy(data + i, new, len);
			count++;
		}
	}
	return count;
}

/* A copy of the library whose function and source file names hold ESC, 0x01 and 0xE8. */
static char *patched_library(void)
{
	static char path[] = "/tmp/profopt-test-symbols-XXXXXX";
	FILE *in = fopen(library, "rb");
	char *data = malloc(16 << 20);
	size_t size = in && data ? fread(data, 1, 16 << 20, in) : 0;
	int fd = mkstemp(path);
	FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
	bool written;

	CHECK(replace_all(data, size, "symbols_test_function",
			  "symbols\x1btest\xe8"
			  "function") > 0);
	CHECK(replace_all(data, size, "known.c", "kn\x01wn.c") > 0);
	written = out && fwrite(data, 1, size, out) == size;
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	free(data);
	CHECK(size > 0 && written);
	return written ? path : NULL;
}

static void test_names_are_clean(void)
{
	struct po_arena *arena = po_arena_create();
	struct po_symbolizer *symbolizer = po_symbolizer_create(arena);
	const char *expected = "symbols\xef\xbf\xbdtest\xef\xbf\xbd"
			       "function";
	char *patched = patched_library();
	struct po_symbol symbol;

	if (!patched)
		return;
	CHECK(po_symbolizer_lookup(symbolizer, patched, NULL, function_offset + 4, &symbol) ==
	      PO_STATUS_OK);
	CHECK_STR_EQ(symbol.function, expected);
	CHECK(symbol.file && strstr(symbol.file, "kn\xef\xbf\xbdwn.c"));
	CHECK(po_symbolizer_function(symbolizer, patched, NULL, function_offset + 4, true,
				     &symbol) == PO_STATUS_OK);
	CHECK_STR_EQ(symbol.function, expected);
	CHECK(symbol.file && strstr(symbol.file, "kn\xef\xbf\xbdwn.c"));
	unlink(patched);
	po_symbolizer_destroy(symbolizer);
	po_arena_destroy(arena);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_symbols LIBRARY\n");
		return 2;
	}
	library = argv[1];
	locate_function();
	RUN(test_lookup);
	RUN(test_names_are_clean);
	return CHECK_SUMMARY();
}
