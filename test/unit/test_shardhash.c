/*-------------------------------------------------------------------------
 *
 * test_shardhash.c
 *		Unit tests of shard routing (src/shardhash.c): the articles' hash
 *		formulas, FNV-1a, the range boundary search with Python's lower(),
 *		and the uniformity of every hash.
 *
 * Every expected value below was computed once with Debian's
 * /usr/bin/python3 (3.11, Unicode 14.0) using only hashlib, bisect and
 * unicodedata; the comment above each table gives the expression.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>

#include "core/shardhash.h"
#include "unit.h"

/* The bucket of a NUL-terminated string. */
static int
bucket(ShardHash h, const char *s, int nshards)
{
	return shardhash_bucket(h, (const unsigned char *) s, strlen(s), nshards);
}

/* Hash names, both ways. */
static void
test_names(void)
{
	static const char *const names[] = {"sha256", "sha256_32", "md5", "fnv1a_32", "fnv1a_64"};
	static const char *const bad[] = {"", "SHA256", "sha-256", "crc32", "fnv1a", "md5 "};
	ShardHash	h;
	size_t		i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
	{
		CHECK(shardhash_from_name(names[i], &h));
		CHECK((size_t) h == i);
		CHECK_STR(shardhash_name(h), names[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		h = SHARD_HASH_FNV1A_64;
		CHECK(!shardhash_from_name(bad[i], &h));
		CHECK(h == SHARD_HASH_FNV1A_64);
	}
}

/* The audit log: shard = md5(<File Path> + timestamp) % 10 + 1. */
static void
test_audit_log_md5(void)
{
	/* int(hashlib.md5((path + ts).encode()).hexdigest(), 16) % 10 + 1 */
	static const struct
	{
		const char *path;
		const char *ts;
		int			shard;
	}			cases[] = {
		{"/shared/firetvGen2.txt", "123456789101", 5},
		{"/shared/firetvGen2.txt", "123456789102", 8},
		{"/shared/firetvGen2.txt", "1562858912", 6},
		{"/shared/firetvGen2.txt", "1561758912", 8},
		{"/shared/report.pdf", "1700000000", 9},
		{"/shared/report.pdf", "1700000001", 7},
		{"/home/alice/notes.md", "1600000000", 4},
		{"/var/log/syslog", "1234567890", 1},
		{"/shared/firetvGen2.txt", "", 5},
		{"/", "0", 1},
		{"/data/a.csv", "1690000000123", 10},
		{"/shared/\303\274n\303\257code.txt", "1562858912", 4},
		{"/tmp/x", "42", 6},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		char		s[128];

		snprintf(s, sizeof(s), "%s%s", cases[i].path, cases[i].ts);
		CHECK(bucket(SHARD_HASH_MD5, s, 10) + 1 == cases[i].shard);
	}
}

/*
 * The ordered-sharding article's hash suffix of album titles:
 * int.from_bytes(sha256(title.encode()).digest()) % 21.
 */
static void
test_album_title_sha256(void)
{
	/* int.from_bytes(hashlib.sha256(t.encode()).digest(), 'big') % 21 */
	static const struct
	{
		const char *title;
		int			shard;
	}			cases[] = {
		{"Leaving Home", 6},		/* the article's album#6 */
		{"Heavy Migration", 8},		/* the article's album#8 */
		{"2 Pie Island", 14},
		{"Space Cadet", 12},
		{"Greatest Hits", 17},
		{"Demo", 5},
		{"\320\223\320\276\320\273\320\276\321\201", 18},	/* Голос */
		{"\303\234ber Alles", 9},
		{"The Human Touch", 7},
		{"", 1},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(bucket(SHARD_HASH_SHA256, cases[i].title, 21) == cases[i].shard);
}

/* The time series: int(sha256(key).hexdigest()[:8], 16) % N. */
static void
test_time_series_sha256_32(void)
{
	static const int ns[] = {10, 20, 16, 7, 1, 2147483647};

	/* [int(hashlib.sha256(s.encode()).hexdigest()[:8], 16) % n for n in ns] */
	static const struct
	{
		const char *key;
		int			shard[6];
	}			cases[] = {
		{"dev-xyz-789", {8, 8, 0, 1, 0, 460697728}},	/* 1b75b080 */
		{"dev-abc-123", {3, 13, 13, 1, 0, 1903631213}},	/* 71771b6d */
		{"SENSOR_READING#2023-10-27", {7, 17, 1, 0, 0, 328043330}},
		{"device-group-A", {8, 18, 2, 2, 0, 985472658}},
		{"", {0, 10, 2, 1, 0, 1672528963}},	/* e3b0c442 */
	};
	size_t		i;
	size_t		j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
			CHECK(bucket(SHARD_HASH_SHA256_32, cases[i].key, ns[j]) ==
				  cases[i].shard[j]);
}

/* The full-width digests mod large N, and the range of N. */
static void
test_large_n(void)
{
	/*
	 * int.from_bytes(hashlib.sha256(s.encode()).digest(), 'big') % n and
	 * int(hashlib.md5(s.encode()).hexdigest(), 16) % n
	 */
	CHECK(bucket(SHARD_HASH_SHA256, "dev-xyz-789", 2147483647) == 977658907);
	CHECK(bucket(SHARD_HASH_MD5, "dev-xyz-789", 2147483647) == 715778070);
	CHECK(bucket(SHARD_HASH_SHA256, "dev-xyz-789", 1000003) == 931631);
	CHECK(bucket(SHARD_HASH_MD5, "dev-xyz-789", 1000003) == 443339);
	CHECK(bucket(SHARD_HASH_SHA256, "Leaving Home", 2147483647) == 1926009420);
	CHECK(bucket(SHARD_HASH_MD5, "Leaving Home", 2147483647) == 642439183);
	CHECK(bucket(SHARD_HASH_SHA256, "Leaving Home", 1000003) == 124016);
	CHECK(bucket(SHARD_HASH_MD5, "Leaving Home", 1000003) == 483393);

	CHECK(bucket(SHARD_HASH_SHA256, "x", 1) == 0);
	CHECK(bucket(SHARD_HASH_FNV1A_64, "x", 1) == 0);
	CHECK(bucket(SHARD_HASH_SHA256, "x", 0) == -1);
	CHECK(bucket(SHARD_HASH_MD5, "x", -3) == -1);
	CHECK(bucket(SHARD_HASH_FNV1A_32, "x", 0) == -1);
	CHECK(shardhash_bucket(SHARD_HASH_SHA256, NULL, 0, 21) == 1);
}

/* FNV-1a known answers and buckets. */
static void
test_fnv1a(void)
{
	/*
	 * h = 0x811c9dc5; for b in s.encode(): h = ((h ^ b) * 0x01000193) &
	 * 0xffffffff (and the 64-bit analogue), then [h % n for n in (10, 7,
	 * 2147483647)]
	 */
	static const struct
	{
		const char *s;
		uint32_t	h32;
		uint64_t	h64;
		int			b32[3];
		int			b64[3];
	}			cases[] = {
		{"", 0x811c9dc5, UINT64_C(0xcbf29ce484222325),
		{1, 2, 18652614}, {7, 2, 470244593}},
		{"a", 0xe40c292c, UINT64_C(0xaf63dc4c8601ec8c),
		{0, 5, 1678518573}, {6, 5, 1690936615}},
		{"foobar", 0xbf9cf968, UINT64_C(0x85944171f73967e8),
		{0, 0, 1067252073}, {8, 6, 39971534}},
		{"player-1", 0xd56e9712, UINT64_C(0x212e1ef85a029ab2),
		{2, 5, 1433310995}, {6, 4, 475977891}},
		{"game_X", 0x6799b470, UINT64_C(0x6df2395c8b080910),
		{8, 2, 1738126448}, {2, 2, 1726774218}},
		{"\320\223\320\276\320\273\320\276\321\201", 0xc68078af,
			UINT64_C(0x157666a5f2f41a2f),
		{1, 3, 1182824624}, {5, 1, 501278587}},
	};
	static const int ns[] = {10, 7, 2147483647};
	size_t		i;
	size_t		j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const unsigned char *s = (const unsigned char *) cases[i].s;
		size_t		len = strlen(cases[i].s);

		CHECK(shardhash_fnv1a_32(s, len) == cases[i].h32);
		CHECK(shardhash_fnv1a_64(s, len) == cases[i].h64);
		for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
		{
			CHECK(shardhash_bucket(SHARD_HASH_FNV1A_32, s, len, ns[j]) ==
				  cases[i].b32[j]);
			CHECK(shardhash_bucket(SHARD_HASH_FNV1A_64, s, len, ns[j]) ==
				  cases[i].b64[j]);
		}
	}
}

/*
 * The range-sharded catalog's ALBUM_TITLE_BOUNDARIES, as the article
 * prints them.
 */
static const char *const album_bounds[] = {
	"",
	"agartha",
	"barstow / crazy",
	"can you feel it",
	"cyan rot",
	"dreams take over eve",
	"feud semiotics (rb. ",
	"grave poetry",
	"i live",
	"kannaval",
	"live in florence",
	"mir ist's gleich / i",
	"notice",
	"platforms ep",
	"rituals",
	"skylten",
	"surtr / absorbed",
	"the human touch",
	"tonttujen jouluy\303\266: ",	/* NFC: U+00F6 */
	"walking away",
	"\320\263\320\276\320\273\320\276\321\201",	/* голос */
};

#define NUM_ALBUM_BOUNDS ((int) (sizeof(album_bounds) / sizeof(album_bounds[0])))

/*
 * The range-sharded catalog's album_shard_id: lower() here, then NFKD
 * (done by the caller in the FDW, so taken from Python here), then the
 * bisect.
 */
static void
test_album_title_range(void)
{
	/*
	 * low = t.lower(); key = unicodedata.normalize('NFKD', low); shard =
	 * bisect.bisect(ALBUM_TITLE_BOUNDARIES, key) - 1
	 */
	static const struct
	{
		const char *title;
		const char *low;
		const char *key;
		int			shard;
	}			cases[] = {
		/* the article's four examples */
		{"2 Pie Island", "2 pie island", "2 pie island", 0},
		{"Heavy Migration", "heavy migration", "heavy migration", 7},
		{"Leaving Home", "leaving home", "leaving home", 9},
		{"Space Cadet", "space cadet", "space cadet", 15},
		/* equal to a boundary, and just before one */
		{"Grave Poetry", "grave poetry", "grave poetry", 7},
		{"Agartha", "agartha", "agartha", 1},
		{"agarth", "agarth", "agarth", 0},
		{"Walking Away", "walking away", "walking away", 19},
		{"", "", "", 0},
		{"ZZZ", "zzz", "zzz", 19},
		/* Голос equals the last boundary once lowered; Голоса follows it */
		{"\320\223\320\276\320\273\320\276\321\201",
			"\320\263\320\276\320\273\320\276\321\201",
			"\320\263\320\276\320\273\320\276\321\201", 20},
		{"\320\223\320\276\320\273\320\276\321\201\320\260",
			"\320\263\320\276\320\273\320\276\321\201\320\260",
			"\320\263\320\276\320\273\320\276\321\201\320\260", 20},
		/* Über Alles, Ölgemälde, Caffè, Ärger: NFKD splits the accents */
		{"\303\234ber Alles", "\303\274ber alles", "u\314\210ber alles", 18},
		{"\303\226lgem\303\244lde", "\303\266lgem\303\244lde",
			"o\314\210lgema\314\210lde", 12},
		{"Caff\303\250", "caff\303\250", "caffe\314\200", 2},
		{"\303\204rger", "\303\244rger", "a\314\210rger", 1},
		/* İstanbul: lower() gives i + U+0307, which sorts after "i live" */
		{"\304\260stanbul", "i\314\207stanbul", "i\314\207stanbul", 8},
		/* ΟΔΟΣ ΠΡΟΣ: both sigmas end a word */
		{"\316\237\316\224\316\237\316\243 \316\240\316\241\316\237\316\243",
			"\316\277\316\264\316\277\317\202 \317\200\317\201\316\277\317\202",
			"\316\277\316\264\316\277\317\202 \317\200\317\201\316\277\317\202", 19},
		/*
		 * The boundary is printed in NFC while keys are NFKD: o + U+0308
		 * sorts before U+00F6, so this title falls before its boundary.
		 */
		{"Tonttujen jouluy\303\266: Live", "tonttujen jouluy\303\266: live",
			"tonttujen jouluyo\314\210: live", 17},
		/* 日本の歌 */
		{"\346\227\245\346\234\254\343\201\256\346\255\214",
			"\346\227\245\346\234\254\343\201\256\346\255\214",
			"\346\227\245\346\234\254\343\201\256\346\255\214", 20},
		/* Ⅸ Symphony and the ﬁ ligature: NFKD expands them */
		{"\342\205\250 Symphony", "\342\205\270 symphony", "ix symphony", 8},
		{"\357\254\201re", "\357\254\201re", "fire", 6},
	};
	size_t		lens[NUM_ALBUM_BOUNDS];
	size_t		i;

	for (i = 0; i < (size_t) NUM_ALBUM_BOUNDS; i++)
		lens[i] = strlen(album_bounds[i]);
	CHECK(shardrange_sorted(album_bounds, lens, NUM_ALBUM_BOUNDS));

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		Buf			low;

		buf_init(&low);
		CHECK(shardrange_lower(cases[i].title, strlen(cases[i].title), &low));
		CHECK_STR(low.data, cases[i].low);
		CHECK(shardrange_find(album_bounds, lens, NUM_ALBUM_BOUNDS, cases[i].key,
							  strlen(cases[i].key)) == cases[i].shard);
		sfdw_free(low.data);
	}
}

/* The boundary search and the sortedness check on their own. */
static void
test_range_edges(void)
{
	static const char *const bounds[] = {"b", "d", "d\001", "f"};
	static const size_t lens[] = {1, 1, 2, 1};
	static const char *const nul_bounds[] = {"", "a\0b", "a\0c"};
	static const size_t nul_lens[] = {0, 3, 3};
	static const char *const dup[] = {"", "a", "a"};
	static const char *const down[] = {"", "b", "a"};
	static const char *const high[] = {"", "\177", "\303\200"};
	static const size_t lens3[] = {0, 1, 1};
	static const size_t high_lens[] = {0, 1, 2};

	/* bisect.bisect(['b', 'd', 'd\x01', 'f'], k) - 1 */
	CHECK(shardrange_find(bounds, lens, 4, "a", 1) == -1);
	CHECK(shardrange_find(bounds, lens, 4, "", 0) == -1);
	CHECK(shardrange_find(bounds, lens, 4, "b", 1) == 0);
	CHECK(shardrange_find(bounds, lens, 4, "c", 1) == 0);
	CHECK(shardrange_find(bounds, lens, 4, "d", 1) == 1);
	CHECK(shardrange_find(bounds, lens, 4, "d\000", 2) == 1);
	CHECK(shardrange_find(bounds, lens, 4, "d\001", 2) == 2);
	CHECK(shardrange_find(bounds, lens, 4, "e", 1) == 2);
	CHECK(shardrange_find(bounds, lens, 4, "f", 1) == 3);
	CHECK(shardrange_find(bounds, lens, 4, "\377", 1) == 3);
	CHECK(shardrange_find(bounds, lens, 1, "z", 1) == 0);
	CHECK(shardrange_find(bounds, lens, 0, "z", 1) == -1);
	CHECK(shardrange_sorted(bounds, lens, 4));

	/* bytes after a NUL count */
	CHECK(shardrange_find(nul_bounds, nul_lens, 3, "a\0b", 3) == 1);
	CHECK(shardrange_find(nul_bounds, nul_lens, 3, "a\0bb", 4) == 1);
	CHECK(shardrange_find(nul_bounds, nul_lens, 3, "a\0c", 3) == 2);
	CHECK(shardrange_find(nul_bounds, nul_lens, 3, "a", 1) == 0);

	/* U+007F < U+00C0, so bytes compare unsigned */
	CHECK(shardrange_sorted(high, high_lens, 3));
	CHECK(shardrange_find(high, high_lens, 3, "\303\200", 2) == 2);
	CHECK(shardrange_find(high, high_lens, 3, "\177\177", 2) == 1);

	CHECK(!shardrange_sorted(dup, lens3, 3));
	CHECK(!shardrange_sorted(down, lens3, 3));
	CHECK(shardrange_sorted(dup, lens3, 1));
	CHECK(shardrange_sorted(dup, lens3, 0));
}

/* Python's str.lower(), final sigma included; invalid UTF-8 refused. */
static void
test_lower(void)
{
	/* [s, s.lower()] */
	static const struct
	{
		const char *s;
		const char *low;
	}			cases[] = {
		{"\316\237\316\224\316\237\316\243", "\316\277\316\264\316\277\317\202"},	/* ΟΔΟΣ */
		{"\316\243", "\317\203"},	/* Σ */
		{"\316\221\316\243\316\222", "\316\261\317\203\316\262"},	/* ΑΣΒ */
		{"\316\221\316\243 \316\222", "\316\261\317\202 \316\262"},	/* ΑΣ Β */
		{"\316\221\316\243'\316\222", "\316\261\317\203'\316\262"},	/* ΑΣ'Β */
		{"\316\221'\316\243", "\316\261'\317\202"},	/* Α'Σ */
		{"1\316\243", "1\317\203"},	/* 1Σ */
		{"\316\221\316\243\314\201", "\316\261\317\202\314\201"},	/* ΑΣ + U+0301 */
		{"\316\221\316\2431", "\316\261\317\2021"},	/* ΑΣ1 */
		{"\316\221\316\243.", "\316\261\317\202."},	/* ΑΣ. */
		{"\316\243\316\221", "\317\203\316\261"},	/* ΣΑ */
		{"\316\214\316\243\316\237\316\243 \316\225\316\212\316\243\316\221\316\231",
		"\317\214\317\203\316\277\317\202 \316\265\316\257\317\203\316\261\316\271"},
		{"\341\272\236ig", "\303\237ig"},	/* ẞ */
		{"\342\204\252elvin", "kelvin"},	/* Kelvin sign */
		{"\307\205emal", "\307\206emal"},	/* titlecase ǅ */
		{"\303\200\303\211\303\216\303\225\303\234", "\303\240\303\251\303\256\303\265\303\274"},
		{"\304\260i", "i\314\207i"},	/* İ */
		{"ABC xyz 123", "abc xyz 123"},
		{"\360\220\220\200", "\360\220\220\250"},	/* U+10400 Deseret */
	};
	/* not UTF-8: overlong, surrogate, truncated, beyond U+10FFFF, stray */
	static const char *const invalid[] = {
		"\300\200", "\301\277", "\340\237\277", "\355\240\200", "\342\202",
		"a\303", "\364\220\200\200", "\365\200\200\200", "\200", "\377",
		"\360\200\200\200",
	};
	Buf			out;
	size_t		i;

	buf_init(&out);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		buf_reset(&out);
		CHECK(shardrange_lower(cases[i].s, strlen(cases[i].s), &out));
		CHECK_STR(out.data, cases[i].low);
	}
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
	{
		buf_reset(&out);
		buf_puts(&out, "kept");
		CHECK(!shardrange_lower(invalid[i], strlen(invalid[i]), &out));
		CHECK_STR(out.data, "kept");
	}

	/* an embedded NUL is a code point like any other */
	buf_reset(&out);
	CHECK(shardrange_lower("A\0B", 3, &out));
	CHECK(out.len == 3 && memcmp(out.data, "a\0b", 3) == 0);
	sfdw_free(out.data);
}

