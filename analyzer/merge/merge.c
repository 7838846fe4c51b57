/*
 * merge.c: partial summaries (render/json/partial_json.c writes them) read back and merged
 * into one job's ranks (merge.h). Every member is checked as it is read; a partial that
 * does not hold what its schema says is refused with the file and the member named.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/summary_keys.h"
#include "compare/json_read.h"
#include "detect/detect.h"
#include "merge.h"
#include "common/text.h"

/* What the partials hold together, before the merge. */
struct merged {
	struct po_rank_part *parts;
	size_t part_count, part_capacity;
	const char **part_file; /* per part: the partial it came from (weak: the caller's) */
	size_t part_file_capacity;
	struct po_rank_record *records;
	size_t record_count, record_capacity;
	struct po_rank_wall *walls;
	size_t wall_count, wall_capacity;
	int64_t unpaired_ends;
	int64_t stride;
	int32_t recordings;	/* clocks so far: the next partial's recordings start here */
	int64_t world_size;	/* the first known world size of a rank; 0 before */
	const char *world_file; /* weak: the partial that gave it */
	struct po_arena *arena; /* weak: the analysis's, for host names */
};

/* The file of a PARTIAL argument: itself, or DIR/partial.json. */
static enum po_status partial_path(const char *given, char *path, size_t size, struct po_error *err)
{
	struct stat st;

	if (stat(given, &st) != 0) {
		po_error_set(err, "%s: %s", given, strerror(errno));
		return PO_STATUS_INPUT;
	}
	if ((size_t)snprintf(path, size, S_ISDIR(st.st_mode) ? "%s/partial.json" : "%s", given) >=
	    size) {
		po_error_set(err, "%s: the path is too long", given);
		return PO_STATUS_INPUT;
	}
	return PO_STATUS_OK;
}

