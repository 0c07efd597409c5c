/*-------------------------------------------------------------------------
 *
 * test_keyfmt.c
 *		Unit tests of the key templates (src/keyfmt.c): parsing and its
 *		errors, rendering the leaderboard's keys (hashed on player_id), base
 *		keys, prefixes, and decoding stored keys back into column values.
 *
 *-------------------------------------------------------------------------
 */
#include "core/keyfmt.h"
#include "unit.h"

/* Parse a template that must be valid. */
static KeyTemplate *
parse_ok(const char *text)
{
	char		err[256] = "";
	KeyTemplate *t = keyfmt_parse(text, err, sizeof(err));

	CHECK(t != NULL);
	if (t == NULL)
		printf("     template \"%s\": %s\n", text, err);
	return t;
}

/* Check that a template is refused with the given message. */
static void
check_parse_error(const char *text, const char *want)
{
	char		err[256] = "";
	KeyTemplate *t = keyfmt_parse(text, err, sizeof(err));

	CHECK(t == NULL);
	CHECK_STR(err, want);
	keyfmt_free(t);
}

/*
 * Render text with values for its column parts (in part order, NULL for
 * the others) and shard; check the key, or the error when want_err is set.
 */
static void
check_render(const char *text, const char *const *values, long shard,
			 const char *want, const char *want_err)
{
	KeyTemplate *t = parse_ok(text);
	char		err[256] = "";
	Buf			out;
	bool		ok;

	if (t == NULL)
		return;
	buf_init(&out);
	buf_puts(&out, "kept:");
	ok = keyfmt_render(t, values, shard, &out, err, sizeof(err));
	if (want_err == NULL)
	{
		CHECK(ok);
		CHECK_STR(out.data + 5, want);
	}
	else
	{
		CHECK(!ok);
		CHECK_STR(err, want_err);
		CHECK_STR(out.data, "kept:");
	}
	sfdw_free(out.data);
	keyfmt_free(t);
}

/* Check the base key of a template, or its error when want_err is set. */
static void
check_base(const char *text, const char *const *values, const char *want,
		   const char *want_err)
{
	KeyTemplate *t = parse_ok(text);
	char		err[256] = "";
	Buf			out;
	bool		ok;

	if (t == NULL)
		return;
	buf_init(&out);
	ok = keyfmt_render_base(t, values, &out, err, sizeof(err));
	if (want_err == NULL)
	{
		CHECK(ok);
		CHECK_STR(out.data, want);
	}
	else
	{
		CHECK(!ok);
		CHECK_STR(err, want_err);
	}
	sfdw_free(out.data);
	keyfmt_free(t);
}

/* Check the prefix of a template with nknown leading fields known. */
static void
check_prefix(const char *text, const char *const *values, int nknown,
			 const char *want)
{
	KeyTemplate *t = parse_ok(text);
	char		err[256] = "";
	Buf			out;

	if (t == NULL)
		return;
	buf_init(&out);
	CHECK(keyfmt_render_prefix(t, values, nknown, &out, err, sizeof(err)));
	CHECK_STR(out.data, want);
	sfdw_free(out.data);
	keyfmt_free(t);
}

/*
 * Decode key with text and check the text of each part against want (in
 * part order; a NULL entry is not checked) and the shard number; when
 * want is NULL the key must not match.
 */
static void
check_decode(const char *text, const char *key, const char *const *want,
			 long want_shard)
{
	KeyTemplate *t = parse_ok(text);
	KeySpan		spans[8];
	long		shard = -2;
	bool		ok;
	int			i;

	if (t == NULL)
		return;
	ok = keyfmt_decode(t, key, strlen(key), spans, &shard);
	if (want == NULL)
	{
		CHECK(!ok);
		keyfmt_free(t);
		return;
	}
	CHECK(ok);
	if (ok)
	{
		for (i = 0; i < t->nparts; i++)
		{
			char	   *got;

			if (want[i] == NULL)
				continue;
			got = keyfmt_field_text(t, i, key, &spans[i]);
			CHECK_STR(got, want[i]);
			sfdw_free(got);
		}
		CHECK(shard == want_shard);
	}
	keyfmt_free(t);
}

