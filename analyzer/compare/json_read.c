/*
 * json_read.c: a recursive-descent JSON parser building a tree in an arena (json_read.h),
 * which checks every number as it reads it: finite everywhere, and within the range its
 * meaning allows for the members of summary.json that a comparison reads.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_read.h"

#define MAX_DEPTH 64

/* What a number means, and so which values it may take. X(name, words, lowest, highest, whole) */
#define PO_JSON_KINDS(X)                                                                           \
	X(TIME_MS, "a time in ms, 0 to 1e12", 0.0, 1e12, false)                                    \
	X(COUNT, "a count, 0 to 2^53", 0.0, 9007199254740992.0, true)                              \
	X(BYTES, "a size in bytes, 0 to 2^63", 0.0, 9223372036854775807.0, true)                   \
	X(SHARE_PCT, "a share in percent, 0 to 100", 0.0, 100.0, false)                            \
	X(FRACTION, "a fraction, 0 to 1", 0.0, 1.0, false)                                         \
	X(RATE_PER_S, "a rate per second, 0 to 1e12", 0.0, 1e12, false)

enum number_kind {
#define PO_X(name, words, lowest, highest, whole) KIND_##name,
	PO_JSON_KINDS(PO_X)
#undef PO_X
};

struct kind_range {
	const char *words;
	double lowest;
	double highest;
	bool whole; /* integers only */
};

static const struct kind_range kinds[] = {
#define PO_X(name, words, lowest, highest, whole) {words, lowest, highest, whole},
    PO_JSON_KINDS(PO_X)
#undef PO_X
};

/*
 * The numbers of summary.json (docs/summary-schema.md) that a comparison reads, and their
 * neighbours whose meaning bounds them, by path: members from the root separated by '.', "[]" for
 * any item of an array, "*" for any member of an object. Other numbers need only be finite.
 */
#define PO_JSON_RULES(X)                                                                           \
	X("steps.count", COUNT)                                                                    \
	X("steps.clean_count", COUNT)                                                              \
	X("steps.mean_ms", TIME_MS)                                                                \
	X("steps.min_ms", TIME_MS)                                                                 \
	X("steps.max_ms", TIME_MS)                                                                 \
	X("steps.p50_ms", TIME_MS)                                                                 \
	X("steps.p90_ms", TIME_MS)                                                                 \
	X("steps.p95_ms", TIME_MS)                                                                 \
	X("steps.p99_ms", TIME_MS)                                                                 \
	X("steps.steps_per_s", RATE_PER_S)                                                         \
	X("steps.samples_per_s", RATE_PER_S)                                                       \
	X("breakdown_ms.*", TIME_MS)                                                               \
	X("step_series[].begin_ms", TIME_MS)                                                       \
	X("step_series[].wall_ms", TIME_MS)                                                        \
	X("step_series[].categories_ms.*", TIME_MS)                                                \
	X("step_series[].load_ms", TIME_MS)                                                        \
	X("step_series[].preprocess_ms", TIME_MS)                                                  \
	X("step_series[].collate_ms", TIME_MS)                                                     \
	X("step_series[].gpu_busy_ms", TIME_MS)                                                    \
	X("step_series[].host_live_bytes", BYTES)                                                  \
	X("step_series[].gpu_live_bytes", BYTES)                                                   \
	X("step_series[].rss_bytes", BYTES)                                                        \
	X("workers[].busy_ms", TIME_MS)                                                            \
	X("workers[].lifetime_ms", TIME_MS)                                                        \
	X("workers[].busy_pct", SHARE_PCT)                                                         \
	X("workers[].batches", COUNT)                                                              \
	X("gpu[].window_busy_pct", SHARE_PCT)                                                      \
	X("steady.count", COUNT)                                                                   \
	X("steady.gpu_busy_pct", SHARE_PCT)                                                        \
	X("steady.input_wait_pct", SHARE_PCT)                                                      \
	X("steady.workers_busy_pct", SHARE_PCT)                                                    \
	X("findings[].confidence", FRACTION)                                                       \
	X("trace.lossy_steps", COUNT)

static const struct {
	const char *path;
	enum number_kind kind;
} rules[] = {
#define PO_X(path, kind) {path, KIND_##kind},
    PO_JSON_RULES(PO_X)
#undef PO_X
};

#define RULE_COUNT (sizeof(rules) / sizeof(rules[0]))
_Static_assert(RULE_COUNT <= 64, "a rule set is a 64-bit mask");
#define ALL_RULES (RULE_COUNT == 64 ? ~(uint64_t)0 : ((uint64_t)1 << RULE_COUNT) - 1)

