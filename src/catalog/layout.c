/*-------------------------------------------------------------------------
 *
 * layout.c
 *		A foreign table's layout history: the earlier layouts (shard count,
 *		strategy, hash, base, shard_by, boundaries, partition key template)
 *		whose items have not yet moved into the newest one.
 *
 * The history is the table option layout_history, a JSON array of objects,
 * newest first, each holding the layout options an earlier layout had set
 * (e.g. [{"shards": "10", "shard_strategy": "calculated", ...}]).  The
 * event trigger run at the start of ALTER FOREIGN TABLE adds the layout an
 * ALTER replaces (layout_record); shard_fdw_reshard removes a layout once
 * nothing remains in it.  Being an option, it survives pg_dump.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"


/* The options that make a layout: where a row's item key is. */
static const char *const layout_options[] = {
	"shards", "shard_strategy", "shard_by", "shard_hash", "shard_base",
	"range_boundaries", "range_normalize", "partition_key_format", NULL
};

/*
 * Options whose change reads cannot cover: the key attributes, and the
 * sort key template, which key conditions and ordered merges are built on.
 */
static const char *const fixed_options[] = {
	"partition_key", "sort_key", "sort_key_format", NULL
};

/* True when name is one of the NULL-terminated names. */
static bool
name_in(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(name, *names) == 0)
			return true;
	return false;
}

/* True when the two option values (either may be NULL) differ. */
static bool
values_differ(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Options with every layout option left out. */
static List *
without_layout(List *options)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (!name_in(d->defname, layout_options) &&
			strcmp(d->defname, "layout_history") != 0)
			result = lappend(result, d);
	}
	return result;
}

/* Errors about option layout_history of t, with the reason. */
static void
bad_history(const char *relname, const char *reason)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for option \"layout_history\" of foreign table \"%s\": %s",
					relname, reason),
			 errhint("The value is a JSON array of objects whose members are layout options (%s) with string values.",
					 "shards, shard_strategy, shard_by, shard_hash, shard_base, range_boundaries, range_normalize, partition_key_format")));
}

/*
 * Add to t (built from options) the earlier layouts its option
 * layout_history lists, each a table built from options with the layout
 * options replaced by the entry's.
 */
void
layout_load(ShardTable *t, List *options)
{
	const char *history = shard_option_value(options, "layout_history");
	char		err[SFDW_ERRLEN];
	DdbJson    *j;
	List	   *base;

	if (history == NULL)
		return;
	j = ddbjson_parse(history, strlen(history), err, sizeof(err));
	if (j == NULL)
		bad_history(t->relname, err);
	if (j->kind != DJ_ARRAY)
		bad_history(t->relname, "not a JSON array");
	base = without_layout(options);
	t->layouts = repalloc(t->layouts, sizeof(ShardTable *) * (1 + j->n));
	for (int i = 0; i < j->n; i++)
	{
		const DdbJson *entry = &j->elems[i];
		List	   *o = list_copy(base);
		ShardTable *layout;

		if (entry->kind != DJ_OBJECT)
			bad_history(t->relname, "an element is not an object");
		for (int m = 0; m < entry->n; m++)
		{
			if (!name_in(entry->keys[m], layout_options))
				bad_history(t->relname, psprintf("\"%s\" is not a layout option", entry->keys[m]));
			if (entry->elems[m].kind != DJ_STRING)
				bad_history(t->relname, psprintf("the value of \"%s\" is not a string", entry->keys[m]));
			o = lappend(o, makeDefElem(pstrdup(entry->keys[m]),
									   (Node *) makeString(pstrdup(entry->elems[m].str)), -1));
		}
		layout = shard_table_from_options(t->relid, o);
		if (layout->strategy == SHARD_DYNAMIC)
			bad_history(t->relname, "a dynamic layout has its shard history in its metadata table");
		layout->layout_entry = entry;
		t->layouts[t->nlayouts++] = layout;
	}
}

/*
 * The options of relid as cmd (ALTER FOREIGN TABLE ... OPTIONS) leaves
 * them; *history_given tells whether cmd names layout_history itself.
 */
