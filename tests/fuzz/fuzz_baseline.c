/*
 * fuzz_baseline.c: a libFuzzer target over what profopt-analyze does with a user's
 * --baseline summary.json: the JSON reader with its range checks, the digest built from
 * the tree, and the comparison of that digest with itself (every statistic over the
 * numbers read). Each must succeed or refuse with a status, without a crash, a leak or
 * undefined behaviour. Built with clang -fsanitize=fuzzer when PROFOPT_FUZZ is on;
 * otherwise linked with replay_main.c to run the committed corpus as a regression test.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "compare/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct po_digest *digest = NULL;
	struct po_comparison *comparison = NULL;
	struct po_compare_config config;
	struct po_error err = {{0}};
	struct po_arena *arena;

	if (po_digest_from_summary_text((const char *)data, size, "fuzz", &digest, &err) !=
	    PO_STATUS_OK)
		return 0;
	arena = po_arena_create();
	po_compare_config_init(&config);
	config.bootstrap_rounds = 20; /* the statistics run; the fuzzer stays fast */
	if (arena && po_compare(digest, digest, &config, arena, &comparison, &err) == PO_STATUS_OK)
		comparison = NULL; /* lives in the arena */
	po_arena_destroy(arena);
	po_digest_destroy(digest);
	return 0;
}
