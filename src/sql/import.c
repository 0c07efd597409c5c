/*-------------------------------------------------------------------------
 *
 * import.c
 *		IMPORT FOREIGN SCHEMA: a CREATE FOREIGN TABLE for every DynamoDB
 *		table of the server (ListTables), and one for each of its global
 *		and local secondary indexes, from DescribeTable and a bounded
 *		sample of items.
 *
 * Columns are named and typed from the key schema and the attributes the
 * sample holds.  A partition key written as <base><separator><n>, n over
 * 0..N-1 or 1..N, becomes partition_key_format '{column}<sep>{shard}'
 * with shards N and shard_base; a sort key <zero-padded number><sep><text>
 * becomes sort_key_format '{column:0W}<sep>{column}'.  The columns of
 * those fields take the names of attributes the items also hold with the
 * same values (score, player_id), or generic names.  The shard strategy is
 * calculated when a shard hash of some column places every sampled item
 * in its shard, random otherwise.  What infers the templates from the
 * keys is plain C, in infer.c.
 *
 * The statements are plain CREATE FOREIGN TABLEs, which PostgreSQL runs
 * and the extension's event trigger checks like any other.
 *
 *-------------------------------------------------------------------------
 */
#include "sql/sql.h"

#include "catalog/heap.h"
#include "commands/defrem.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "core/infer.h"

/* Import options: defaults and bounds. */
#define DEFAULT_SAMPLE_SIZE 100
#define MAX_SAMPLE_SIZE 1000

/* Sampled items per Scan segment, and how many bases the shards are probed in. */
#define ITEMS_PER_SEGMENT 10
#define PROBED_BASES 2
#define ITEMS_PER_PROBE 5

typedef struct ImportOptions
{
	int			sample_size;
	bool		detect_shards;
	char	   *item_column;	/* a jsonb column holding the whole item */
} ImportOptions;

/* The DynamoDB types an attribute was seen with, and its numbers' form. */
typedef enum AvKind
{
	AV_S, AV_N, AV_B, AV_BOOL, AV_NULL, AV_M, AV_L, AV_SS, AV_NS, AV_BS,
	AV_KINDS
} AvKind;

static const char *const av_tags[AV_KINDS] = {
	"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"
};

typedef struct AttrStats
{
	char	   *name;
	int			seen;			/* items holding it */
	int			kinds[AV_KINDS];
	bool		fraction;		/* a number (or set element) not an int64 */
	bool		not_timestamp;	/* an S that is no ISO-8601 timestamp */
} AttrStats;

/* One column of a generated table. */
typedef struct ImportColumn
{
	char	   *name;
	char	   *attribute;		/* when not the column's name */
	const char *type;
	bool		not_null;
} ImportColumn;

/*
 * A candidate shard_by column: a field of a key, or an S or N attribute
 * that every sampled item holds, with its key text in each item.
 */
typedef struct Candidate
{
	const char *column;
	char	  **texts;			/* by item */
} Candidate;

/* A DynamoDB table being imported: what DescribeTable and the sample say. */
typedef struct ImportTable
{
	const char *name;
	const DdbJson *desc;		/* DescribeTable's "Table" */
	List	   *items;			/* sampled items (const DdbJson *) */
	List	   *attrs;			/* AttrStats *, in order of first sight */
	const char *pk;
	const char *sk;
	List	   *columns;		/* ImportColumn * of the base table */
	StringInfoData options;		/* the key and sharding options */
} ImportTable;

/* ---------------------------------------------------------------------
 * Options and filters
 * ---------------------------------------------------------------------
 */

