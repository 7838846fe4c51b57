/* test_check.c: po_ingest_check() on temporary directories laid out for each case. */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ingest/ingest.h"

static char root[256];

static const char ctf_text[] = "/* CTF 1.8 */\ntrace { packet.header := struct { "
			       "uint32_t magic; }; };\n";
static const unsigned char packet_magic[] = {0xC1, 0xFC, 0x1F, 0xC1, 0, 0, 0, 0};
/* One whole 64-byte packetized metadata packet: magic, then content and packet sizes in
 * bits at bytes 24 and 28 (little-endian). */
static const unsigned char metadata_packet_magic[64] = {
    0x57, 0x1D, 0xD1, 0x75, [24] = 0x00, 0x02, 0, 0, [28] = 0x00, 0x02, 0, 0};

static void write_file(const char *dir, const char *name, const void *bytes, size_t len)
{
	char path[1024];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "wb");
	if (!file) {
		perror(path);
		exit(1);
	}
	if (len)
		fwrite(bytes, 1, len, file);
	fclose(file);
}

/* A fresh directory below root: root/NAME/SUBPATH, created with parents. */
static const char *make_dir(const char *name, const char *subpath, char *out, size_t size)
{
	char command[1200];

	snprintf(out, size, "%s/%s%s%s", root, name, subpath[0] ? "/" : "", subpath);
	snprintf(command, sizeof(command), "mkdir -p '%s'", out);
	if (system(command) != 0)
		exit(1);
	return out;
}

/* A trace directory that decodes: CTF text metadata and one stream file. */
static void make_trace(const char *dir)
{
	write_file(dir, "metadata", ctf_text, sizeof(ctf_text) - 1);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
}

static enum po_status check(const char *path, struct po_error *err)
{
	memset(err, 0, sizeof(*err));
	return po_ingest_check(path, err);
}

static void expect_input(const char *path, const char *cause, const char *file)
{
	struct po_error err;

	CHECK_INT_EQ(check(path, &err), PO_STATUS_INPUT);
	CHECK(strstr(err.message, cause) != NULL);
	CHECK(strstr(err.message, file) != NULL);
	CHECK(strchr(err.message, '\n') == NULL);
	fprintf(stderr, "  %s\n", err.message);
}

static void test_missing_and_not_directory(void)
{
	char path[1024], dir[512];

	snprintf(path, sizeof(path), "%s/does-not-exist", root);
	expect_input(path, "No such file or directory", path);
	make_dir("plainfile", "", dir, sizeof(dir));
	write_file(dir, "trace.txt", "x", 1);
	snprintf(path, sizeof(path), "%s/trace.txt", dir);
	expect_input(path, "not a directory", path);
}

static void test_not_a_trace(void)
{
	char dir[512];

	make_dir("empty", "sub/dir", dir, sizeof(dir));
	snprintf(dir, sizeof(dir), "%s/empty", root);
	expect_input(dir, "not a trace", dir);
}

static void test_bad_metadata(void)
{
	char dir[512];

	make_dir("meta-empty", "", dir, sizeof(dir));
	write_file(dir, "metadata", "", 0);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	expect_input(dir, "empty metadata file", "meta-empty/metadata");
	make_dir("meta-json", "", dir, sizeof(dir));
	write_file(dir, "metadata", "{\"json\": 1}\n", 12);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	expect_input(dir, "not a CTF metadata file", "meta-json/metadata");
	make_dir("meta-cut", "", dir, sizeof(dir));
	write_file(dir, "metadata", metadata_packet_magic, sizeof(metadata_packet_magic) - 1);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	expect_input(dir, "truncated metadata: the packet at byte 0 is cut short",
		     "meta-cut/metadata");
}

/*
 * Packetized metadata of the given text pieces, one packet each (37-byte headers, content
 * and packet sizes in bits), into dir/metadata.
 */
static void write_packetized(const char *dir, const char *const *pieces, size_t count)
{
	unsigned char file[4096] = {0};
	size_t at = 0;

	for (size_t i = 0; i < count; i++) {
		size_t length = strlen(pieces[i]);
		uint32_t bits = (uint32_t)(37 + length) * 8;

		memcpy(file + at, metadata_packet_magic, 4);
		memcpy(file + at + 24, &bits, 4); /* content: no padding */
		memcpy(file + at + 28, &bits, 4);
		memcpy(file + at + 37, pieces[i], length);
		at += 37 + length;
	}
	write_file(dir, "metadata", file, at);
}

/*
 * A stream file of one lttng-ust packet (magic, then content and packet sizes in bits at
 * bytes 48 and 56) with `content` bytes of content, of which more than 96 are events.
 */
