/*
 * unit_record.c: unit tests of profopt-record's parts that need no session daemon: the
 * command line and the count of discarded events read from packet indexes.
 *
 *   unit_record options | trace_loss
 */
#define _GNU_SOURCE
#include <endian.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "record.h"

#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

static enum rec_status parse(struct rec_options *options, char **argv, int argc)
{
	struct po_error err = {{0}};

	return rec_options_parse(options, argc, argv, &err);
}

static void test_options_defaults(void)
{
	char *argv[] = {"profopt-record", "--", "train", "-o", "x", NULL};
	struct rec_options options;

	CHECK_INT_EQ(parse(&options, argv, ARGC(argv)), REC_STATUS_OK);
	CHECK(options.output_dir == NULL);
	CHECK(!options.heap);
	CHECK_INT_EQ(options.subbuf_bytes, 4 * 1024 * 1024);
	CHECK_INT_EQ(options.subbuf_count, 8);
	CHECK_INT_EQ(options.sample_ms, -1);
	CHECK_STR_EQ(options.command_argv[0], "train");
	CHECK_STR_EQ(options.command_argv[1], "-o"); /* the command's own option */
	CHECK(options.command_argv[3] == NULL);
}

static void test_options_values(void)
{
	char *argv[] = {"profopt-record", "-o",		  "out", "--heap",	"--subbuf-size",
			"512k",		  "--num-subbuf", "16",	 "--sample-ms", "0",
			"python3",	  "--heap",	  NULL};
	struct rec_options options;

	CHECK_INT_EQ(parse(&options, argv, ARGC(argv)), REC_STATUS_OK);
	CHECK_STR_EQ(options.output_dir, "out");
	CHECK(options.heap);
	CHECK_INT_EQ(options.subbuf_bytes, 512 * 1024);
	CHECK_INT_EQ(options.subbuf_count, 16);
	CHECK_INT_EQ(options.sample_ms, 0);
	/* Options end at the command even without "--". */
	CHECK_STR_EQ(options.command_argv[0], "python3");
	CHECK_STR_EQ(options.command_argv[1], "--heap");
}

static void test_options_errors(void)
{
	char *no_command[] = {"profopt-record", "-o", "out", NULL};
	char *odd_size[] = {"profopt-record", "--subbuf-size", "3000", "true", NULL};
	char *tiny_size[] = {"profopt-record", "--subbuf-size", "2k", "true", NULL};
	char *one_subbuf[] = {"profopt-record", "--num-subbuf", "1", "true", NULL};
	char *bad_sample[] = {"profopt-record", "--sample-ms", "10ms", "true", NULL};
	char *unknown[] = {"profopt-record", "--bogus", "true", NULL};
	char *missing_value[] = {"profopt-record", "-o", NULL};
	char *plain_command[] = {"profopt-record", "true", NULL};
	char *help[] = {"profopt-record", "--help", NULL};
	struct rec_options options;

	CHECK_INT_EQ(parse(&options, no_command, ARGC(no_command)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, odd_size, ARGC(odd_size)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, tiny_size, ARGC(tiny_size)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, one_subbuf, ARGC(one_subbuf)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, bad_sample, ARGC(bad_sample)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, unknown, ARGC(unknown)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, missing_value, ARGC(missing_value)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, plain_command, ARGC(plain_command)), REC_STATUS_OK);
	CHECK_INT_EQ(parse(&options, help, ARGC(help)), REC_STATUS_OK);
	CHECK(options.show_help);
}