/*
 * Chi-square statistic of 100,000 keys "player-%d" (0..99999) in nshards
 * buckets.
 */
static double
chi_square(ShardHash h, int nshards)
{
	long		counts[16] = {0};
	double		expected = 100000.0 / nshards;
	double		stat = 0;
	int			i;

	for (i = 0; i < 100000; i++)
	{
		char		key[32];
		int			b;

		snprintf(key, sizeof(key), "player-%d", i);
		b = bucket(h, key, nshards);
		if (b >= 0 && b < nshards)
			counts[b]++;
	}
	for (i = 0; i < nshards; i++)
		stat += (counts[i] - expected) * (counts[i] - expected) / expected;
	return stat;
}

/* Every hash spreads keys evenly, and its statistic matches Python's. */
static void
test_uniformity(void)
{
	/*
	 * c = [0] * n; for i in range(100000): c[bucket('player-%d' % i)] += 1;
	 * round(sum((x - 1e5 / n) ** 2 / (1e5 / n) for x in c), 3), with bucket
	 * the formulas above
	 */
	static const struct
	{
		ShardHash	h;
		double		stat10;
		double		stat7;
	}			cases[] = {
		{SHARD_HASH_SHA256, 7.541, 14.453},
		{SHARD_HASH_SHA256_32, 7.315, 2.209},
		{SHARD_HASH_MD5, 11.993, 8.402},
		{SHARD_HASH_FNV1A_32, 3.661, 1.077},
		{SHARD_HASH_FNV1A_64, 0.770, 5.901},
	};
	/* the 0.999 quantiles of chi-square with 9 and 6 degrees of freedom */
	const double limit9 = 27.88;
	const double limit6 = 22.46;
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		double		s10 = chi_square(cases[i].h, 10);
		double		s7 = chi_square(cases[i].h, 7);

		CHECK(s10 < limit9);
		CHECK(s7 < limit6);
		CHECK(s10 - cases[i].stat10 < 0.0005 && cases[i].stat10 - s10 < 0.0005);
		CHECK(s7 - cases[i].stat7 < 0.0005 && cases[i].stat7 - s7 < 0.0005);
	}
}

void
suite_shardhash(void)
{
	test_names();
	test_audit_log_md5();
	test_album_title_sha256();
	test_time_series_sha256_32();
	test_large_n();
	test_fnv1a();
	test_album_title_range();
	test_range_edges();
	test_lower();
	test_uniformity();
}
