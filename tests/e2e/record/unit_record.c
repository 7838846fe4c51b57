/*
 * unit_record.c: unit tests of profopt-record's parts that need no session daemon: the
 * command line, the count of discarded events read from packet indexes, and the check of
 * what a recording holds (verify.c) on small trace directories written here.
 *
 *   unit_record options | trace_loss | verify
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
	char *bad_clock[] = {"profopt-record", "--stacks", "--stacks-clock",
			     "sundial",	       "true",	   NULL};
	char *clock_alone[] = {"profopt-record", "--stacks-clock", "wall", "true", NULL};
	char *wall[] = {"profopt-record", "--stacks=250", "--stacks-clock", "wall", "true", NULL};
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
	CHECK_INT_EQ(parse(&options, bad_clock, ARGC(bad_clock)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, clock_alone, ARGC(clock_alone)), REC_STATUS_USAGE);
	CHECK_INT_EQ(parse(&options, wall, ARGC(wall)), REC_STATUS_OK);
	CHECK_INT_EQ(options.stacks_hz, 250);
	CHECK_STR_EQ(options.stacks_clock, "wall");
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
	const uint64_t stream_back[] = {113, 2407, 0};
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
	/* A packet with a smaller count than the one before it: the largest is the total. */
	snprintf(path, sizeof(path), "%s/ust/index/chan_4.idx", root);
	write_index(path, stream_back, 3);
	CHECK_INT_EQ(rec_trace_count_discarded(root, &discarded, &err), REC_STATUS_OK);
	CHECK_INT_EQ(discarded, 7 + 3 + 2407);

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

/*
 * A trace directory as lttng-ust writes it, small: packetized metadata that declares a
 * stream and an event, one stream file of 4096-byte packets with events, and its index.
 */
#define PACKET_BYTES 4096

static void put_le(unsigned char *at, uint64_t value, int size)
{
	for (int i = 0; i < size; i++)
		at[i] = (unsigned char)(value >> (8 * i));
}

static void write_metadata(const char *path)
{
	unsigned char packet[PACKET_BYTES] = {0};
	static const char text[] = "/* CTF 1.8 */ stream { id = 0; }; event { name = \"x\"; };";
	FILE *file = fopen(path, "wb");

	put_le(packet, 0x75D11D57u, 4);
	put_le(packet + 24, (37 + sizeof(text)) * 8, 4);
	put_le(packet + 28, PACKET_BYTES * 8, 4);
	memcpy(packet + 37, text, sizeof(text));
	if (file) {
		fwrite(packet, 1, sizeof(packet), file);
		fclose(file);
	}
}

/* Packets ending at end_ns - (packet_count - 1 - i) ms; the index lists them all. */
static void write_stream(const char *dir, int packet_count, int64_t end_ns)
{
	char path[512];
	FILE *stream, *index;

	snprintf(path, sizeof(path), "%s/profopt_0", dir);
	stream = fopen(path, "wb");
	snprintf(path, sizeof(path), "%s/index/profopt_0.idx", dir);
	index = fopen(path, "wb");
	if (!stream || !index) {
		CHECK(!"cannot write a stream");
		return;
	}
	put_be32(index, 0xC1F1DCC1u);
	put_be32(index, 1);
	put_be32(index, 1);
	put_be32(index, 64);
	for (int i = 0; i < packet_count; i++) {
		unsigned char packet[PACKET_BYTES] = {0};
		int64_t packet_end_ns = end_ns - (packet_count - 1 - i) * 1000000;
		uint64_t fields[8] = {(uint64_t)i * PACKET_BYTES,
				      PACKET_BYTES * 8,
				      200 * 8,
				      (uint64_t)packet_end_ns - 500000,
				      (uint64_t)packet_end_ns,
				      0,
				      0,
				      0};

		put_le(packet, 0xC1FC1FC1u, 4);
		put_le(packet + 40, (uint64_t)packet_end_ns, 8);
		put_le(packet + 48, 200 * 8, 8); /* content beyond the 96-byte header: events */
		put_le(packet + 56, PACKET_BYTES * 8, 8);
		fwrite(packet, 1, sizeof(packet), stream);
		for (int field = 0; field < 8; field++)
			put_be64(index, fields[field]);
	}
	fclose(stream);
	fclose(index);
}

/* TRACE/ust/pid/prog-PID-20260101-120000 with a whole metadata and stream. */
static void make_process_dir(const char *root, long pid, char *dir, size_t size, int64_t end_ns)
{
	char path[512];

	snprintf(dir, size, "%s/ust/pid/prog-%ld-20260101-120000", root, pid);
	snprintf(path, sizeof(path), "mkdir -p '%s/index'", dir);
	CHECK_INT_EQ(system(path), 0);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	write_metadata(path);
	write_stream(dir, 3, end_ns);
}

static bool said(const struct rec_verification *result, const char *text)
{
	for (int i = 0; i < result->line_count; i++)
		if (strstr(result->lines[i], text))
			return true;
	return false;
}