#define RULE_MAX_PARTS 4

/* A rule's path split into components: "[]" for an array item, "*" for any member. */
struct rule_parts {
	const char *part[RULE_MAX_PARTS]; /* weak: the rules table */
	size_t len[RULE_MAX_PARTS];
	int count;
};

/* Where the parser is: one entry per open container, naming the member or item inside it. */
struct path_level {
	const char *key; /* weak: arena; NULL inside an array */
	size_t index;	 /* the item's index inside an array */
};

/*
 * The parser reads text[0 .. len); with a file (fd >= 0) text is a window of it that
 * more() refills: bytes before pos (before pin while a string is read) are dropped, and
 * base counts them, so that memory holds what is being read, not the file.
 */
struct parser {
	const char *text; /* weak: the caller's, or window when reading a file */
	size_t len;
	size_t pos;
	int fd;		    /* -1: text is the whole input */
	bool at_end;	    /* the file has no more bytes */
	char *window;	    /* owned: the file's bytes being read */
	size_t window_size; /* bytes allocated */
	size_t base;	    /* the file offset of text[0] */
	size_t pin;	    /* with pinned: the first byte to keep (a string's start) */
	bool pinned;
	const struct po_json_stream *stream; /* weak; NULL: every item goes in the tree */
	struct po_arena *scratch;	     /* owned: the streamed items, recycled */
	size_t streamed;		     /* items handed to the stream */
	int depth;
	struct path_level path[MAX_DEPTH + 1]; /* path[0 .. depth-1] */
	uint64_t rules_here[MAX_DEPTH + 2];    /* rules matching path[0 .. d-1], by depth d */
	struct rule_parts rule_parts[RULE_COUNT];
	struct po_arena *arena; /* weak */
	struct po_error *err;	/* weak */
};

static enum po_status parse_value(struct parser *p, struct po_json_value **out);

static enum po_status fail(struct parser *p, const char *what)
{
	po_error_set(p->err, "%s at byte %zu", what, p->base + p->pos);
	return PO_STATUS_INPUT;
}

