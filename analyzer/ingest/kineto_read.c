/*
 * kineto_read.c: torch.profiler's JSON trace, streamed through yajl's event parser (gzip
 * through zlib, which reads a plain file as it is). A small stack of containers says where
 * each token lies; only the members profopt maps are kept, in a fixed record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "kineto_read.h"

#define READ_CHUNK_BYTES (256 * 1024)
#define STACK_MAX 64

/* Where a container lies in the trace. */
enum place {
	AT_TOP,	    /* nothing opened yet */
	AT_ROOT,    /* the top-level object */
	AT_EVENTS,  /* "traceEvents" */
	AT_EVENT,   /* one of its entries */
	AT_ARGS,    /* its "args" */
	AT_DIMS,    /* args "grid" or "block" */
	AT_DEVICES, /* "deviceProperties" */
	AT_DEVICE,
	AT_DIST, /* "distributedInfo" */
	AT_SKIP, /* anything else */
};

/* The members read, one table: (id, spelling). */
#define KINETO_KEYS(X)                                                                             \
	X(TRACE_EVENTS, "traceEvents")                                                             \
	X(DEVICE_PROPERTIES, "deviceProperties")                                                   \
	X(DISTRIBUTED_INFO, "distributedInfo")                                                     \
	X(PH, "ph")                                                                                \
	X(CAT, "cat")                                                                              \
	X(NAME, "name")                                                                            \
	X(PID, "pid")                                                                              \
	X(TID, "tid")                                                                              \
	X(TS, "ts")                                                                                \
	X(DUR, "dur")                                                                              \
	X(ARGS, "args")                                                                            \
	X(DEVICE, "device")                                                                        \
	X(STREAM, "stream")                                                                        \
	X(CORRELATION, "correlation")                                                              \
	X(BYTES, "bytes")                                                                          \
	X(GRID, "grid")                                                                            \
	X(BLOCK, "block")                                                                          \
	X(REGISTERS, "registers per thread")                                                       \
	X(SHARED, "shared memory")                                                                 \
	X(DEVICE_TYPE, "Device Type")                                                              \
	X(DEVICE_ID, "Device Id")                                                                  \
	X(ADDR, "Addr")                                                                            \
	X(ALLOC_BYTES, "Bytes")                                                                    \
	X(TOTAL_ALLOCATED, "Total Allocated")                                                      \
	X(TOTAL_RESERVED, "Total Reserved")                                                        \
	X(SEQ, "Seq")                                                                              \
	X(GROUP_NAME, "Process Group Name")                                                        \
	X(COLLECTIVE, "Collective name")                                                           \
	X(IN_ELEMENTS, "In msg nelems")                                                            \
	X(OUT_ELEMENTS, "Out msg nelems")                                                          \
	X(DTYPE, "dtype")                                                                          \
	X(ID, "id")                                                                                \
	X(TOTAL_MEM, "totalGlobalMem")                                                             \
	X(SMS, "numSms")                                                                           \
	X(MAJOR, "computeMajor")                                                                   \
	X(MINOR, "computeMinor")                                                                   \
	X(RANK, "rank")                                                                            \
	X(WORLD_SIZE, "world_size")                                                                \
	X(BACKEND, "backend")

enum key {
	KEY_NONE,
#define PO_X(id, spelling) KEY_##id,
	KINETO_KEYS(PO_X)
#undef PO_X
	    KEY_COUNT
};

static const char *const key_spellings[KEY_COUNT] = {
#define PO_X(id, spelling) [KEY_##id] = spelling,
    KINETO_KEYS(PO_X)
#undef PO_X
};

static const size_t key_lengths[KEY_COUNT] = {
#define PO_X(id, spelling) [KEY_##id] = sizeof(spelling) - 1,
    KINETO_KEYS(PO_X)
#undef PO_X
};

static const char *const category_spellings[PO_KINETO_CAT_COUNT] = {
#define PO_X(name, spelling) [PO_KINETO_CAT_##name] = spelling,
    PO_KINETO_CATEGORIES(PO_X)
#undef PO_X
};

struct reader {
	const struct po_kineto_callbacks *callbacks; /* weak */
	struct po_kineto_read_stats *stats;	     /* weak */
	enum place stack[STACK_MAX];
	int depth;    /* containers open; stack holds the first STACK_MAX */
	enum key key; /* the member whose value comes next */
	int dim;      /* the next index of a grid or block array */
	struct po_kineto_record record;
	struct po_kineto_device device;
	struct po_kineto_distributed dist;
	enum po_status status; /* a callback's, when it stopped the parse */
	bool header_only;      /* stop where "traceEvents" begins (po_kineto_read_rank()) */
	bool stopped;	       /* ... and it did */
};