static void verify_dir(const char *root, const char *notes, long command_pid, int64_t end_ns,
		       struct rec_verification *result)
{
	const struct rec_verify_input input = {.trace_dir = root,
					       .notes_path = notes,
					       .command_pid = command_pid,
					       .command_end_ns = end_ns};

	rec_verify(&input, result);
}

static void test_verify(void)
{
	char root[] = "/tmp/profopt-unit-verify.XXXXXX";
	char dir[600], path[700], notes[700];
	const int64_t end_ns = 50000000000LL;
	struct rec_verification result;
	FILE *file;

	if (!mkdtemp(root)) {
		CHECK(!"mkdtemp");
		return;
	}
	make_process_dir(root, 10, dir, sizeof(dir), end_ns);
	make_process_dir(root, 12, path, sizeof(path), end_ns - 5000000000LL); /* a child */
	verify_dir(root, NULL, 10, end_ns - 100000000, &result);
	CHECK(!result.incomplete);
	CHECK_INT_EQ(result.problems, 0);
	CHECK_INT_EQ(result.trace_dirs, 2);
	CHECK_INT_EQ(result.trace_end_ns, end_ns); /* the command's process's own end */
	CHECK(said(&result, "no events were discarded"));

	/* The command's process ended 3 s after its trace: its last packets are missing. */
	verify_dir(root, NULL, 10, end_ns + 3000000000LL, &result);
	CHECK(result.incomplete);
	CHECK(said(&result, "the trace ends 3.0 s before the command did"));
	CHECK(!said(&result, "no events were discarded"));

	/* Half a packet more: cut inside a packet. */
	snprintf(path, sizeof(path), "%s/profopt_0", dir);
	CHECK_INT_EQ(truncate(path, 3 * PACKET_BYTES + 100), 0);
	verify_dir(root, NULL, 10, end_ns, &result);
	CHECK(said(&result, "profopt_0: cut inside a packet at byte 12288 of 12388"));
	/* Shorter than its index: the last packets are missing. */
	CHECK_INT_EQ(truncate(path, 2 * PACKET_BYTES), 0);
	verify_dir(root, NULL, 10, 0, &result);
	CHECK(said(&result, "profopt_0: holds 8192 bytes, and its index lists 12288"));
	CHECK_INT_EQ(result.problems, 1);
	write_stream(dir, 3, end_ns);

	/*
	 * The daemon's count went through lttng-tools' wrap guess (2^63 added): the packet
	 * indexes' count (none discarded, see write_stream) is said instead.
	 */
	{
		const struct rec_verify_input input = {.trace_dir = root,
						       .command_pid = 10,
						       .daemon_discarded =
							   (UINT64_C(1) << 63) + 2294,
						       .daemon_discarded_known = true};

		rec_verify(&input, &result);
		CHECK(!said(&result, "9223372036854"));
		CHECK_INT_EQ(result.discarded_events, 0);
		CHECK(said(&result, "no events were discarded"));
	}

	/* Metadata cut inside its packet. */
	snprintf(path, sizeof(path), "%s/metadata", dir);
	CHECK_INT_EQ(truncate(path, 1000), 0);
	verify_dir(root, NULL, 10, 0, &result);
	CHECK(said(&result, "metadata (1000 bytes) ends inside a packet"));
	write_metadata(path);

	/*
	 * Processes that libprofopt noted as unregistered: pid 12 has a directory (it lost its
	 * first events), pids 13 and 14 have none (they lost everything); pid 13 twice.
	 */
	snprintf(notes, sizeof(notes), "%s/notes", root);
	file = fopen(notes, "w");
	if (file) {
		fputs(
		    "unregistered\t13\tworker\nlibprofopt-not-loaded\t9\tx\n"
		    "unregistered\t12\tprog\nunregistered\t14\tworker\nunregistered\t13\tworker\n",
		    file);
		fclose(file);
	}
	verify_dir(root, notes, 10, end_ns, &result);
	CHECK(result.incomplete);
	CHECK_INT_EQ(result.unregistered, 3);
	CHECK_INT_EQ(result.missing_dirs, 2);
	CHECK(said(&result, "error: 2 of the command's processes have no trace directory"));
	CHECK(said(&result, ": pid 13 (worker), pid 14 (worker)"));
	CHECK(said(&result,
		   "error: 1 of the command's processes emitted profopt events before "
		   "the session daemon had registered them, and those events were lost: pid "
		   "12 (prog)"));
	CHECK(said(&result, "LTTNG_UST_REGISTER_TIMEOUT"));
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
	} else if (!strcmp(group, "verify")) {
		test_verify();
	} else {
		fprintf(stderr, "usage: unit_record options | trace_loss | verify\n");
		return 2;
	}
	printf("%d passed, %d failed\n", po_check_passes, po_check_failures);
	return po_check_failures ? 1 : 0;
}
