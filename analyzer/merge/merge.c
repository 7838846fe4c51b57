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

/* A whole number member within [low, high], or false. */
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

#define TIME_LIMIT 9007199254740992.0 /* 2^53: exact in a JSON number */

static enum po_status bad(const char *path, const char *what, struct po_error *err)
{
	po_error_set(err, "%s: not a valid partial summary: %s", path, what);
	return PO_STATUS_INPUT;
}

/* A rank's category means: a number (or null) per category name; NaN when absent. */
static void read_categories(const struct po_json_value *object, struct po_rank_summary *summary)
{
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		const struct po_json_value *value =
		    po_json_get(object, po_category_name((enum po_category)c));

		summary->category_mean_ns[c] =
		    value && value->type == PO_JSON_NUMBER && value->number >= 0 ? value->number
										 : 0;
	}
}

static enum po_status read_walls(struct merged *m, const struct po_json_value *walls, int32_t rank,
				 const char *path, struct po_error *err)
{
	if (!walls || walls->type != PO_JSON_ARRAY)
		return bad(path, "a rank has no walls array", err);
	if (po_array_reserve((void **)&m->walls, &m->wall_capacity, m->wall_count + walls->count,
			     sizeof(*m->walls)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < walls->count; i++) {
		const struct po_json_value *pair = walls->items[i];
		int64_t step, wall;

		if (pair->type != PO_JSON_ARRAY || pair->count != 2 ||
		    !whole(pair->items[0], 0, TIME_LIMIT, &step) ||
		    !whole(pair->items[1], 0, TIME_LIMIT, &wall))
			return bad(path, "a walls item is not [step, wall_ns]", err);
		m->walls[m->wall_count++] =
		    (struct po_rank_wall){.rank = rank, .step = step, .wall_ns = wall};
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

static enum po_status read_rank(struct merged *m, const struct po_json_value *rank,
				const char *path, int32_t *recordings, struct po_error *err)
{
	struct po_rank_summary s = {.mean_step_ns = NAN, .p50_step_ns = -1};
	const struct po_json_value *host = po_json_get(rank, "host");
	const struct po_json_value *inferred = po_json_get(rank, "local_rank_inferred");
	int64_t number, local, world, pid, recording, steps, steady, p50;
	const char *owner;

	if (rank->type != PO_JSON_OBJECT ||
	    !whole(po_json_get(rank, "rank"), 0, INT32_MAX, &number) ||
	    !whole(po_json_get(rank, "local_rank"), -1, INT32_MAX, &local) ||
	    !whole(po_json_get(rank, "world_size"), -1, INT32_MAX, &world) ||
	    !whole(po_json_get(rank, "pid"), 0, INT32_MAX, &pid) ||
	    !whole(po_json_get(rank, "recording"), 0, 1 << 20, &recording) ||
	    !whole(po_json_get(rank, "steps"), 0, TIME_LIMIT, &steps) ||
	    !whole(po_json_get(rank, "steady_steps"), 0, TIME_LIMIT, &steady) ||
	    !whole(po_json_get(rank, "p50_step_ns"), -1, TIME_LIMIT, &p50))
		return bad(path,
			   "a rank lacks rank, local_rank, world_size, pid, recording, steps, "
			   "steady_steps or p50_step_ns as whole numbers in range",
			   err);
	owner = rank_owner(m, (int32_t)number);
	if (owner) {
		po_error_set(err,
			     "%s: rank %" PRId64 " is also in %s: each rank may be merged once",
			     path, number, owner);
		return PO_STATUS_INPUT;
	}
	s.rank = (int32_t)number;
	s.local_rank = (int32_t)local;
	s.local_rank_inferred = inferred && inferred->type == PO_JSON_BOOL && inferred->boolean;
	s.world_size = (int32_t)world;
	s.pid = (int32_t)pid;
	s.recording = m->recordings + (int32_t)recording;
	if (recording + 1 > *recordings)
		*recordings = (int32_t)recording + 1;
	s.steps = steps;
	s.steady_steps = steady;
	s.p50_step_ns = p50;
	s.mean_step_ns = po_json_number(po_json_get(rank, "mean_step_ns"), NAN);
	if (host && host->type == PO_JSON_STRING) {
		s.host = po_text_clean_strdup(m->arena, host->string); /* printed, drawn */
		if (!s.host)
			return PO_STATUS_NOMEM;
	}
	read_categories(po_json_get(rank, "category_mean_ns"), &s);
	if (po_array_reserve((void **)&m->parts, &m->part_capacity, m->part_count + 1,
			     sizeof(*m->parts)) != PO_STATUS_OK ||
	    po_array_reserve((void **)&m->part_file, &m->part_file_capacity, m->part_count + 1,
			     sizeof(*m->part_file)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	m->parts[m->part_count] = (struct po_rank_part){.summary = s};
	m->part_file[m->part_count++] = path;
	return read_walls(m, po_json_get(rank, "walls"), s.rank, path, err);
}

static enum po_status read_collectives(struct merged *m, const struct po_json_value *list,
				       int64_t origin, const char *path, struct po_error *err)
{
	if (!list || list->type != PO_JSON_ARRAY)
		return bad(path, "no collectives array", err);
	if (po_array_reserve((void **)&m->records, &m->record_capacity,
			     m->record_count + list->count, sizeof(*m->records)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < list->count; i++) {
		const struct po_json_value *item = list->items[i];
		int64_t v[6];
		bool ok = item->type == PO_JSON_ARRAY && item->count == 6;

		ok = ok && whole(item->items[0], 0, INT32_MAX, &v[0]) &&
		     whole(item->items[1], INT32_MIN, INT32_MAX, &v[1]) &&
		     whole(item->items[2], -TIME_LIMIT, TIME_LIMIT, &v[2]) &&
		     whole(item->items[3], -1, TIME_LIMIT, &v[3]) &&
		     whole(item->items[4], 0, TIME_LIMIT, &v[4]) &&
		     whole(item->items[5], -1, TIME_LIMIT, &v[5]);
		if (!ok)
			return bad(path,
				   "a collectives item is not [rank, group, seq, step, begin, end]",
				   err);
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

/* One partial, read into m; its parse tree is freed before the next. */
static enum po_status read_partial(struct merged *m, const char *path, struct po_error *err)
{
	struct po_arena *arena = po_arena_create();
	struct po_json_value *root = NULL;
	const struct po_json_value *ranks;
	char *text = NULL, *end;
	const char *origin_text;
	int64_t stride, unpaired, origin;
	int32_t recordings = 1;
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
	ranks = po_json_get(root, "ranks");
	origin_text = po_json_string(po_json_get(root, "origin_ns"), "");
	errno = 0;
	origin = strtoll(origin_text, &end, 10);
	if (!whole(po_json_get(root, "sample_stride"), 1, 1 << 30, &stride) ||
	    (stride & (stride - 1)) != 0 ||
	    !whole(po_json_get(root, "unpaired_ends"), 0, TIME_LIMIT, &unpaired) || !*origin_text ||
	    *end || errno || origin < 0 || !ranks || ranks->type != PO_JSON_ARRAY ||
	    !ranks->count) {
		status = bad(path,
			     "sample_stride, unpaired_ends, origin_ns or ranks is missing or "
			     "out of range",
			     err);
		goto done;
	}
	for (size_t i = 0; status == PO_STATUS_OK && i < ranks->count; i++)
		status = read_rank(m, ranks->items[i], path, &recordings, err);
	if (status == PO_STATUS_OK)
		status = read_collectives(m, po_json_get(root, "collectives"), origin, path, err);
	m->stride = stride > m->stride ? stride : m->stride;
	m->unpaired_ends += unpaired;
	m->recordings += recordings;
done:
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