/* The import options of stmt, checked. */
static ImportOptions
import_options(ImportForeignSchemaStmt *stmt)
{
	ImportOptions o = {DEFAULT_SAMPLE_SIZE, true, NULL};
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "sample_size") == 0)
		{
			char	   *end;
			long		v = strtol(defGetString(def), &end, 10);

			if (*end != '\0' || end == defGetString(def) || v < 0 || v > MAX_SAMPLE_SIZE)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for import option \"sample_size\": \"%s\"",
								defGetString(def)),
						 errhint("A number of items from 0 to %d.", MAX_SAMPLE_SIZE)));
			o.sample_size = (int) v;
		}
		else if (strcmp(def->defname, "detect_shards") == 0)
			o.detect_shards = defGetBoolean(def);
		else if (strcmp(def->defname, "item_column") == 0)
			o.item_column = defGetString(def);
		else
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid import option \"%s\"", def->defname),
					 errhint("Valid import options are: sample_size, detect_shards, item_column.")));
	}
	return o;
}

/*
 * Whether DynamoDB table name is worth importing under stmt's LIMIT TO or
 * EXCEPT list: PostgreSQL filters the statements by the names of the
 * tables they create (the table's name, and name_index for its indexes);
 * this spares the requests of tables that would all be left out.  A table
 * EXCEPT names may still have indexes whose tables are wanted: *listed
 * tells import_table to leave it out only when it has none.
 */
static bool
wanted(ImportForeignSchemaStmt *stmt, const char *name, bool *listed)
{
	size_t		len = strlen(name);
	ListCell   *lc;

	*listed = false;
	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
	{
		const char *relname = ((RangeVar *) lfirst(lc))->relname;

		*listed |= strcmp(relname, name) == 0;
		if (stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO &&
			(*listed || (strncmp(relname, name, len) == 0 && relname[len] == '_')))
			return true;
	}
	return stmt->list_type == FDW_IMPORT_SCHEMA_EXCEPT;
}

/* True when a DescribeTable "Table" object lists a secondary index. */
static bool
has_indexes(const DdbJson *desc)
{
	const char *lists[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};

	for (size_t l = 0; l < lengthof(lists); l++)
	{
		const DdbJson *idx = ddbjson_get(desc, lists[l]);

		if (idx && idx->kind == DJ_ARRAY && idx->n > 0)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------
 */

/* Every table name of the server's account and region (ListTables, paged). */
static List *
list_tables(DdbGroup *group)
{
	List	   *names = NIL;
	const char *last = NULL;

	do
	{
		size_t		len;
		char	   *body = request_list_tables(last, &len);
		const DdbJson *resp = ddb_call(group, "ListTables", body, len);
		const DdbJson *page;

		page = ddbjson_get(resp, "TableNames");
		/* the shapes of the members that came are checked on arrival */
		if (page == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_REPLY_HANDLE),
					 errmsg("DynamoDB ListTables response holds no \"TableNames\""),
					 errdetail("IMPORT FOREIGN SCHEMA cannot tell which tables there are.")));
		for (int i = 0; i < page->n; i++)
			names = lappend(names, page->elems[i].str);
		last = ddbjson_get_string(resp, "LastEvaluatedTableName");
	} while (last != NULL);
	return names;
}

/*
 * Wait for every Scan or Query of group and add the items they answer to
 * t's sample; a failed one is an error.
 */
static void
add_answers(DdbGroup *group, ImportTable *t)
{
	DdbRequest *req;

	while ((req = ddb_wait_any(group)) != NULL)
	{
		const DdbJson *items;

		if (req->status != DDB_OK)
			ddb_report_error(req);
		items = ddbjson_get(req->response, "Items");
		for (int i = 0; items && items->kind == DJ_ARRAY && i < items->n; i++)
			t->items = lappend(t->items, &items->elems[i]);
	}
}

/*
 * Sample about n items of t: a Scan in parallel segments, each its first
 * page of ITEMS_PER_SEGMENT items, so that the items come from several
 * places of the table's key space and not from one partition.
 */
static void
sample_items(DdbGroup *group, ImportTable *t, int n)
{
	int			segments = Max(1, Min(16, n / ITEMS_PER_SEGMENT));

	if (n == 0)
		return;
	for (int s = 0; s < segments; s++)
	{
		size_t		len;
		char	   *body = request_sample(t->name, (n + segments - 1) / segments,
										  s, segments, &len);

		ddb_submit(ddb_request_create(group, "Scan", body, len));
	}
	add_answers(group, t);
}