static enum po_status read_text(const char *path, char **text, size_t *len, struct po_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t got = 0;

	*text = NULL;
	if (fd < 0 || fstat(fd, &st) != 0) {
		po_error_set(err, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return PO_STATUS_INPUT;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > PO_PARTIAL_MAX_BYTES) {
		po_error_set(err, "%s: %s", path,
			     S_ISREG(st.st_mode) ? "larger than a partial summary may be (256 MiB)"
						 : "not a regular file");
		close(fd);
		return PO_STATUS_INPUT;
	}
	*text = malloc((size_t)st.st_size + 1);
	while (*text && got < (size_t)st.st_size) {
		ssize_t n = read(fd, *text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!*text) {
		po_error_set(err, "%s: out of memory", path);
		return PO_STATUS_NOMEM;
	}
	if (got != (size_t)st.st_size) {
		po_error_set(err, "%s: it changed while it was read", path);
		free(*text);
		*text = NULL;
		return PO_STATUS_INPUT;
	}
	*len = got;
	return PO_STATUS_OK;
}

/*
 * The limits of a partial's numbers (docs/robustness.md, "Partial summaries a merge
 * refuses"): times from origin_ns and durations below 2^53 ns (exact in a JSON number, 104
 * days), origin_ns below 2^62 ns (146 years), so that no sum or clock offset of the merge
 * leaves int64_t; pids below 2^22 (PO_RECORDING_PID_SHIFT).
 */
#define TIME_LIMIT 9007199254740992.0
#define ORIGIN_LIMIT ((int64_t)1 << 62)
#define PID_LIMIT 4194304.0
#define STRIDE_LIMIT 1073741824.0

/* One partial being read: where its messages point, and its ranks for its collectives. */
struct reader {
	struct merged *m;      /* weak */
	const char *path;      /* weak: the caller's */
	struct po_error *err;  /* weak */
	int64_t stride;	       /* this partial's sample_stride */
	size_t first_part;     /* its first rank in m->parts */
	int32_t *rank_numbers; /* owned: its ranks, sorted, for its collectives */
};

static enum po_status bad(const struct reader *r, const char *fmt, ...) PO_PRINTF(2, 3);

static enum po_status bad(const struct reader *r, const char *fmt, ...)
{
	char what[512];
	va_list args;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	po_error_set(r->err, "%s: not a valid partial summary: %s", r->path, what);
	return PO_STATUS_INPUT;
}

/* A whole number within [low, high], or false. */
static bool whole(const struct po_json_value *value, double low, double high, int64_t *out)
{
	double number;

	if (!value || value->type != PO_JSON_NUMBER)
		return false;
	number = value->number;
	if (number != floor(number) || number < low || number > high)
		return false;
	*out = (int64_t)number;
	return true;
}

/* where (a member's path, "ranks[2].pid") as a whole number within [low, high]. */
static enum po_status need_whole(const struct reader *r, const struct po_json_value *value,
				 const char *where, double low, double high, int64_t *out)
{
	if (whole(value, low, high, out))
		return PO_STATUS_OK;
	if (!value)
		return bad(r, "%s is missing", where);
	if (value->type != PO_JSON_NUMBER)
		return bad(r, "%s is not a number", where);
	return bad(r, "%s is %.17g, not a whole number from %.0f to %.0f", where, value->number,
		   low, high);
}

static int compare_key(const void *left, const void *right)
{
	return strcmp(*(const char *const *)left, *(const char *const *)right);
}

/* Refuses an object (where) that names a member twice: which one would count is unsaid. */
static enum po_status need_unique_keys(const struct reader *r, const struct po_json_value *object,
				       const char *where)
{
	const char **keys;
	enum po_status status = PO_STATUS_OK;

	if (!object || object->type != PO_JSON_OBJECT || object->count < 2)
		return PO_STATUS_OK;
	keys = malloc(object->count * sizeof(*keys));
	if (!keys)
		return PO_STATUS_NOMEM;
	memcpy(keys, object->keys, object->count * sizeof(*keys));
	qsort(keys, object->count, sizeof(*keys), compare_key);
	for (size_t i = 1; i < object->count && status == PO_STATUS_OK; i++) {
		if (strcmp(keys[i - 1], keys[i]) == 0)
			status = bad(r, "%s has the member \"%s\" twice", where, keys[i]);
	}
	free(keys);
	return status;
}

/*
 * A rank's category means: a time per category name, null only without steady steps; a
 * category absent (one its writer did not know) is 0.
 */
static enum po_status read_categories(const struct reader *r, const struct po_json_value *object,
				      size_t index, struct po_rank_summary *summary)
{
	char where[96];
	enum po_status status;

	snprintf(where, sizeof(where), "ranks[%zu].category_mean_ns", index);
	if (!object || object->type != PO_JSON_OBJECT)
		return bad(r, "%s is not an object", where);
	status = need_unique_keys(r, object, where);
	for (int c = 0; c < PO_CATEGORY_COUNT && status == PO_STATUS_OK; c++) {
		const char *name = po_category_name((enum po_category)c);
		const struct po_json_value *value = po_json_get(object, name);

		summary->category_mean_ns[c] = 0;
		if (!value || (value->type == PO_JSON_NULL && summary->steady_steps == 0))
			continue; /* a category the writer did not know, or no steady step */
		if (value->type != PO_JSON_NUMBER || !(value->number >= 0) ||
		    value->number > TIME_LIMIT)
			status = bad(r, "%s.%s is not a time from 0 to 2^53 ns", where, name);
		else
			summary->category_mean_ns[c] = value->number;
	}
	return status;
}

static enum po_status read_walls(const struct reader *r, const struct po_json_value *walls,
				 size_t index, const struct po_rank_summary *s)
{
	struct merged *m = r->m;
	char where[96];

	snprintf(where, sizeof(where), "ranks[%zu].walls", index);
	if (!walls || walls->type != PO_JSON_ARRAY)
		return bad(r, "%s is not an array", where);
	if ((int64_t)walls->count > s->steady_steps)
		return bad(r, "%s has %zu items, more than its %lld steady steps", where,
			   walls->count, (long long)s->steady_steps);
	if (po_array_reserve((void **)&m->walls, &m->wall_capacity, m->wall_count + walls->count,
			     sizeof(*m->walls)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < walls->count; i++) {
		const struct po_json_value *pair = walls->items[i];
		int64_t step, wall;

		if (pair->type != PO_JSON_ARRAY || pair->count != 2 ||
		    !whole(pair->items[0], 0, TIME_LIMIT, &step) || step % r->stride != 0 ||
		    !whole(pair->items[1], 0, TIME_LIMIT, &wall))
			return bad(r,
				   "%s[%zu] is not [step, wall_ns]: a step number that is a "
				   "multiple of sample_stride and a time, each from 0 to 2^53",
				   where, i);
		m->walls[m->wall_count++] =
		    (struct po_rank_wall){.rank = s->rank, .step = step, .wall_ns = wall};
	}
	return PO_STATUS_OK;
}

/* Whether another partial (or this one) already gave the rank. */
static const char *rank_owner(const struct merged *m, int32_t rank)
{
	for (size_t i = 0; i < m->part_count; i++) {
		if (m->parts[i].summary.rank == rank)
			return m->part_file[i];
	}
	return NULL;
}

/* The whole-number members of a rank, each within its own range. */
struct rank_numbers {
	int64_t rank, world, local, pid, recording, steps, steady, p50;
};

static enum po_status read_rank_numbers(const struct reader *r, const struct po_json_value *rank,
					size_t index, size_t rank_count, struct rank_numbers *n)
{
	const struct {
		const char *name;
		double low, high;
		int64_t *out;
	} members[] = {
	    {"rank", 0, INT32_MAX - 1, &n->rank},
	    {"world_size", -1, INT32_MAX, &n->world},
	    {"local_rank", -1, INT32_MAX - 1, &n->local},
	    {"pid", 0, PID_LIMIT - 1, &n->pid},
	    {"recording", 0, (double)rank_count - 1, &n->recording},
	    {"steps", 0, TIME_LIMIT, &n->steps},
	    {"steady_steps", 0, TIME_LIMIT, &n->steady},
	    {"p50_step_ns", -1, TIME_LIMIT, &n->p50},
	};
	enum po_status status = PO_STATUS_OK;
	char where[96];

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]) && status == PO_STATUS_OK;
	     i++) {
		snprintf(where, sizeof(where), "ranks[%zu].%s", index, members[i].name);
		status = need_whole(r, po_json_get(rank, members[i].name), where, members[i].low,
				    members[i].high, members[i].out);
	}
	return status;
}