static void write_packet(const char *dir, const char *name, uint64_t content)
{
	unsigned char packet[256] = {0xC1, 0x1F, 0xFC, 0xC1}; /* little-endian */
	uint64_t content_bits = content * 8, packet_bits = sizeof(packet) * 8;

	memcpy(packet + 48, &content_bits, 8);
	memcpy(packet + 56, &packet_bits, 8);
	write_file(dir, name, packet, sizeof(packet));
}

/*
 * Metadata that a process which registered with the tracer too late leaves (per-process
 * buffers): its packet header names a stream class and it declares none, or it declares
 * no event class while its streams hold events. The decoder cannot read such a trace and
 * said so in babeltrace2's words; it is refused here, naming the file, and --salvage
 * leaves that trace directory out. A declaration cut by a packet boundary still counts.
 */
static void test_metadata_without_classes(void)
{
	static const char header[] =
	    "/* CTF 1.8 */\ntrace { packet.header := struct { uint32_t magic; "
	    "uint32_t stream_id; }; };\n";
	static const char *const cut[] = {"trace { packet.header := struct { uint32_t magic; "
					  "uint32_t stream_id; }; };\nstre",
					  "am\n{ id = 0; };\nevent { name = \"x\"; };\n"};
	static const char *const no_event[] = {"trace { packet.header := struct { uint32_t "
					       "stream_id; }; };\nstream { id = 0; };\n"};
	struct po_ingest_watch *watch = NULL;
	struct po_error err = {{0}};
	const char *note;
	char dir[512], top[512];
	int64_t skipped;

	make_dir("late", "ust/pid/app-9-20260101", dir, sizeof(dir));
	write_file(dir, "metadata", header, sizeof(header) - 1);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	snprintf(top, sizeof(top), "%s/late", root);
	expect_input(top, "/metadata: declares no stream class (", "app-9-20260101/metadata");
	/* the same with no data in its streams: nothing to read, nothing refused */
	write_file(dir, "channel0_0", "", 0);
	make_dir("late", "ust/pid/app-8-20260101", dir, sizeof(dir));
	make_trace(dir);
	CHECK_INT_EQ(check(top, &err), PO_STATUS_OK);

	make_dir("split", "ust/pid/app-9-20260101", dir, sizeof(dir));
	write_packetized(dir, cut, 2);
	write_packet(dir, "channel0_0", 200);
	snprintf(top, sizeof(top), "%s/split", root);
	CHECK_INT_EQ(check(top, &err), PO_STATUS_OK);

	make_dir("no-event", "ust/uid/0/64-bit", dir, sizeof(dir));
	write_packetized(dir, no_event, 1);
	write_packet(dir, "channel0_0", 84); /* an empty packet: accepted */
	snprintf(top, sizeof(top), "%s/no-event", root);
	CHECK_INT_EQ(check(top, &err), PO_STATUS_OK);
	write_packet(dir, "channel0_1", 200);
	expect_input(top, "/metadata: declares no event class (", "64-bit/metadata");

	/* --salvage: the trace directory is left out and named, the others are kept */
	make_dir("late-salvage", "ust/pid/app-1-20260101", dir, sizeof(dir));
	make_trace(dir);
	make_dir("late-salvage", "ust/pid/app-2-20260101", dir, sizeof(dir));
	write_file(dir, "metadata", header, sizeof(header) - 1);
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	snprintf(top, sizeof(top), "%s/late-salvage", root);
	CHECK_INT_EQ(po_ingest_check_start_salvage(top, &watch, &err), PO_STATUS_OK);
	note = po_ingest_watch_borrow_skipped(watch, &skipped);
	CHECK_INT_EQ(skipped, 1);
	CHECK(strstr(note, "path=ust/pid/app-2-20260101: metadata: declares no stream class") !=
	      NULL);
	po_ingest_watch_destroy(watch);
}

static void test_metadata_only(void)
{
	char dir[512], top[512];

	make_dir("meta-only", "ust/uid/0/64-bit", dir, sizeof(dir));
	write_file(dir, "metadata", ctf_text, sizeof(ctf_text) - 1);
	make_dir("meta-only", "ust/uid/0/64-bit/index", top, sizeof(top));
	snprintf(top, sizeof(top), "%s/meta-only", root);
	expect_input(top, "metadata only", "meta-only/ust/uid/0/64-bit");
}

static void test_empty_streams(void)
{
	char dir[512], other[512], top[512];

	/* One empty stream next to a good one is fine; only empty ones is not. */
	make_dir("some-empty", "64-bit", dir, sizeof(dir));
	make_trace(dir);
	write_file(dir, "channel0_1", "", 0);
	snprintf(top, sizeof(top), "%s/some-empty", root);
	CHECK_INT_EQ(check(top, &(struct po_error){{0}}), PO_STATUS_OK);
	make_dir("all-empty", "ust/pid/a-1/64-bit", dir, sizeof(dir));
	make_dir("all-empty", "ust/pid/b-2/64-bit", other, sizeof(other));
	write_file(dir, "metadata", ctf_text, sizeof(ctf_text) - 1);
	write_file(dir, "channel0_0", "", 0);
	write_file(other, "metadata", ctf_text, sizeof(ctf_text) - 1);
	write_file(other, "channel0_0", "", 0);
	snprintf(top, sizeof(top), "%s/all-empty", root);
	expect_input(top, "every stream file is empty", top);
}