/* ---------------------------------------------------------------------
 * Attributes and types
 * ---------------------------------------------------------------------
 */

/* True when text is an integer that fits a bigint. */
static bool
is_int64(const char *text)
{
	char	   *end;

	errno = 0;
	(void) strtoll(text, &end, 10);
	return end != text && *end == '\0' && errno == 0;
}

/* The AvKind of an AttributeValue's tag, or -1. */
static int
av_kind(const char *tag)
{
	for (int k = 0; k < AV_KINDS; k++)
		if (strcmp(av_tags[k], tag) == 0)
			return k;
	return -1;
}

/*
 * The statistics of every attribute the sampled items of t hold, but the
 * put token of the extension's own conditional puts.
 */
static void
collect_attrs(ImportTable *t)
{
	ListCell   *lc;

	foreach(lc, t->items)
	{
		const DdbJson *item = lfirst(lc);

		for (int i = 0; item->kind == DJ_OBJECT && i < item->n; i++)
		{
			const DdbJson *av = &item->elems[i];
			AttrStats  *a = NULL;
			ListCell   *ac;
			int			kind;

			if (av->kind != DJ_OBJECT || av->n != 1 || (kind = av_kind(av->keys[0])) < 0 ||
				strcmp(item->keys[i], PUT_TOKEN_ATTRIBUTE) == 0)
				continue;
			foreach(ac, t->attrs)
				if (strcmp(((AttrStats *) lfirst(ac))->name, item->keys[i]) == 0)
					a = lfirst(ac);
			if (a == NULL)
			{
				a = palloc0(sizeof(AttrStats));
				a->name = item->keys[i];
				t->attrs = lappend(t->attrs, a);
			}
			a->seen++;
			a->kinds[kind]++;
			if (kind == AV_N)
				a->fraction |= !is_int64(av->elems[0].str);
			if (kind == AV_S)
				a->not_timestamp |= !infer_is_timestamp(av->elems[0].str);
			if (kind == AV_NS)
				for (int e = 0; e < av->elems[0].n; e++)
					a->fraction |= !is_int64(av->elems[0].elems[e].str);
		}
	}
}

/* The statistics of attribute name in t, or NULL when no item holds it. */
static AttrStats *
find_attr(ImportTable *t, const char *name)
{
	ListCell   *lc;

	foreach(lc, t->attrs)
		if (strcmp(((AttrStats *) lfirst(lc))->name, name) == 0)
			return lfirst(lc);
	return NULL;
}

/*
 * The column type for an attribute seen as a: its one type's (strings
 * timestamptz when every one is an ISO-8601 timestamp, else text;
 * numbers bigint when every one is an integer that fits, else numeric; sets
 * arrays; maps and lists jsonb), jsonb when it was seen with several
 * types (NULL aside), text when only as NULL.
 */
static const char *
attr_type(const AttrStats *a)
{
	int			kind = -1;

	for (int k = 0; k < AV_KINDS; k++)
		if (k != AV_NULL && a->kinds[k] > 0)
		{
			if (kind >= 0)
				return "jsonb";
			kind = k;
		}
	switch (kind)
	{
		case AV_S:
			return a->not_timestamp ? "text" : "timestamptz";
		case AV_N:
			return a->fraction ? "numeric" : "bigint";
		case AV_B:
			return "bytea";
		case AV_BOOL:
			return "boolean";
		case AV_M:
		case AV_L:
			return "jsonb";
		case AV_SS:
			return "text[]";
		case AV_NS:
			return a->fraction ? "numeric[]" : "bigint[]";
		case AV_BS:
			return "bytea[]";
		default:
			return "text";
	}
}

/*
 * The column type of key attribute name: from its AttributeDefinitions
 * type (S text, B bytea, N bigint when the sampled values are integers
 * that fit, numeric otherwise).
 */