static enum key key_of(const unsigned char *text, size_t len)
{
	for (int k = 1; k < KEY_COUNT; k++)
		if (key_lengths[k] == len && memcmp(key_spellings[k], text, len) == 0)
			return (enum key)k;
	return KEY_NONE;
}

static enum place top(const struct reader *r)
{
	if (r->depth == 0)
		return AT_TOP;
	return r->depth <= STACK_MAX ? r->stack[r->depth - 1] : AT_SKIP;
}

static void push(struct reader *r, enum place place)
{
	if (r->depth < STACK_MAX)
		r->stack[r->depth] = place;
	r->depth++;
	r->key = KEY_NONE;
}

/* Copies a string value, cut at a character boundary; true when it was cut. */
static bool copy_text(char *out, size_t size, const unsigned char *text, size_t len)
{
	bool cut = len >= size;

	if (cut) {
		len = size - 1;
		while (len > 0 && (text[len] & 0xC0) == 0x80)
			len--;
	}
	memcpy(out, text, len);
	out[len] = '\0';
	return cut;
}

/* A JSON number as an integer: its integer part (exponents through strtod). */
static int64_t number_int(const char *text, size_t len)
{
	char buf[64];
	double value;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (!strpbrk(buf, ".eE"))
		return strtoll(buf, NULL, 10);
	value = strtod(buf, NULL);
	return value >= -9.2e18 && value <= 9.2e18 ? (int64_t)value : -1;
}

/*
 * Microseconds (with up to three decimals, as Kineto writes them) to nanoseconds, exactly:
 * a double would lose the nanoseconds of a 2020s epoch time. INT64_MIN when not a time.
 */
static int64_t number_us_to_ns(const char *text, size_t len)
{
	int64_t whole = 0, fraction = 0;
	size_t i = 0, digits = 0;
	bool negative = len > 0 && text[0] == '-';

	i = negative;
	if (i == len)
		return INT64_MIN;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		if (whole > (INT64_MAX / 1000 - 9) / 10)
			return INT64_MIN;
		whole = whole * 10 + (text[i] - '0');
	}
	if (i < len && text[i] == '.') {
		for (i++; i < len && text[i] >= '0' && text[i] <= '9'; i++, digits++)
			if (digits < 3)
				fraction = fraction * 10 + (text[i] - '0');
		for (; digits < 3; digits++)
			fraction *= 10;
	}
	if (i != len) {
		double value = strtod(text, NULL) * 1000.0; /* an exponent: rare, and approximate */

		return value > -9.2e18 && value < 9.2e18 ? (int64_t)value : INT64_MIN;
	}
	return (negative ? -1 : 1) * (whole * 1000 + fraction);
}

/* Empties the record; its texts only at their first byte (a name is 4 KiB). */
static void record_reset(struct po_kineto_record *rec)
{
	rec->phase = 0;
	rec->category = PO_KINETO_CAT_OTHER;
	rec->memory = false;
	rec->name[0] = rec->collective[0] = rec->group_name[0] = rec->dtype[0] = '\0';
	rec->arg_name[0] = '\0';
	rec->pid = rec->tid = -1;
	rec->ts_ns = rec->dur_ns = INT64_MIN;
	rec->device = rec->stream = rec->correlation = rec->bytes = -1;
	for (int i = 0; i < 3; i++)
		rec->grid[i] = rec->block[i] = -1;
	rec->registers = rec->shared_bytes = -1;
	rec->device_type = rec->device_id = rec->addr = -1;
	rec->alloc_bytes = rec->total_allocated = rec->total_reserved = INT64_MIN;
	rec->seq = rec->group = rec->in_elements = rec->out_elements = rec->element_bytes = -1;
}

/* ---- values, by where they lie ---- */

static void event_number(struct reader *r, const char *text, size_t len)
{
	struct po_kineto_record *rec = &r->record;

	switch (r->key) {
	case KEY_PID:
		rec->pid = number_int(text, len);
		break;
	case KEY_TID:
		rec->tid = number_int(text, len);
		break;
	case KEY_TS:
		rec->ts_ns = number_us_to_ns(text, len);
		break;
	case KEY_DUR:
		rec->dur_ns = number_us_to_ns(text, len);
		break;
	default:
		break;
	}
}

