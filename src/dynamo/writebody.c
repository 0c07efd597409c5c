/*-------------------------------------------------------------------------
 *
 * writebody.c
 *		The bodies of the requests that write: PutItem (plain, conditional,
 *		or with the keys earlier layouts give the row checked free),
 *		BatchWriteItem, UpdateItem, DeleteItem, the TransactWriteItems that
 *		move an item to another key, and the shard metadata items of
 *		dynamic sharding (seed 000's schema).  Like request.c, every body
 *		is written byte for byte by the JSON writer.
 *
 *-------------------------------------------------------------------------
 */
#include "dynamo/dynamo.h"

#include "utils/builtins.h"


/* ---------------------------------------------------------------------
 * Pieces of the writes' bodies
 * ---------------------------------------------------------------------
 */

/* Write the key object of an item as read: its key attributes. */
static void
write_key_of_item(JsonWriter *w, ShardTable *t, const DdbJson *item)
{
	jw_begin_object(w);
	jw_key(w, t->pk.attribute);
	jw_tree(w, ddbjson_get(item, t->pk.attribute));
	if (t->sk.attribute)
	{
		jw_key(w, t->sk.attribute);
		jw_tree(w, ddbjson_get(item, t->sk.attribute));
	}
	jw_end_object(w);
}

/*
 * Write a ConditionExpression, condition, on attribute as #k (such as
 * "attribute_exists(#k)"), and the ExpressionAttributeNames: #k, then
 * #a0, #a1, ... for the names in "names" (a List of C strings).
 */
static void
write_condition(JsonWriter *w, const char *condition, const char *attribute, List *names)
{
	ListCell   *lc;

	jw_key(w, "ConditionExpression");
	jw_cstring(w, condition);
	jw_key(w, "ExpressionAttributeNames");
	jw_begin_object(w);
	jw_key(w, "#k");
	jw_cstring(w, attribute);
	foreach(lc, names)
	{
		jw_key(w, psprintf("#a%d", foreach_current_index(lc)));
		jw_cstring(w, lfirst(lc));
	}
	jw_end_object(w);
}

/* End a GetItem body whose Key is written: strongly consistent. */
static char *
end_consistent_get(JsonWriter *w, size_t *len)
{
	jw_key(w, "ConsistentRead");
	jw_bool(w, true);
	return jw_end_body(w, len);
}

/* ---------------------------------------------------------------------
 * Writes
 * ---------------------------------------------------------------------
 */

/*
 * The PutItem body of an item (JSON text); conditional: only where the
 * key is free, the item then carrying a fresh put token (see
 * PUT_TOKEN_ATTRIBUTE).
 */