/* Templates that must be refused, each with its message. */
static void
test_parse_errors(void)
{
	check_parse_error("", "template is empty");
	check_parse_error("{game_id", "unmatched \"{\" at position 1");
	check_parse_error("{game_id}#{shard", "unmatched \"{\" at position 11");
	check_parse_error("game}#{shard}", "unmatched \"}\" at position 5");
	check_parse_error("{a}}", "unmatched \"}\" at position 4");
	check_parse_error("{a{b}}", "unexpected \"{\" inside the field at position 1");
	check_parse_error("x#{}", "field at position 3 has an empty name");
	check_parse_error("{:020}", "field at position 1 has an empty name");
	check_parse_error("{score:20}#{p}",
					  "field \"score\" has unsupported format \"20\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");
	check_parse_error("{score:x}",
					  "field \"score\" has unsupported format \"x\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");
	check_parse_error("{score:}",
					  "field \"score\" has unsupported format \"\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");
	check_parse_error("{score:0}",
					  "field \"score\" has unsupported format \"0\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");
	check_parse_error("{score:020x}",
					  "field \"score\" has unsupported format \"020x\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");
	check_parse_error("{score:00}", "width of field \"score\" must be between 1 and 1024");
	check_parse_error("{score:01025}", "width of field \"score\" must be between 1 and 1024");
	check_parse_error("{score:099999999999999999999}",
					  "width of field \"score\" must be between 1 and 1024");
	check_parse_error("g#{shard:x}",
					  "field \"shard\" has unsupported format \"x\" (only 0W, zero padding to width W, is supported)");
	check_parse_error("{shard:-3}#g",
					  "field \"shard\" has unsupported format \"-3\" (only 0W, zero padding to width W, is supported)");
	check_parse_error("{game_id}{shard}",
					  "fields \"game_id\" and \"shard\" must be separated by literal text");
	check_parse_error("x{a}{b:05}y",
					  "fields \"a\" and \"b\" must be separated by literal text");
	check_parse_error("{shard}#{g}#{shard}", "field \"shard\" appears more than once");
	/* the digits of "01" could belong to the score or to the literal */
	check_parse_error("{score:020}0{player_id}",
					  "the text after field \"score\" must not begin with a digit");
	check_parse_error("g_{shard}7", "the text after field \"shard\" must not begin with a digit");
	/* nor after a time form: isoformat() drops a zero fraction */
	check_parse_error("{ts:isoformat}0{id}", "the text after field \"ts\" must not begin with a digit");
	check_parse_error("{ts:hour}7", "the text after field \"ts\" must not begin with a digit");
	check_parse_error("{g}6{shard}", "the text before field \"shard\" must not end with a digit");
	check_parse_error("v2{n:04}", "the text before field \"n\" must not end with a digit");
}

/* The parts a template parses into. */
static void
test_parse_parts(void)
{
	KeyTemplate *t;

	t = parse_ok("{game_id}#{shard}");
	if (t != NULL)
	{
		CHECK(t->nparts == 3);
		CHECK(t->parts[0].kind == KP_COLUMN);
		CHECK_STR(t->parts[0].text, "game_id");
		CHECK(t->parts[0].width == 0);
		CHECK(t->parts[1].kind == KP_LITERAL);
		CHECK_STR(t->parts[1].text, "#");
		CHECK(t->parts[2].kind == KP_SHARD);
		CHECK_STR(t->parts[2].text, "shard");
	}
	keyfmt_free(t);

	t = parse_ok("{score:020}#{player_id}");
	if (t != NULL)
	{
		CHECK(t->nparts == 3);
		CHECK(t->parts[0].kind == KP_COLUMN);
		CHECK(t->parts[0].width == 20);
		CHECK(t->parts[2].width == 0);
	}
	keyfmt_free(t);

	/* Escaped braces join the literal around them into one part. */
	t = parse_ok("a{{b}}c#{x}}}");
	if (t != NULL)
	{
		CHECK(t->nparts == 3);
		CHECK_STR(t->parts[0].text, "a{b}c#");
		CHECK_STR(t->parts[1].text, "x");
		CHECK_STR(t->parts[2].text, "}");
	}
	keyfmt_free(t);

	t = parse_ok("g#{shard:003}");
	if (t != NULL)
		CHECK(t->parts[1].kind == KP_SHARD && t->parts[1].width == 3);
	keyfmt_free(t);

	t = parse_ok("constant");
	if (t != NULL)
		CHECK(t->nparts == 1 && t->parts[0].kind == KP_LITERAL);
	keyfmt_free(t);

	t = parse_ok("{score:01024}");
	if (t != NULL)
		CHECK(t->parts[0].width == 1024);
	keyfmt_free(t);
}