static List *
options_after(List *old, AlterTableCmd *cmd, bool *history_given)
{
	List	   *result = list_copy(old);
	ListCell   *lc;

	*history_given = false;
	foreach(lc, (List *) cmd->def)
	{
		DefElem    *d = lfirst_node(DefElem, lc);
		ListCell   *lc2;

		if (strcmp(d->defname, "layout_history") == 0)
			*history_given = true;
		foreach(lc2, result)
			if (strcmp(lfirst_node(DefElem, lc2)->defname, d->defname) == 0)
			{
				result = foreach_delete_current(result, lc2);
				break;
			}
		if (d->defaction != DEFELEM_DROP)
			result = lappend(result, d);
	}
	return result;
}

/* The layout options set in options, as a JSON object into w. */
static void
write_layout(JsonWriter *w, List *options)
{
	jw_begin_object(w);
	for (const char *const *name = layout_options; *name; name++)
	{
		const char *v = shard_option_value(options, *name);

		if (v != NULL)
		{
			jw_key(w, *name);
			jw_cstring(w, v);
		}
	}
	jw_end_object(w);
}

/*
 * At the start of ALTER FOREIGN TABLE relid OPTIONS (cmd): refuse a change
 * reads could not cover, and when cmd changes the layout, add the layout
 * it replaces in front of layout_history (cmd gets the new value).  A cmd
 * that sets layout_history itself is left as it is.
 */
void
layout_record(Oid relid, AlterTableCmd *cmd)
{
	List	   *old = GetForeignTable(relid)->options;
	bool		history_given;
	List	   *new = options_after(old, cmd, &history_given);
	const char *strategies[2];
	bool		changed = false;
	const char *history;
	Buf			out;
	JsonWriter	w;
	MemoryContext old_cxt;

	for (const char *const *name = fixed_options; *name; name++)
	{
		const char *was = shard_option_value(old, *name);
		const char *will = shard_option_value(new, *name);

		/* a key attribute dropped is learnt again, the same */
		if (was != NULL && values_differ(was, will) &&
			(will != NULL || strcmp(*name, "sort_key_format") == 0))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot change option \"%s\" of foreign table \"%s\"",
							*name, get_rel_name(relid)),
					 errdetail("Reads could not cover both the items stored under \"%s\" and those stored under the new value.",
							   was),
					 errhint("Declare another foreign table with the new options and copy the rows with INSERT ... SELECT.")));
	}
	strategies[0] = shard_option_value(old, "shard_strategy");
	strategies[1] = shard_option_value(new, "shard_strategy");
	for (const char *const *name = layout_options; *name; name++)
		changed |= values_differ(shard_option_value(old, *name), shard_option_value(new, *name));
	if (!changed || history_given)
		return;
	for (int i = 0; i < 2; i++)
		if (strategies[i] && strcmp(strategies[i], "dynamic") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot change the layout of foreign table \"%s\" %s the dynamic strategy",
							get_rel_name(relid), i == 0 ? "from" : "to"),
					 errdetail("A dynamic table's shard count grows by itself, and its readers follow the shard history of its metadata table."),
					 errhint("Declare another foreign table with the new options and copy the rows with INSERT ... SELECT.")));

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_array(&w);
	write_layout(&w, old);
	history = shard_option_value(old, "layout_history");
	if (history != NULL)
	{
		char		err[SFDW_ERRLEN];
		DdbJson    *j = ddbjson_parse(history, strlen(history), err, sizeof(err));

		if (j == NULL || j->kind != DJ_ARRAY)
			bad_history(get_rel_name(relid), j == NULL ? err : "not a JSON array");
		for (int i = 0; i < j->n; i++)
			jw_tree(&w, &j->elems[i]);
	}
	jw_end_array(&w);
	/* the event trigger's memory goes when it returns; the command's stays */
	old_cxt = MemoryContextSwitchTo(GetMemoryChunkContext(cmd));
	cmd->def = (Node *) lappend((List *) cmd->def,
								makeDefElemExtended(NULL, "layout_history",
													(Node *) makeString(pstrdup(out.data)),
													history ? DEFELEM_SET : DEFELEM_ADD, -1));
	MemoryContextSwitchTo(old_cxt);
}