static int64_t *args_slot(struct po_kineto_record *rec, enum key key)
{
	switch (key) {
	case KEY_DEVICE:
		return &rec->device;
	case KEY_STREAM:
		return &rec->stream;
	case KEY_CORRELATION:
		return &rec->correlation;
	case KEY_BYTES:
		return &rec->bytes;
	case KEY_REGISTERS:
		return &rec->registers;
	case KEY_SHARED:
		return &rec->shared_bytes;
	case KEY_DEVICE_TYPE:
		return &rec->device_type;
	case KEY_DEVICE_ID:
		return &rec->device_id;
	case KEY_ADDR:
		return &rec->addr;
	case KEY_ALLOC_BYTES:
		return &rec->alloc_bytes;
	case KEY_TOTAL_ALLOCATED:
		return &rec->total_allocated;
	case KEY_TOTAL_RESERVED:
		return &rec->total_reserved;
	case KEY_SEQ:
		return &rec->seq;
	case KEY_IN_ELEMENTS:
		return &rec->in_elements;
	case KEY_OUT_ELEMENTS:
		return &rec->out_elements;
	default:
		return NULL;
	}
}

static void device_number(struct reader *r, const char *text, size_t len)
{
	int64_t value = number_int(text, len);

	switch (r->key) {
	case KEY_ID:
		r->device.id = value;
		break;
	case KEY_TOTAL_MEM:
		r->device.memory_bytes = value;
		break;
	case KEY_SMS:
		r->device.multiprocessors = value;
		break;
	case KEY_MAJOR:
		r->device.major = value;
		break;
	case KEY_MINOR:
		r->device.minor = value;
		break;
	default:
		break;
	}
}

static int on_number(void *ctx, const char *text, size_t len)
{
	struct reader *r = ctx;
	int64_t *slot;

	switch (top(r)) {
	case AT_EVENT:
		event_number(r, text, len);
		break;
	case AT_ARGS:
		slot = args_slot(&r->record, r->key);
		if (slot)
			*slot = number_int(text, len);
		break;
	case AT_DIMS:
		if (r->dim < 3)
			(r->key == KEY_GRID ? r->record.grid : r->record.block)[r->dim] =
			    number_int(text, len);
		r->dim++;
		return 1; /* the key stays: the array's next element */
	case AT_DEVICE:
		device_number(r, text, len);
		break;
	case AT_DIST:
		if (r->key == KEY_RANK)
			r->dist.rank = number_int(text, len);
		else if (r->key == KEY_WORLD_SIZE)
			r->dist.world_size = number_int(text, len);
		break;
	default:
		break;
	}
	r->key = KEY_NONE;
	return 1;
}

static enum po_kineto_category category_of(const unsigned char *text, size_t len)
{
	char lower[32];

	if (len >= sizeof(lower))
		return PO_KINETO_CAT_OTHER;
	for (size_t i = 0; i < len; i++)
		lower[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32 : text[i]);
	lower[len] = '\0';
	/* PyTorch 1.8's spellings */
	if (strcmp(lower, "operator") == 0)
		return PO_KINETO_CAT_CPU_OP;
	if (strcmp(lower, "runtime") == 0)
		return PO_KINETO_CAT_RUNTIME;
	if (strcmp(lower, "memcpy") == 0)
		return PO_KINETO_CAT_MEMCPY;
	if (strcmp(lower, "memset") == 0)
		return PO_KINETO_CAT_MEMSET;
	for (int c = 1; c < PO_KINETO_CAT_COUNT; c++)
		if (strcmp(lower, category_spellings[c]) == 0)
			return (enum po_kineto_category)c;
	return PO_KINETO_CAT_OTHER;
}

/* A thread named by text ("stream 7" in PyTorch 1.8's GPU rows): its number, or -1. */
static int64_t id_of_text(const unsigned char *text, size_t len)
{
	size_t start = len;

	while (start > 0 && text[start - 1] >= '0' && text[start - 1] <= '9')
		start--;
	if (start == len || len - start > 18)
		return -1;
	return number_int((const char *)text + start, len - start);
}

static void event_string(struct reader *r, const unsigned char *text, size_t len)
{
	struct po_kineto_record *rec = &r->record;

	switch (r->key) {
	case KEY_PH:
		rec->phase = len ? (char)text[0] : 0;
		break;
	case KEY_CAT:
		rec->category = category_of(text, len);
		break;
	case KEY_NAME:
		r->stats->names_cut += copy_text(rec->name, sizeof(rec->name), text, len);
		rec->memory = len == 8 && memcmp(text, "[memory]", 8) == 0;
		break;
	case KEY_PID:
		rec->pid = id_of_text(text, len);
		break;
	case KEY_TID:
		rec->tid = id_of_text(text, len);
		break;
	default:
		break;
	}
}

