/*
 * test_evidence_names.c: keeps the table of evidence names in step with the detectors.
 * test_evidence_names DETECT_DIR reads every .c file of DETECT_DIR (analyzer/detect) and
 * fails when a detector writes an evidence key the table has no entry for, when a key made
 * at run time (det_printf) has no pattern, or when an entry names a key no detector writes.
 * It also checks the words and the values a person reads.
 */
#define _DEFAULT_SOURCE /* strdup */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "evidence_names.h"
#include "report_priv.h"

#define MAX_KEYS 512
#define MAX_ARG 512

/* A key the detectors write: a literal, or a det_printf format turned into a pattern. */
struct found_key {
	char key[128];
	char file[64];
	bool pattern;
};

static struct found_key found[MAX_KEYS];
static size_t found_count;
static int scan_errors;

static char *read_file(const char *path)
{
	FILE *file = fopen(path, "rb");
	char *text = NULL;
	long size;

	if (!file)
		return NULL;
	if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 &&
	    fseek(file, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
		if (fread(text, 1, (size_t)size, file) != (size_t)size) {
			free(text);
			text = NULL;
		} else {
			text[size] = '\0';
		}
	}
	fclose(file);
	return text;
}

/* Appends c to arg unless it is leading space or arg is full. */
static void append(char *arg, size_t *used, char c)
{
	if ((*used > 0 || !isspace((unsigned char)c)) && *used + 1 < MAX_ARG)
		arg[(*used)++] = c;
	arg[*used] = '\0';
}

/*
 * Splits the arguments of the call whose "(" is at open into args, trimmed; returns their
 * count. Commas inside parentheses and string literals do not split.
 */
static size_t split_args(const char *open, char args[][MAX_ARG], size_t max_args)
{
	int depth = 0;
	bool in_string = false;
	size_t count = 0, used = 0;

	args[0][0] = '\0';
	for (const char *c = open + 1; *c && count < max_args; c++) {
		bool ends = !in_string && depth == 0 && (*c == ',' || *c == ')');

		if (ends) {
			while (used && isspace((unsigned char)args[count][used - 1]))
				args[count][--used] = '\0';
			count++;
			used = 0;
			if (*c == ')' || count == max_args)
				break;
			args[count][0] = '\0';
			continue;
		}
		if (in_string && *c == '\\' && c[1])
			append(args[count], &used, *c++);
		else if (*c == '"')
			in_string = !in_string;
		else if (!in_string && *c == '(')
			depth++;
		else if (!in_string && *c == ')')
			depth--;
		append(args[count], &used, *c);
	}
	return count;
}

/* The text of a string literal at arg ("..." only, no escapes), or false. */
static bool literal_of(const char *arg, char *out, size_t out_size)
{
	const char *end;

	if (arg[0] != '"' || !(end = strchr(arg + 1, '"')) || (size_t)(end - arg) > out_size)
		return false;
	snprintf(out, out_size, "%.*s", (int)(end - arg - 1), arg + 1);
	return true;
}

/* A det_printf format as a table pattern: integers become "#", strings "@". */
static void pattern_of(const char *format, char *out, size_t out_size)
{
	size_t used = 0;

	for (const char *c = format; *c && used + 1 < out_size; c++) {
		if (*c != '%') {
			out[used++] = *c;
			continue;
		}
		c += strspn(c + 1, "lhzj");
		c++;
		out[used++] = *c == 's' ? '@' : '#';
	}
	out[used] = '\0';
}

static void add_key(const char *file, const char *key, bool pattern)
{
	if (found_count == MAX_KEYS)
		return;
	snprintf(found[found_count].key, sizeof(found[found_count].key), "%s", key);
	snprintf(found[found_count].file, sizeof(found[found_count].file), "%s", file);
	found[found_count++].pattern = pattern;
}