/* The members of a rank against each other, and its world size against the other ranks'. */
static enum po_status check_rank_numbers(const struct reader *r, const struct rank_numbers *n,
					 size_t index)
{
	struct merged *m = r->m;
	const char *owner = rank_owner(m, (int32_t)n->rank);

	if (owner) {
		po_error_set(r->err, "%s: rank %lld is also in %s: each rank may be merged once",
			     r->path, (long long)n->rank, owner);
		return PO_STATUS_INPUT;
	}
	if (n->world == 0)
		return bad(r, "ranks[%zu].world_size is 0 (a job has a rank at least; -1: unknown)",
			   index);
	if (n->world > 0 && n->rank >= n->world)
		return bad(r, "ranks[%zu].rank is %lld, not below its world_size %lld", index,
			   (long long)n->rank, (long long)n->world);
	if (n->world > 0 && n->local >= n->world)
		return bad(r, "ranks[%zu].local_rank is %lld, not below its world_size %lld", index,
			   (long long)n->local, (long long)n->world);
	if (n->steady > n->steps)
		return bad(r, "ranks[%zu].steady_steps is %lld, more than its steps %lld", index,
			   (long long)n->steady, (long long)n->steps);
	if (n->world > 0 && m->world_size > 0 && n->world != m->world_size)
		return bad(r, "ranks[%zu].world_size is %lld, but %s gives %lld", index,
			   (long long)n->world, m->world_file, (long long)m->world_size);
	if (n->world > 0 && m->world_size <= 0) {
		m->world_size = n->world;
		m->world_file = r->path;
	}
	return PO_STATUS_OK;
}

/* mean_step_ns: a time with steady steps, null without. */
static enum po_status read_mean(const struct reader *r, const struct po_json_value *value,
				size_t index, struct po_rank_summary *s)
{
	s->mean_step_ns = NAN;
	if ((!value || value->type == PO_JSON_NULL) && s->steady_steps == 0)
		return PO_STATUS_OK;
	if (!value || value->type != PO_JSON_NUMBER || !(value->number >= 0) ||
	    value->number > TIME_LIMIT || s->steady_steps == 0)
		return bad(r,
			   "ranks[%zu].mean_step_ns is not a time from 0 to 2^53 ns with steady "
			   "steps, or null without",
			   index);
	s->mean_step_ns = value->number;
	return PO_STATUS_OK;
}