static const char *
key_type(ImportTable *t, const char *name)
{
	const DdbJson *defs = ddbjson_get(t->desc, "AttributeDefinitions");
	AttrStats  *a = find_attr(t, name);

	for (int i = 0; defs && defs->kind == DJ_ARRAY && i < defs->n; i++)
	{
		const char *type = ddbjson_get_string(&defs->elems[i], "AttributeType");
		const char *attr = ddbjson_get_string(&defs->elems[i], "AttributeName");

		if (type == NULL || attr == NULL || strcmp(attr, name) != 0)
			continue;
		if (strcmp(type, "N") == 0)
			return a && !a->fraction ? "bigint" : "numeric";
		return strcmp(type, "B") == 0 ? "bytea" : "text";
	}
	return "text";
}

/* The text of S or N attribute name of item, or NULL. */
static const char *
item_text(const DdbJson *item, const char *name)
{
	const DdbJson *av = ddbjson_get(item, name);
	const DdbJson *v = ddbjson_get(av, "S");

	if (v == NULL)
		v = ddbjson_get(av, "N");
	return v && v->kind == DJ_STRING ? v->str : NULL;
}

/*
 * Add a column for attribute name to list; returns the list.  A name no
 * column can have (longer than NAMEDATALEN allows, or a system column's
 * such as xmin) is cut, or given an underscore, and the column names its
 * attribute by option.
 */
static List *
add_column(List *columns, const char *name, const char *type, bool not_null)
{
	ImportColumn *c = palloc0(sizeof(ImportColumn));

	c->name = pstrdup(name);
	if (strlen(name) >= NAMEDATALEN)
	{
		c->attribute = c->name;
		c->name = pnstrdup(name, pg_mbcliplen(name, strlen(name), NAMEDATALEN - 1));
	}
	else if (SystemAttributeByName(name) != NULL)
	{
		c->attribute = c->name;
		c->name = psprintf("%s_", name);
	}
	c->type = type;
	c->not_null = not_null;
	return lappend(columns, c);
}