/* Rendering, with the leaderboard's keys first. */
static void
test_render(void)
{
	const char *game[] = {"game_X", NULL, NULL};
	const char *empty_game[] = {"", NULL, NULL};
	const char *null_game[] = {NULL, NULL, NULL};

	check_render("{game_id}#{shard}", game, 3, "game_X#3", NULL);
	check_render("{game_id}#{shard}", game, 0, "game_X#0", NULL);
	check_render("{game_id}#{shard}", game, 2147483647L, "game_X#2147483647", NULL);
	check_render("{score:020}#{player_id}", (const char *[]) {"42", NULL, "p1"}, 0,
				 "00000000000000000042#p1", NULL);
	check_render("{score:020}#{player_id}", (const char *[]) {"0", NULL, "p1"}, 0,
				 "00000000000000000000#p1", NULL);
	check_render("{score:020}#{player_id}", (const char *[]) {"007", NULL, "p1"}, 0,
				 "00000000000000000007#p1", NULL);
	check_render("{score:020}#{player_id}", (const char *[]) {"12.000", NULL, "p"}, 0,
				 "00000000000000000012#p", NULL);
	check_render("{score:020}#{player_id}",
				 (const char *[]) {"9223372036854775807", NULL, "p"}, 0,
				 "09223372036854775807#p", NULL);
	/* a number wider than W is written whole */
	check_render("{n:03}", (const char *[]) {"123456"}, 0, "123456", NULL);

	/* braces */
	check_render("{{{a}}}#{shard}", (const char *[]) {NULL, "x", NULL, NULL}, 1,
				 "{x}#1", NULL);
	check_render("lit{{eral}}", NULL, 0, "lit{eral}", NULL);

	/* the audit log, the range-sharded catalog and the time series */
	check_render("{file_path}_{shard}", (const char *[]) {"/shared/firetvGen2.txt", NULL, NULL},
				 6, "/shared/firetvGen2.txt_6", NULL);
	check_render("album#{shard}", NULL, 12, "album#12", NULL);
	check_render("{base}#_{shard}", (const char *[]) {"SENSOR_READING#2023-10-27", NULL, NULL},
				 4, "SENSOR_READING#2023-10-27#_4", NULL);
	check_render("g#{shard:03}", NULL, 7, "g#007", NULL);
	check_render("g#{shard:03}", NULL, 1234, "g#1234", NULL);

	/* refused values; the buffer keeps what it had */
	{
		static const char *const not_integers[] = {"-5", "1.5", "12.", "1e3", " 5", "+5", "NaN"};

		for (size_t i = 0; i < sizeof(not_integers) / sizeof(not_integers[0]); i++)
		{
			char		want[128];

			snprintf(want, sizeof(want),
					 "value \"%s\" of field \"score\" is not a non-negative integer",
					 not_integers[i]);
			check_render("{score:020}#{p}", (const char *[]) {not_integers[i], NULL, "p"},
						 0, NULL, want);
		}
	}
	check_render("{score:020}#{p}", (const char *[]) {"5", NULL, ""}, 0, NULL,
				 "value of field \"p\" is empty");
	check_render("{score:020}#{p}", (const char *[]) {"", NULL, "p"}, 0, NULL,
				 "value of field \"score\" is empty");
	check_render("{game_id}#{shard}", empty_game, 1, NULL,
				 "value of field \"game_id\" is empty");
	check_render("{game_id}#{shard}", null_game, 1, NULL,
				 "field \"game_id\" has no value");
	check_render("{game_id}#{shard}", game, -1, NULL,
				 "shard number -1 is negative");
}

/* Base keys: the key without {shard} and the literal before it. */
static void
test_base(void)
{
	check_base("{game_id}#{shard}", (const char *[]) {"game_X", NULL, NULL},
			   "game_X", NULL);
	check_base("{file_path}_{shard}", (const char *[]) {"/shared/f.txt", NULL, NULL},
			   "/shared/f.txt", NULL);
	check_base("{base}#_{shard}", (const char *[]) {"base", NULL, NULL}, "base", NULL);
	check_base("album#{shard}", NULL, "album#", NULL);
	check_base("{shard}#{g}", (const char *[]) {NULL, NULL, "g1"}, "g1", NULL);
	check_base("{shard}#", NULL, "#", NULL);
	check_base("t/{a}/{b}-{shard}", (const char *[]) {NULL, "x", NULL, "y", NULL, NULL},
			   "t/x/y", NULL);
	check_base("{a}-{shard}/{b}", (const char *[]) {"x", NULL, NULL, NULL, "y"},
			   "x/y", NULL);
	check_base("{score:05}#{p}", (const char *[]) {"42", NULL, "p"}, "00042#p", NULL);
	check_base("{shard}", NULL, NULL,
			   "template has nothing but the field \"shard\", so keys have no base key");
	check_base("{g}#{shard}", (const char *[]) {"", NULL, NULL}, NULL,
			   "value of field \"g\" is empty");
	check_base("{n:05}#{shard}", (const char *[]) {"-1", NULL, NULL}, NULL,
			   "value \"-1\" of field \"n\" is not a non-negative integer");
}