/* Whether key (len bytes) matches tmpl; its shard in *shard when not NULL. */
static bool
template_matches(const KeyTemplate *tmpl, const char *key, size_t len, long *shard)
{
	KeySpan    *spans = palloc(sizeof(KeySpan) * tmpl->nparts);
	bool		matches = keyfmt_decode(tmpl, key, len, spans, shard);

	pfree(spans);
	return matches;
}

/*
 * True when layout l stores items under shard (-1: its template has no
 * {shard} field): one of its shards, or any for a dynamic layout, whose
 * count is in its metadata.
 */
static bool
layout_has_shard(const ShardTable *l, long shard)
{
	return shard < 0 || l->strategy == SHARD_DYNAMIC ||
		(shard >= l->shard_base && shard < l->shard_base + l->shards);
}

/* Whether key (len bytes) matches l's partition key template, as template_matches. */
static bool
layout_reads_key(const ShardTable *l, const char *key, size_t len, long *shard)
{
	*shard = -1;
	return l->pk.template == NULL || template_matches(l->pk.template, key, len, shard);
}

/* True when the layouts share their partition key template. */
static bool
same_template(const ShardTable *a, const ShardTable *b)
{
	return a->pk.format == b->pk.format ||
		(a->pk.format && b->pk.format && strcmp(a->pk.format, b->pk.format) == 0);
}

/*
 * True when layout l, reading partition key pk (len bytes) of item with its
 * template, gets a row it would store there: the row's key texts (its
 * attributes, or the fields of l's templates) render pk again, at the
 * shard l gives the row when holds.
 */
static bool
layout_reading_agrees(ShardTable *t, ShardTable *l, const DdbJson *item, const char *pk,
					  long shard, bool holds)
{
	const char **texts = layout_item_texts(t, l, item);
	char		err[SFDW_ERRLEN];
	char	   *again;

	if (holds)
		return layout_holds(l, texts, pk);
	again = route_partition_key(l, texts, shard, false, err, sizeof(err));
	return again != NULL && strcmp(again, pk) == 0;
}

/*
 * The layout (index into t->layouts) that stores item, with its shard in
 * *shard (0 when its template has none), and in *row whether that layout
 * has the shard (so that the item is a row of t); -1 when no layout's
 * template reads its partition key (a legacy base key, or another
 * table's).  Layouts that share a template render the same keys, so the
 * newest of them that has the shard is the item's.  Where layouts of
 * other templates both read the key, the item is the one whose reading
 * gives a row stored right there: the first whose templates render the
 * key back from the row at the shard that layout gives it, else at the
 * shard read (an item another application placed otherwise), else the
 * newest reading.  So an item is decoded, judged and found again by the
 * templates that wrote it.
 */
static int
item_layout(ShardTable *t, const DdbJson *item, long *shard, bool *row)
{
	const char *key;
	size_t		len;
	int			first = -1;
	int			found = -1;
	long		first_shard = 0;
	bool		ambiguous = false;

	*shard = 0;
	*row = true;
	if (t->nlayouts == 1 && t->pk.template == NULL)
		return 0;
	key = codec_av_text(ddbjson_get(item, t->pk.attribute));
	if (key == NULL)
		return 0;
	len = strlen(key);
	for (int i = 0; i < t->nlayouts; i++)
	{
		ShardTable *l = t->layouts[i];
		long		s;

		if (!layout_reads_key(l, key, len, &s))
			continue;
		if (first < 0)
		{
			first = i;
			first_shard = s;
		}
		if (!layout_has_shard(l, s))
			continue;
		if (found < 0)
		{
			found = i;
			*shard = Max(s, 0);
		}
		else if (!same_template(l, t->layouts[found]))
			ambiguous = true;
	}
	if (found < 0)
	{
		*row = false;
		*shard = Max(first_shard, 0);
		return first;
	}
	if (!ambiguous)
		return found;
	for (int pass = 0; pass < 2; pass++)
		for (int i = found; i < t->nlayouts; i++)
		{
			ShardTable *l = t->layouts[i];
			long		s;

			if (layout_reads_key(l, key, len, &s) && layout_has_shard(l, s) &&
				layout_reading_agrees(t, l, item, key, s, pass == 0))
			{
				*shard = Max(s, 0);
				return i;
			}
		}
	return found;
}

/*
 * The layout (index into t->layouts) that stores item, with its shard in
 * *shard (0 when its template has none); -1 when no layout's template
 * reads its partition key (a legacy base key).  See item_layout.
 */