static void test_foreign_file(void)
{
	char dir[512];

	make_dir("foreign", "ust/pid/app-7/64-bit", dir, sizeof(dir));
	make_trace(dir);
	write_file(dir, "notes.txt", "my notes about this run\n", 24);
	snprintf(dir, sizeof(dir), "%s/foreign", root);
	expect_input(dir, "foreign file", "app-7/64-bit/notes.txt");
}

static void test_valid_layouts(void)
{
	char dir[512], top[512];
	struct po_error err;

	make_dir("valid", "ust/pid/app-1-20260101/64-bit", dir, sizeof(dir));
	make_trace(dir);
	write_file(dir, ".hidden", "x", 1);
	make_dir("valid", "ust/pid/app-1-20260101/64-bit/index", top, sizeof(top));
	write_file(top, "channel0_0.idx", "not a stream", 12);
	make_dir("valid", "ust/uid/0/64-bit", dir, sizeof(dir));
	write_file(dir, "metadata", metadata_packet_magic, sizeof(metadata_packet_magic));
	write_file(dir, "channel0_0", packet_magic, sizeof(packet_magic));
	snprintf(top, sizeof(top), "%s/valid", root);
	CHECK_INT_EQ(check(top, &err), PO_STATUS_OK);
	CHECK_STR_EQ(err.message, "");
}

static void test_still_recording(void)
{
	char dir[512], path[600];
	pid_t writer;

	make_dir("recording", "64-bit", dir, sizeof(dir));
	make_trace(dir);
	snprintf(path, sizeof(path), "%s/channel0_0", dir);
	writer = fork();
	if (writer == 0) {
		for (int i = 0; i < 1000; i++) {
			FILE *file = fopen(path, "ab");

			if (file) {
				fwrite(packet_magic, 1, sizeof(packet_magic), file);
				fclose(file);
			}
			usleep(20000);
		}
		_exit(0);
	}
	usleep(100000);
	snprintf(dir, sizeof(dir), "%s/recording", root);
	expect_input(dir, "still being written", "recording/64-bit/channel0_0");
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
}

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * The two halves: a file that grows between _start and _finish (as during a long
 * analysis, after the first 300 ms) is caught; an unchanged trace passes after at least
 * 300 ms, counted from _start.
 */
static void test_watch_over_an_analysis(void)
{
	struct po_ingest_watch *watch = NULL;
	struct po_error err = {{0}};
	char dir[512];
	int64_t began;

	make_dir("watched", "", dir, sizeof(dir));
	make_trace(dir);
	began = monotonic_ms();
	CHECK_INT_EQ(po_ingest_check_start(dir, &watch, &err), PO_STATUS_OK);
	CHECK(watch != NULL);
	CHECK_INT_EQ(po_ingest_check_finish(watch, &err), PO_STATUS_OK);
	CHECK(monotonic_ms() - began >= 300);

	CHECK_INT_EQ(po_ingest_check_start(dir, &watch, &err), PO_STATUS_OK);
	usleep(400000);						       /* the analysis runs */
	write_file(dir, "channel0_0", ctf_text, sizeof(ctf_text) - 1); /* another size */
	CHECK_INT_EQ(po_ingest_check_finish(watch, &err), PO_STATUS_INPUT);
	CHECK(strstr(err.message, "still being written") != NULL);
	CHECK(strstr(err.message, "watched/channel0_0") != NULL);

	memset(&err, 0, sizeof(err));
	CHECK_INT_EQ(po_ingest_check_start(root, &watch, &err), PO_STATUS_INPUT);
	CHECK(watch == NULL);
}

int main(void)
{
	char command[300];
	int failed;

	snprintf(root, sizeof(root), "/tmp/profopt-check-test.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	RUN(test_missing_and_not_directory);
	RUN(test_not_a_trace);
	RUN(test_bad_metadata);
	RUN(test_metadata_without_classes);
	RUN(test_metadata_only);
	RUN(test_empty_streams);
	RUN(test_foreign_file);
	RUN(test_valid_layouts);
	RUN(test_still_recording);
	RUN(test_watch_over_an_analysis);
	failed = CHECK_SUMMARY();
	snprintf(command, sizeof(command), "rm -rf '%s'", root);
	if (system(command) != 0)
		failed = 1;
	return failed;
}
