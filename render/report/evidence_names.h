/*
 * evidence_names.h: what a person reads in place of a finding's evidence keys: a plain
 * name, a unit and a one-line meaning for every key the detectors write. summary.json keeps
 * the keys themselves; only the HTML and PDF reports show these words.
 */
#ifndef PO_REPORT_EVIDENCE_NAMES_H
#define PO_REPORT_EVIDENCE_NAMES_H

#include <stddef.h>

#include "model/result.h"

/* For a key that does not depend on the finding (and for tests): no finding's override. */
#define PO_EVIDENCE_ANY_FINDING PO_FINDING_ID_COUNT

/* Longest name and unit, with their terminating zero. */
#define PO_EVIDENCE_NAME_MAX 96
#define PO_EVIDENCE_UNIT_MAX 32

/* How a key found its words. */
enum po_evidence_match {
	PO_EVIDENCE_MATCH_KEY,	    /* an entry of the table for exactly this key */
	PO_EVIDENCE_MATCH_PATTERN,  /* an entry for a family of keys ("site2_where") */
	PO_EVIDENCE_MATCH_FALLBACK, /* no entry: words made from the key itself */
};

/*
 * One key in words. name never carries the unit: the value does ("41.3%", not
 * "share pct: 41.3 %"). meaning is "" for a key the table does not know.
 */
struct po_evidence_words {
	char name[PO_EVIDENCE_NAME_MAX];
	char unit[PO_EVIDENCE_UNIT_MAX]; /* "%", "ms/step", "MiB", ...; "" for counts and text */
	const char *meaning;		 /* weak: static text */
	enum po_evidence_match match;
};

/*
 * The words for an evidence key of a finding of that id (PO_EVIDENCE_ANY_FINDING for none).
 * An entry for that finding wins over the general one, where a key means something else
 * there (threshold_ms of gpu-idle is the shortest gap counted, of step-outliers the time
 * of a slow step). A key no entry knows still gets words, never the raw key: underscores
 * become spaces and a unit suffix (_pct, _ms, _mib, _bytes, _cores, with _per_<what>)
 * becomes the unit. A NULL key is treated as "".
 */
void po_evidence_words(enum po_finding_id finding, const char *key,
		       struct po_evidence_words *words);

/*
 * The value as a person reads it, with its unit: "41.3%", "12.5 ms/step", "1.64x" (with a
 * multiplication sign), "2", "load". Numbers that are not finite read "n/a"; numbers of
 * 10000 and more are written without an exponent. Text values are cleaned (see
 * po_report_clean) and carry no unit.
 */
void po_evidence_format(const struct po_evidence *evidence, const char *unit, char *out,
			size_t out_size);

/* The table itself, for the test that keeps it in step with the detectors. */
struct po_evidence_entry {
	enum po_finding_id finding; /* PO_EVIDENCE_ANY_FINDING: every finding */
	const char *key;	    /* "#" stands for a number, "@" for a category's JSON name */
	const char *name;
	const char *unit;
	const char *meaning;
};

size_t po_evidence_entry_count(void);
const struct po_evidence_entry *po_evidence_entry_at(size_t index);

#endif /* PO_REPORT_EVIDENCE_NAMES_H */
