/* test_text.c: the cleaning of trace text (common/text.h), byte by byte. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/text.h"

#define FFFD PO_TEXT_REPLACEMENT

/* The clean form of the len bytes at text, in a static buffer of out_size bytes. */
static const char *clean(const char *text, size_t len, size_t out_size, bool *cut)
{
	static char out[256];

	po_text_clean(text, len, out, out_size, cut);
	CHECK(po_text_is_clean(out, strlen(out)));
	return out;
}

static void check_clean(const char *text, size_t len, const char *expected)
{
	bool cut = true;

	CHECK_STR_EQ(clean(text, len, 256, &cut), expected);
	CHECK(!cut);
	CHECK(po_text_is_clean(text, len) ==
	      (strcmp(text, expected) == 0 && strlen(expected) == len));
}

static void test_valid_text_is_kept(void)
{
	check_clean("", 0, "");
	check_clean("decode_record", 13, "decode_record");
	check_clean("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", 17,
		    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	/* The edges of each range: U+0080 is C1 (below), U+07FF, U+FFFD, U+10FFFD. */
	check_clean("\xdf\xbf\xef\xbf\xbd\xf4\x8f\xbf\xbd", 9,
		    "\xdf\xbf\xef\xbf\xbd\xf4\x8f\xbf\xbd");
}

static void test_invalid_bytes(void)
{
	check_clean("d\xe8"
		    "code",
		    6, "d" FFFD "code");	/* 'e' (0x65) with one bit flipped */
	check_clean("a\x80z", 3, "a" FFFD "z"); /* a stray continuation byte */
	check_clean("\xff\xfe", 2, FFFD FFFD);
	check_clean("\xf5\x80\x80\x80", 4, FFFD FFFD FFFD FFFD); /* above the Unicode range */
	check_clean("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* U+110000 */
	check_clean("\xe6\x97", 2, FFFD FFFD);			 /* a character cut short */
	check_clean("\xe6\x97x", 3, FFFD FFFD "x");
}

static void test_overlong_encodings(void)
{
	check_clean("\xc0\xaf", 2, FFFD FFFD); /* '/' in two bytes */
	check_clean("\xc1\xbf", 2, FFFD FFFD);
	check_clean("\xe0\x80\xaf", 3, FFFD FFFD FFFD);		 /* '/' in three */
	check_clean("\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD); /* '/' in four */
	check_clean("\xc0\x9b", 2, FFFD FFFD);			 /* ESC in two: no way round */
}

static void test_surrogates(void)
{
	check_clean("\xed\xa0\x80", 3, FFFD FFFD FFFD); /* U+D800 */
	check_clean("\xed\xbf\xbf", 3, FFFD FFFD FFFD); /* U+DFFF */
	check_clean("\xed\x9f\xbf", 3, "\xed\x9f\xbf"); /* U+D7FF stays */
}

static void test_noncharacters(void)
{
	check_clean("f\xef\xb7\x90"
		    "n",
		    5, "f" FFFD "n");			/* U+FDD0 */
	check_clean("\xef\xb7\xaf", 3, FFFD);		/* U+FDEF */
	check_clean("\xef\xbf\xbe", 3, FFFD);		/* U+FFFE */
	check_clean("\xef\xbf\xbf", 3, FFFD);		/* U+FFFF */
	check_clean("\xf0\x9f\xbf\xbe", 4, FFFD);	/* U+1FFFE */
	check_clean("\xf4\x8f\xbf\xbf", 4, FFFD);	/* U+10FFFF */
	check_clean("\xef\xb7\xb0", 3, "\xef\xb7\xb0"); /* U+FDF0 stays */
}

static void test_controls(void)
{
	check_clean("\x1b]0;owned\x07", 10, FFFD "]0;owned" FFFD); /* an OSC title */
	check_clean("\x1b[2J", 4, FFFD "[2J");			   /* CSI clear screen */
	check_clean("a\tb\nc\rd", 7, "a" FFFD "b" FFFD "c" FFFD "d");
	check_clean("\x7f", 1, FFFD); /* DEL */
	check_clean("\xc2\x9b"
		    "2J",
		    4, FFFD "2J"); /* C1 CSI */
	check_clean("\xc2\x80\xc2\x9f\xc2\xa0", 6, FFFD FFFD "\xc2\xa0");
	check_clean("a\0b", 3, "a" FFFD "b"); /* a NUL inside a length-delimited string */
}

static void test_cut_at_character_boundaries(void)
{
	/* 200 Japanese characters: 600 bytes. */
	char japanese[601];
	bool cut = false;
	const char *out;

	for (int i = 0; i < 200; i++)
		memcpy(japanese + 3 * i, "\xe3\x81\x82", 3);
	japanese[600] = '\0';
	for (size_t size = 1; size <= 20; size++) {
		out = clean(japanese, 600, size, &cut);
		CHECK(cut);
		CHECK_INT_EQ(strlen(out), (size - 1) / 3 * 3);
	}
	out = clean("ab" FFFD, 5, 5, &cut); /* the replacement does not fit either */
	CHECK_STR_EQ(out, "ab");
	CHECK(cut);
	out = clean("\xff", 1, 3, &cut);
	CHECK_STR_EQ(out, "");
	CHECK(cut);
	out = clean("\xff", 1, 4, &cut);
	CHECK_STR_EQ(out, FFFD);
	CHECK(!cut);
	for (size_t max = 0; max <= 600; max++)
		CHECK_INT_EQ(po_text_boundary(japanese, 600, max), max / 3 * 3);
	CHECK_INT_EQ(po_text_boundary("ab\xf0\x9f\x98", 5, 5), 2);
	CHECK_INT_EQ(po_text_boundary("ab\xf0\x9f\x98\x80", 6, 6), 6);
	CHECK_INT_EQ(po_text_boundary("ab\xc3", 3, 3), 2);
	CHECK_INT_EQ(po_text_boundary("abc", 3, 2), 2);
}

static void test_trim_a_cut(void)
{
	char text[64];

	/* What snprintf leaves when the buffer ends inside a character. */
	memcpy(text, "host-\xe6", 7);
	po_text_trim_cut(text);
	CHECK_STR_EQ(text, "host-");
	snprintf(text, sizeof(text), "%s", "host-\xe6\x97\xa5");
	po_text_trim_cut(text);
	CHECK_STR_EQ(text, "host-\xe6\x97\xa5");
}

int main(void)
{
	RUN(test_valid_text_is_kept);
	RUN(test_invalid_bytes);
	RUN(test_overlong_encodings);
	RUN(test_surrogates);
	RUN(test_noncharacters);
	RUN(test_controls);
	RUN(test_cut_at_character_boundaries);
	RUN(test_trim_a_cut);
	return CHECK_SUMMARY();
}