static void args_string(struct reader *r, const unsigned char *text, size_t len)
{
	struct po_kineto_record *rec = &r->record;

	if (r->key == KEY_COLLECTIVE)
		copy_text(rec->collective, sizeof(rec->collective), text, len);
	else if (r->key == KEY_GROUP_NAME)
		copy_text(rec->group_name, sizeof(rec->group_name), text, len);
	else if (r->key == KEY_DTYPE)
		copy_text(rec->dtype, sizeof(rec->dtype), text, len);
	else if (r->key == KEY_NAME)
		copy_text(rec->arg_name, sizeof(rec->arg_name), text, len);
	else if (r->key == KEY_SEQ || r->key == KEY_IN_ELEMENTS || r->key == KEY_OUT_ELEMENTS)
		*args_slot(rec, r->key) = id_of_text(text, len); /* some versions quote them */
}

static int on_string(void *ctx, const unsigned char *text, size_t len)
{
	struct reader *r = ctx;

	if (top(r) == AT_EVENT)
		event_string(r, text, len);
	else if (top(r) == AT_ARGS)
		args_string(r, text, len);
	else if (top(r) == AT_DEVICE && r->key == KEY_NAME)
		copy_text(r->device.name, sizeof(r->device.name), text, len);
	else if (top(r) == AT_DIST && r->key == KEY_BACKEND)
		copy_text(r->dist.backend, sizeof(r->dist.backend), text, len);
	if (top(r) != AT_DIMS)
		r->key = KEY_NONE;
	return 1;
}

static int on_scalar(void *ctx)
{
	struct reader *r = ctx;

	if (top(r) == AT_DIMS)
		r->dim++;
	else
		r->key = KEY_NONE;
	return 1;
}

static int on_boolean(void *ctx, int value)
{
	(void)value;
	return on_scalar(ctx);
}

static int on_key(void *ctx, const unsigned char *text, size_t len)
{
	struct reader *r = ctx;
	enum place place = top(r);

	r->key = place == AT_SKIP ? KEY_NONE : key_of(text, len);
	return 1;
}

static int on_start_map(void *ctx)
{
	struct reader *r = ctx;
	enum place parent = top(r), place = AT_SKIP;

	if (parent == AT_TOP)
		place = AT_ROOT;
	else if (parent == AT_EVENTS) {
		place = AT_EVENT;
		record_reset(&r->record);
	} else if (parent == AT_EVENT && r->key == KEY_ARGS)
		place = AT_ARGS;
	else if (parent == AT_DEVICES) {
		place = AT_DEVICE;
		r->device = (struct po_kineto_device){-1, -1, -1, -1, -1, ""};
	} else if (parent == AT_ROOT && r->key == KEY_DISTRIBUTED_INFO) {
		place = AT_DIST;
		r->dist = (struct po_kineto_distributed){-1, -1, ""};
	}
	push(r, place);
	return 1;
}

static int on_start_array(void *ctx)
{
	struct reader *r = ctx;
	enum place parent = top(r), place = AT_SKIP;
	enum key key = r->key;

	if (parent == AT_TOP || (parent == AT_ROOT && key == KEY_TRACE_EVENTS)) {
		place = AT_EVENTS; /* a bare array of events is Chrome's other form */
		r->stats->has_trace_events = true;
		if (r->header_only) {
			r->stopped = true;
			return 0;
		}
	} else if (parent == AT_ROOT && key == KEY_DEVICE_PROPERTIES)
		place = AT_DEVICES;
	else if (parent == AT_ARGS && (key == KEY_GRID || key == KEY_BLOCK))
		place = AT_DIMS;
	push(r, place);
	if (place == AT_DIMS) {
		r->key = key;
		r->dim = 0;
	}
	return 1;
}

/* Closes a container; a finished event, device or distributedInfo goes to its callback. */
static int on_end(void *ctx)
{
	struct reader *r = ctx;
	enum place place = top(r);
	const struct po_kineto_callbacks *cb = r->callbacks;

	r->depth--;
	r->key = KEY_NONE;
	if (place == AT_EVENT) {
		r->stats->records++;
		r->status = cb->record ? cb->record(cb->ctx, &r->record) : PO_STATUS_OK;
	} else if (place == AT_DEVICE && cb->device)
		r->status = cb->device(cb->ctx, &r->device);
	else if (place == AT_DIST && cb->distributed)
		r->status = cb->distributed(cb->ctx, &r->dist);
	return r->status == PO_STATUS_OK;
}