/* True when list holds a column named name. */
static bool
has_column(List *columns, const char *name)
{
	ListCell   *lc;

	foreach(lc, columns)
		if (strcmp(((ImportColumn *) lfirst(lc))->name, name) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------
 * Key templates and shards
 * ---------------------------------------------------------------------
 */

/* The partition (or sort) key texts of t's sampled items, and how many. */
static const char **
key_texts(ImportTable *t, const char *attr, int *n)
{
	const char **keys = palloc(sizeof(char *) * Max(list_length(t->items), 1));
	ListCell   *lc;

	*n = 0;
	foreach(lc, t->items)
	{
		const DdbJson *v = ddbjson_get(ddbjson_get(lfirst(lc), attr), "S");

		if (v == NULL || v->kind != DJ_STRING || memchr(v->str, '\0', v->len))
			return NULL;
		keys[(*n)++] = v->str;
	}
	return keys;
}

/*
 * The name for the column of a key field: the S or N attribute that the
 * sampled items hold with the field's value (fields[i] of item i), in
 * every item that holds it and in one at least; else fallback.
 */
static const char *
field_name(ImportTable *t, char **fields, const char *fallback)
{
	ListCell   *ac;

	foreach(ac, t->attrs)
	{
		AttrStats  *a = lfirst(ac);
		int			same = 0;
		int			i = 0;
		ListCell   *lc;

		if (strcmp(a->name, t->pk) == 0 || (t->sk && strcmp(a->name, t->sk) == 0) ||
			a->kinds[AV_S] + a->kinds[AV_N] != a->seen)
			continue;
		foreach(lc, t->items)
		{
			const char *text = item_text(lfirst(lc), a->name);

			if (text && strcmp(text, fields[i]) != 0)
				break;
			same += text != NULL;
			i++;
		}
		if (lc == NULL && same > 0)
			return a->name;
	}
	return fallback;
}

/*
 * Ask DynamoDB for the shards the sample did not reach: items of the first
 * bases sampled (up to PROBED_BASES) under every shard number from 0 to
 * twice the largest seen, added to the sample.
 */
static void
probe_shards(DdbGroup *group, ImportTable *t, const InferShards *s)
{
	int			n;
	const char **keys = key_texts(t, t->pk, &n);
	List	   *bases = NIL;

	for (int i = 0; i < n && list_length(bases) < PROBED_BASES; i++)
	{
		InferSplit	split;
		char	   *base;

		(void) infer_split_shard(keys[i], strlen(keys[i]), &split);
		base = pnstrdup(keys[i], split.base_len);
		if (!list_member(bases, makeString(base)))
			bases = lappend(bases, makeString(base));
	}
	for (int b = 0; b < list_length(bases); b++)
		for (int shard = 0; shard < s->base + 2 * s->shards; shard++)
		{
			size_t		len;
			char	   *body = request_partition_sample(t->name, t->pk,
														psprintf("%s%c%d", strVal(list_nth(bases, b)),
																 s->sep, shard),
														ITEMS_PER_PROBE, &len);

			ddb_submit(ddb_request_create(group, "Query", body, len));
		}
	add_answers(group, t);
}

/*
 * Whether the shard of every sampled item of t is a hash of one candidate
 * column, or of two concatenated (their key texts, as shard_by joins
 * them); records shard_strategy and its options in t->options.
 */
static void
detect_hash(ImportTable *t, List *candidates, const InferShards *s, const long *shards)
{
	int			n = list_length(t->items);
	const char **values = palloc(sizeof(char *) * Max(n, 1));
	size_t	   *lens = palloc(sizeof(size_t) * Max(n, 1));
	ShardHash	h;

	for (int a = 0; a < list_length(candidates); a++)
		for (int b = -1; b < list_length(candidates); b++)
		{
			Candidate  *ca = list_nth(candidates, a);
			Candidate  *cb = b >= 0 ? list_nth(candidates, b) : NULL;

			if (b == a)
				continue;
			for (int i = 0; i < n; i++)
			{
				values[i] = cb ? psprintf("%s%s", ca->texts[i], cb->texts[i]) : ca->texts[i];
				lens[i] = strlen(values[i]);
			}
			if (infer_hash(values, lens, shards, n, s->shards, s->base, &h))
			{
				appendStringInfo(&t->options,
								 ", shard_strategy 'calculated', shard_by %s, shard_hash '%s'",
								 quote_literal_cstr(cb ? psprintf("%s, %s", ca->column, cb->column) :
													ca->column),
								 shardhash_name(h));
				return;
			}
		}
	appendStringInfoString(&t->options, ", shard_strategy 'random'");
}

/* A candidate column with the texts texts[i] of each sampled item. */
static List *
add_candidate(List *candidates, const char *column, char **texts)
{
	Candidate  *c = palloc(sizeof(Candidate));

	c->column = column;
	c->texts = texts;
	return lappend(candidates, c);
}

/*
 * The sort key of t as a template {number:0W}<sep>{text}, when every
 * sampled sort key has that form: its columns (the number bigint when
 * every sampled one fits, else numeric) go to t->columns, the
 * option to t->options, and the fields' texts become shard_by candidates.
 * False when the sort key is of another form.
 */
static bool
detect_sort_key(ImportTable *t, List **candidates)
{
	int			n;
	const char **keys = t->sk ? key_texts(t, t->sk, &n) : NULL;
	InferSortKey k;
	char	  **numbers;
	char	  **texts;
	const char *number_col;
	const char *text_col;
	bool		all_int64 = true;

	if (keys == NULL || !infer_sort_key(keys, n, &k))
		return false;
	numbers = palloc(sizeof(char *) * n);
	texts = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		const char *digits = keys[i];

		while (*digits == '0' && digits < keys[i] + k.width - 1)
			digits++;
		numbers[i] = pnstrdup(digits, keys[i] + k.width - digits);
		texts[i] = pstrdup(keys[i] + k.width + 1);
		all_int64 &= is_int64(numbers[i]);
	}
	number_col = field_name(t, numbers, psprintf("%s_number", t->sk));
	text_col = field_name(t, texts, psprintf("%s_text", t->sk));
	if (strcmp(number_col, text_col) == 0 ||
		has_column(t->columns, number_col) || has_column(t->columns, text_col))
		return false;
	t->columns = add_column(t->columns, number_col, all_int64 ? "bigint" : "numeric", true);
	t->columns = add_column(t->columns, text_col, "text", true);
	appendStringInfo(&t->options, ", sort_key %s, sort_key_format %s",
					 quote_literal_cstr(t->sk),
					 quote_literal_cstr(psprintf("{%s:0%d}%c{%s}", number_col, k.width,
												 k.sep, text_col)));
	*candidates = add_candidate(*candidates, text_col, texts);
	*candidates = add_candidate(*candidates, number_col, numbers);
	return true;
}

/*
 * The key columns and options of t: a sharded partition key and a
 * templated sort key when the sample shows them and detect is true,
 * else the key attributes as columns.
 */
static void
detect_keys(DdbGroup *group, ImportTable *t, bool detect)
{
	int			n;
	const char **keys = detect && t->sk ? key_texts(t, t->pk, &n) : NULL;
	InferShards s;
	char	  **bases;
	long	   *shards;
	const char *base_col;
	List	   *candidates = NIL;
	ListCell   *lc;

	/*
	 * A sharded table has a sort key (each shard holds many items).  The
	 * shards the sample shows are probed, and judged again with what the
	 * probes found.
	 */
	if (keys != NULL && infer_shards(keys, n, &s))
	{
		probe_shards(group, t, &s);
		t->attrs = NIL;
		collect_attrs(t);
		keys = key_texts(t, t->pk, &n);
	}
	if (keys == NULL || !infer_shards(keys, n, &s))
	{
		t->columns = add_column(t->columns, t->pk, key_type(t, t->pk), true);
		appendStringInfo(&t->options, ", partition_key %s", quote_literal_cstr(t->pk));
		if (t->sk && !(detect && detect_sort_key(t, &candidates)))
		{
			t->columns = add_column(t->columns, t->sk, key_type(t, t->sk), true);
			appendStringInfo(&t->options, ", sort_key %s", quote_literal_cstr(t->sk));
		}
		return;
	}

	bases = palloc(sizeof(char *) * n);
	shards = palloc(sizeof(long) * n);
	for (int i = 0; i < n; i++)
	{
		InferSplit	split;

		(void) infer_split_shard(keys[i], strlen(keys[i]), &split);
		bases[i] = pnstrdup(keys[i], split.base_len);
		shards[i] = split.shard;
	}
	base_col = field_name(t, bases, psprintf("%s_base", t->pk));
	t->columns = add_column(t->columns, base_col, "text", true);
	appendStringInfo(&t->options,
					 ", partition_key %s, partition_key_format %s, shards '%d', shard_base '%d'",
					 quote_literal_cstr(t->pk),
					 quote_literal_cstr(psprintf("{%s}%c{shard}", base_col, s.sep)),
					 s.shards, s.base);
	candidates = add_candidate(candidates, base_col, bases);
	if (!detect_sort_key(t, &candidates))
	{
		t->columns = add_column(t->columns, t->sk, key_type(t, t->sk), true);
		appendStringInfo(&t->options, ", sort_key %s", quote_literal_cstr(t->sk));
		candidates = add_candidate(candidates, t->sk, NULL);
	}
	/* attributes every item holds as S or N are candidates too */
	foreach(lc, t->attrs)
	{
		AttrStats  *a = lfirst(lc);
		char	  **texts;
		int			i = 0;
		ListCell   *ic;

		if (a->seen != n || a->kinds[AV_S] + a->kinds[AV_N] != n ||
			has_column(t->columns, a->name))
			continue;
		texts = palloc(sizeof(char *) * n);
		foreach(ic, t->items)
			texts[i++] = (char *) item_text(lfirst(ic), a->name);
		candidates = add_candidate(candidates, a->name, texts);
	}
	/* the plain sort key's texts */
	foreach(lc, candidates)
	{
		Candidate  *c = lfirst(lc);
		int			i = 0;
		ListCell   *ic;

		if (c->texts != NULL)
			continue;
		c->texts = palloc(sizeof(char *) * n);
		foreach(ic, t->items)
		{
			const char *text = item_text(lfirst(ic), t->sk);

			c->texts[i++] = (char *) (text ? text : "");
		}
	}
	detect_hash(t, candidates, &s, shards);
}

/* ---------------------------------------------------------------------
 * Statements
 * ---------------------------------------------------------------------
 */

/* list_sort comparator: AttrStats by name. */
static int
attr_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp(((AttrStats *) lfirst(a))->name, ((AttrStats *) lfirst(b))->name);
}

