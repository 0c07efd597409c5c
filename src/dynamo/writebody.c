/*-------------------------------------------------------------------------
 *
 * writebody.c
 *		The bodies of the requests that write: PutItem (plain, conditional,
 *		or with the keys earlier layouts give the row checked free),
 *		BatchWriteItem, UpdateItem, DeleteItem, the TransactWriteItems that
 *		move an item to another key (and the GetItem of the item an
 *		UPDATE moves), and the shard metadata items of
 *		dynamic sharding (the audit-log article's schema).  Like request.c,
 *		every body is written byte for byte by the JSON writer.
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
 * Begin the body of a request on table about one item, up to its Key
 * member, whose value the caller writes next.
 */
static void
begin_keyed(JsonWriter *w, Buf *out, const char *table)
{
	jw_begin_request(w, out, table);
	jw_key(w, "Key");
}

/*
 * The body of a request on the item with the key pk, sk (texts) and one
 * member more, member, whose value is the JSON text value.
 */
static char *
key_texts_body(ShardTable *t, const char *pk, const char *sk, const char *member,
			   const char *value, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	begin_keyed(&w, &out, t->table);
	request_write_key_texts(&w, t, pk, sk);
	jw_key(&w, member);
	jw_raw(&w, value);
	return jw_end_request(&w, len);
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

	begin_keyed(&w, &out, t->table);
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

/*
 * The strongly consistent GetItem body of the whole item under the key
 * pk, sk (texts), which an UPDATE's move reads before it writes.
 */
char *
request_get_item(ShardTable *t, const char *pk, const char *sk, size_t *len)
{
	return key_texts_body(t, pk, sk, "ConsistentRead", "true", len);
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

/* An UpdateItem body being written: its clauses, and the names and values they use. */
typedef struct UpdatePart
{
	StringInfoData set;			/* "#a0=:a0,#a1=:a1" */
	StringInfoData remove;		/* "#a2,#a3" */
	List	   *names;			/* the attributes of #a0, #a1, ... */
	Buf			values;			/* ExpressionAttributeValues, written by vw */
	JsonWriter	vw;
} UpdatePart;

/* Begin part p: no clause yet. */
static void
part_begin(UpdatePart *p)
{
	initStringInfo(&p->set);
	initStringInfo(&p->remove);
	p->names = NIL;
	buf_init(&p->values);
	jw_init(&p->vw, &p->values);
	jw_begin_object(&p->vw);
}

/* The length of the UpdateExpression of SET and REMOVE clause lists of these lengths. */
static int
update_expression_length(int set, int remove)
{
	return (set ? 4 + set : 0) + (set && remove ? 1 : 0) + (remove ? 7 + remove : 0);
}

/*
 * The UpdateItem body of part p on the item with key pk, sk, if it still
 * exists.  Without a clause that sets there are no
 * ExpressionAttributeValues, which DynamoDB refuses empty; without any
 * clause, no UpdateExpression (the item is left as it is).
 */
static char *
part_body(ShardTable *t, UpdatePart *p, const char *pk, const char *sk)
{
	Buf			out;
	JsonWriter	w;
	size_t		len;

	jw_end_object(&p->vw);
	begin_keyed(&w, &out, t->table);
	request_write_key_texts(&w, t, pk, sk);
	write_condition(&w, "attribute_exists(#k)", t->pk.attribute, p->names);
	if (p->set.len > 0)
	{
		jw_key(&w, "ExpressionAttributeValues");
		jw_raw(&w, p->values.data);
	}
	if (p->set.len > 0 || p->remove.len > 0)
	{
		jw_key(&w, "UpdateExpression");
		jw_cstring(&w, psprintf("%s%s%s%s", p->set.len ? "SET " : "", p->set.data,
								p->set.len && p->remove.len ? " " : "",
								p->remove.len ? psprintf("REMOVE %s", p->remove.data) : ""));
	}
	return jw_end_request(&w, &len);
}

/*
 * Add to part *p, of an UpdateItem on the item with key pk, sk, the clause
 * that sets attribute (sets) or removes it; when the part's
 * UpdateExpression would grow past DDB_MAX_EXPRESSION_BYTES, the part's
 * body goes to *bodies first and the clause begins a new part.  With
 * sets, the caller writes the value next, with p->vw.
 */
static void
part_add(ShardTable *t, const char *pk, const char *sk, UpdatePart *p, List **bodies,
		 const char *attribute, bool sets)
{
	int			i = list_length(p->names);
	char	   *clause = sets ? psprintf("#a%d=:a%d", i, i) : psprintf("#a%d", i);
	StringInfo	list = sets ? &p->set : &p->remove;
	int			grown = list->len + (list->len ? 1 : 0) + (int) strlen(clause);

	if (i > 0 &&
		update_expression_length(sets ? grown : p->set.len,
								 sets ? p->remove.len : grown) > DDB_MAX_EXPRESSION_BYTES)
	{
		*bodies = lappend(*bodies, part_body(t, p, pk, sk));
		part_begin(p);
		part_add(t, pk, sk, p, bodies, attribute, sets);
		return;
	}
	appendStringInfo(list, "%s%s", list->len ? "," : "", clause);
	p->names = lappend(p->names, (char *) attribute);
	if (sets)
		jw_key(&p->vw, psprintf(":a%d", i));
}

/*
 * The UpdateItem bodies (NUL-terminated JSON texts, in a List) that set
 * every non-key column of the row in slot (and remove the attributes of
 * NULL ones), and the index keys index_keys[0] and [1] (removed when
 * NULL), on the item with the given key if it still exists.  Attributes
 * no column maps are left alone.  One body while the UpdateExpression
 * fits DynamoDB's 4 KB (it has no spaces: about 340 columns fit), more
 * when the table has more columns, each with its share of the clauses
 * and the same condition.
 */
List *
request_update(ShardTable *t, TupleTableSlot *slot, const char *pk, const char *sk,
			   const char *const *index_keys)
{
	const ShardKey *index[2] = {&t->index_pk, &t->index_sk};
	List	   *bodies = NIL;
	UpdatePart	part;

	part_begin(&part);
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		bool		isnull;
		Datum		value;

		if (col->ddb_type == DDB_TYPE_ITEM || request_is_key_attribute(t, col->attribute))
			continue;
		value = slot_getattr(slot, col->attnum, &isnull);
		part_add(t, pk, sk, &part, &bodies, col->attribute, !isnull);
		if (!isnull)
			codec_write_value(&part.vw, col, value);
	}
	for (int k = 0; k < 2; k++)
	{
		if (index[k]->attribute == NULL)
			continue;
		part_add(t, pk, sk, &part, &bodies, index[k]->attribute, index_keys[k] != NULL);
		if (index_keys[k] != NULL)
			request_write_key_value(&part.vw, index[k], index_keys[k]);
	}
	return lappend(bodies, part_body(t, &part, pk, sk));
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
 * True when a move of an UPDATE (request_move_row) keeps attribute of the
 * stored item as it is: no column of the table maps it and the table does
 * not write it as a key (the item's, or an index's from its template).
 * That is what an UpdateItem leaves alone.
 */
static bool
move_keeps(ShardTable *t, const char *attribute)
{
	if (request_is_key_attribute(t, attribute))
		return false;
	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].ddb_type != DDB_TYPE_ITEM &&
			strcmp(t->columns[c].attribute, attribute) == 0)
			return false;
	return true;
}