/* The key argument of one det_ev_*() call: a literal, det_printf(ctx, "..."), or an error. */
static void take_key(const char *file, const char *key_arg)
{
	char args[3][MAX_ARG], text[128], pattern[128];

	if (literal_of(key_arg, text, sizeof(text))) {
		add_key(file, text, false);
		return;
	}
	if (strncmp(key_arg, "det_printf(", 11) == 0 && split_args(key_arg + 10, args, 3) >= 2 &&
	    literal_of(args[1], text, sizeof(text))) {
		pattern_of(text, pattern, sizeof(pattern));
		add_key(file, pattern, true);
		return;
	}
	fprintf(stderr, "%s: evidence key %s is neither a literal nor det_printf(ctx, \"...\")\n",
		file, key_arg);
	scan_errors++;
}

/* Every det_ev_number/int/text call of one source file (declarations left out). */
static void scan_file(const char *dir, const char *name)
{
	char path[1024], args[4][MAX_ARG];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = read_file(path);
	if (!text) {
		fprintf(stderr, "cannot read %s\n", path);
		scan_errors++;
		return;
	}
	for (char *call = strstr(text, "det_ev_"); call; call = strstr(call + 1, "det_ev_")) {
		char *open = call + 7 + strspn(call + 7, "abcdefghijklmnopqrstuvwxyz");

		if (*open != '(' || split_args(open, args, 4) < 3 ||
		    strncmp(args[0], "struct ", 7) == 0)
			continue;
		take_key(name, args[2]);
	}
	free(text);
}

static bool scan_dir(const char *dir)
{
	DIR *handle = opendir(dir);
	struct dirent *entry;

	if (!handle)
		return false;
	while ((entry = readdir(handle))) {
		size_t length = strlen(entry->d_name);

		if (length > 2 && strcmp(entry->d_name + length - 2, ".c") == 0)
			scan_file(dir, entry->d_name);
	}
	closedir(handle);
	return true;
}

/* Whether a name reads as words: not empty, and no raw key or wildcard left in it. */
static bool reads_as_words(const char *name)
{
	return name[0] && !strpbrk(name, "_#@");
}

/* (a) Every literal key has an entry of its own, for every finding. */
static void literal_keys_named(void)
{
	for (size_t i = 0; i < found_count; i++) {
		struct po_evidence_words words;

		if (found[i].pattern)
			continue;
		po_evidence_words(PO_EVIDENCE_ANY_FINDING, found[i].key, &words);
		CHECK(words.match == PO_EVIDENCE_MATCH_KEY);
		if (words.match != PO_EVIDENCE_MATCH_KEY)
			fprintf(stderr,
				"%s writes evidence key \"%s\": add it to PO_EVIDENCE_NAMES in "
				"render/report/evidence_names.c\n",
				found[i].file, found[i].key);
		CHECK(reads_as_words(words.name));
		CHECK(words.meaning[0] != '\0');
	}
}

/* The entry for a pattern, or NULL. */
static const struct po_evidence_entry *pattern_entry(const char *pattern)
{
	for (size_t i = 0; i < po_evidence_entry_count(); i++) {
		if (strcmp(po_evidence_entry_at(i)->key, pattern) == 0)
			return po_evidence_entry_at(i);
	}
	return NULL;
}

/* The pattern with "#" as number and "@" as the category's JSON name. */
static void instance_of(const char *pattern, const char *number, enum po_category category,
			char *out, size_t out_size)
{
	size_t used = 0;

	for (const char *c = pattern; *c && used + 1 < out_size; c++) {
		const char *part = *c == '#'   ? number
				   : *c == '@' ? po_report_category_key(category)
					       : NULL;

		if (part)
			used += (size_t)snprintf(out + used, out_size - used, "%s", part);
		else
			out[used++] = *c;
	}
	out[used < out_size ? used : out_size - 1] = '\0';
}