/*
 * The attribute columns of t, in the order of their names, appended to
 * columns: every sampled attribute that is not a column yet, nor skip_pk
 * or skip_sk.
 */
static List *
attribute_columns(ImportTable *t, List *columns, const char *skip_pk, const char *skip_sk)
{
	List	   *attrs = list_copy(t->attrs);
	ListCell   *lc;

	list_sort(attrs, attr_cmp);
	foreach(lc, attrs)
	{
		AttrStats  *a = lfirst(lc);

		if (has_column(columns, a->name) ||
			(skip_pk && strcmp(a->name, skip_pk) == 0) ||
			(skip_sk && strcmp(a->name, skip_sk) == 0))
			continue;
		columns = add_column(columns, a->name, attr_type(a), false);
	}
	return columns;
}

/* True when a column of list holds attribute name. */
static bool
has_attribute(List *columns, const char *name)
{
	ListCell   *lc;

	foreach(lc, columns)
	{
		ImportColumn *c = lfirst(lc);

		if (strcmp(c->attribute ? c->attribute : c->name, name) == 0)
			return true;
	}
	return false;
}

/*
 * Columns for the key attributes of the secondary indexes that option
 * secondary_indexes records as indexes (describe_indexes), that no column
 * of columns holds yet (the sample lacked them: a sparse index), typed by
 * t's AttributeDefinitions, appended to columns, so that queries can read
 * the indexes (see doc/reads.md).
 */