static const yajl_callbacks parse_callbacks = {
    .yajl_null = on_scalar,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

bool po_kineto_file_name(const char *name)
{
	size_t len = strlen(name);

	return (len > 5 && strcmp(name + len - 5, ".json") == 0) ||
	       (len > 8 && strcmp(name + len - 8, ".json.gz") == 0);
}

/* Whether text[0, len) is one or more decimal digits. */
static bool all_digits(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (text[i] < '0' || text[i] > '9')
			return false;
	return len > 0;
}

bool po_kineto_file_host(const char *path, char *host, size_t size)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *end = name + strlen(name), *dot, *underscore;

	if (end - name > 3 && strcmp(end - 3, ".gz") == 0)
		end -= 3;
	if (end - name <= 14 || strncmp(end - 14, ".pt.trace.json", 14) != 0)
		return false;
	end -= 14; /* NAME.TIMESTAMP */
	for (dot = end; dot > name && dot[-1] != '.';)
		dot--;
	if (dot == name || !all_digits(dot, (size_t)(end - dot)))
		return false;
	end = dot - 1; /* HOST_PID */
	for (underscore = end; underscore > name && underscore[-1] != '_';)
		underscore--;
	if (underscore <= name + 1 || !all_digits(underscore, (size_t)(end - underscore)) ||
	    (size_t)(underscore - 1 - name) >= size)
		return false;
	memcpy(host, name, (size_t)(underscore - 1 - name));
	host[underscore - 1 - name] = '\0';
	return true;
}

/* yajl's complaint, on one line, with the offset in the JSON text. */
static void parse_error(yajl_handle parser, const char *path, int64_t offset,
			const unsigned char *chunk, size_t chunk_len, struct po_error *err)
{
	unsigned char *text = yajl_get_error(parser, 0, chunk, chunk_len); /* owned by yajl */
	char *newline = text ? strchr((char *)text, '\n') : NULL;

	if (newline)
		*newline = '\0';
	po_error_set(err, "%s: not a Kineto JSON trace: %s at byte %lld of the JSON text", path,
		     text ? (const char *)text : "parse error", (long long)offset);
	if (text)
		yajl_free_error(parser, text);
}

/*
 * Strings longer than this are cut before yajl sees them: yajl keeps a token that spans
 * reads in one buffer and lexes it again from its start at each read, so a 100 MB name
 * would cost memory and quadratic time.
 */
#define STRING_KEPT_BYTES (64 * 1024)

/* Where the cutter is in the JSON text. */
struct cutter {
	bool in_string, escape, skipping;
	size_t string_bytes; /* of the current string, kept so far */
	int64_t strings_cut;
};

/*
 * Copies text to out (as long), leaving out the bytes of each string past
 * STRING_KEPT_BYTES (cut before a UTF-8 continuation byte never, after an escape's
 * backslash never); returns the bytes kept.
 */
static size_t cut_long_strings(struct cutter *c, const unsigned char *text, size_t len,
			       unsigned char *out)
{
	size_t kept = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char byte = text[i];

		if (!c->in_string) { /* up to the next quote at once */
			const unsigned char *quote = memchr(text + i, '"', len - i);
			size_t run = quote ? (size_t)(quote - (text + i)) : len - i;

			memcpy(out + kept, text + i, run);
			kept += run;
			i += run;
			if (!quote)
				break;
			byte = '"';
		}
		if (!c->in_string) {
			c->in_string = byte == '"';
			c->string_bytes = 0;
			out[kept++] = byte;
			continue;
		}
		if (!c->escape && byte == '"') {
			c->in_string = c->skipping = false;
			out[kept++] = byte;
			continue;
		}
		if (!c->skipping && !c->escape && c->string_bytes >= STRING_KEPT_BYTES &&
		    (byte & 0xC0) != 0x80 && byte != '\\') {
			c->skipping = true;
			c->strings_cut++;
		}
		c->escape = !c->escape && byte == '\\';
		if (c->skipping)
			continue;
		c->string_bytes++;
		out[kept++] = byte;
	}
	return kept;
}