/* host (a string or null) and local_rank_inferred (a boolean). */
static enum po_status read_rank_words(const struct reader *r, const struct po_json_value *rank,
				      size_t index, struct po_rank_summary *s)
{
	const struct po_json_value *host = po_json_get(rank, "host");
	const struct po_json_value *inferred = po_json_get(rank, "local_rank_inferred");

	if (host && host->type != PO_JSON_STRING && host->type != PO_JSON_NULL)
		return bad(r, "ranks[%zu].host is not a string or null", index);
	if (inferred && inferred->type != PO_JSON_BOOL)
		return bad(r, "ranks[%zu].local_rank_inferred is not true or false", index);
	s->local_rank_inferred = inferred && inferred->boolean;
	if (host && host->type == PO_JSON_STRING) {
		s->host = po_text_clean_strdup(r->m->arena, host->string); /* printed, drawn */
		if (!s->host)
			return PO_STATUS_NOMEM;
	}
	return PO_STATUS_OK;
}

static enum po_status read_rank(const struct reader *r, const struct po_json_value *rank,
				size_t index, size_t rank_count, int32_t *recordings)
{
	struct merged *m = r->m;
	struct po_rank_summary s = {.mean_step_ns = NAN, .p50_step_ns = -1};
	struct rank_numbers n;
	char where[32];
	enum po_status status;

	snprintf(where, sizeof(where), "ranks[%zu]", index);
	if (rank->type != PO_JSON_OBJECT)
		return bad(r, "%s is not an object", where);
	status = need_unique_keys(r, rank, where);
	if (status == PO_STATUS_OK)
		status = read_rank_numbers(r, rank, index, rank_count, &n);
	if (status == PO_STATUS_OK)
		status = check_rank_numbers(r, &n, index);
	if (status != PO_STATUS_OK)
		return status;
	s.rank = (int32_t)n.rank;
	s.local_rank = (int32_t)n.local;
	s.world_size = (int32_t)n.world;
	s.pid = (int32_t)n.pid;
	s.recording = m->recordings + (int32_t)n.recording;
	if (n.recording + 1 > *recordings)
		*recordings = (int32_t)n.recording + 1;
	s.steps = n.steps;
	s.steady_steps = n.steady;
	s.p50_step_ns = n.p50;
	status = read_mean(r, po_json_get(rank, "mean_step_ns"), index, &s);
	if (status == PO_STATUS_OK)
		status = read_rank_words(r, rank, index, &s);
	if (status == PO_STATUS_OK)
		status = read_categories(r, po_json_get(rank, "category_mean_ns"), index, &s);
	if (status != PO_STATUS_OK)
		return status;
	if (po_array_reserve((void **)&m->parts, &m->part_capacity, m->part_count + 1,
			     sizeof(*m->parts)) != PO_STATUS_OK ||
	    po_array_reserve((void **)&m->part_file, &m->part_file_capacity, m->part_count + 1,
			     sizeof(*m->part_file)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	m->parts[m->part_count] = (struct po_rank_part){.summary = s};
	m->part_file[m->part_count++] = r->path;
	return read_walls(r, po_json_get(rank, "walls"), index, &s);
}

static int compare_rank_number(const void *left, const void *right)
{
	int32_t a = *(const int32_t *)left, b = *(const int32_t *)right;

	return (a > b) - (a < b);
}

/* This partial's rank numbers, sorted: its collectives may name only them. */
static enum po_status sort_own_ranks(struct reader *r)
{
	size_t count = r->m->part_count - r->first_part;

	r->rank_numbers = malloc((count ? count : 1) * sizeof(*r->rank_numbers));
	if (!r->rank_numbers)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < count; i++)
		r->rank_numbers[i] = r->m->parts[r->first_part + i].summary.rank;
	qsort(r->rank_numbers, count, sizeof(*r->rank_numbers), compare_rank_number);
	return PO_STATUS_OK;
}

/*
 * A collectives item: [rank, group, seq, step, begin, end], rank one of the partial's,
 * step a sampled step number, end -1 (never ended) or not before begin.
 */
static bool read_record(const struct reader *r, const struct po_json_value *item, int64_t v[6])
{
	size_t own = r->m->part_count - r->first_part;
	int32_t rank;

	if (item->type != PO_JSON_ARRAY || item->count != 6 ||
	    !whole(item->items[0], 0, INT32_MAX, &v[0]) ||
	    !whole(item->items[1], INT32_MIN, INT32_MAX, &v[1]) ||
	    !whole(item->items[2], 0, TIME_LIMIT, &v[2]) ||
	    !whole(item->items[3], 0, TIME_LIMIT, &v[3]) ||
	    !whole(item->items[4], 0, TIME_LIMIT, &v[4]) ||
	    !whole(item->items[5], -1, TIME_LIMIT, &v[5]))
		return false;
	rank = (int32_t)v[0];
	return v[3] % r->stride == 0 && (v[5] == -1 || v[5] >= v[4]) &&
	       bsearch(&rank, r->rank_numbers, own, sizeof(rank), compare_rank_number);
}

static enum po_status read_collectives(const struct reader *r, const struct po_json_value *list,
				       int64_t origin)
{
	struct merged *m = r->m;

	if (!list || list->type != PO_JSON_ARRAY)
		return bad(r, "collectives is not an array");
	if (po_array_reserve((void **)&m->records, &m->record_capacity,
			     m->record_count + list->count, sizeof(*m->records)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < list->count; i++) {
		int64_t v[6];

		if (!read_record(r, list->items[i], v))
			return bad(
			    r,
			    "collectives[%zu] is not [rank, group, seq, step, begin, end]: "
			    "a rank of this partial, a 32-bit group, a step number that is a "
			    "multiple of sample_stride, times from 0 to 2^53 ns, end -1 or "
			    "not before begin",
			    i);
		m->records[m->record_count++] =
		    (struct po_rank_record){.rank = (int32_t)v[0],
					    .group = (int32_t)v[1],
					    .seq = v[2],
					    .step = v[3],
					    .begin_ns = origin + v[4],
					    .end_ns = v[5] < 0 ? -1 : origin + v[5]};
	}
	return PO_STATUS_OK;
}

/* origin_ns: the decimal digits of a time from 0 to 2^62 ns, as a string. */
static enum po_status read_origin(const struct reader *r, const struct po_json_value *value,
				  int64_t *origin)
{
	const char *text = po_json_string(value, "");
	size_t len = strlen(text);

	if (!len || len > 19 || strspn(text, "0123456789") != len)
		return bad(r, "origin_ns is not a string of decimal digits");
	errno = 0; /* a value left by an earlier call must not refuse a good origin */
	*origin = strtoll(text, NULL, 10); /* 19 digits or fewer: no overflow past ERANGE */
	if (errno == ERANGE || *origin < 0 || *origin > ORIGIN_LIMIT)
		return bad(r, "origin_ns is %s, not a time from 0 to 2^62 ns", text);
	return PO_STATUS_OK;
}

/* The members of the partial's root, but its ranks and collectives. */
static enum po_status read_root(struct reader *r, const struct po_json_value *root, int64_t *origin,
				int64_t *unpaired)
{
	const struct po_json_value *ranks = po_json_get(root, "ranks");
	enum po_status status = need_unique_keys(r, root, "the root object");

	if (status == PO_STATUS_OK)
		status = need_whole(r, po_json_get(root, "sample_stride"), "sample_stride", 1,
				    STRIDE_LIMIT, &r->stride);
	if (status == PO_STATUS_OK && (r->stride & (r->stride - 1)) != 0)
		status = bad(r, "sample_stride is %lld, not a power of two", (long long)r->stride);
	if (status == PO_STATUS_OK)
		status = need_whole(r, po_json_get(root, "unpaired_ends"), "unpaired_ends", 0,
				    TIME_LIMIT, unpaired);
	if (status == PO_STATUS_OK) {
		errno = 0;
		status = read_origin(r, po_json_get(root, "origin_ns"), origin);
	}
	if (status == PO_STATUS_OK && (!ranks || ranks->type != PO_JSON_ARRAY || !ranks->count))
		status = bad(r, "ranks is not an array of one rank at least");
	return status;
}

/* The partial's tree, read into m. */
static enum po_status read_tree(struct reader *r, const struct po_json_value *root)
{
	struct merged *m = r->m;
	const struct po_json_value *ranks = po_json_get(root, "ranks");
	int64_t unpaired = 0, origin = 0;
	int32_t recordings = 1;
	enum po_status status = read_root(r, root, &origin, &unpaired);

	r->first_part = m->part_count;
	for (size_t i = 0; status == PO_STATUS_OK && i < ranks->count; i++)
		status = read_rank(r, ranks->items[i], i, ranks->count, &recordings);
	if (status == PO_STATUS_OK)
		status = sort_own_ranks(r);
	if (status == PO_STATUS_OK)
		status = read_collectives(r, po_json_get(root, "collectives"), origin);
	if (status != PO_STATUS_OK)
		return status;
	m->stride = r->stride > m->stride ? r->stride : m->stride;
	m->unpaired_ends =
	    unpaired > INT64_MAX - m->unpaired_ends ? INT64_MAX : m->unpaired_ends + unpaired;
	m->recordings += recordings;
	return PO_STATUS_OK;
}

/* One partial, read into m; its parse tree is freed before the next. */
static enum po_status read_partial(struct merged *m, const char *path, struct po_error *err)
{
	struct po_arena *arena = po_arena_create();
	struct po_json_value *root = NULL;
	struct reader r = {.m = m, .path = path, .err = err, .stride = 1};
	char *text = NULL;
	size_t len = 0;
	enum po_status status = arena ? read_text(path, &text, &len, err) : PO_STATUS_NOMEM;

	if (status == PO_STATUS_OK) {
		status = po_json_parse(text, len, arena, &root, err);
		if (status != PO_STATUS_OK)
			po_error_prepend(err, "%s: not a valid partial summary", path);
	}
	if (status != PO_STATUS_OK)
		goto done;
	if (strcmp(po_json_string(po_json_get(root, "schema"), ""), PO_PARTIAL_SCHEMA) != 0) {
		po_error_set(err,
			     "%s: not a partial summary (schema \"%s\", want \"%s\"; "
			     "profopt-analyze --partial writes them)",
			     path, po_json_string(po_json_get(root, "schema"), ""),
			     PO_PARTIAL_SCHEMA);
		status = PO_STATUS_INPUT;
		goto done;
	}
	status = read_tree(&r, root);
done:
	free(r.rank_numbers);
	free(text);
	po_arena_destroy(arena);
	return status;
}

/* Keeps the records and walls of the steps sampled at the largest stride. */
static void resample(struct merged *m)
{
	size_t kept = 0;

	for (size_t i = 0; i < m->record_count; i++) {
		if (m->records[i].step >= 0 && m->records[i].step % m->stride == 0)
			m->records[kept++] = m->records[i];
	}
	m->record_count = kept;
	kept = 0;
	for (size_t i = 0; i < m->wall_count; i++) {
		if (m->walls[i].step % m->stride == 0)
			m->walls[kept++] = m->walls[i];
	}
	m->wall_count = kept;
}

enum po_status po_merge_partials(const char *const *paths, size_t count,
				 const struct po_rules *rules, struct po_analysis **out,
				 struct po_error *err)
{
	struct po_analysis *analysis = calloc(1, sizeof(*analysis));
	struct merged m = {.stride = 1};
	char **files = calloc(count ? count : 1, sizeof(char *));
	enum po_status status = PO_STATUS_OK;

	*out = NULL;
	if (!analysis || !files || !(analysis->arena = po_arena_create()))
		status = PO_STATUS_NOMEM;
	m.arena = analysis ? analysis->arena : NULL;
	for (size_t i = 0; status == PO_STATUS_OK && i < count; i++) {
		char path[4096];

		status = partial_path(paths[i], path, sizeof(path), err);
		if (status == PO_STATUS_OK && !(files[i] = po_arena_strdup(m.arena, path)))
			status = PO_STATUS_NOMEM;
		if (status == PO_STATUS_OK)
			status = read_partial(&m, files[i], err);
	}
	if (status == PO_STATUS_OK) {
		resample(&m);
		status = po_distributed_merge(m.parts, m.part_count, m.records, m.record_count,
					      m.walls, m.wall_count, m.unpaired_ends, m.stride,
					      analysis->arena, &analysis->distributed);
	}
	if (status == PO_STATUS_OK)
		status = po_distributed_warn_missing(analysis);
	if (status == PO_STATUS_OK)
		status = po_detect_distributed(analysis, rules, err);
	if (status == PO_STATUS_NOMEM && !err->message[0])
		po_error_set(err, "Failed to merge the partial summaries: out of memory");
	free(m.parts);
	free(m.part_file);
	free(m.records);
	free(m.walls);
	free(files);
	if (status != PO_STATUS_OK) {
		po_analysis_destroy(analysis);
		return status;
	}
	*out = analysis;
	return PO_STATUS_OK;
}