/*
 * Whether write_unchanged_condition checks item's attribute i: every one
 * when whole, else the partition key (the item exists) and those a move
 * keeps.
 */
static bool
checks_attribute(ShardTable *t, const DdbJson *item, int i, bool whole)
{
	return whole || strcmp(item->keys[i], t->pk.attribute) == 0 ||
		move_keeps(t, item->keys[i]);
}

/*
 * Write the condition that item (as read) is stored unchanged: when whole,
 * each of its attributes holds the value read, and each column attribute
 * it lacks is still absent; else only the attributes a move keeps hold
 * the values read (and the partition key, so the item exists).
 */
static void
write_unchanged_condition(JsonWriter *w, ShardTable *t, const DdbJson *item, bool whole)
{
	StringInfoData cond;
	int			n = 0;

	initStringInfo(&cond);
	for (int i = 0; i < item->n; i++)
		if (checks_attribute(t, item, i, whole))
		{
			appendStringInfo(&cond, "%s#u%d = :u%d", n ? " AND " : "", n, n);
			n++;
		}
	for (int c = 0; whole && c < t->ncolumns; c++)
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
		if (checks_attribute(t, item, i, whole))
		{
			jw_key(w, psprintf("#u%d", n++));
			jw_cstring(w, item->keys[i]);
		}
	for (int c = 0; whole && c < t->ncolumns; c++)
		if (t->columns[c].ddb_type != DDB_TYPE_ITEM &&
			ddbjson_get(item, t->columns[c].attribute) == NULL)
		{
			jw_key(w, psprintf("#u%d", n++));
			jw_cstring(w, t->columns[c].attribute);
		}
	jw_end_object(w);
	jw_key(w, "ExpressionAttributeValues");
	jw_begin_object(w);
	n = 0;
	for (int i = 0; i < item->n; i++)
		if (checks_attribute(t, item, i, whole))
		{
			jw_key(w, psprintf(":u%d", n++));
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
 * stored one (as read) on condition that it is unchanged (write_unchanged_
 * condition, whole or not), and put the new one (item, JSON text) if its
 * key is free.
 */
static char *
move_body(ShardTable *t, const DdbJson *stored, bool whole, const char *item, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	begin_transaction(&w, &out);
	begin_action(&w, t, "Delete");
	jw_key(&w, "Key");
	write_key_of_item(&w, t, stored);
	write_unchanged_condition(&w, t, stored, whole);
	end_action(&w);
	write_put_if_free(&w, t, item);
	return end_transaction(&w, len);
}

/*
 * The TransactWriteItems body that moves item unchanged (as read) to where
 * moved (JSON text) is: the old one deleted if it is stored unchanged,
 * the new one put if its key is free.
 */
char *
request_move(ShardTable *t, const DdbJson *unchanged, const char *moved, size_t *len)
{
	return move_body(t, unchanged, true, moved, len);
}

/*
 * The TransactWriteItems body that moves the stored item (read by a
 * consistent GetItem) of an UPDATE's row to the row's new key: row_item
 * (JSON text, write_item's: the keys and the row's non-NULL columns) and
 * every attribute of stored that the move keeps (move_keeps: what an
 * UpdateItem would leave alone), put if its key is free; the stored item
 * deleted on condition that the attributes kept still hold the values
 * read, so that a concurrent write of one of them cancels the move
 * instead of being lost.
 */
char *
request_move_row(ShardTable *t, const DdbJson *stored, const char *row_item, size_t *len)
{
	Buf			item;
	JsonWriter	w;
	size_t		n = strlen(row_item);

	Assert(n >= 2 && row_item[n - 1] == '}');
	buf_init(&item);
	jw_init(&w, &item);
	jw_begin_object(&w);
	/* row_item's members, then those kept */
	jw_raw(&w, psprintf("%.*s", (int) (n - 2), row_item + 1));
	for (int i = 0; i < stored->n; i++)
		if (move_keeps(t, stored->keys[i]))
		{
			jw_key(&w, stored->keys[i]);
			jw_tree(&w, &stored->elems[i]);
		}
	jw_end_object(&w);
	return move_body(t, stored, false, item.data, len);
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
	return key_texts_body(t, pk, sk, "ReturnValues", "\"ALL_OLD\"", len);
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

	begin_keyed(&w, &out, t->table);
	write_key_of_item(&w, t, item);
	if (unchanged)
		write_unchanged_condition(&w, t, item, true);
	else
		write_condition(&w, "attribute_exists(#k)", t->pk.attribute, NIL);
	return jw_end_request(&w, len);
}

/* ---------------------------------------------------------------------
 * Shard metadata (dynamic sharding, the audit-log article's schema)
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

	begin_keyed(&w, &out, t->metadata_table);
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

	begin_keyed(&w, &out, t->metadata_table);
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