/* Prefixes for begins_with and key condition bounds. */
static void
test_prefix(void)
{
	const char *lb[] = {"42", NULL, "p1"};
	const char *three[] = {NULL, "x", NULL, "y", NULL, "z", NULL};
	KeyTemplate *t;
	char		err[256] = "";
	Buf			out;

	check_prefix("{score:020}#{player_id}", lb, 0, "");
	check_prefix("{score:020}#{player_id}", lb, 1, "00000000000000000042#");
	check_prefix("{score:020}#{player_id}", lb, 2, "00000000000000000042#p1");
	check_prefix("{score:020}#{player_id}", lb, 5, "00000000000000000042#p1");
	check_prefix("album#{shard}", NULL, 0, "album#");
	check_prefix("album#{shard}", NULL, 1, "album#");
	check_prefix("{game_id}#{shard}", (const char *[]) {"game_X", NULL, NULL}, 0, "");
	check_prefix("{game_id}#{shard}", (const char *[]) {"game_X", NULL, NULL}, 1, "game_X#");
	check_prefix("{game_id}#{shard}", (const char *[]) {"game_X", NULL, NULL}, 2, "game_X#");
	check_prefix("pre/{a}/{b}/{c}.suf", three, 0, "pre/");
	check_prefix("pre/{a}/{b}/{c}.suf", three, 1, "pre/x/");
	check_prefix("pre/{a}/{b}/{c}.suf", three, 2, "pre/x/y/");
	check_prefix("pre/{a}/{b}/{c}.suf", three, 3, "pre/x/y/z.suf");
	check_prefix("{{x}}", NULL, 0, "{x}");

	/* a known value is checked like in a key; the buffer keeps its text */
	t = parse_ok("{score:020}#{player_id}");
	if (t != NULL)
	{
		buf_init(&out);
		buf_puts(&out, "kept");
		CHECK(!keyfmt_render_prefix(t, (const char *[]) {"1.5", NULL, NULL}, 1,
									&out, err, sizeof(err)));
		CHECK_STR(err, "value \"1.5\" of field \"score\" is not a non-negative integer");
		CHECK_STR(out.data, "kept");
		sfdw_free(out.data);
	}
	keyfmt_free(t);
}

