/*-------------------------------------------------------------------------
 *
 * indexview.c
 *		A secondary index of a foreign table's DynamoDB table seen as a table
 *		of its own, keyed by the index's keys (shard_index_view): what the
 *		planner costs beside the table's own reads, and what a scan through
 *		the index reads with.  The indexes themselves are recorded in option
 *		secondary_indexes (indexes.c).
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"


/* True when index idx holds attribute attr of every item it holds. */
static bool
index_projects(ShardTable *t, const ShardIndex *idx, const char *attr)
{
	ListCell   *lc;

	if (idx->projection == PROJECT_ALL ||
		strcmp(attr, idx->pk) == 0 || (idx->sk && strcmp(attr, idx->sk) == 0) ||
		strcmp(attr, t->pk.attribute) == 0 ||
		(t->sk.attribute && strcmp(attr, t->sk.attribute) == 0))
		return true;
	foreach(lc, idx->attributes)
		if (strcmp(strVal(lfirst(lc)), attr) == 0)
			return true;
	return false;
}

/*
 * How a view of t reads key attribute attr of type type: as t's own
 * partition or sort key (the same attribute, with its template), as an
 * index key t writes from a template, or as the column whose attribute it
 * is.  False, with why, when none holds it so that a condition on a
 * column fixes it, and only where the item has it: the column's value
 * may come from a key template of t when the item lacks the attribute.
 */
static bool
view_key(ShardTable *t, const char *attr, DdbType type, ShardKey *key, const char **why)
{
	const ShardKey *keys[] = {&t->pk, &t->sk, &t->index_pk, &t->index_sk};

	for (size_t k = 0; k < lengthof(keys); k++)
		if (keys[k]->attribute && strcmp(keys[k]->attribute, attr) == 0)
		{
			*key = *keys[k];
			return true;
		}
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];

		if (strcmp(col->attribute, attr) != 0)
			continue;
		if (col->ddb_type != type)
		{
			*why = psprintf("column \"%s\" is stored as %s, and the index's key attribute \"%s\" is %s",
							col->name, ddb_type_name(col->ddb_type), attr,
							ddb_type_name(type));
			return false;
		}
		if (shard_key_uses(t, i))
		{
			*why = psprintf("column \"%s\" may be read from a key of the table's where the item has no attribute \"%s\"",
							col->name, attr);
			return false;
		}
		memset(key, 0, sizeof(ShardKey));
		key->attribute = col->attribute;
		key->column = i;
		key->type = type;
		return true;
	}
	*why = psprintf("no column holds its key attribute \"%s\"", attr);
	return false;
}

/*
 * Index i of t (a foreign table of the DynamoDB table itself) as a table
 * of its own, the view a read through it plans and runs with: its keys
 * are the index's (pk, sk), index and index_local name it, base is t, a
 * column its index does not project is marked unprojected, and its
 * partition key is sharded as t's when it is t's own.  NULL, with why,
 * when the planner may not read the index: use_indexes is off, a column
 * cannot fix a key (view_key), a GSI while t reads consistently (GSIs
 * are only eventually consistent), an index that does not project the
 * TTL attribute reads leave expired items out by, or an index whose partitions depend
 * on the layout (t's partition key, sharded) while t has earlier
 * layouts.  Allocated in the current memory context; the view shares
 * t's other members.
 */
ShardTable *
shard_index_view(ShardTable *t, int i, const char **why)
{
	const ShardIndex *idx = &t->indexes[i];
	ShardTable *v = palloc(sizeof(ShardTable));
	bool		own_partitions;

	*v = *t;
	if (!t->use_indexes)
	{
		*why = "option use_indexes is off";
		return NULL;
	}
	if (!idx->local && t->consistent_read)
	{
		*why = "a global secondary index cannot be read consistently, and the table reads consistently";
		return NULL;
	}
	if (shard_expiry_attribute(t) &&
		!index_projects(t, idx, shard_expiry_attribute(t)))
	{
		*why = "it does not project the TTL attribute, by which reads leave out expired items";
		return NULL;
	}
	memset(&v->sk, 0, sizeof(ShardKey));
	v->sk.column = -1;
	if (!view_key(t, idx->pk, idx->pk_type, &v->pk, why) ||
		(idx->sk && !view_key(t, idx->sk, idx->sk_type, &v->sk, why)))
		return NULL;
	own_partitions = strcmp(v->pk.attribute, t->pk.attribute) == 0;
	if (own_partitions && t->nlayouts > 1)
	{
		*why = "its partitions are the table's, and the table has earlier layouts";
		return NULL;
	}
	/* the table's own partition key keeps its shards; any other is one */
	if (!own_partitions)
	{
		v->strategy = SHARD_NONE;
		v->shards = 1;
		v->shard_by = NIL;
		v->nboundaries = 0;
		v->legacy_unsharded = false;
	}
	v->index = idx->name;
	v->index_local = idx->local;
	v->base = t;
	v->nindexes = 0;
	v->columns = palloc(sizeof(ShardColumn) * Max(t->ncolumns, 1));
	memcpy(v->columns, t->columns, sizeof(ShardColumn) * t->ncolumns);
	for (int c = 0; c < v->ncolumns; c++)
		v->columns[c].unprojected = v->columns[c].ddb_type == DDB_TYPE_ITEM ?
			idx->projection != PROJECT_ALL :
			!index_projects(t, idx, v->columns[c].attribute);
	v->nlayouts = 1;
	v->layouts = palloc(sizeof(ShardTable *));
	v->layouts[0] = v;
	v->layout_entry = NULL;
	*why = NULL;
	return v;
}