/* Drops the window's bytes before pos (or pin) and reads until need bytes follow pos. */
__attribute__((noinline, cold)) static bool refill(struct parser *p, size_t need)
{
	size_t keep = p->pinned && p->pin < p->pos ? p->pin : p->pos;

	memmove(p->window, p->window + keep, p->len - keep);
	p->base += keep;
	p->len -= keep;
	p->pos -= keep;
	p->pin -= p->pinned ? keep : 0;
	while (p->pos + need > p->len && !p->at_end) {
		ssize_t got;

		if (p->len == p->window_size) {
			size_t size = p->window_size * 2;
			char *bigger = size > p->window_size ? realloc(p->window, size) : NULL;

			if (!bigger)
				return false; /* the caller's error names the byte; memory is rare
					       */
			p->window = bigger;
			p->window_size = size;
		}
		got = read(p->fd, p->window + p->len, p->window_size - p->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			p->at_end = true;
		else
			p->len += (size_t)got;
	}
	p->text = p->window;
	return p->pos + need <= p->len;
}

/* Whether need bytes follow pos, reading more of the file when there is one. */
static inline __attribute__((always_inline)) bool more(struct parser *p, size_t need)
{
	if (p->pos + need <= p->len)
		return true;
	return p->fd >= 0 && refill(p, need);
}

static inline __attribute__((always_inline)) void skip_space(struct parser *p)
{
	while (more(p, 1) && strchr(" \t\r\n", p->text[p->pos]) && p->text[p->pos])
		p->pos++;
}

/* Inlined, so that word's length and comparison are known when it is compiled. */
static inline __attribute__((always_inline)) bool consume(struct parser *p, const char *word)
{
	size_t len = strlen(word);

	if (!more(p, len) || memcmp(p->text + p->pos, word, len) != 0)
		return false;
	p->pos += len;
	return true;
}

static struct po_json_value *new_value(struct parser *p, enum po_json_type type)
{
	struct po_json_value *value = po_arena_alloc(p->arena, sizeof(*value));

	if (value)
		value->type = type;
	return value;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Appends code point cp as UTF-8; surrogates become U+FFFD. */
static size_t put_utf8(char *out, unsigned cp)
{
	if (cp >= 0xD800 && cp <= 0xDFFF)
		cp = 0xFFFD;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	out[0] = (char)(0xE0 | cp >> 12);
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[2] = (char)(0x80 | (cp & 0x3F));
	return 3;
}

static enum po_status parse_escape(struct parser *p, char *out, size_t *used)
{
	static const char plain_in[] = "\"\\/bfnrt", plain_out[] = "\"\\/\b\f\n\r\t";
	const char *found;
	unsigned cp = 0;

	if (!more(p, 1))
		return fail(p, "unterminated escape");
	found = strchr(plain_in, p->text[p->pos]);
	if (found && *found) {
		out[(*used)++] = plain_out[found - plain_in];
		p->pos++;
		return PO_STATUS_OK;
	}
	if (p->text[p->pos] != 'u' || !more(p, 5))
		return fail(p, "bad escape");
	for (int i = 1; i <= 4; i++) {
		int digit = hex_digit(p->text[p->pos + i]);

		if (digit < 0)
			return fail(p, "bad \\u escape");
		cp = cp << 4 | (unsigned)digit;
	}
	p->pos += 5;
	*used += put_utf8(out + *used, cp);
	return PO_STATUS_OK;
}

/* A string: its bytes stay in the window (pinned) from the first pass to the second. */
static enum po_status parse_string(struct parser *p, const char **out)
{
	size_t used = 0;
	char *buffer;

	p->pin = ++p->pos;
	p->pinned = true;
	while (more(p, 1) && p->text[p->pos] != '"')
		p->pos += p->text[p->pos] == '\\' ? 2 : 1;
	p->pinned = false;
	if (!more(p, 1))
		return fail(p, "unterminated string");
	buffer = po_arena_alloc(p->arena, (p->pos - p->pin) * 2 + 1);
	if (!buffer)
		return PO_STATUS_NOMEM;
	for (p->pos = p->pin; p->text[p->pos] != '"';) {
		if (p->text[p->pos] != '\\') {
			buffer[used++] = p->text[p->pos++];
			continue;
		}
		p->pos++;
		if (parse_escape(p, buffer, &used) != PO_STATUS_OK)
			return PO_STATUS_INPUT;
	}
	p->pos++;
	buffer[used] = '\0';
	*out = buffer;
	return PO_STATUS_OK;
}

/* Splits each rule's path once per parse, so that matching compares whole components. */
static void split_rules(struct parser *p)
{
	for (size_t rule = 0; rule < RULE_COUNT; rule++) {
		struct rule_parts *parts = &p->rule_parts[rule];
		const char *pattern = rules[rule].path;

		while (*pattern && parts->count < RULE_MAX_PARTS) {
			size_t len = strncmp(pattern, "[]", 2) == 0 ? 2 : strcspn(pattern, ".[");

			parts->part[parts->count] = pattern;
			parts->len[parts->count++] = len;
			pattern += len;
			if (*pattern == '.')
				pattern++;
		}
	}
}

/* The rules among `candidates` whose component `level` matches key (NULL: array item). */
static uint64_t narrow_rules(const struct parser *p, uint64_t candidates, int level,
			     const char *key)
{
	size_t key_len = key ? strlen(key) : 0;
	uint64_t matching = 0;

	for (uint64_t left = candidates; left; left &= left - 1) {
		int rule = __builtin_ctzll(left);
		const struct rule_parts *parts = &p->rule_parts[rule];
		const char *part;
		size_t len;

		if (level >= parts->count)
			continue;
		part = parts->part[level];
		len = parts->len[level];
		if (key ? (len == 1 && *part == '*') || (key_len == len && !memcmp(part, key, len))
			: len == 2 && !memcmp(part, "[]", 2))
			matching |= (uint64_t)1 << rule;
	}
	return matching;
}

/* Writes the parser's path as "step_series[12].wall_ms". */
static void path_text(const struct parser *p, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (int level = 0; level < p->depth && used < size; level++) {
		const struct path_level *at = &p->path[level];
		int written =
		    at->key ? snprintf(out + used, size - used, "%s%s", level ? "." : "", at->key)
			    : snprintf(out + used, size - used, "[%zu]", at->index);

		if (written < 0)
			break;
		used += (size_t)written;
	}
}

/* The rule for the number at the parser's path (one that ends there), or NULL. */
static const struct kind_range *rule_for(const struct parser *p)
{
	for (uint64_t left = p->rules_here[p->depth]; left; left &= left - 1) {
		int rule = __builtin_ctzll(left);

		if (p->rule_parts[rule].count == p->depth)
			return &kinds[rules[rule].kind];
	}
	return NULL;
}

/* A number must be finite, and within its kind's range when a rule names its member. */
static enum po_status check_number(struct parser *p, double value, const char *spelled)
{
	const struct kind_range *kind = NULL;
	char where[256], what[640];

	if (isfinite(value)) {
		kind = rule_for(p);
		if (!kind || (value >= kind->lowest && value <= kind->highest &&
			      (!kind->whole || value == floor(value))))
			return PO_STATUS_OK;
	}
	path_text(p, where, sizeof(where));
	if (kind)
		snprintf(what, sizeof(what), "%s is %s, not %s", where[0] ? where : "the value",
			 spelled, kind->words);
	else
		snprintf(what, sizeof(what), "%s is %s, not a finite number",
			 where[0] ? where : "the value", spelled);
	return fail(p, what);
}

static enum po_status parse_number(struct parser *p, struct po_json_value **out)
{
	char buffer[64];
	size_t start = p->pos;
	char *end;

	more(p, sizeof(buffer)); /* a number is shorter, or bad: no refill while it is read */
	start = p->pos;
	while (p->pos < p->len && strchr("+-0123456789.eE", p->text[p->pos]) && p->text[p->pos])
		p->pos++;
	if (p->pos == start || p->pos - start >= sizeof(buffer))
		return fail(p, "bad number");
	memcpy(buffer, p->text + start, p->pos - start);
	buffer[p->pos - start] = '\0';
	*out = new_value(p, PO_JSON_NUMBER);
	if (!*out)
		return PO_STATUS_NOMEM;
	(*out)->number = strtod(buffer, &end);
	if (*end)
		return fail(p, "bad number");
	return check_number(p, (*out)->number, buffer);
}

/* Collects items into a growing array, then copies it into the arena. */
struct item_list {
	struct po_json_value **items; /* owned until copied */
	const char **keys;	      /* owned until copied */
	size_t count;
	size_t capacity;
	size_t key_capacity;
};

static enum po_status list_add(struct item_list *list, const char *key, struct po_json_value *item)
{
	if (po_array_reserve((void **)&list->items, &list->capacity, list->count + 1,
			     sizeof(*list->items)) != PO_STATUS_OK ||
	    po_array_reserve((void **)&list->keys, &list->key_capacity, list->count + 1,
			     sizeof(*list->keys)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	list->keys[list->count] = key;
	list->items[list->count++] = item;
	return PO_STATUS_OK;
}

static enum po_status list_finish(struct parser *p, struct item_list *list,
				  struct po_json_value *value)
{
	enum po_status status = PO_STATUS_OK;

	value->count = list->count;
	if (list->count) {
		value->items = po_arena_alloc(p->arena, list->count * sizeof(*value->items));
		value->keys = po_arena_alloc(p->arena, list->count * sizeof(*value->keys));
		if (value->items && value->keys) {
			memcpy(value->items, list->items, list->count * sizeof(*value->items));
			memcpy(value->keys, list->keys, list->count * sizeof(*value->keys));
		} else {
			status = PO_STATUS_NOMEM;
		}
	}
	free(list->items);
	free(list->keys);
	return status;
}

/* Whether the item about to be read is one of the streamed array's (root.MEMBER[i]). */
static bool streams_here(const struct parser *p, bool is_object)
{
	return p->stream && !is_object && p->depth == 2 && p->path[0].key &&
	       strcmp(p->path[0].key, p->stream->member) == 0;
}

/*
 * A streamed item: read into the scratch arena, handed to the stream, and forgotten; the
 * scratch arena is recycled once it holds 1 MiB, so that memory does not grow with items.
 */
static enum po_status parse_streamed(struct parser *p)
{
	struct po_arena *tree = p->arena;
	struct po_json_value *item;
	enum po_status status;

	if (p->scratch && po_arena_bytes(p->scratch) > ((size_t)1 << 20)) {
		po_arena_destroy(p->scratch);
		p->scratch = NULL;
	}
	if (!p->scratch && !(p->scratch = po_arena_create()))
		return PO_STATUS_NOMEM;
	p->path[p->depth - 1] = (struct path_level){.index = p->streamed};
	p->rules_here[p->depth] = narrow_rules(p, p->rules_here[p->depth - 1], p->depth - 1, NULL);
	p->arena = p->scratch;
	status = parse_value(p, &item);
	p->arena = tree;
	if (status == PO_STATUS_OK)
		status = p->stream->item(p->stream->context, item, p->streamed, p->err);
	p->streamed++;
	return status;
}

static enum po_status parse_member(struct parser *p, bool is_object, struct item_list *list)
{
	struct po_json_value *item;
	const char *key = NULL;
	enum po_status status;

	skip_space(p);
	if (streams_here(p, is_object))
		return parse_streamed(p);
	if (is_object) {
		if (!more(p, 1) || p->text[p->pos] != '"')
			return fail(p, "expected a member name");
		status = parse_string(p, &key);
		if (status != PO_STATUS_OK)
			return status;
		skip_space(p);
		if (!consume(p, ":"))
			return fail(p, "expected ':'");
	}
	p->path[p->depth - 1] = (struct path_level){.key = key, .index = list->count};
	p->rules_here[p->depth] = narrow_rules(p, p->rules_here[p->depth - 1], p->depth - 1, key);
	status = parse_value(p, &item);
	return status == PO_STATUS_OK ? list_add(list, key, item) : status;
}

static enum po_status parse_container(struct parser *p, bool is_object, struct po_json_value **out)
{
	struct item_list list = {0};
	char close = is_object ? '}' : ']';
	enum po_status status = PO_STATUS_OK;

	if (++p->depth > MAX_DEPTH)
		return fail(p, "nesting too deep");
	p->pos++;
	*out = new_value(p, is_object ? PO_JSON_OBJECT : PO_JSON_ARRAY);
	if (!*out)
		return PO_STATUS_NOMEM;
	skip_space(p);
	if (consume(p, is_object ? "}" : "]"))
		goto end;
	do {
		status = parse_member(p, is_object, &list);
		skip_space(p);
	} while (status == PO_STATUS_OK && consume(p, ","));
	if (status == PO_STATUS_OK && !(more(p, 1) && p->text[p->pos++] == close))
		status = fail(p, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
end:
	p->depth--;
	if (status != PO_STATUS_OK) {
		free(list.items);
		free(list.keys);
		return status;
	}
	return list_finish(p, &list, *out);
}

static enum po_status parse_value(struct parser *p, struct po_json_value **out)
{
	skip_space(p);
	if (!more(p, 1))
		return fail(p, "unexpected end");
	switch (p->text[p->pos]) {
	case '{':
		return parse_container(p, true, out);
	case '[':
		return parse_container(p, false, out);
	case '"':
		*out = new_value(p, PO_JSON_STRING);
		return *out ? parse_string(p, &(*out)->string) : PO_STATUS_NOMEM;
	default:
		break;
	}
	if (consume(p, "null") || consume(p, "true") || consume(p, "false")) {
		char last = p->text[p->pos - 1];

		*out = new_value(p, last == 'l' ? PO_JSON_NULL : PO_JSON_BOOL);
		if (*out)
			(*out)->boolean = last == 'e' && p->text[p->pos - 2] == 'u';
		return *out ? PO_STATUS_OK : PO_STATUS_NOMEM;
	}
	return parse_number(p, out);
}

static enum po_status parse_all(struct parser *p, struct po_json_value **out)
{
	enum po_status status;

	p->rules_here[0] = ALL_RULES;
	split_rules(p);
	status = parse_value(p, out);
	if (status == PO_STATUS_OK) {
		skip_space(p);
		if (more(p, 1))
			status = fail(p, "trailing characters");
	}
	po_arena_destroy(p->scratch);
	free(p->window);
	return status;
}

enum po_status po_json_parse(const char *text, size_t len, struct po_arena *arena,
			     struct po_json_value **out, struct po_error *err)
{
	struct parser p = {.text = text, .len = len, .fd = -1, .arena = arena, .err = err};

	return parse_all(&p, out);
}

enum po_status po_json_parse_stream(const char *text, size_t len,
				    const struct po_json_stream *stream, struct po_arena *arena,
				    struct po_json_value **out, struct po_error *err)
{
	struct parser p = {
	    .text = text, .len = len, .fd = -1, .stream = stream, .arena = arena, .err = err};

	return parse_all(&p, out);
}

enum po_status po_json_parse_file(int fd, const struct po_json_stream *stream,
				  struct po_arena *arena, struct po_json_value **out,
				  struct po_error *err)
{
	struct parser p = {.fd = fd, .stream = stream, .arena = arena, .err = err};

	p.window_size = (size_t)1 << 16;
	p.window = malloc(p.window_size);
	if (!p.window)
		return PO_STATUS_NOMEM;
	p.text = p.window;
	return parse_all(&p, out);
}

const struct po_json_value *po_json_get(const struct po_json_value *value, const char *key)
{
	if (!value || value->type != PO_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < value->count; i++)
		if (strcmp(value->keys[i], key) == 0)
			return value->items[i];
	return NULL;
}

double po_json_number(const struct po_json_value *value, double fallback)
{
	return value && value->type == PO_JSON_NUMBER ? value->number : fallback;
}

const char *po_json_string(const struct po_json_value *value, const char *fallback)
{
	return value && value->type == PO_JSON_STRING ? value->string : fallback;
}
