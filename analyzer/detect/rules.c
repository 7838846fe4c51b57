/* rules.c: defaults and the RULE.KEY=VALUE parser of the detection rules (rules.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define RULE_LINE_MAX 1024

struct rule_unit {
	const char *unit;
	double lowest;
	double highest;
	bool whole;
};

static const struct rule_unit rule_units[] = {
#define PO_X(unit, lowest, highest, whole) {unit, lowest, highest, whole},
    PO_RULE_UNITS(PO_X)
#undef PO_X
};

/* The ranges are filled in from rule_units once, on first use by any thread (fill_ranges). */
static struct po_rule_info rule_infos[] = {
#define PO_X(member, rule, key, def, unit, doc, source)                                            \
	{rule, key, def, unit, doc, source, offsetof(struct po_rules, member), 0, 0, false},
    PO_RULES(PO_X)
#undef PO_X
};

#define RULE_COUNT (sizeof(rule_infos) / sizeof(rule_infos[0]))

/* Every rule's unit is in rule_units: an unknown unit is a programmer error, caught here. */
static void fill_ranges_once(void)
{
	for (size_t i = 0; i < RULE_COUNT; i++) {
		size_t u = 0;

		while (u < sizeof(rule_units) / sizeof(rule_units[0]) &&
		       strcmp(rule_units[u].unit, rule_infos[i].unit) != 0)
			u++;
		if (u == sizeof(rule_units) / sizeof(rule_units[0]))
			abort();
		rule_infos[i].lowest = rule_units[u].lowest;
		rule_infos[i].highest = rule_units[u].highest;
		rule_infos[i].whole = rule_units[u].whole;
	}
}

/* Threads may ask at once (the decoders, a library caller): the table is filled once. */
static void fill_ranges(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fill_ranges_once);
}

const struct po_rule_info *po_rule_infos(size_t *count)
{
	fill_ranges();
	*count = RULE_COUNT;
	return rule_infos;
}

void po_rules_init(struct po_rules *rules)
{
	fill_ranges();
	for (size_t i = 0; i < RULE_COUNT; i++)
		*(double *)((char *)rules + rule_infos[i].offset) = rule_infos[i].default_value;
}

/* The row whose "rule.key" is name[0 .. len), or NULL. */
static const struct po_rule_info *find_rule(const char *name, size_t len)
{
	fill_ranges();
	for (size_t i = 0; i < RULE_COUNT; i++) {
		const struct po_rule_info *info = &rule_infos[i];
		size_t rule_len = strlen(info->rule);

		if (len == rule_len + 1 + strlen(info->key) &&
		    strncmp(name, info->rule, rule_len) == 0 && name[rule_len] == '.' &&
		    strncmp(name + rule_len + 1, info->key, len - rule_len - 1) == 0)
			return info;
	}
	return NULL;
}

/* Trims spaces on both sides of text[*begin .. *end). */
static void trim(const char *text, size_t *begin, size_t *end)
{
	while (*begin < *end && isspace((unsigned char)text[*begin]))
		(*begin)++;
	while (*end > *begin && isspace((unsigned char)text[*end - 1]))
		(*end)--;
}

static bool parse_number(const char *text, double *value)
{
	char *end = NULL;

	errno = 0;
	*value = strtod(text, &end);
	while (end && isspace((unsigned char)*end))
		end++;
	return errno == 0 && end != text && *end == '\0' && isfinite(*value) && *value >= 0.0;
}

enum po_status po_rules_set(struct po_rules *rules, const char *assignment, struct po_error *err)
{
	const char *equals = strchr(assignment, '=');
	const struct po_rule_info *info;
	size_t begin = 0, end;
	double value;

	if (!equals) {
		po_error_set(err, "Invalid rule assignment, expected RULE.KEY=VALUE: \"%s\"",
			     assignment);
		return PO_STATUS_USAGE;
	}
	end = (size_t)(equals - assignment);
	trim(assignment, &begin, &end);
	info = find_rule(assignment + begin, end - begin);
	if (!info) {
		po_error_set(err, "Unknown rule: name=\"%.*s\" (docs/rules.md lists the rules)",
			     (int)(end - begin), assignment + begin);
		return PO_STATUS_USAGE;
	}
	if (!parse_number(equals + 1, &value) || value < info->lowest || value > info->highest ||
	    (info->whole && value != floor(value))) {
		po_error_set(
		    err,
		    "Invalid value: rule=%s.%s value=\"%s\" expected=%s from %.15g to %.15g (%s)",
		    info->rule, info->key, equals + 1, info->whole ? "a whole number" : "a number",
		    info->lowest, info->highest, info->unit);
		return PO_STATUS_USAGE;
	}
	*(double *)((char *)rules + info->offset) = value;
	return PO_STATUS_OK;
}

/* Applies one line of a rules file: blank lines and comments are skipped. */
static enum po_status load_line(struct po_rules *rules, char *line, struct po_error *err)
{
	char *comment = strchr(line, '#');
	size_t begin = 0, end;

	if (comment)
		*comment = '\0';
	end = strlen(line);
	trim(line, &begin, &end);
	if (begin == end)
		return PO_STATUS_OK;
	line[end] = '\0';
	return po_rules_set(rules, line + begin, err);
}

enum po_status po_rules_load(struct po_rules *rules, const char *path, struct po_error *err)
{
	char line[RULE_LINE_MAX];
	struct po_rules updated = *rules;
	enum po_status status = PO_STATUS_OK;
	size_t line_number = 0;
	FILE *file = fopen(path, "r");

	if (!file) {
		po_error_set(err, "Failed to open the rules file: path=%s error=%s", path,
			     strerror(errno));
		return PO_STATUS_USAGE;
	}
	while (status == PO_STATUS_OK && fgets(line, sizeof(line), file)) {
		line_number++;
		if (!strchr(line, '\n') && !feof(file)) {
			po_error_set(err, "Line longer than %d bytes", RULE_LINE_MAX - 2);
			status = PO_STATUS_USAGE;
		} else {
			status = load_line(&updated, line, err);
		}
	}
	if (status == PO_STATUS_OK && ferror(file)) {
		po_error_set(err, "Failed to read the rules file: error=%s", strerror(errno));
		status = PO_STATUS_USAGE;
	}
	fclose(file);
	if (status != PO_STATUS_OK) {
		po_error_prepend(err, "%s:%zu", path, line_number);
		return status;
	}
	*rules = updated;
	return PO_STATUS_OK;
}
