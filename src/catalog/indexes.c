/*-------------------------------------------------------------------------
 *
 * indexes.c
 *		A foreign table's secondary indexes: the DynamoDB table's global and
 *		local secondary indexes as the option secondary_indexes records
 *		them, read, checked and written.  indexview.c makes of each the
 *		table a read through it sees.
 *
 * The option is a JSON array with an object per index, as DescribeTable
 * gave it when the table was declared (sql/ddl.c):
 *
 *	 [{"name": "byEmail", "kind": "global", "partition_key": "email",
 *	   "partition_key_type": "S", "projection": "ALL"},
 *	  {"name": "bySeen", "kind": "local", "partition_key": "org",
 *	   "partition_key_type": "S", "sort_key": "seen", "sort_key_type": "N",
 *	   "projection": "INCLUDE", "attributes": ["name"]}]
 *
 * Being an option, it survives pg_dump, and planning never asks DynamoDB.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"


/* The projections' names, as DynamoDB's ProjectionType writes them. */
static const char *const projection_names[] = {
	[PROJECT_ALL] = "ALL",
	[PROJECT_KEYS_ONLY] = "KEYS_ONLY",
	[PROJECT_INCLUDE] = "INCLUDE",
};

/* The members an index's object may have. */
static const char *const index_members[] = {
	"name", "kind", "partition_key", "partition_key_type", "sort_key",
	"sort_key_type", "projection", "attributes", NULL
};

/* The key types' names. */
static const char *const key_type_names[] = {
	[DDB_TYPE_S] = "S", [DDB_TYPE_N] = "N", [DDB_TYPE_B] = "B",
};

/* Refuse the value of option secondary_indexes, saying why. */
pg_noreturn static void
bad_indexes(const char *reason)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for option \"secondary_indexes\": %s", reason),
			 errhint("The event trigger records the option from DynamoDB's DescribeTable, and shard_fdw_refresh_indexes() records it again; drop the option to have it learnt.")));
}

/* Member name of index object obj, a string; NULL when absent. */
static const char *
member_string(const DdbJson *obj, const char *name, bool required)
{
	const DdbJson *v = ddbjson_get(obj, name);

	if (v == NULL && !required)
		return NULL;
	if (v == NULL || v->kind != DJ_STRING || v->len == 0 || memchr(v->str, '\0', v->len))
		bad_indexes(psprintf("member \"%s\" of an index is %s", name,
							 v == NULL ? "missing" : "not a non-empty string"));
	return v->str;
}

/* The key type named by member name of obj: S, N or B. */
static DdbType
member_key_type(const DdbJson *obj, const char *name)
{
	const char *type = member_string(obj, name, true);

	for (int k = 0; k < (int) lengthof(key_type_names); k++)
		if (strcmp(type, key_type_names[k]) == 0)
			return (DdbType) k;
	bad_indexes(psprintf("member \"%s\" is \"%s\", not S, N or B", name, type));
}