char *
request_put(ShardTable *t, const char *item, bool conditional, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	jw_key(&w, "Item");
	if (conditional)
	{
		uint8		token[PUT_TOKEN_HEX / 2];
		char		token_hex[PUT_TOKEN_HEX + 1];
		size_t		n = strlen(item);

		Assert(n >= 2 && item[n - 1] == '}');
		if (!pg_strong_random(token, sizeof(token)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate the put token of a PutItem")));
		for (int i = 0; i < (int) sizeof(token); i++)
			sprintf(token_hex + 2 * i, "%02x", token[i]);
		jw_raw(&w, psprintf("%.*s,\"" PUT_TOKEN_ATTRIBUTE "\":{\"S\":\"%s\"}}",
							(int) (n - 1), item, token_hex));
		write_condition(&w, "attribute_not_exists(#k)", t->pk.attribute, NIL);
	}
	else
		jw_raw(&w, item);
	return jw_end_request(&w, len);
}

/*
 * The strongly consistent GetItem body of the put token (request_put) of
 * the stored item with item's key.
 */
char *
request_get_put_token(ShardTable *t, const DdbJson *item, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	jw_key(&w, "Key");
	write_key_of_item(&w, t, item);
	jw_key(&w, "ProjectionExpression");
	jw_cstring(&w, "#t");
	jw_key(&w, "ExpressionAttributeNames");
	jw_begin_object(&w);
	jw_key(&w, "#t");
	jw_cstring(&w, PUT_TOKEN_ATTRIBUTE);
	jw_end_object(&w);
	return end_consistent_get(&w, len);
}

/* The BatchWriteItem body that puts items[0..n-1] (at most 25). */
char *
request_batch_put(ShardTable *t, char **items, int n, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	Assert(n <= DDB_BATCH_WRITE_MAX);
	jw_begin_body(&w, &out);
	jw_key(&w, "RequestItems");
	jw_begin_object(&w);
	jw_key(&w, t->table);
	jw_begin_array(&w);
	for (int i = 0; i < n; i++)
	{
		jw_begin_object(&w);
		jw_key(&w, "PutRequest");
		jw_begin_object(&w);
		jw_key(&w, "Item");
		jw_raw(&w, items[i]);
		jw_end_object(&w);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	return jw_end_request(&w, len);
}

/*
 * True when attribute is one of the keys the table writes: the item key,
 * or an index key from a template.  No column is written under it.
 */
bool
request_is_key_attribute(ShardTable *t, const char *attribute)
{
	const ShardKey *keys[4] = {&t->pk, &t->sk, &t->index_pk, &t->index_sk};

	for (int k = 0; k < 4; k++)
		if (keys[k]->attribute && strcmp(keys[k]->attribute, attribute) == 0)
			return true;
	return false;
}

/*
 * The UpdateItem body that sets every non-key column of the row in slot
 * (and removes the attributes of NULL ones), and the index keys
 * index_keys[0] and [1] (removed when NULL), on the item with the given
 * key if it still exists.  Attributes no column maps are left alone.
 * Without a non-NULL column there are no ExpressionAttributeValues, which
 * DynamoDB refuses empty.  The UpdateExpression has no spaces, so that
 * about 340 columns fit in DynamoDB's 4 KB.
 */
char *
request_update(ShardTable *t, TupleTableSlot *slot, const char *pk, const char *sk,
			   const char *const *index_keys, size_t *len)
{
	const ShardKey *index[2] = {&t->index_pk, &t->index_sk};
	Buf			out;
	JsonWriter	w;
	Buf			values;
	JsonWriter	vw;
	StringInfoData set;
	StringInfoData remove;
	List	   *names = NIL;

	initStringInfo(&set);
	initStringInfo(&remove);
	buf_init(&values);
	jw_init(&vw, &values);
	jw_begin_object(&vw);
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		bool		isnull;
		Datum		value;

		if (col->ddb_type == DDB_TYPE_ITEM || request_is_key_attribute(t, col->attribute))
			continue;
		names = lappend(names, col->attribute);
		value = slot_getattr(slot, col->attnum, &isnull);
		if (isnull)
		{
			appendStringInfo(&remove, "%s#a%d", remove.len ? "," : "", list_length(names) - 1);
			continue;
		}
		appendStringInfo(&set, "%s#a%d=:a%d", set.len ? "," : "",
						 list_length(names) - 1, list_length(names) - 1);
		jw_key(&vw, psprintf(":a%d", list_length(names) - 1));
		codec_write_value(&vw, col, value);
	}
	for (int k = 0; k < 2; k++)
	{
		if (index[k]->attribute == NULL)
			continue;
		names = lappend(names, index[k]->attribute);
		if (index_keys[k] == NULL)
		{
			appendStringInfo(&remove, "%s#a%d", remove.len ? "," : "", list_length(names) - 1);
			continue;
		}
		appendStringInfo(&set, "%s#a%d=:a%d", set.len ? "," : "",
						 list_length(names) - 1, list_length(names) - 1);
		jw_key(&vw, psprintf(":a%d", list_length(names) - 1));
		request_write_key_value(&vw, index[k], index_keys[k]);
	}
	jw_end_object(&vw);
	jw_begin_request(&w, &out, t->table);
	jw_key(&w, "Key");
	request_write_key_texts(&w, t, pk, sk);
	write_condition(&w, "attribute_exists(#k)", t->pk.attribute, names);
	if (set.len > 0)
	{
		jw_key(&w, "ExpressionAttributeValues");
		jw_raw(&w, values.data);
	}
	if (set.len > 0 || remove.len > 0)
	{
		jw_key(&w, "UpdateExpression");
		jw_cstring(&w, psprintf("%s%s%s%s", set.len ? "SET " : "", set.data,
								set.len && remove.len ? " " : "",
								remove.len ? psprintf("REMOVE %s", remove.data) : ""));
	}
	return jw_end_request(&w, len);
}

/* Write a fresh ClientRequestToken member (TransactWriteItems). */
static void
write_client_token(JsonWriter *w)
{
	uint8		token[16];
	char		token_hex[sizeof(token) * 2 + 1];

	if (!pg_strong_random(token, sizeof(token)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a ClientRequestToken for TransactWriteItems")));
	for (int i = 0; i < (int) sizeof(token); i++)
		sprintf(token_hex + 2 * i, "%02x", token[i]);
	jw_key(w, "ClientRequestToken");
	jw_cstring(w, token_hex);
}

/*
 * Write the condition that item (as read) is stored unchanged: each of its
 * attributes holds the value read, and each column attribute it lacks is
 * still absent.
 */
static void
write_unchanged_condition(JsonWriter *w, ShardTable *t, const DdbJson *item)
{
	StringInfoData cond;
	int			n = 0;

	initStringInfo(&cond);
	for (int i = 0; i < item->n; i++)
		appendStringInfo(&cond, "%s#u%d = :u%d", i ? " AND " : "", i, i);
	n = item->n;
	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].ddb_type != DDB_TYPE_ITEM &&
			ddbjson_get(item, t->columns[c].attribute) == NULL)
		{
			appendStringInfo(&cond, "%sattribute_not_exists(#u%d)", n ? " AND " : "", n);
			n++;
		}
	jw_key(w, "ConditionExpression");
	jw_cstring(w, cond.data);
	jw_key(w, "ExpressionAttributeNames");
	jw_begin_object(w);
	n = 0;
	for (int i = 0; i < item->n; i++)
	{
		jw_key(w, psprintf("#u%d", n++));
		jw_cstring(w, item->keys[i]);
	}
	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].ddb_type != DDB_TYPE_ITEM &&
			ddbjson_get(item, t->columns[c].attribute) == NULL)
		{
			jw_key(w, psprintf("#u%d", n++));
			jw_cstring(w, t->columns[c].attribute);
		}
	jw_end_object(w);
	jw_key(w, "ExpressionAttributeValues");
	jw_begin_object(w);
	for (int i = 0; i < item->n; i++)
	{
		jw_key(w, psprintf(":u%d", i));
		jw_tree(w, &item->elems[i]);
	}
	jw_end_object(w);
}

