/*-------------------------------------------------------------------------
 *
 * test_infer.c
 *		Unit tests of what sampled keys say about a table (src/infer.c):
 *		shard suffixes, zero-padded sort keys, the hash that places items,
 *		and timestamps.
 *
 * The shards of the players below were computed once with Debian's
 * /usr/bin/python3: FNV-1a 32 of the UTF-8 bytes % 10 (as the leaderboard
 * article's hash(player_id) % N), and int(md5(name).hexdigest(), 16) % 10.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "core/infer.h"
#include "unit.h"

#define LEN(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* Keys split as <base><sep><shard>, and keys that are not. */
static void
test_split(void)
{
	InferSplit	s;

	CHECK(infer_split_shard("game_X#7", 8, &s));
	CHECK(s.base_len == 6 && s.sep == '#' && s.shard == 7);
	CHECK(infer_split_shard("/shared/f.txt_10", 16, &s));
	CHECK(s.base_len == 13 && s.sep == '_' && s.shard == 10);
	CHECK(infer_split_shard("a:0", 3, &s));
	CHECK(s.shard == 0 && s.sep == ':');
	CHECK(!infer_split_shard("game_X", 6, &s));	/* no number */
	CHECK(!infer_split_shard("#7", 2, &s));	/* no base */
	CHECK(!infer_split_shard("game7", 5, &s));	/* no separator */
	CHECK(!infer_split_shard("game#07", 7, &s));	/* zero-padded */
	CHECK(!infer_split_shard("game{7", 6, &s));	/* a brace */
	CHECK(!infer_split_shard("g#1234567890", 12, &s));	/* an id */
}

/* Partition keys that are sharded, and those that only look alike. */
static void
test_shards(void)
{
	static const char *const zero_based[] = {
		"game_X#0", "game_X#3", "game_X#9", "game_Y#1", "game_X#5",
		"game_Y#2", "game_X#7", "game_X#4", "game_X#8", "game_Y#6",
	};
	static const char *const one_based[] = {
		"/a.txt_1", "/a.txt_2", "/a.txt_4", "/b.txt_3", "/a.txt_3",
	};
	static const char *const mixed_separators[] = {"g#0", "g#1", "g_2", "g#3"};
	static const char *const two_bases[] = {"a#0", "b#1", "c#2", "d#3"};
	static const char *const sparse[] = {"order#0", "order#1", "order#90", "order#7"};
	static const char *const from_two[] = {"g#2", "g#3", "g#4"};
	static const char *const one_shard[] = {"g#0", "g#0", "h#0"};
	static const char *const plain[] = {"alice", "bob#1", "bob#2"};
	InferShards s;

	CHECK(infer_shards(zero_based, LEN(zero_based), &s));
	CHECK(s.sep == '#' && s.shards == 10 && s.base == 0);
	CHECK(infer_shards(one_based, LEN(one_based), &s));
	CHECK(s.sep == '_' && s.shards == 4 && s.base == 1);
	CHECK(!infer_shards(mixed_separators, LEN(mixed_separators), &s));
	CHECK(!infer_shards(two_bases, LEN(two_bases), &s));
	CHECK(!infer_shards(sparse, LEN(sparse), &s));
	CHECK(!infer_shards(from_two, LEN(from_two), &s));
	CHECK(!infer_shards(one_shard, LEN(one_shard), &s));
	CHECK(!infer_shards(plain, LEN(plain), &s));
	CHECK(!infer_shards(zero_based, 1, &s));
}

/* Sort keys of the form <zero-padded number><sep><text>. */
static void
test_sort_key(void)
{
	static const char *const scores[] = {
		"00000000000000004200#ann", "00000000000000000007#bob#2",
		"00000000000000987654#c",
	};
	static const char *const widths[] = {"0042#a", "00042#b"};
	static const char *const seps[] = {"0042#a", "0043_b"};
	static const char *const no_text[] = {"0042#"};
	static const char *const no_number[] = {"#a"};
	static const char *const one_digit[] = {"4#a"};
	static const char *const letters[] = {"ann#0042"};
	InferSortKey k;

	CHECK(infer_sort_key(scores, LEN(scores), &k));
	CHECK(k.width == 20 && k.sep == '#');
	CHECK(!infer_sort_key(widths, LEN(widths), &k));
	CHECK(!infer_sort_key(seps, LEN(seps), &k));
	CHECK(!infer_sort_key(no_text, LEN(no_text), &k));
	CHECK(!infer_sort_key(no_number, LEN(no_number), &k));
	CHECK(!infer_sort_key(one_digit, LEN(one_digit), &k));
	CHECK(!infer_sort_key(letters, LEN(letters), &k));
	CHECK(!infer_sort_key(scores, 0, &k));
}

/* The hash that put each player in its shard. */
static void
test_hash(void)
{
	static const char *const players[] = {
		"ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon",
	};
	static const long fnv[] = {0, 4, 1, 4, 3, 3, 2, 8, 3, 6};
	static const long md5[] = {4, 2, 2, 2, 2, 5, 6, 6, 4, 5};
	size_t		lens[LEN(players)];
	long		shifted[LEN(players)];
	ShardHash	h = SHARD_HASH_SHA256;

	for (int i = 0; i < LEN(players); i++)
	{
		lens[i] = strlen(players[i]);
		shifted[i] = md5[i] + 1;
	}
	CHECK(infer_hash(players, lens, fnv, LEN(players), 10, 0, &h));
	CHECK(h == SHARD_HASH_FNV1A_32);
	CHECK(infer_hash(players, lens, shifted, LEN(players), 10, 1, &h));
	CHECK(h == SHARD_HASH_MD5);
	/* the shards of a random suffix follow no hash */
	CHECK(!infer_hash(players, lens, md5, LEN(players), 10, 1, &h));
	/* too few items to tell */
	CHECK(!infer_hash(players, lens, fnv, INFER_MIN_HASH_ITEMS - 1, 10, 0, &h));
}

/* ISO-8601 timestamps, and texts that only look like one. */
static void
test_timestamp(void)
{
	CHECK(infer_is_timestamp("2024-01-02T03:04:05.123456Z"));
	CHECK(infer_is_timestamp("2024-01-02T03:04:05Z"));
	CHECK(infer_is_timestamp("2024-01-02T03:04:05.5+02:00"));
	CHECK(infer_is_timestamp("2024-01-02T03:04:05-07:30"));
	CHECK(!infer_is_timestamp("2024-01-02 03:04:05Z"));
	CHECK(!infer_is_timestamp("2024-01-02T03:04:05"));
	CHECK(!infer_is_timestamp("2024-01-02T03:04:05.Z"));
	CHECK(!infer_is_timestamp("2024-01-02T03:04:05Zx"));
	CHECK(!infer_is_timestamp("2024-01-02"));
	CHECK(!infer_is_timestamp("2024-01-02T03:04:05+0200"));
	CHECK(!infer_is_timestamp(""));
}

void
suite_infer(void)
{
	test_split();
	test_shards();
	test_sort_key();
	test_hash();
	test_timestamp();
}