int
layout_of_item(ShardTable *t, const DdbJson *item, long *shard)
{
	bool		row;

	return item_layout(t, item, shard, &row);
}

/*
 * The layout whose templates item's key columns are decoded with: the one
 * that stores it, or t itself (whose base key template reads a legacy
 * item's key).
 */
ShardTable *
layout_item_layout(ShardTable *t, const DdbJson *item)
{
	long		shard;
	int			layout;

	if (t->nlayouts == 1)
		return t;
	layout = layout_of_item(t, item, &shard);
	return layout < 0 ? t : t->layouts[layout];
}

/*
 * The text of item's key attribute k when it holds one of the key's type,
 * else NULL: an item whose key is missing or of another type is a broken
 * answer, which the reads refuse (check_item_key), never one to pass over.
 */
static const char *
key_text(const ShardKey *k, const DdbJson *item)
{
	const DdbJson *av = ddbjson_get(item, k->attribute);

	if (av == NULL || av->kind != DJ_OBJECT || av->n != 1 ||
		strcmp(av->keys[0], codec_key_type(k)) != 0)
		return NULL;
	return codec_av_text(av);
}

/*
 * True when item is a row of t: its partition key is one that a layout of
 * t writes (the layout's template matches it, with a shard the layout
 * has) or, with legacy_unsharded, a base key.  A Query reads only such
 * keys; a Scan meets every item of the DynamoDB table, which other tables
 * may share (single-table design) and which may hold legacy base keys a
 * table without legacy_unsharded does not read, and keeps only these.
 */
bool
layout_item_is_row(ShardTable *t, const DdbJson *item)
{
	const char *key;
	long		shard;
	bool		row;

	if (t->pk.template == NULL && t->nlayouts == 1)
		return true;
	key = key_text(&t->pk, item);
	if (key == NULL)
		return true;
	if (item_layout(t, item, &shard, &row) >= 0 && row)
		return true;
	return t->legacy_unsharded && t->pk.base != NULL &&
		template_matches(t->pk.base, key, strlen(key), NULL);
}

/*
 * True when item's sort key is one t's sort key template renders (always,
 * without a template).  Reads take any item of a partition the table
 * writes as its row; a write through a scan changes or deletes only those
 * whose sort key is the table's too, so that another entity's items under
 * the same partition key (single-table design) are never touched.
 */
bool
layout_sort_key_is_row(ShardTable *t, const DdbJson *item)
{
	const char *key;

	if (t->sk.template == NULL)
		return true;
	key = key_text(&t->sk, item);
	return key == NULL || template_matches(t->sk.template, key, strlen(key), NULL);
}

/*
 * The partition key values layout l may store the row of texts (key texts
 * indexed by column) under: one per shard the row may be in, distinct,
 * leaving out what makes no key.  A palloc'd List of C strings.
 */
List *
layout_partition_keys(ShardTable *l, const char *const *texts)
{
	List	   *result = NIL;
	ListCell   *lc;
	char		err[SFDW_ERRLEN];

	foreach(lc, route_read_shards(l, texts, l->shards))
	{
		char	   *key = route_partition_key(l, texts, lfirst_int(lc), false, err, sizeof(err));
		ListCell   *lc2;
		bool		dup = false;

		if (key == NULL || key[0] == '\0')
			continue;
		foreach(lc2, result)
			dup |= strcmp(lfirst(lc2), key) == 0;
		if (!dup)
			result = lappend(result, key);
	}
	return result;
}

/*
 * True when column col places a row of t in some layout: a key's column or
 * a field of its template, a shard_by column, or a field of an index key's
 * template (shard_column_option).
 */
bool
layout_places_column(ShardTable *t, int col)
{
	for (int i = 0; i < t->nlayouts; i++)
		if (shard_column_option(t->layouts[i], col) != NULL)
			return true;
	return false;
}

/*
 * The key texts of the columns of item that place it in any layout of t
 * (layout_places_column), indexed by column: the attribute, or the field
 * of a key template of layout l that holds the column.
 */