/*
 * Begin a TransactWriteItems body: a fresh ClientRequestToken, which makes
 * its retries idempotent (when an attempt was applied and its answer lost,
 * DynamoDB answers the retry with that success instead of failing its
 * conditions), then the list of actions.
 */
static void
begin_transaction(JsonWriter *w, Buf *out)
{
	jw_begin_body(w, out);
	write_client_token(w);
	jw_key(w, "TransactItems");
	jw_begin_array(w);
}

/* Begin an action ("Put", "Delete", "ConditionCheck") on t's table. */
static void
begin_action(JsonWriter *w, ShardTable *t, const char *action)
{
	jw_begin_object(w);
	jw_key(w, action);
	jw_begin_object(w);
	jw_key(w, "TableName");
	jw_cstring(w, t->table);
}

/* End an action begun with begin_action. */
static void
end_action(JsonWriter *w)
{
	jw_end_object(w);
	jw_end_object(w);
}

/* Write a Put action of item (JSON text) on condition that its key is free. */
static void
write_put_if_free(JsonWriter *w, ShardTable *t, const char *item)
{
	begin_action(w, t, "Put");
	jw_key(w, "Item");
	jw_raw(w, item);
	write_condition(w, "attribute_not_exists(#k)", t->pk.attribute, NIL);
	end_action(w);
}

/* End a body begun with begin_transaction; returns it, its length in *len. */
static char *
end_transaction(JsonWriter *w, size_t *len)
{
	jw_end_array(w);
	return jw_end_request(w, len);
}

/*
 * The TransactWriteItems body that moves an item to a new key: delete the
 * old one (key old_pk, old_sk) if it still exists, or with unchanged (an
 * item as read) that item if it is unchanged; put the new one (item, JSON
 * text) if its key is free.
 */
char *
request_move(ShardTable *t, const char *old_pk, const char *old_sk,
			 const DdbJson *unchanged, const char *item, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	begin_transaction(&w, &out);
	begin_action(&w, t, "Delete");
	jw_key(&w, "Key");
	if (unchanged)
	{
		write_key_of_item(&w, t, unchanged);
		write_unchanged_condition(&w, t, unchanged);
	}
	else
	{
		request_write_key_texts(&w, t, old_pk, old_sk);
		write_condition(&w, "attribute_exists(#k)", t->pk.attribute, NIL);
	}
	end_action(&w);
	write_put_if_free(&w, t, item);
	return end_transaction(&w, len);
}

/*
 * The TransactWriteItems body that puts item (JSON text) if its key is
 * free and no item has any of the other keys: the partition key values
 * others (a List of C strings, none item's own) with the sort key sk.
 * The Put is action 0, the checks follow in the order of others.
 */
char *
request_put_checked(ShardTable *t, const char *item, List *others, const char *sk,
					size_t *len)
{
	Buf			out;
	JsonWriter	w;
	ListCell   *lc;

	Assert(list_length(others) < DDB_TRANSACT_MAX);
	begin_transaction(&w, &out);
	write_put_if_free(&w, t, item);
	foreach(lc, others)
	{
		begin_action(&w, t, "ConditionCheck");
		jw_key(&w, "Key");
		request_write_key_texts(&w, t, lfirst(lc), sk);
		write_condition(&w, "attribute_not_exists(#k)", t->pk.attribute, NIL);
		end_action(&w);
	}
	return end_transaction(&w, len);
}

