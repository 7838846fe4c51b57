/*
 * test_rules_doc.c: docs/rules.md must hold the rules table exactly as rules.h declares it,
 * between its table markers. "test_rules_doc --print" writes the table to paste there.
 */
#include <stdlib.h>

#include "check.h"
#include "rules.h"

#define BEGIN_MARK "<!-- rules-table:begin -->\n"
#define END_MARK "<!-- rules-table:end -->\n"

static size_t format_table(char *buffer, size_t size)
{
	size_t count, used;
	const struct po_rule_info *infos = po_rule_infos(&count);

	used = (size_t)snprintf(buffer, size,
				"| Rule.key | Default | Unit | Valid range | Meaning | Source |\n"
				"|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < count && used < size; i++)
		used += (size_t)snprintf(buffer + used, size - used,
					 "| `%s.%s` | %g | %s | %.15g to %.15g%s | %s | %s |\n",
					 infos[i].rule, infos[i].key, infos[i].default_value,
					 infos[i].unit, infos[i].lowest, infos[i].highest,
					 infos[i].whole ? ", whole" : "", infos[i].doc,
					 infos[i].source);
	return used;
}

static char *read_all(const char *path)
{
	FILE *file = fopen(path, "r");
	char *text;
	long size;

	if (!file)
		return NULL;
	fseek(file, 0, SEEK_END);
	size = ftell(file);
	fseek(file, 0, SEEK_SET);
	text = calloc(1, (size_t)size + 1);
	if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
		free(text);
		text = NULL;
	}
	fclose(file);
	return text;
}

int main(int argc, char **argv)
{
	static char table[64 * 1024];
	size_t length = format_table(table, sizeof(table));
	char *doc, *begin, *end;

	if (argc == 2 && strcmp(argv[1], "--print") == 0) {
		fputs(table, stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test_rules_doc docs/rules.md | --print\n");
		return 2;
	}
	doc = read_all(argv[1]);
	CHECK(doc != NULL);
	begin = doc ? strstr(doc, BEGIN_MARK) : NULL;
	end = begin ? strstr(begin, END_MARK) : NULL;
	CHECK(begin && end);
	if (begin && end) {
		begin += strlen(BEGIN_MARK);
		CHECK_INT_EQ((size_t)(end - begin), length);
		CHECK((size_t)(end - begin) == length && memcmp(begin, table, length) == 0);
		if ((size_t)(end - begin) != length || memcmp(begin, table, length) != 0)
			fprintf(stderr, "docs/rules.md's table differs from rules.h; regenerate it "
					"with: test_rules_doc --print\n");
	}
	free(doc);
	return CHECK_SUMMARY();
}