const char **
layout_item_texts(ShardTable *t, ShardTable *l, const DdbJson *item)
{
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));

	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		const DdbJson *av;
		Datum		value;
		bool		isnull;
		char	   *text;

		if (!layout_places_column(t, i))
			continue;
		av = ddbjson_get(item, col->attribute);
		if (av != NULL)
		{
			value = codec_read_value(av, col, item, t, &isnull);
			if (!isnull)
				texts[i] = codec_key_text(col, value);
			continue;
		}
		text = codec_key_field(l, &l->pk, item, col->name);
		if (text == NULL)
			text = codec_key_field(l, &l->sk, item, col->name);
		if (text != NULL)
			texts[i] = codec_key_text(col, codec_text_to_datum(text, col, item, t));
	}
	return texts;
}

/* True when layout l could store the row of texts under partition key pk. */
bool
layout_holds(ShardTable *l, const char *const *texts, const char *pk)
{
	ListCell   *lc;

	foreach(lc, layout_partition_keys(l, texts))
		if (strcmp(lfirst(lc), pk) == 0)
			return true;
	return false;
}

/*
 * The key to seek the row of key texts under when an UPDATE or DELETE
 * found its item gone from partition key pk (sort key sk, for messages):
 * the one key the newest layout of t gives the row, to which
 * shard_fdw_reshard moves an item not there yet.  NULL when pk is such a
 * key already (no move leaves it: the item was deleted), the row makes no
 * key, or t has no earlier layout.  A row the newest layout may store
 * under several keys (random shards) cannot be sought: that is a
 * serialization failure, and the statement is to run again.
 */
char *
layout_moved_to(ShardTable *t, const char *const *texts, const char *pk, const char *sk)
{
	List	   *keys;
	ListCell   *lc;

	if (t->nlayouts == 1)
		return NULL;
	keys = layout_partition_keys(t, texts);
	foreach(lc, keys)
		if (strcmp(lfirst(lc), pk) == 0)
			return NULL;
	if (keys == NIL)
		return NULL;
	if (list_length(keys) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not follow the item of key (%s%s%s) of foreign table \"%s\" into its newest layout",
						pk, sk ? ", " : "", sk ? sk : "", t->relname),
				 errdetail("The item moved while the statement ran, and the newest layout may store its row under any of %d keys.",
						   list_length(keys)),
				 errhint("Run the statement again: it reads the row where it is now.")));
	return linitial(keys);
}

/*
 * True when item is where shard_fdw_reshard leaves it: under a key the
 * newest layout may give its row, or under a key no layout's template
 * matches (another table's, or a legacy base key).
 */
bool
layout_item_settled(ShardTable *t, const DdbJson *item)
{
	const char *pk = codec_av_text(ddbjson_get(item, t->pk.attribute));
	long		shard;
	int			layout = layout_of_item(t, item, &shard);

	if (pk == NULL || layout < 0)
		return true;
	return layout_holds(t, layout_item_texts(t, t->layouts[layout], item), pk);
}

/* A layout in a few words, for EXPLAIN and notices. */
char *
layout_describe(ShardTable *l)
{
	static const char *const names[] = {
		[SHARD_NONE] = "unsharded", [SHARD_RANDOM] = "random",
		[SHARD_CALCULATED] = "calculated", [SHARD_RANGE] = "range",
		[SHARD_DYNAMIC] = "dynamic",
	};
	StringInfoData buf;

	initStringInfo(&buf);
	if (l->strategy == SHARD_NONE)
		appendStringInfoString(&buf, "unsharded");
	else
		appendStringInfo(&buf, "%d shards from %d, %s%s%s", l->shards, l->shard_base,
						 names[l->strategy], l->strategy == SHARD_CALCULATED ? " " : "",
						 l->strategy == SHARD_CALCULATED ? shardhash_name(l->hash) : "");
	if (l->pk.format)
		appendStringInfo(&buf, ", %s", quote_literal_cstr(l->pk.format));
	return buf.data;
}

/*
 * The value of option layout_history that keeps t's earlier layouts for
 * which keep[i] is true (i indexes t->layouts), or NULL when none is kept.
 */
char *
layout_history_without(ShardTable *t, const bool *keep)
{
	Buf			out;
	JsonWriter	w;
	bool		any = false;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_array(&w);
	for (int i = 1; i < t->nlayouts; i++)
		if (keep[i])
		{
			jw_tree(&w, t->layouts[i]->layout_entry);
			any = true;
		}
	jw_end_array(&w);
	return any ? out.data : NULL;
}