/* PROFOPT_SESSIOND_TIMEOUT: seconds each call to the session daemon may take. */
static void test_options_sessiond_timeout(void)
{
	char *argv[] = {"profopt-record", "true", NULL};
	char *check[] = {"profopt-record", "--check", NULL};
	const char *const bad[] = {"0", "-1", "2s", "x", "0.01", "100000"};
	struct rec_options options;

	unsetenv(REC_SESSIOND_TIMEOUT_ENV);
	CHECK_INT_EQ(parse(&options, argv, ARGC(argv)), REC_STATUS_OK);
	CHECK_INT_EQ(options.sessiond_timeout_ms, REC_DEFAULT_SESSIOND_TIMEOUT_MS);
	setenv(REC_SESSIOND_TIMEOUT_ENV, "2.5", 1);
	CHECK_INT_EQ(parse(&options, argv, ARGC(argv)), REC_STATUS_OK);
	CHECK_INT_EQ(options.sessiond_timeout_ms, 2500);
	CHECK_INT_EQ(parse(&options, check, ARGC(check)), REC_STATUS_OK);
	CHECK_INT_EQ(options.sessiond_timeout_ms, 2500);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(REC_SESSIOND_TIMEOUT_ENV, bad[i], 1);
		CHECK_INT_EQ(parse(&options, argv, ARGC(argv)), REC_STATUS_USAGE);
	}
	unsetenv(REC_SESSIOND_TIMEOUT_ENV);
}

static void put_be32(FILE *file, uint32_t value)
{
	value = htobe32(value);
	fwrite(&value, sizeof(value), 1, file);
}

static void put_be64(FILE *file, uint64_t value)
{
	value = htobe64(value);
	fwrite(&value, sizeof(value), 1, file);
}

/* A CTF 1.1 index file (64-byte entries) whose packets carry these running counts. */
static void write_index(const char *path, const uint64_t *discarded, int packet_count)
{
	FILE *file = fopen(path, "wb");
	int i, field;

	if (!file)
		return;
	put_be32(file, 0xC1F1DCC1u);
	put_be32(file, 1);
	put_be32(file, 1);
	put_be32(file, 64);
	for (i = 0; i < packet_count; i++) {
		for (field = 0; field < 5; field++)
			put_be64(file, 4096u * (i + 1) + field);
		put_be64(file, discarded[i]);
		put_be64(file, 0); /* stream_id */
		put_be64(file, 0); /* stream_instance_id */
	}
	fclose(file);
}

static void test_trace_loss(void)
{
	char root[] = "/tmp/profopt-unit-record.XXXXXX";
	char path[256];
	const uint64_t stream_a[] = {0, 5, 7};
	const uint64_t stream_b[] = {3};
	struct po_error err = {{0}};
	uint64_t discarded = 99;

	if (!mkdtemp(root)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/ust", root);
	mkdir(path, 0700);
	CHECK_INT_EQ(rec_trace_count_discarded(root, &discarded, &err), REC_STATUS_OK);
	CHECK_INT_EQ(discarded, 0); /* no index at all */
	snprintf(path, sizeof(path), "%s/ust/index", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/ust/index/chan_0.idx", root);
	write_index(path, stream_a, 3);
	snprintf(path, sizeof(path), "%s/ust/index/chan_1.idx", root);
	write_index(path, stream_b, 1);
	snprintf(path, sizeof(path), "%s/ust/index/chan_2.idx", root);
	write_index(path, NULL, 0); /* a stream without packets */
	CHECK_INT_EQ(rec_trace_count_discarded(root, &discarded, &err), REC_STATUS_OK);
	CHECK_INT_EQ(discarded, 7 + 3); /* the last packet of each stream holds its total */

	snprintf(path, sizeof(path), "%s/ust/index/chan_3.idx", root);
	FILE *bad = fopen(path, "wb");
	if (bad) {
		fputs("not an index file", bad);
		fclose(bad);
	}
	CHECK_INT_EQ(rec_trace_count_discarded(root, &discarded, &err), REC_STATUS_TRACING);
	CHECK(strstr(err.message, root) != NULL);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK_INT_EQ(system(path), 0);
}

int main(int argc, char **argv)
{
	const char *group = argc > 1 ? argv[1] : "";

	if (!strcmp(group, "options")) {
		test_options_defaults();
		test_options_values();
		test_options_errors();
		test_options_sessiond_timeout();
	} else if (!strcmp(group, "trace_loss")) {
		test_trace_loss();
	} else {
		fprintf(stderr, "usage: unit_record options | trace_loss\n");
		return 2;
	}
	printf("%d passed, %d failed\n", po_check_passes, po_check_failures);
	return po_check_failures ? 1 : 0;
}