/* Feeds the file to the parser; OK at the end of the JSON text. */
static enum po_status feed(gzFile file, yajl_handle parser, struct reader *r, const char *path,
			   struct po_error *err)
{
	unsigned char *chunk = malloc(2 * READ_CHUNK_BYTES); /* owned: the read, then the kept */
	unsigned char *kept = chunk ? chunk + READ_CHUNK_BYTES : NULL;
	struct cutter cutter = {0};
	enum po_status status = PO_STATUS_OK;
	size_t kept_len;
	int got;

	if (!chunk) {
		po_error_set(err, "Failed to read %s: out of memory", path);
		return PO_STATUS_NOMEM;
	}
	while (status == PO_STATUS_OK && (got = gzread(file, chunk, READ_CHUNK_BYTES)) > 0) {
		int64_t before = r->stats->bytes_read;

		r->stats->bytes_read += got;
		kept_len = cut_long_strings(&cutter, chunk, (size_t)got, kept);
		if (yajl_parse(parser, kept, kept_len) == yajl_status_ok)
			continue;
		if (r->stopped)
			break;
		if (r->status != PO_STATUS_OK)
			return free(chunk), r->status;
		parse_error(parser, path, before + (int64_t)yajl_get_bytes_consumed(parser), kept,
			    kept_len, err);
		status = PO_STATUS_INPUT;
	}
	/* the names among them are counted once, when their record keeps them */
	if (r->stopped) {
		free(chunk);
		return PO_STATUS_OK;
	}
	if (status == PO_STATUS_OK && got < 0) {
		int code;
		const char *why = gzerror(file, &code);

		po_error_set(err, "%s: cut or damaged after %lld bytes of JSON text: %s", path,
			     (long long)r->stats->bytes_read, why);
		status = PO_STATUS_INPUT;
	}
	if (status == PO_STATUS_OK && yajl_complete_parse(parser) != yajl_status_ok) {
		status = r->status != PO_STATUS_OK ? r->status : PO_STATUS_INPUT;
		if (status == PO_STATUS_INPUT)
			po_error_set(err,
				     "%s: cut: the JSON text ends after %lld bytes, inside "
				     "an unfinished value",
				     path, (long long)r->stats->bytes_read);
	}
	free(chunk);
	return status;
}

static enum po_status read_file(const char *path, const struct po_kineto_callbacks *callbacks,
				bool header_only, struct po_kineto_read_stats *stats,
				struct po_error *err)
{
	struct reader *r = calloc(1, sizeof(*r)); /* owned */
	yajl_handle parser;
	enum po_status status;
	gzFile file;

	memset(stats, 0, sizeof(*stats));
	if (!r) {
		po_error_set(err, "Failed to read %s: out of memory", path);
		return PO_STATUS_NOMEM;
	}
	file = gzopen(path, "rb");
	if (!file) {
		po_error_set(err, "%s: cannot be read: %s", path, strerror(errno ? errno : ENOMEM));
		free(r);
		return PO_STATUS_INPUT;
	}
	gzbuffer(file, READ_CHUNK_BYTES);
	r->callbacks = callbacks;
	r->stats = stats;
	r->header_only = header_only;
	parser = yajl_alloc(&parse_callbacks, NULL, r);
	/* a string cut above may end inside a character; the names are cut again, whole */
	if (parser)
		yajl_config(parser, yajl_dont_validate_strings, 1);
	status = parser ? feed(file, parser, r, path, err) : PO_STATUS_NOMEM;
	if (status == PO_STATUS_OK && !stats->has_trace_events) {
		po_error_set(err, "%s: not a Kineto trace: no \"traceEvents\" array", path);
		status = PO_STATUS_INPUT;
	}
	if (parser)
		yajl_free(parser);
	gzclose(file);
	free(r);
	return status;
}

enum po_status po_kineto_read(const char *path, const struct po_kineto_callbacks *callbacks,
			      struct po_kineto_read_stats *stats, struct po_error *err)
{
	return read_file(path, callbacks, false, stats, err);
}

static enum po_status rank_seen(void *ctx, const struct po_kineto_distributed *info)
{
	*(struct po_kineto_distributed *)ctx = *info;
	return PO_STATUS_OK;
}

enum po_status po_kineto_read_rank(const char *path, struct po_kineto_distributed *info,
				   struct po_error *err)
{
	const struct po_kineto_callbacks callbacks = {NULL, NULL, rank_seen, info};
	struct po_kineto_read_stats stats;

	*info = (struct po_kineto_distributed){-1, -1, ""};
	return read_file(path, &callbacks, true, &stats, err);
}