/* Decoding stored keys, backtracking included. */
static void
test_decode(void)
{
	KeyTemplate *t;
	KeySpan		spans[4];
	long		shard;
	int			i;
	Buf			key;

	/* the leaderboard */
	check_decode("{game_id}#{shard}", "game_X#3",
				 (const char *[]) {"game_X", "#", "3"}, 3);
	check_decode("{game_id}#{shard}", "game_X#12",
				 (const char *[]) {"game_X", "#", "12"}, 12);
	check_decode("{g}#{shard}", "a#b#3", (const char *[]) {"a#b", "#", "3"}, 3);
	check_decode("{score:020}#{player}", "00000000000000000042#p#1",
				 (const char *[]) {"42", "#", "p#1"}, -1);
	check_decode("{score:020}#{player}", "00000000000000000000#p",
				 (const char *[]) {"0", "#", "p"}, -1);
	/* a legacy key with fewer digits than W still decodes */
	check_decode("{score:020}#{player}", "42#p", (const char *[]) {"42", "#", "p"}, -1);
	check_decode("{a}#{b:02}#{c}", "x#3#y", (const char *[]) {"x", "#", "3", "#", "y"}, -1);
	/* but a split with W digits, as rendered, comes first */
	check_decode("{a}#{b:02}#{c}", "x#3#05#y",
				 (const char *[]) {"x#3", "#", "5", "#", "y"}, -1);
	check_decode("{sc0}#{ore:02}#0{rs}", "1\3260###0#03#0##040026shard48#bob",
				 (const char *[]) {"1\3260###0", "#", "3", "#0", "##040026shard48#bob"}, -1);

	/* the audit log, the range-sharded catalog and the time series */
	check_decode("{file_path}_{shard}", "/shared/firetvGen2.txt_6",
				 (const char *[]) {"/shared/firetvGen2.txt", "_", "6"}, 6);
	check_decode("{file_path}_{shard}", "/shared/my_file_name.txt_10",
				 (const char *[]) {"/shared/my_file_name.txt", "_", "10"}, 10);
	check_decode("album#{shard}", "album#20", (const char *[]) {"album#", "20"}, 20);
	check_decode("{base}#_{shard}", "SENSOR_READING#2023-10-27#_4",
				 (const char *[]) {"SENSOR_READING#2023-10-27", "#_", "4"}, 4);
	check_decode("g#{shard:03}", "g#007", (const char *[]) {"g#", "7"}, 7);

	/* the earliest field takes the shortest span that works */
	check_decode("{a}-{b}-{c}", "x-y-z-w",
				 (const char *[]) {"x", "-", "y", "-", "z-w"}, -1);
	check_decode("{a}-{b:03}", "x-1-002", (const char *[]) {"x-1", "-", "2"}, -1);
	check_decode("{a}#{shard}#{b}", "p#q#1#2#r",
				 (const char *[]) {"p#q", "#", "1", "#", "2#r"}, 1);
	check_decode("{a}.{b}", "...", (const char *[]) {".", ".", "."}, -1);
	check_decode("{{{a}}}", "{{x}}", (const char *[]) {"{", "{x}", "}"}, -1);

	/* keys that do not match */
	check_decode("{game_id}#{shard}", "game_X#", NULL, 0);
	check_decode("{game_id}#{shard}", "#3", NULL, 0);
	check_decode("{game_id}#{shard}", "game_X#3a", NULL, 0);
	check_decode("{game_id}#{shard}", "game_X", NULL, 0);
	check_decode("{game_id}#{shard}", "", NULL, 0);
	check_decode("{game_id}#{shard}", "game_X#1234567890123456789", NULL, 0);
	check_decode("album#{shard}", "albums#7", NULL, 0);
	check_decode("album#{shard}", "album#-7", NULL, 0);
	check_decode("{score:020}#{player}", "000000000000000000x2#p", NULL, 0);
	check_decode("{score:020}#{player}", "00000000000000000042#", NULL, 0);
	check_decode("{a}-{b:03}", "x-y", NULL, 0);

	/* the largest shard that decodes has 18 digits */
	check_decode("{g}#{shard}", "g#999999999999999999",
				 (const char *[]) {"g", "#", "999999999999999999"}, 999999999999999999L);

	/* a {shard:0W} wider than that decodes the keys it renders */
	check_decode("{g}#{shard:025}", "g#0000000000000000000000007",
				 (const char *[]) {"g", "#", "7"}, 7);
	check_decode("{g}#{shard:025}", "g#0000000999999999999999999",
				 (const char *[]) {"g", "#", "999999999999999999"}, 999999999999999999L);
	check_decode("{g}#{shard:025}", "g#0000001000000000000000000", NULL, 0);
	check_decode("{g}#{shard:025}", "g#0100000000000000000000007", NULL, 0);
	check_decode("{g}#{shard:025}", "g#00000000000000000000000007", NULL, 0);

	/* a key full of separators that cannot match is refused quickly */
	t = parse_ok("{a}#{b}#{c}#{d}#{shard}");
	if (t != NULL)
	{
		KeySpan		many[9];

		buf_init(&key);
		for (i = 0; i < 3000; i++)
			buf_putc(&key, '#');
		buf_putc(&key, 'x');
		CHECK(!keyfmt_decode(t, key.data, key.len, many, &shard));
		buf_reset(&key);
		for (i = 0; i < 3000; i++)
			buf_puts(&key, "a#");
		buf_puts(&key, "1");
		CHECK(keyfmt_decode(t, key.data, key.len, many, &shard));
		CHECK(shard == 1 && many[0].len == 1 && many[6].len == 5993);
		sfdw_free(key.data);
	}
	keyfmt_free(t);

	/* spans and a NULL shard pointer; the key need not be NUL-terminated */
	t = parse_ok("{g}#{shard}");
	if (t != NULL)
	{
		CHECK(keyfmt_decode(t, "game_X#3trailing", 8, spans, NULL));
		CHECK(spans[0].start == 0 && spans[0].len == 6);
		CHECK(spans[1].start == 6 && spans[1].len == 1);
		CHECK(spans[2].start == 7 && spans[2].len == 1);
		/* no column text holds a NUL, so no rendered key does */
		CHECK(!keyfmt_decode(t, "ga\0me#3", 8, spans, NULL));
	}
	keyfmt_free(t);
}

/* Render then decode gives back the values. */
static void
test_round_trip(void)
{
	static const char *const scores[] = {"0", "7", "42", "1000", "99999999999999999999"};
	static const char *const players[] = {"p", "p#1", "#", "x#00000000000000000001#y", "\xd0\x93"};
	KeyTemplate *t = parse_ok("{score:020}#{player_id}");
	size_t		i;
	size_t		j;

	if (t == NULL)
		return;
	for (i = 0; i < sizeof(scores) / sizeof(scores[0]); i++)
	{
		for (j = 0; j < sizeof(players) / sizeof(players[0]); j++)
		{
			const char *values[3] = {scores[i], NULL, players[j]};
			char		err[256] = "";
			KeySpan		spans[3];
			Buf			key;
			char	   *score;
			char	   *player;

			buf_init(&key);
			CHECK(keyfmt_render(t, values, 0, &key, err, sizeof(err)));
			CHECK(key.len == 21 + strlen(players[j]));
			CHECK(keyfmt_decode(t, key.data, key.len, spans, NULL));
			score = keyfmt_field_text(t, 0, key.data, &spans[0]);
			player = keyfmt_field_text(t, 2, key.data, &spans[2]);
			CHECK_STR(score, scores[i]);
			CHECK_STR(player, players[j]);
			sfdw_free(score);
			sfdw_free(player);
			sfdw_free(key.data);
		}
	}
	keyfmt_free(t);
}