/* The DeleteItem body for a key (texts), asking for the old item. */
char *
request_delete(ShardTable *t, const char *pk, const char *sk, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	jw_key(&w, "Key");
	request_write_key_texts(&w, t, pk, sk);
	jw_key(&w, "ReturnValues");
	jw_cstring(&w, "ALL_OLD");
	return jw_end_request(&w, len);
}

/*
 * The DeleteItem body of an item as read: its key attributes, on
 * condition that the item still exists, or with unchanged, that it is
 * stored unchanged.
 */
char *
request_delete_item(ShardTable *t, const DdbJson *item, bool unchanged, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	jw_key(&w, "Key");
	write_key_of_item(&w, t, item);
	if (unchanged)
		write_unchanged_condition(&w, t, item);
	else
		write_condition(&w, "attribute_exists(#k)", t->pk.attribute, NIL);
	return jw_end_request(&w, len);
}

/* ---------------------------------------------------------------------
 * Shard metadata (dynamic sharding, seed 000's schema)
 * ---------------------------------------------------------------------
 */

/* Write the member metadata_key: {"S": base} of an open object. */
static void
write_meta_key_member(JsonWriter *w, ShardTable *t, const char *base)
{
	jw_key(w, t->metadata_key);
	jw_begin_object(w);
	jw_key(w, "S");
	jw_cstring(w, base);
	jw_end_object(w);
}

/* Write {metadata_key: {"S": base}}. */
static void
write_meta_key(JsonWriter *w, ShardTable *t, const char *base)
{
	jw_begin_object(w);
	write_meta_key_member(w, t, base);
	jw_end_object(w);
}

/* The strongly consistent GetItem body of base key base's metadata. */
char *
request_meta_get(ShardTable *t, const char *base, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->metadata_table);
	jw_key(&w, "Key");
	write_meta_key(&w, t, base);
	return end_consistent_get(&w, len);
}

/*
 * The PutItem body of a new key's metadata: one shard, made at now (epoch
 * seconds), unless the key has metadata already.
 */
char *
request_meta_create(ShardTable *t, const char *base, long now, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->metadata_table);
	jw_key(&w, "Item");
	jw_begin_object(&w);
	write_meta_key_member(&w, t, base);
	jw_key(&w, "number_of_shards");
	jw_raw(&w, "{\"N\":\"1\"}");
	jw_key(&w, "last_updated");
	jw_raw(&w, psprintf("{\"N\":\"%ld\"}", now));
	jw_key(&w, "shard_history");
	jw_raw(&w, psprintf("{\"SS\":[\"%ld:1\"]}", now));
	jw_end_object(&w);
	write_condition(&w, "attribute_not_exists(#k)", t->metadata_key, NIL);
	return jw_end_body(&w, len);
}

/*
 * The UpdateItem body that grows base key base to target shards at now,
 * on condition that its metadata is still what was seen (optimistic
 * locking on last_updated and number_of_shards).
 */
char *
request_meta_grow(ShardTable *t, const char *base, const DynamicMeta *seen, int target,
				  long now, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->metadata_table);
	jw_key(&w, "Key");
	write_meta_key(&w, t, base);
	jw_key(&w, "UpdateExpression");
	jw_cstring(&w, "SET number_of_shards = :n, last_updated = :now ADD shard_history :h");
	jw_key(&w, "ConditionExpression");
	jw_cstring(&w, "last_updated = :seen AND number_of_shards = :seen_n");
	jw_key(&w, "ExpressionAttributeValues");
	jw_begin_object(&w);
	jw_key(&w, ":n");
	jw_raw(&w, psprintf("{\"N\":\"%d\"}", target));
	jw_key(&w, ":now");
	jw_raw(&w, psprintf("{\"N\":\"%ld\"}", now));
	jw_key(&w, ":h");
	jw_raw(&w, psprintf("{\"SS\":[\"%ld:%d\"]}", now, target));
	jw_key(&w, ":seen");
	jw_raw(&w, psprintf("{\"N\":\"" INT64_FORMAT "\"}", seen->last_updated));
	jw_key(&w, ":seen_n");
	jw_raw(&w, psprintf("{\"N\":\"%d\"}", seen->shards));
	jw_end_object(&w);
	return jw_end_body(&w, len);
}

/* ---------------------------------------------------------------------
 * Moving items between layouts (reshard.c)
 * ---------------------------------------------------------------------
 */

/*
 * The body of a strongly consistent read of every item: a Query of
 * partition key pk, or with pk NULL a Scan of the whole table, from
 * start_key (NULL: the start).
 */
char *
request_reshard_read(ShardTable *t, const char *pk, const DdbJson *start_key, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	if (pk)
		request_write_partition_condition(&w, t, pk);
	jw_key(&w, "ConsistentRead");
	jw_bool(&w, true);
	request_write_start_key(&w, start_key);
	return jw_end_request(&w, len);
}