/* Append text to buf as one field: its length, a colon, the text. */
static void
append_field(StringInfo buf, const char *text)
{
	appendStringInfo(buf, "%zu:%s", strlen(text), text);
}

/* qsort order of an item's attribute names, by index into its keys. */
static int
attribute_name_cmp(const void *a, const void *b, void *arg)
{
	char	  **keys = arg;

	return strcmp(keys[*(const int *) a], keys[*(const int *) b]);
}

/*
 * The whole of item, attributes in name order: what identifies an item read
 * through an index.  The index's key is no row's identity (rows share it);
 * the table's key attributes, which every index item holds, are among the
 * attributes.
 */
static char *
whole_item_identity(const DdbJson *item)
{
	StringInfoData buf;
	int		   *order = palloc(sizeof(int) * Max(item->n, 1));

	for (int i = 0; i < item->n; i++)
		order[i] = i;
	qsort_arg(order, item->n, sizeof(int), attribute_name_cmp, item->keys);
	initStringInfo(&buf);
	for (int i = 0; i < item->n; i++)
	{
		size_t		len;

		append_field(&buf, item->keys[order[i]]);
		append_field(&buf, ddbjson_text(&item->elems[order[i]], &len));
	}
	return buf.data;
}

/*
 * The identity of an item of the table itself (layout_item_identity): the
 * key texts of the columns any layout's partition key template holds, read
 * as the layout that stores the item reads them (the key itself when no
 * template reads one), then its sort key.
 */
static char *
key_identity(ShardTable *t, const DdbJson *item)
{
	StringInfoData buf;
	const char *pk = codec_av_text(ddbjson_get(item, t->pk.attribute));
	const char *sk = t->sk.attribute ? codec_av_text(ddbjson_get(item, t->sk.attribute)) : NULL;
	const char **texts = NULL;
	bool		known = false;

	initStringInfo(&buf);
	if (pk != NULL && t->pk.template != NULL)
		texts = layout_item_texts(t, layout_item_layout(t, item), item);
	for (int i = 0; texts && i < t->ncolumns; i++)
	{
		bool		held = false;

		for (int l = 0; l < t->nlayouts; l++)
			held |= shard_key_has_column(t->layouts[l], &t->layouts[l]->pk, i);
		if (held)
			append_field(&buf, texts[i] ? texts[i] : "");
		known |= held && texts[i] != NULL;
	}
	/* a key no template reads is its own identity */
	if (!known)
	{
		resetStringInfo(&buf);
		append_field(&buf, pk ? pk : "");
	}
	append_field(&buf, sk ? sk : "");
	return buf.data;
}

/*
 * What identifies item's row whichever layout stores it: the key texts of
 * its partition key's columns (decoded by the templates of its layout, or
 * of the base key for a legacy item), then its sort key; read through a
 * view of an index (shard_index_view), those of the table's keys, which
 * every index item holds; read through a foreign table of an index, the
 * whole item.  Two items with the same identity are one row stored twice
 * (a move in progress), or one item met in a partition that two layouts
 * share.
 */
char *
layout_item_identity(ShardTable *t, const DdbJson *item)
{
	if (t->base)
		return key_identity(t->base, item);
	return t->index ? whole_item_identity(item) : key_identity(t, item);
}

/*
 * Everything about foreign table relid, with defaults applied and checked
 * against its columns.  Allocated in the current memory context.  Reads
 * the catalogs only: a table declared without partition_key had its keys
 * recorded then (describe.c).
 */
ShardTable *
shard_get_table(Oid relid)
{
	List	   *options = GetForeignTable(relid)->options;
	ShardTable *t = shard_table_from_options(relid, options);

	layout_load(t, options);

	/*
	 * While items move between layouts, a read meets each row once only if
	 * each of its pages shows every move made before it was asked for (see
	 * merge.c and in_its_pass): an eventually consistent page may not.  So
	 * reads are strongly consistent then, unless the table says otherwise.
	 */
	if (t->nlayouts > 1 && shard_option_value(options, "consistent_read") == NULL)
		t->consistent_read = true;
	return t;
}