/*
 * What the planner and the key conditions ask about a template's shape:
 * its leading column, its fields, and how many leading fields are known
 * for some values (indexed by part; "-" marks a value not known).
 */
static void
test_shape(void)
{
	static const struct
	{
		const char *text;
		const char *leading;
		int			fields;
		const char *values[5];
		int			known;
	}			cases[] = {
		{"{score:020}#{player_id}", "score", 2, {"42", NULL, "p"}, 2},
		{"{score:020}#{player_id}", "score", 2, {"42", NULL, "-"}, 1},
		{"{score:020}#{player_id}", "score", 2, {"-", NULL, "p"}, 0},
		{"{game_id}#{shard}", "game_id", 2, {"g", NULL, "-"}, 1},
		{"{g}#{shard}#{x}", "g", 3, {"g", NULL, "-", NULL, "x"}, 1},
		{"album#{shard}", NULL, 1, {NULL, "-"}, 0},
		{"{shard}#{g}", NULL, 2, {"-", NULL, "g"}, 0},
		{"{sk}", "sk", 1, {"s"}, 1},
		{"{sk:010}", "sk", 1, {"-"}, 0},
		{"{sk}#", "sk", 1, {"s", NULL}, 1},
		{"{{{sk}", NULL, 1, {NULL, "s"}, 1},
		{"plain", NULL, 0, {NULL}, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		KeyTemplate *t = parse_ok(cases[i].text);
		const char *values[5];
		const char *lead;

		if (t == NULL)
			continue;
		for (int part = 0; part < 5; part++)
			values[part] = cases[i].values[part] && strcmp(cases[i].values[part], "-") == 0 ?
				NULL : cases[i].values[part];
		lead = keyfmt_leading_column(t);
		if (cases[i].leading == NULL)
			CHECK(lead == NULL);
		else
			CHECK_STR(lead, cases[i].leading);
		CHECK(keyfmt_field_count(t) == cases[i].fields);
		CHECK(keyfmt_known_fields(t, values) == cases[i].known);
		keyfmt_free(t);
	}
}

/*
 * Time forms: the time series' strftime buckets and Python's isoformat(),
 * rendered from the texts the extension writes for timestamptz,
 * timestamp and date values.
 */
static void
test_time_forms(void)
{
	static const struct
	{
		const char *form;
		const char *value;
		const char *want;
	}			cases[] = {
		/* datetime(...).isoformat(), with and without microseconds */
		{"isoformat", "2023-10-27T14:03:05.123456Z", "2023-10-27T14:03:05.123456+00:00"},
		{"isoformat", "2023-10-27T14:03:05.000000Z", "2023-10-27T14:03:05+00:00"},
		{"isoformat", "2023-10-27T14:03:05.001000Z", "2023-10-27T14:03:05.001000+00:00"},
		{"isoformat", "2023-10-27T14:03:05.000005", "2023-10-27T14:03:05.000005"},
		{"isoformat", "2023-10-27T14:03:05.000000", "2023-10-27T14:03:05"},
		{"isoformat", "2023-10-27", "2023-10-27"},
		{"isoformat", "2023-10-27T14:03:05+00:00", "2023-10-27T14:03:05+00:00"},
		{"isoformat", "2023-10-27T14:03:05.5Z", "2023-10-27T14:03:05.500000+00:00"},
		/* strftime('%Y-%m-%dT%H:00:00Z') and strftime('%Y-%m-%d') */
		{"hour", "2023-10-27T14:03:05.123456Z", "2023-10-27T14:00:00Z"},
		{"hour", "2023-10-27T14:03:05.123456", "2023-10-27T14:00:00Z"},
		{"hour", "2023-10-27", "2023-10-27T00:00:00Z"},
		{"day", "2023-10-27T14:03:05.123456Z", "2023-10-27"},
		{"day", "2023-10-27", "2023-10-27"},
		{"minute", "2023-10-27T14:03:05.123456Z", "2023-10-27T14:03:00Z"},
		{"minute", "2023-10-27", "2023-10-27T00:00:00Z"},
		{"month", "2023-10-27T14:03:05.123456Z", "2023-10"},
		{"month", "2023-10-27", "2023-10"},
	};
	static const char *const bad[] = {
		"27.10.2023", "2023-10-27 14:03:05", "2023-10-27T14:03", "2023-10-27T14:03:05.",
		"2023-10-27T14:03:05.1234567Z", "2023-10-27T14:03:05+02:00", "2023-10-27Z",
		"2023-10-27T14:03:05Zx",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		char		text[64];
		const char *values[2] = {NULL, cases[i].value};
		char		want[128];

		snprintf(text, sizeof(text), "dev#{ts:%s}", cases[i].form);
		snprintf(want, sizeof(want), "dev#%s", cases[i].want);
		check_render(text, values, 0, want, NULL);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		const char *values[1] = {bad[i]};
		char		want[128];

		snprintf(want, sizeof(want), "value \"%s\" of field \"ts\" is not a date or timestamp",
				 bad[i]);
		check_render("{ts:day}", values, 0, NULL, want);
	}

	/*
	 * the time series' keys: the day in the partition key, isoformat in the
	 * sort key
	 */
	{
		const char *pk[5] = {NULL, "2023-10-27T14:03:05.123456Z", NULL, NULL, NULL};
		const char *sk[3] = {"2023-10-27T14:03:05.123456Z", NULL, "dev-xyz-789"};
		const char *gsi[3] = {"device-group-A", NULL, "2023-10-27T14:59:59.999999Z"};

		check_render("SENSOR_READING#{ts:day}#_{shard}", pk, 7,
					 "SENSOR_READING#2023-10-27#_7", NULL);
		check_render("{ts:isoformat}#{device_id}", sk, 0,
					 "2023-10-27T14:03:05.123456+00:00#dev-xyz-789", NULL);
		check_render("{group}#{ts:hour}", gsi, 0, "device-group-A#2023-10-27T14:00:00Z", NULL);
	}

	/* a time form is no format of {shard} */
	check_parse_error("{shard:day}",
					  "field \"shard\" has unsupported format \"day\" (only 0W, zero padding to width W, is supported)");
	check_parse_error("{ts:Day}#x",
					  "field \"ts\" has unsupported format \"Day\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)");

	/* bounds of key conditions render one field */
	{
		KeyTemplate *t = parse_ok("{ts:isoformat}#{id}");
		char		err[256] = "";
		Buf			out;

		if (t != NULL)
		{
			buf_init(&out);
			buf_puts(&out, "kept:");
			CHECK(keyfmt_render_field(&t->parts[0], "2023-10-27T14:00:00.000000Z", &out,
									  err, sizeof(err)));
			CHECK_STR(out.data, "kept:2023-10-27T14:00:00+00:00");
			CHECK(!keyfmt_render_field(&t->parts[0], "now", &out, err, sizeof(err)));
			CHECK_STR(out.data, "kept:2023-10-27T14:00:00+00:00");
			CHECK(keyfmt_decodes(&t->parts[0]));
			CHECK(!keyfmt_is_bucket(&t->parts[0]));
			CHECK(!keyfmt_decodes(&t->parts[1]));
			sfdw_free(out.data);
			keyfmt_free(t);
		}
	}
}

/*
 * Decoding time forms: buckets match their shape only and give no value
 * back; isoformat fields match every ISO-8601 form PostgreSQL reads.
 */
static void
test_time_decode(void)
{
	/* the bucket's shape decides where the group ends */
	check_decode("{g}#{ts:hour}", "a#b#2023-10-27T14:00:00Z",
				 (const char *const[]) {"a#b", NULL, "2023-10-27T14:00:00Z"}, -1);
	check_decode("{g}#{ts:hour}", "a#2023-10-27T14:03:00Z", NULL, -1);
	check_decode("{g}#{ts:day}#_{shard}", "SENSOR_READING#2023-10-27#_7",
				 (const char *const[]) {"SENSOR_READING", NULL, "2023-10-27", NULL, "7"}, 7);
	check_decode("{g}#{ts:day}#_{shard}", "SENSOR_READING#2023-10#_7", NULL, -1);
	check_decode("{ts:month}", "2023-10", (const char *const[]) {"2023-10"}, -1);
	check_decode("{ts:minute}", "2023-10-27T14:03:00Z",
				 (const char *const[]) {"2023-10-27T14:03:00Z"}, -1);
	check_decode("{ts:minute}", "2023-10-27T14:03:01Z", NULL, -1);

	/* isoformat() with and without microseconds, the Z form, offsets */
	check_decode("{ts:isoformat}#{id}", "2023-10-27T14:03:05.123456+00:00#u-1",
				 (const char *const[]) {"2023-10-27T14:03:05.123456+00:00", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}#{id}", "2023-10-27T14:03:05+00:00#u-1",
				 (const char *const[]) {"2023-10-27T14:03:05+00:00", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}#{id}", "2023-10-27T14:03:05.123456Z#u-1",
				 (const char *const[]) {"2023-10-27T14:03:05.123456Z", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}#{id}", "2023-10-27T16:03:05.123456789+02:00#u-1",
				 (const char *const[]) {"2023-10-27T16:03:05.123456789+02:00", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}#{id}", "2023-10-27T14:03:05#u-1",
				 (const char *const[]) {"2023-10-27T14:03:05", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}#{id}", "2023-10-27#u-1",
				 (const char *const[]) {"2023-10-27", NULL, "u-1"}, -1);
	check_decode("{ts:isoformat}", "2023-10-27T14:03:05.+00:00", NULL, -1);
	check_decode("{ts:isoformat}", "2023-10-27T14:03:05+0000", NULL, -1);
	check_decode("{ts:isoformat}#{id}", "yesterday#u-1", NULL, -1);
	/* the plain form takes any text, as before */
	check_decode("{ts}#{id}", "2023-10-27T14:03:05+00:00#u-1",
				 (const char *const[]) {"2023-10-27T14:03:05+00:00", NULL, "u-1"}, -1);
}

/*
 * Buckets as instants (microseconds since 2000-01-01 UTC): starts and the
 * next bucket, across month, year and leap-day ends and before 2000.
 */
static void
test_buckets(void)
{
	const int64_t hour = (int64_t) 3600 * 1000000;
	const int64_t day = 24 * hour;
	/* 2023-10-27 14:03:05.123456 */
	const int64_t t = (int64_t) 8700 * day + 14 * hour + 185123456;
	/* 2024-02-29 is day 8825, 2024-03-01 day 8826; 1999-12-31 day -1 */
	static const struct
	{
		KeyTimeForm form;
		int64_t		usecs;
		int64_t		start;
		int64_t		next;
	}			cases[] = {
		{KT_MINUTE, 0, 0, 60000000},
		{KT_HOUR, 14 * hour + 185123456, 14 * hour, 15 * hour},
		{KT_DAY, -1, -day, 0},
		{KT_HOUR, -1, -hour, 0},
		{KT_MONTH, 8825 * day + 5, 8797 * day, 8826 * day},
		{KT_MONTH, -1, -31 * day, 0},
		{KT_MONTH, 0, 0, 31 * day},
		{KT_MONTH, 8765 * day, 8766 * day - 31 * day, 8766 * day},
	};

	CHECK(keyfmt_bucket_start(KT_DAY, t) == (int64_t) 8700 * day);
	CHECK(keyfmt_bucket_start(KT_HOUR, t) == (int64_t) 8700 * day + 14 * hour);
	CHECK(keyfmt_bucket_start(KT_MINUTE, t) == (int64_t) 8700 * day + 14 * hour + 180000000);
	/* 2023-10-01 is day 8674, 2023-11-01 day 8705 */
	CHECK(keyfmt_bucket_start(KT_MONTH, t) == (int64_t) 8674 * day);
	CHECK(keyfmt_bucket_next(KT_MONTH, (int64_t) 8674 * day) == (int64_t) 8705 * day);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		CHECK(keyfmt_bucket_start(cases[i].form, cases[i].usecs) == cases[i].start);
		CHECK(keyfmt_bucket_next(cases[i].form, cases[i].start) == cases[i].next);
	}
	{
		KeyTemplate *tmpl = parse_ok("{g}|{ts:month}|{ts:hour}|{ts:isoformat}|{u:day}");

		if (tmpl != NULL)
		{
			CHECK(keyfmt_finest_bucket(tmpl, "ts") == KT_HOUR);
			CHECK(keyfmt_finest_bucket(tmpl, "u") == KT_DAY);
			CHECK(keyfmt_finest_bucket(tmpl, "g") == KT_PLAIN);
			keyfmt_free(tmpl);
		}
	}
}

/* A long message is cut at a character boundary. */
static void
test_error_truncation(void)
{
	char		err[11];
	KeyTemplate *t;

	/* 'field "ГГ" has ...' does not fit, and the cut falls inside the second Г */
	t = keyfmt_parse("{\xd0\x93\xd0\x93:x}", err, sizeof(err));
	CHECK(t == NULL);
	CHECK_STR(err, "field \"\xd0\x93");
	keyfmt_free(t);
}

void
suite_keyfmt(void)
{
	test_parse_errors();
	test_parse_parts();
	test_render();
	test_base();
	test_prefix();
	test_decode();
	test_round_trip();
	test_shape();
	test_time_forms();
	test_time_decode();
	test_buckets();
	test_error_truncation();
}