/* (b) Keys made at run time resolve through their pattern, whatever fills them. */
static void dynamic_keys_named(void)
{
	static const char *const numbers[] = {"1", "2", "10"};

	for (size_t i = 0; i < found_count; i++) {
		const struct po_evidence_entry *entry;

		if (!found[i].pattern)
			continue;
		entry = pattern_entry(found[i].key);
		CHECK(entry != NULL);
		if (!entry) {
			fprintf(stderr,
				"%s writes evidence keys \"%s\" (made with det_printf): add that "
				"pattern to PO_EVIDENCE_NAMES in render/report/evidence_names.c\n",
				found[i].file, found[i].key);
			continue;
		}
		for (size_t n = 0; n < sizeof(numbers) / sizeof(numbers[0]); n++) {
			for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
				struct po_evidence_words words;
				char key[160];

				instance_of(found[i].key, numbers[n], (enum po_category)c, key,
					    sizeof(key));
				po_evidence_words(entry->finding, key, &words);
				CHECK(words.match == PO_EVIDENCE_MATCH_PATTERN);
				CHECK(reads_as_words(words.name));
				if (words.match != PO_EVIDENCE_MATCH_PATTERN ||
				    !reads_as_words(words.name))
					fprintf(stderr, "key %s reads \"%s\"\n", key, words.name);
			}
		}
	}
}

static bool written(const char *key, bool pattern)
{
	for (size_t i = 0; i < found_count; i++) {
		if (found[i].pattern == pattern && strcmp(found[i].key, key) == 0)
			return true;
	}
	return false;
}

/* Whether an entry for every finding (ANY) exists for key. */
static bool general_entry(const char *key)
{
	for (size_t i = 0; i < po_evidence_entry_count(); i++) {
		const struct po_evidence_entry *entry = po_evidence_entry_at(i);

		if (entry->finding == PO_EVIDENCE_ANY_FINDING && strcmp(entry->key, key) == 0)
			return true;
	}
	return false;
}

/* (c) Every entry names a key some detector writes, once per finding, in words. */
static void entries_in_step(void)
{
	for (size_t i = 0; i < po_evidence_entry_count(); i++) {
		const struct po_evidence_entry *entry = po_evidence_entry_at(i);
		bool pattern = strpbrk(entry->key, "#@") != NULL;

		CHECK(written(entry->key, pattern));
		if (!written(entry->key, pattern))
			fprintf(stderr,
				"PO_EVIDENCE_NAMES names \"%s\", which no detector writes\n",
				entry->key);
		CHECK(entry->name[0] && !strchr(entry->name, '_'));
		CHECK(entry->meaning[0] != '\0');
		CHECK(entry->unit != NULL &&
		      !strstr(entry->name, entry->unit[0] ? entry->unit : "\x01"));
		CHECK(pattern || general_entry(entry->key));
		for (size_t j = 0; j < i; j++) {
			const struct po_evidence_entry *other = po_evidence_entry_at(j);

			CHECK(other->finding != entry->finding || strcmp(other->key, entry->key));
		}
	}
}

static void check_words(enum po_finding_id finding, const char *key, const char *name,
			const char *unit)
{
	struct po_evidence_words words;

	po_evidence_words(finding, key, &words);
	CHECK_STR_EQ(words.name, name);
	CHECK_STR_EQ(words.unit, unit);
}