/* One index's object, into *idx. */
static void
parse_index(const DdbJson *obj, ShardIndex *idx)
{
	const char *kind;
	const char *projection;
	const DdbJson *attributes;
	int			p;

	if (obj->kind != DJ_OBJECT)
		bad_indexes("an element is not an object");
	for (int m = 0; m < obj->n; m++)
	{
		bool		known = false;

		for (const char *const *name = index_members; *name; name++)
			known |= strcmp(obj->keys[m], *name) == 0;
		if (!known)
			bad_indexes(psprintf("an index has unknown member \"%s\"", obj->keys[m]));
	}
	idx->name = pstrdup(member_string(obj, "name", true));
	kind = member_string(obj, "kind", true);
	if (strcmp(kind, "global") != 0 && strcmp(kind, "local") != 0)
		bad_indexes(psprintf("index \"%s\" is of kind \"%s\", not global or local",
							 idx->name, kind));
	idx->local = strcmp(kind, "local") == 0;
	idx->pk = pstrdup(member_string(obj, "partition_key", true));
	idx->pk_type = member_key_type(obj, "partition_key_type");
	idx->sk = (char *) member_string(obj, "sort_key", false);
	if (idx->sk)
	{
		idx->sk = pstrdup(idx->sk);
		idx->sk_type = member_key_type(obj, "sort_key_type");
	}
	else if (ddbjson_get(obj, "sort_key_type"))
		bad_indexes(psprintf("index \"%s\" has a sort_key_type but no sort_key", idx->name));
	if (idx->local && idx->sk == NULL)
		bad_indexes(psprintf("local index \"%s\" has no sort key", idx->name));
	projection = member_string(obj, "projection", true);
	for (p = 0; p < (int) lengthof(projection_names); p++)
		if (strcmp(projection, projection_names[p]) == 0)
			break;
	if (p == (int) lengthof(projection_names))
		bad_indexes(psprintf("index \"%s\" has projection \"%s\", not ALL, KEYS_ONLY or INCLUDE",
							 idx->name, projection));
	idx->projection = (IndexProjection) p;
	attributes = ddbjson_get(obj, "attributes");
	if ((attributes != NULL) != (idx->projection == PROJECT_INCLUDE))
		bad_indexes(psprintf("index \"%s\" has %s", idx->name,
							 attributes ? "attributes but its projection is not INCLUDE" :
							 "projection INCLUDE but no attributes"));
	idx->attributes = NIL;
	for (int i = 0; attributes && i < Max(attributes->n, 1); i++)
	{
		if (attributes->kind != DJ_ARRAY || attributes->n == 0 ||
			attributes->elems[i].kind != DJ_STRING)
			bad_indexes(psprintf("the attributes of index \"%s\" are not an array of strings",
								 idx->name));
		idx->attributes = lappend(idx->attributes,
								  makeString(pstrdup(attributes->elems[i].str)));
	}
}

/*
 * The indexes that value, a value of option secondary_indexes, records,
 * their number in *n; an error names what is wrong with it.
 */
ShardIndex *
indexes_parse(const char *value, int *n)
{
	char		err[SFDW_ERRLEN];
	DdbJson    *j = ddbjson_parse(value, strlen(value), err, sizeof(err));
	ShardIndex *indexes;

	if (j == NULL)
		bad_indexes(err);
	if (j->kind != DJ_ARRAY)
		bad_indexes("not a JSON array");
	indexes = palloc0(sizeof(ShardIndex) * Max(j->n, 1));
	for (int i = 0; i < j->n; i++)
	{
		parse_index(&j->elems[i], &indexes[i]);
		for (int k = 0; k < i; k++)
			if (strcmp(indexes[k].name, indexes[i].name) == 0)
				bad_indexes(psprintf("index \"%s\" is listed twice", indexes[i].name));
	}
	*n = j->n;
	return indexes;
}

/*
 * The value of option secondary_indexes that records the n indexes, or
 * NULL when n is 0 (the option is dropped then).
 */
char *
indexes_option_text(const ShardIndex *indexes, int n)
{
	Buf			out;
	JsonWriter	w;

	if (n == 0)
		return NULL;
	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_array(&w);
	for (int i = 0; i < n; i++)
	{
		const ShardIndex *idx = &indexes[i];
		ListCell   *lc;

		jw_begin_object(&w);
		jw_key(&w, "name");
		jw_cstring(&w, idx->name);
		jw_key(&w, "kind");
		jw_cstring(&w, idx->local ? "local" : "global");
		jw_key(&w, "partition_key");
		jw_cstring(&w, idx->pk);
		jw_key(&w, "partition_key_type");
		jw_cstring(&w, key_type_names[idx->pk_type]);
		if (idx->sk)
		{
			jw_key(&w, "sort_key");
			jw_cstring(&w, idx->sk);
			jw_key(&w, "sort_key_type");
			jw_cstring(&w, key_type_names[idx->sk_type]);
		}
		jw_key(&w, "projection");
		jw_cstring(&w, projection_names[idx->projection]);
		if (idx->projection == PROJECT_INCLUDE)
		{
			jw_key(&w, "attributes");
			jw_begin_array(&w);
			foreach(lc, idx->attributes)
				jw_cstring(&w, strVal(lfirst(lc)));
			jw_end_array(&w);
		}
		jw_end_object(&w);
	}
	jw_end_array(&w);
	return out.data;
}

/* The name of an index's projection, as DynamoDB writes it. */
const char *
index_projection_name(IndexProjection projection)
{
	return projection_names[projection];
}

/* The position of index name among t's indexes, or -1. */
int
shard_index_find(ShardTable *t, const char *name)
{
	for (int i = 0; i < t->nindexes; i++)
		if (strcmp(t->indexes[i].name, name) == 0)
			return i;
	return -1;
}
