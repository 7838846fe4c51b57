/* json_read.c: a recursive-descent JSON parser building a tree in an arena (json_read.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define MAX_DEPTH 64

struct parser {
	const char *text; /* weak */
	size_t len;
	size_t pos;
	int depth;
	struct po_arena *arena; /* weak */
	struct po_error *err;	/* weak */
};

static enum po_status parse_value(struct parser *p, struct po_json_value **out);

static enum po_status fail(struct parser *p, const char *what)
{
	po_error_set(p->err, "%s at byte %zu", what, p->pos);
	return PO_STATUS_INPUT;
}

static void skip_space(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->text[p->pos]) && p->text[p->pos])
		p->pos++;
}

static bool consume(struct parser *p, const char *word)
{
	size_t len = strlen(word);

	if (p->len - p->pos < len || memcmp(p->text + p->pos, word, len) != 0)
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

	if (p->pos >= p->len)
		return fail(p, "unterminated escape");
	found = strchr(plain_in, p->text[p->pos]);
	if (found && *found) {
		out[(*used)++] = plain_out[found - plain_in];
		p->pos++;
		return PO_STATUS_OK;
	}
	if (p->text[p->pos] != 'u' || p->len - p->pos < 5)
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

static enum po_status parse_string(struct parser *p, const char **out)
{
	size_t start = ++p->pos, used = 0;
	char *buffer;

	while (p->pos < p->len && p->text[p->pos] != '"')
		p->pos += p->text[p->pos] == '\\' ? 2 : 1;
	if (p->pos >= p->len)
		return fail(p, "unterminated string");
	buffer = po_arena_alloc(p->arena, (p->pos - start) * 2 + 1);
	if (!buffer)
		return PO_STATUS_NOMEM;
	for (p->pos = start; p->text[p->pos] != '"';) {
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

static enum po_status parse_number(struct parser *p, struct po_json_value **out)
{
	char buffer[64];
	size_t start = p->pos;
	char *end;

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
	return *end ? fail(p, "bad number") : PO_STATUS_OK;
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

static enum po_status parse_member(struct parser *p, bool is_object, struct item_list *list)
{
	struct po_json_value *item;
	const char *key = NULL;
	enum po_status status;

	skip_space(p);
	if (is_object) {
		if (p->pos >= p->len || p->text[p->pos] != '"')
			return fail(p, "expected a member name");
		status = parse_string(p, &key);
		if (status != PO_STATUS_OK)
			return status;
		skip_space(p);
		if (!consume(p, ":"))
			return fail(p, "expected ':'");
	}
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
	if (status == PO_STATUS_OK && !(p->pos < p->len && p->text[p->pos++] == close))
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
	if (p->pos >= p->len)
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

enum po_status po_json_parse(const char *text, size_t len, struct po_arena *arena,
			     struct po_json_value **out, struct po_error *err)
{
	struct parser p = {.text = text, .len = len, .arena = arena, .err = err};
	enum po_status status = parse_value(&p, out);

	if (status != PO_STATUS_OK)
		return status;
	skip_space(&p);
	return p.pos == len ? PO_STATUS_OK : fail(&p, "trailing characters");
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