/* Overrides per finding, patterns, and words for keys the table does not know. */
static void words_cases(void)
{
	struct po_evidence_words words;

	check_words(PO_FINDING_GPU_IDLE, "threshold_ms", "Shortest gap counted", "ms");
	check_words(PO_FINDING_STEP_OUTLIERS, "threshold_ms", "Slow-step threshold", "ms");
	check_words(PO_FINDING_INPUT_BOUND, "threshold_ms", "Threshold", "ms");
	check_words(PO_FINDING_INPUT_BOUND, "wait_share_pct", "Input wait share", "%");
	check_words(PO_FINDING_UNFREED_ALLOCATIONS, "site2_where", "Site 2: allocated in", "");
	check_words(PO_FINDING_UNFREED_ALLOCATIONS, "site12_live_mib", "Site 12: memory held",
		    "MiB");
	check_words(PO_FINDING_GPU_IDLE, "data_wait_ms_per_step", "GPU idle: Data wait", "ms/step");
	check_words(PO_FINDING_GPU_IDLE, "handoff_ms_per_step", "GPU idle: Batch hand-off",
		    "ms/step");
	check_words(PO_FINDING_LOADER_HANDOFF, "data_wait_ms_per_step", "Data wait", "ms/step");
	check_words(PO_FINDING_GPU_IDLE, "idle_ms_per_step", "GPU idle time", "ms/step");
	check_words(PO_FINDING_INPUT_BOUND, "site_where", "Site where", "");
	check_words(PO_FINDING_INPUT_BOUND, "sitex_where", "Sitex where", "");
	check_words(PO_EVIDENCE_ANY_FINDING, "growth_mib_per_step", "Growth", "MiB/step");
	check_words(PO_EVIDENCE_ANY_FINDING, "mean_wait_ms", "Mean wait", "ms");
	check_words(PO_EVIDENCE_ANY_FINDING, "spill_bytes", "Spill", "B");
	check_words(PO_EVIDENCE_ANY_FINDING, "top_site", "Top site", "");
	check_words(PO_EVIDENCE_ANY_FINDING, "batches_per_s", "Batches per s", "");
	check_words(PO_EVIDENCE_ANY_FINDING, "new_share_pct", "New share", "%");
	check_words(PO_EVIDENCE_ANY_FINDING, "", "Value", "");
	check_words(PO_EVIDENCE_ANY_FINDING, NULL, "Value", "");
	po_evidence_words(PO_EVIDENCE_ANY_FINDING, "top_site", &words);
	CHECK(words.match == PO_EVIDENCE_MATCH_FALLBACK);
	CHECK_STR_EQ(words.meaning, "");
}

static void check_format(struct po_evidence evidence, const char *unit, const char *expected)
{
	char out[64];

	po_evidence_format(&evidence, unit, out, sizeof(out));
	CHECK_STR_EQ(out, expected);
}

static void format_cases(void)
{
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, 41.3, 0, NULL}, "%", "41.3%");
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, 12.5, 0, NULL}, "ms/step",
		     "12.5 ms/step");
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, 1.64, 0, NULL}, "\xc3\x97",
		     "1.64\xc3\x97");
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, NAN, 0, NULL}, "\xc3\x97",
		     "n/a");
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, 123456.7, 0, NULL}, "B/step",
		     "123457 B/step");
	check_format((struct po_evidence){"k", PO_EVIDENCE_NUMBER, 0.25, 0, NULL}, "", "0.25");
	check_format((struct po_evidence){"k", PO_EVIDENCE_INTEGER, 0, 2, NULL}, "", "2");
	check_format((struct po_evidence){"k", PO_EVIDENCE_INTEGER, 0, 10, NULL}, "steps",
		     "10 steps");
	check_format((struct po_evidence){"k", PO_EVIDENCE_TEXT, 0, 0, "load"}, "ms", "load");
}

int main(int argc, char **argv)
{
	if (argc != 2 || !scan_dir(argv[1])) {
		fprintf(stderr, "usage: test_evidence_names DETECT_DIR (a readable directory)\n");
		return 2;
	}
	/* A scan that finds (almost) nothing means the scanner, not the table, is wrong. */
	CHECK(found_count >= 50);
	CHECK(found_count < MAX_KEYS);
	CHECK_INT_EQ(scan_errors, 0);
	RUN(literal_keys_named);
	RUN(dynamic_keys_named);
	RUN(entries_in_step);
	RUN(words_cases);
	RUN(format_cases);
	return CHECK_SUMMARY();
}