static List *
index_key_columns(ImportTable *t, const char *indexes, List *columns)
{
	int			n = 0;
	ShardIndex *idx = indexes ? indexes_parse(indexes, &n) : NULL;

	for (int i = 0; i < n; i++)
	{
		const char *keys[2] = {idx[i].pk, idx[i].sk};

		for (int k = 0; k < 2; k++)
			if (keys[k] && strcmp(keys[k], t->pk) != 0 &&
				(t->sk == NULL || strcmp(keys[k], t->sk) != 0) &&
				!has_attribute(columns, keys[k]))
				columns = add_column(columns, keys[k], key_type(t, keys[k]), false);
	}
	return columns;
}

/* The CREATE FOREIGN TABLE of relname with columns and options. */
static char *
create_statement(const char *relname, List *columns, const ImportOptions *o,
				 const char *server, const char *options)
{
	StringInfoData sql;
	ListCell   *lc;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE FOREIGN TABLE %s (\n", quote_identifier(relname));
	foreach(lc, columns)
	{
		ImportColumn *c = lfirst(lc);

		appendStringInfo(&sql, "  %s %s", quote_identifier(c->name), c->type);
		if (c->attribute)
			appendStringInfo(&sql, " OPTIONS (attribute %s)", quote_literal_cstr(c->attribute));
		if (c->not_null)
			appendStringInfoString(&sql, " NOT NULL");
		appendStringInfoString(&sql, lnext(columns, lc) || o->item_column ? ",\n" : "\n");
	}
	if (o->item_column)
		appendStringInfo(&sql, "  %s jsonb OPTIONS (attribute '*')\n",
						 quote_identifier(o->item_column));
	appendStringInfo(&sql, ") SERVER %s OPTIONS (%s)", quote_identifier(server), options);
	return sql.data;
}

/*
 * The statements of the read-only tables over t's indexes, appended to
 * stmts: each index's keys as columns, then every sampled attribute.
 */
static List *
index_statements(ImportTable *t, const ImportOptions *o, const char *server, List *stmts)
{
	const char *lists[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};

	for (size_t l = 0; l < lengthof(lists); l++)
	{
		const DdbJson *idx = ddbjson_get(t->desc, lists[l]);

		for (int i = 0; idx && idx->kind == DJ_ARRAY && i < idx->n; i++)
		{
			const char *index = ddbjson_get_string(&idx->elems[i], "IndexName");
			const char *pk;
			const char *sk;
			List	   *columns = NIL;
			StringInfoData options;

			pk = NULL;
			sk = NULL;
			describe_key_schema(ddbjson_get(&idx->elems[i], "KeySchema"), &pk, &sk);
			if (index == NULL || pk == NULL)
				continue;
			columns = add_column(columns, pk, key_type(t, pk), true);
			if (sk)
				columns = add_column(columns, sk, key_type(t, sk), true);
			if (!has_column(columns, t->pk))
				columns = add_column(columns, t->pk, key_type(t, t->pk), true);
			if (t->sk && !has_column(columns, t->sk))
				columns = add_column(columns, t->sk, key_type(t, t->sk), true);
			columns = attribute_columns(t, columns, NULL, NULL);
			initStringInfo(&options);
			appendStringInfo(&options, "table %s, index %s, partition_key %s",
							 quote_literal_cstr(t->name), quote_literal_cstr(index),
							 quote_literal_cstr(pk));
			if (sk)
				appendStringInfo(&options, ", sort_key %s", quote_literal_cstr(sk));
			stmts = lappend(stmts, create_statement(psprintf("%s_%s", t->name, index),
													columns, o, server, options.data));
		}
	}
	return stmts;
}

/*
 * The statements that import DynamoDB table name, appended to stmts;
 * none when except (the table is left out) and it has no index.
 */
static List *
import_table(DdbConn *conn, const char *name, const ImportOptions *o,
			 const char *server, bool except, List *stmts)
{
	DdbGroup   *group = ddb_group_create(conn, conn->server->max_concurrency);
	ImportTable t = {0};
	size_t		len;
	char	   *body = request_describe(name, &len);
	StringInfoData options;
	char	   *indexes;

	t.name = name;
	t.desc = ddbjson_get(ddb_call(group, "DescribeTable", body, len), "Table");
	if (except && !has_indexes(t.desc))
	{
		ddb_group_free(group);
		return stmts;
	}
	describe_key_schema(ddbjson_get(t.desc, "KeySchema"), &t.pk, &t.sk);
	if (t.pk == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DescribeTable of \"%s\" gave no partition key", name)));
	initStringInfo(&t.options);
	sample_items(group, &t, o->sample_size);
	collect_attrs(&t);
	detect_keys(group, &t, o->detect_shards);
	t.columns = attribute_columns(&t, t.columns, t.pk, t.sk);
	indexes = describe_indexes(t.desc);
	t.columns = index_key_columns(&t, indexes, t.columns);
	initStringInfo(&options);
	appendStringInfo(&options, "table %s%s", quote_literal_cstr(name), t.options.data);
	if (indexes)
		appendStringInfo(&options, ", secondary_indexes %s", quote_literal_cstr(indexes));
	stmts = lappend(stmts, create_statement(name, t.columns, o, server, options.data));
	stmts = index_statements(&t, o, server, stmts);
	ddb_group_free(group);
	return stmts;
}

/*
 * ImportForeignSchema: the CREATE FOREIGN TABLEs of the server's DynamoDB
 * tables (the remote schema's name is not used: DynamoDB has none).
 */
List *
shard_import_schema(ImportForeignSchemaStmt *stmt, Oid serverid)
{
	ImportOptions o = import_options(stmt);
	ForeignServer *server = GetForeignServer(serverid);
	DdbConn    *conn = shard_get_connection(serverid, GetUserId());
	DdbGroup   *group = ddb_group_create(conn, 1);
	List	   *stmts = NIL;
	ListCell   *lc;

	foreach(lc, list_tables(group))
	{
		const char *name = lfirst(lc);
		bool		listed;

		CHECK_FOR_INTERRUPTS();
		if (wanted(stmt, name, &listed))
			stmts = import_table(conn, name, &o, server->servername,
								 listed && stmt->list_type == FDW_IMPORT_SCHEMA_EXCEPT,
								 stmts);
	}
	ddb_group_free(group);
	return stmts;
}
