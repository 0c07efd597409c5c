/*-------------------------------------------------------------------------
 *
 * option.c
 *		The options of shard_fdw's servers, user mappings, foreign tables and
 *		columns: the validator, the checks that need the table's columns,
 *		and loading them into ShardServer / ShardTable with defaults applied.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include <limits.h>

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_type.h"
#include "catalog/pg_user_mapping.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/varlena.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* What kind of value an option takes. */
typedef enum OptionKind
{
	OPT_STRING,					/* any non-empty text */
	OPT_INT,					/* integer within [min, max] */
	OPT_BOOL,
	OPT_CHOICE,					/* one of choices */
	OPT_TEMPLATE,				/* a key template */
	OPT_BOUNDARIES,				/* JSON array of strings */
	OPT_DDB_TYPE,
	OPT_ENDPOINT,				/* http(s)://host[:port][/] */
	OPT_REGION,					/* lower-case letters, digits and hyphens */
	OPT_INDEXES					/* secondary indexes as JSON (indexes.c) */
} OptionKind;

typedef struct ShardOption
{
	const char *name;
	Oid			context;
	OptionKind	kind;
	long		min;
	long		max;
	const char *choices;		/* comma-separated, for OPT_CHOICE */
	const char *dflt;			/* the value when not given, or NULL (none,
								 * or one derived from other options) */
} ShardOption;

#define OPT(n, c, k, d) {.name = (n), .context = (c), .kind = (k), .dflt = (d)}
#define OPT_RANGE(n, c, lo, hi, d) \
	{.name = (n), .context = (c), .kind = OPT_INT, .min = (lo), .max = (hi), .dflt = (d)}
#define OPT_ONE_OF(n, c, list, d) \
	{.name = (n), .context = (c), .kind = OPT_CHOICE, .choices = (list), .dflt = (d)}

/*
 * Every option, where it is valid, what it takes and its default.  Defaults
 * that depend on other options are applied where they are loaded: shards
 * (the number of range_boundaries when given), shard_base (1 for dynamic),
 * metadata_key (the partition key attribute), a table's consistent_read
 * and use_indexes (its server's); a server's region and endpoint are
 * resolved with the environment when its connection is made (awsenv.c).
 */
static const ShardOption shard_options[] = {
	/* server */
	OPT("region", ForeignServerRelationId, OPT_REGION, NULL),
	OPT("endpoint", ForeignServerRelationId, OPT_ENDPOINT, NULL),
	OPT("use_fips_endpoint", ForeignServerRelationId, OPT_BOOL, NULL),
	OPT("use_dualstack_endpoint", ForeignServerRelationId, OPT_BOOL, NULL),
	OPT_RANGE("connect_timeout_ms", ForeignServerRelationId, 1, INT_MAX, "5000"),
	OPT_RANGE("request_timeout_ms", ForeignServerRelationId, 1, INT_MAX, "30000"),
	OPT_RANGE("attempt_timeout_ms", ForeignServerRelationId, 1, INT_MAX, "10000"),
	OPT_RANGE("max_idle_connection_s", ForeignServerRelationId, 0, 86400, "30"),
	OPT_RANGE("max_retries", ForeignServerRelationId, 0, 100, "10"),
	OPT_RANGE("max_concurrency", ForeignServerRelationId, 1, 1024, "16"),
	OPT("consistent_read", ForeignServerRelationId, OPT_BOOL, "false"),
	OPT("ca_file", ForeignServerRelationId, OPT_STRING, NULL),
	OPT_RANGE("max_read_units_per_second", ForeignServerRelationId, 1, INT_MAX, NULL),
	OPT_RANGE("max_write_units_per_second", ForeignServerRelationId, 1, INT_MAX, NULL),
	OPT("use_indexes", ForeignServerRelationId, OPT_BOOL, "true"),
	OPT_RANGE("max_read_units_per_statement", ForeignServerRelationId, 1, INT_MAX, NULL),
	OPT_RANGE("max_write_units_per_statement", ForeignServerRelationId, 1, INT_MAX, NULL),
	/* user mapping */
	OPT("access_key_id", UserMappingRelationId, OPT_STRING, NULL),
	OPT("secret_access_key", UserMappingRelationId, OPT_STRING, NULL),
	OPT("session_token", UserMappingRelationId, OPT_STRING, NULL),
	OPT("profile", UserMappingRelationId, OPT_STRING, NULL),
	OPT("role_arn", UserMappingRelationId, OPT_STRING, NULL),
	OPT("external_id", UserMappingRelationId, OPT_STRING, NULL),
	OPT("role_session_name", UserMappingRelationId, OPT_STRING, NULL),
	OPT_RANGE("duration_s", UserMappingRelationId, 900, 43200, NULL),
	OPT("ambient_credentials", UserMappingRelationId, OPT_BOOL, "false"),
	/* foreign table */
	OPT("table", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("index", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("partition_key", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("sort_key", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("partition_key_format", ForeignTableRelationId, OPT_TEMPLATE, NULL),
	OPT("sort_key_format", ForeignTableRelationId, OPT_TEMPLATE, NULL),
	OPT("index_partition_key", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("index_partition_key_format", ForeignTableRelationId, OPT_TEMPLATE, NULL),
	OPT("index_sort_key", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("index_sort_key_format", ForeignTableRelationId, OPT_TEMPLATE, NULL),
	OPT_RANGE("shards", ForeignTableRelationId, 1, 100000, "1"),
	OPT_ONE_OF("shard_strategy", ForeignTableRelationId,
			   "none,random,calculated,range,dynamic", "none"),
	OPT("shard_by", ForeignTableRelationId, OPT_STRING, NULL),
	OPT_ONE_OF("shard_hash", ForeignTableRelationId,
			   "sha256,sha256_32,md5,fnv1a_32,fnv1a_64", "sha256"),
	OPT_RANGE("shard_base", ForeignTableRelationId, 0, 1, "0"),
	OPT("range_boundaries", ForeignTableRelationId, OPT_BOUNDARIES, NULL),
	OPT_ONE_OF("range_normalize", ForeignTableRelationId, "nfkd_lower,none", "nfkd_lower"),
	OPT("metadata_table", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("metadata_key", ForeignTableRelationId, OPT_STRING, NULL),
	OPT_RANGE("cooldown_s", ForeignTableRelationId, 0, INT_MAX, "60"),
	OPT_RANGE("max_shards", ForeignTableRelationId, 1, 100000, "100"),
	OPT_RANGE("metadata_cache_ms", ForeignTableRelationId, 0, INT_MAX, "1000"),
	OPT("legacy_unsharded", ForeignTableRelationId, OPT_BOOL, "false"),
	OPT_ONE_OF("insert_mode", ForeignTableRelationId, "insert,upsert", "insert"),
	/* 16 BatchWriteItems of 25 in flight */
	OPT_RANGE("batch_size", ForeignTableRelationId, 1, 10000, "400"),
	/* time buckets × shards one read may visit */
	OPT_RANGE("max_partitions", ForeignTableRelationId, 1, 1000000, "1000"),
	OPT("consistent_read", ForeignTableRelationId, OPT_BOOL, NULL),
	OPT("layout_history", ForeignTableRelationId, OPT_STRING, NULL),
	OPT_RANGE("max_read_units_per_second", ForeignTableRelationId, 1, INT_MAX, NULL),
	OPT_RANGE("max_write_units_per_second", ForeignTableRelationId, 1, INT_MAX, NULL),
	/* learnt from DynamoDB when the table is declared (sql/ddl.c) */
	OPT("secondary_indexes", ForeignTableRelationId, OPT_INDEXES, NULL),
	OPT("use_indexes", ForeignTableRelationId, OPT_BOOL, NULL),
	/* learnt from DescribeTimeToLive when not given (sql/ddl.c) */
	OPT("ttl_attribute", ForeignTableRelationId, OPT_STRING, NULL),
	OPT("include_expired", ForeignTableRelationId, OPT_BOOL, "false"),
	OPT_RANGE("max_read_units_per_statement", ForeignTableRelationId, 1, INT_MAX, NULL),
	OPT_RANGE("max_write_units_per_statement", ForeignTableRelationId, 1, INT_MAX, NULL),
	/* column */
	OPT("attribute", AttributeRelationId, OPT_STRING, NULL),
	OPT("ddb_type", AttributeRelationId, OPT_DDB_TYPE, NULL),
	{.name = NULL}
};

static const char *const ddb_type_names[] = {
	[DDB_TYPE_S] = "S",
	[DDB_TYPE_N] = "N",
	[DDB_TYPE_B] = "B",
	[DDB_TYPE_BOOL] = "BOOL",
	[DDB_TYPE_M] = "M",
	[DDB_TYPE_L] = "L",
	[DDB_TYPE_SS] = "SS",
	[DDB_TYPE_NS] = "NS",
	[DDB_TYPE_BS] = "BS",
	[DDB_TYPE_ITEM] = "*",
};

PG_FUNCTION_INFO_V1(shard_fdw_validator);

/* The name of the object kind an option context stands for. */
static const char *
context_name(Oid context)
{
	switch (context)
	{
		case ForeignServerRelationId:
			return "server";
		case UserMappingRelationId:
			return "user mapping";
		case ForeignTableRelationId:
			return "foreign table";
		case AttributeRelationId:
			return "column";
	}
	return "object";
}

/* The option named name valid in context, or NULL. */
static const ShardOption *
find_option(const char *name, Oid context)
{
	for (const ShardOption *opt = shard_options; opt->name; opt++)
		if (opt->context == context && strcmp(opt->name, name) == 0)
			return opt;
	return NULL;
}

/*
 * The value of option name (valid in context) among options, or its
 * default: NULL when it has none.
 */
static const char *
setting(List *options, const char *name, Oid context)
{
	const char *v = shard_option_value(options, name);

	return v ? v : find_option(name, context)->dflt;
}

/* setting() of a foreign table option. */
static const char *
table_setting(List *options, const char *name)
{
	return setting(options, name, ForeignTableRelationId);
}

/* The comma-separated names of the options valid in context. */
static char *
valid_option_names(Oid context)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (const ShardOption *opt = shard_options; opt->name; opt++)
	{
		if (opt->context != context)
			continue;
		if (buf.len > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, opt->name);
	}
	return buf.data;
}

/* The position of value in a comma-separated list of choices, or -1. */
static int
choice_index(const char *choices, const char *value)
{
	int			index = 0;
	size_t		len = strlen(value);

	for (const char *p = choices; *p;)
	{
		const char *end = strchr(p, ',');
		size_t		n = end ? (size_t) (end - p) : strlen(p);

		if (n == len && strncmp(p, value, n) == 0)
			return index;
		index++;
		p += n + (end ? 1 : 0);
	}
	return -1;
}

/* A comma-separated list of choices, spaced for a message. */
static char *
choice_list(const char *choices)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (const char *p = choices; *p; p++)
	{
		appendStringInfoChar(&buf, *p);
		if (*p == ',')
			appendStringInfoChar(&buf, ' ');
	}
	return buf.data;
}

/* Parse an integer option value; errors name the option. */
static long
parse_int_option(const char *name, const char *value, long min, long max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("The value must be an integer.")));
	if (v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value %ld for option \"%s\" is out of range", v, name),
				 errhint("Valid values are from %ld to %ld.", min, max)));
	return v;
}

/* Parse a boolean option value; errors name the option. */
static bool
parse_bool_option(const char *name, const char *value)
{
	bool		result;

	if (!parse_bool(value, &result))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("The value must be a boolean.")));
	return result;
}

/* Parse a key template option; errors name the option. */
static KeyTemplate *
parse_template_option(const char *name, const char *value)
{
	char		err[SFDW_ERRLEN];
	KeyTemplate *t = keyfmt_parse(value, err, sizeof(err));

	if (t == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": %s", name, err)));
	return t;
}

/*
 * Parse range_boundaries: a JSON array of strings, the first "", strictly
 * increasing by byte order.  Returns the count; *bounds and *lens receive the strings.
 */
static int
parse_boundaries(const char *value, char ***bounds, size_t **lens)
{
	char		err[SFDW_ERRLEN];
	DdbJson    *j = ddbjson_parse(value, strlen(value), err, sizeof(err));

	if (j == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"range_boundaries\": %s", err)));
	if (j->kind != DJ_ARRAY || j->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"range_boundaries\""),
				 errhint("The value must be a non-empty JSON array of strings, the first one \"\".")));
	*bounds = palloc(sizeof(char *) * j->n);
	*lens = palloc(sizeof(size_t) * j->n);
	for (int i = 0; i < j->n; i++)
	{
		if (j->elems[i].kind != DJ_STRING)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for option \"range_boundaries\": element %d is not a string", i + 1)));
		(*bounds)[i] = j->elems[i].str;
		(*lens)[i] = j->elems[i].len;
	}
	if ((*lens)[0] != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"range_boundaries\": the first boundary is not \"\""),
				 errdetail("A shard_by value below the first boundary would have no shard."),
				 errhint("Make \"\" the lower bound of the first shard.")));
	if (!shardrange_sorted((const char *const *) *bounds, *lens, j->n))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"range_boundaries\": the boundaries are not in strictly increasing order")));
	return j->n;
}

/*
 * What is wrong with endpoint value, or NULL when it is a DynamoDB endpoint:
 * an http or https URL of a host (a name, an IPv4 address or a bracketed
 * IPv6 one) with an optional port and nothing after but an optional "/".
 * Requests go to the URL's root, so a path, a query, a fragment or user
 * information could only mislead.
 */
static const char *
endpoint_problem(const char *value)
{
	const char *p;
	size_t		len;

	if (strncmp(value, "https://", 8) == 0)
		p = value + 8;
	else if (strncmp(value, "http://", 7) == 0)
		p = value + 7;
	else
		return "The scheme must be http or https.";
	if (strcspn(p, "@") < strcspn(p, "/?#"))
		return "The URL must not carry user information.";
	if (*p == '[')
	{
		len = strspn(p + 1, "0123456789abcdefABCDEF:.");
		if (len == 0 || p[len + 1] != ']')
			return "The IPv6 address in brackets is malformed.";
		p += len + 2;
	}
	else
	{
		len = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.");
		if (len == 0)
			return "The URL names no host.";
		p += len;
	}
	if (*p == ':')
	{
		long		port;

		len = strspn(p + 1, "0123456789");
		port = len > 0 && len <= 5 ? atol(p + 1) : 0;
		p += len + 1;
		if (port < 1 || port > 65535 || (*p != '\0' && strchr("/?#", *p) == NULL))
			return "The port must be a number from 1 to 65535.";
	}
	if (*p == '/')
		p++;
	if (*p == '\0')
		return NULL;
	if (*p == '?' || *p == '#')
		return "The URL must not have a query or a fragment.";
	if (p[-1] == '/')
		return "The URL must not have a path: requests go to its root.";
	return "The host name is malformed.";
}

/* Check one option's value by its kind. */
static void
check_option_value(const ShardOption *opt, const char *value)
{
	switch (opt->kind)
	{
		case OPT_STRING:
		case OPT_ENDPOINT:
			if (value[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"%s\" must not be empty", opt->name)));
			if (opt->kind == OPT_ENDPOINT && endpoint_problem(value))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"endpoint\": \"%s\"", value),
						 errdetail("%s", endpoint_problem(value)),
						 errhint("The endpoint is a URL such as https://dynamodb.us-east-1.amazonaws.com or http://127.0.0.1:8000.")));
			break;
		case OPT_REGION:
			if (value[0] == '\0' || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(value))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"region\": \"%s\"", value),
						 errhint("A region is a name such as us-east-1.")));
			break;
		case OPT_INT:
			(void) parse_int_option(opt->name, value, opt->min, opt->max);
			break;
		case OPT_BOOL:
			(void) parse_bool_option(opt->name, value);
			break;
		case OPT_CHOICE:
			if (choice_index(opt->choices, value) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"%s\": \"%s\"", opt->name, value),
						 errhint("Valid values are: %s.", choice_list(opt->choices))));
			break;
		case OPT_TEMPLATE:
			(void) parse_template_option(opt->name, value);
			break;
		case OPT_BOUNDARIES:
			{
				char	  **bounds;
				size_t	   *lens;

				(void) parse_boundaries(value, &bounds, &lens);
			}
			break;
		case OPT_INDEXES:
			{
				int			n;

				(void) indexes_parse(value, &n);
			}
			break;
		case OPT_DDB_TYPE:
			{
				bool		found = false;

				for (int i = 0; i < DDB_TYPE_ITEM; i++)
					if (strcmp(ddb_type_names[i], value) == 0)
						found = true;
				if (!found)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for option \"ddb_type\": \"%s\"", value),
							 errhint("Valid values are: S, N, B, BOOL, M, L, SS, NS, BS.")));
			}
			break;
	}
}

/* The value of option name in a DefElem list, or NULL. */
const char *
shard_option_value(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

/*
 * The checks of a foreign table's options that involve several of them
 * but not its columns.
 */
static void
check_table_options(List *options)
{
	const char *strategy = shard_option_value(options, "shard_strategy");
	const char *shards_text = shard_option_value(options, "shards");
	const char *pk_format = shard_option_value(options, "partition_key_format");
	const char *sk_format = shard_option_value(options, "sort_key_format");
	const char *bounds = shard_option_value(options, "range_boundaries");
	int			shards = shards_text ? atoi(shards_text) : 1;
	bool		sharded = strategy != NULL && strcmp(strategy, "none") != 0;
	bool		has_shard_field = false;

	if (shard_option_value(options, "table") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("option \"table\" is required"),
				 errhint("Name the DynamoDB table with OPTIONS (table '...').")));

	if (pk_format)
	{
		KeyTemplate *t = parse_template_option("partition_key_format", pk_format);

		for (int i = 0; i < t->nparts; i++)
			if (t->parts[i].kind == KP_SHARD)
				has_shard_field = true;
	}
	if (sk_format)
	{
		KeyTemplate *t = parse_template_option("sort_key_format", sk_format);

		for (int i = 0; i < t->nparts; i++)
			if (t->parts[i].kind == KP_SHARD)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"sort_key_format\": {shard} may appear only in \"partition_key_format\"")));
	}
	if (sharded && !has_shard_field)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard_strategy \"%s\" needs a {shard} field in option \"partition_key_format\"", strategy)));
	if (!sharded && has_shard_field)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"partition_key_format\" has a {shard} field but option \"shard_strategy\" is not set"),
				 errhint("Set shard_strategy to random, calculated, range or dynamic.")));
	if (!sharded && shards_text && shards != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"shards\" must be 1 without a shard_strategy")));

	if (strategy && strcmp(strategy, "calculated") == 0 &&
		shard_option_value(options, "shard_by") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("shard_strategy \"calculated\" needs option \"shard_by\"")));
	if (strategy && strcmp(strategy, "range") == 0)
	{
		char	  **b;
		size_t	   *lens;
		int			n;

		if (shard_option_value(options, "shard_by") == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("shard_strategy \"range\" needs option \"shard_by\"")));
		if (bounds == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("shard_strategy \"range\" needs option \"range_boundaries\"")));
		n = parse_boundaries(bounds, &b, &lens);
		if (shards_text && n != shards)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"range_boundaries\" has %d boundaries but option \"shards\" is %d", n, shards),
					 errhint("Give one lower bound per shard, the first one \"\".")));
	}
	else if (bounds)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"range_boundaries\" needs shard_strategy \"range\"")));
	if (strategy && strcmp(strategy, "dynamic") == 0 &&
		shard_option_value(options, "metadata_table") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("shard_strategy \"dynamic\" needs option \"metadata_table\"")));
	for (int i = 0; i < 2; i++)
	{
		const char *name = i == 0 ? "index_partition_key" : "index_sort_key";
		const char *format_name = psprintf("%s_format", name);
		const char *format = shard_option_value(options, format_name);

		if ((format == NULL) != (shard_option_value(options, name) == NULL))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("option \"%s\" needs option \"%s\"",
							format ? format_name : name, format ? name : format_name),
					 errhint("An index key written with each item is an attribute name and its template.")));
		if (format && shard_option_value(options, "index"))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" cannot be used with option \"index\"", format_name),
					 errhint("A foreign table that reads through an index is read-only; give the index keys' templates to the table that writes them.")));
		if (format)
		{
			KeyTemplate *t = parse_template_option(format_name, format);

			for (int p = 0; p < t->nparts; p++)
				if (t->parts[p].kind == KP_SHARD)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for option \"%s\": {shard} may appear only in \"partition_key_format\"",
									format_name)));
		}
	}
	if (shard_option_value(options, "index") && shard_option_value(options, "insert_mode"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"insert_mode\" cannot be used with option \"index\""),
				 errhint("A foreign table that reads through an index is read-only.")));
	for (int i = 0; i < 2; i++)
	{
		const char *name = i == 0 ? "secondary_indexes" : "use_indexes";

		if (shard_option_value(options, "index") && shard_option_value(options, name))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" cannot be used with option \"index\"", name),
					 errhint("The secondary indexes a query may read are those of a foreign table of the DynamoDB table itself.")));
	}
}

/*
 * The checks of a user mapping's options that involve several of them,
 * and the superuser-only switch ambient_credentials.
 */
static void
check_user_mapping_options(List *options)
{
	const char *ambient = shard_option_value(options, "ambient_credentials");
	const char *role_arn = shard_option_value(options, "role_arn");
	static const char *const role_options[] = {"external_id", "role_session_name", "duration_s"};

	if (ambient && parse_bool_option("ambient_credentials", ambient) && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only superusers may set option \"ambient_credentials\" to true"),
				 errdetail("It lets the user mapping use the credentials of the PostgreSQL server's environment, shared files, container or instance.")));
	if (shard_option_value(options, "profile") && shard_option_value(options, "access_key_id"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options \"profile\" and \"access_key_id\" cannot both be given"),
				 errhint("A profile names credentials in the server's shared files; static keys are the user mapping's own.")));
	for (size_t i = 0; i < lengthof(role_options); i++)
		if (role_arn == NULL && shard_option_value(options, role_options[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("option \"%s\" needs option \"role_arn\"", role_options[i])));
}

/*
 * Refuse a database whose text is not UTF-8.  DynamoDB's strings are UTF-8
 * and pass to and from PostgreSQL unconverted, as do the bytes that key
 * hashes and DynamoDB's order are taken over; SQL_ASCII stores bytes as
 * they come, so it passes too (what it sends is checked, see
 * ddb_request_create).
 */
void
shard_require_utf8_database(void)
{
	int			encoding = GetDatabaseEncoding();

	if (encoding != PG_UTF8 && encoding != PG_SQL_ASCII)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shard_fdw needs a UTF8 database, and database \"%s\" is %s",
						get_database_name(MyDatabaseId), GetDatabaseEncodingName()),
				 errdetail("DynamoDB keeps text as UTF-8, and shard_fdw passes it to and from the database unconverted."),
				 errhint("Use a database created with ENCODING 'UTF8'.")));
}

/*
 * Validate the options of a shard_fdw object: every name known for its
 * kind of object, every value well-formed, and the combinations sound;
 * a server has a region, from its options or from its environment.  The
 * environment is the host's, not the object's: with check_function_bodies
 * off, as the scripts of pg_dump and pg_restore set it, it is not asked,
 * so that a restore on a host without AWS_REGION recreates the server,
 * which then names the region it lacks at its first use.
 */
Datum
shard_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			context = PG_GETARG_OID(1);
	ListCell   *lc;

	shard_require_utf8_database();
	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const ShardOption *opt = find_option(def->defname, context);

		if (opt == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\" for a shard_fdw %s",
							def->defname, context_name(context)),
					 context == ForeignDataWrapperRelationId ?
					 errhint("The foreign data wrapper itself takes no options.") :
					 errhint("Valid options in this context are: %s.",
							 valid_option_names(context))));
		check_option_value(opt, defGetString(def));
	}
	if (context == ForeignTableRelationId)
		check_table_options(options);
	if (context == UserMappingRelationId)
		check_user_mapping_options(options);
	if (context == ForeignServerRelationId && check_function_bodies &&
		shard_option_value(options, "region") == NULL && awsenv_region(NULL, NULL) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("a shard_fdw server needs an AWS region"),
				 errdetail("Neither option region, nor AWS_REGION or AWS_DEFAULT_REGION in the server's environment, nor profile \"%s\" of the AWS config file gives one.",
						   awsenv_profile(NULL)),
				 errhint("Give the server the option region, such as region 'us-east-1'.")));

	PG_RETURN_VOID();
}

/* ---------------------------------------------------------------------
 * Loading options
 * ---------------------------------------------------------------------
 */

/*
 * The server's options with defaults applied; region and endpoint are
 * NULL when not given, for awsenv_resolve_server.  Allocated in the
 * current memory context.
 */
ShardServer *
shard_get_server(Oid serverid)
{
	List	   *o = GetForeignServer(serverid)->options;
	ShardServer *s = palloc0(sizeof(ShardServer));
	const char *region = setting(o, "region", ForeignServerRelationId);
	const char *endpoint = setting(o, "endpoint", ForeignServerRelationId);
	const char *fips = setting(o, "use_fips_endpoint", ForeignServerRelationId);
	const char *dualstack = setting(o, "use_dualstack_endpoint", ForeignServerRelationId);
	const char *ca_file = setting(o, "ca_file", ForeignServerRelationId);
	const char *max_read = setting(o, "max_read_units_per_second", ForeignServerRelationId);
	const char *max_write = setting(o, "max_write_units_per_second", ForeignServerRelationId);
	const char *read_cap = setting(o, "max_read_units_per_statement", ForeignServerRelationId);
	const char *write_cap = setting(o, "max_write_units_per_statement", ForeignServerRelationId);

	s->serverid = serverid;
	s->region = region ? pstrdup(region) : NULL;
	s->endpoint = endpoint ? pstrdup(endpoint) : NULL;
	s->use_fips = fips ? parse_bool_option("use_fips_endpoint", fips) : -1;
	s->use_dualstack = dualstack ? parse_bool_option("use_dualstack_endpoint", dualstack) : -1;
	s->connect_timeout_ms = atol(setting(o, "connect_timeout_ms", ForeignServerRelationId));
	s->request_timeout_ms = atol(setting(o, "request_timeout_ms", ForeignServerRelationId));
	s->attempt_timeout_ms = atol(setting(o, "attempt_timeout_ms", ForeignServerRelationId));
	s->max_idle_connection_s = atoi(setting(o, "max_idle_connection_s", ForeignServerRelationId));
	s->max_retries = atoi(setting(o, "max_retries", ForeignServerRelationId));
	s->max_concurrency = atoi(setting(o, "max_concurrency", ForeignServerRelationId));
	s->max_concurrency_set = shard_option_value(o, "max_concurrency") != NULL;
	s->consistent_read = parse_bool_option("consistent_read",
										   setting(o, "consistent_read", ForeignServerRelationId));
	s->ca_file = ca_file ? pstrdup(ca_file) : NULL;
	s->max_read_units = max_read ? atoi(max_read) : 0;
	s->max_write_units = max_write ? atoi(max_write) : 0;
	s->use_indexes = parse_bool_option("use_indexes",
									   setting(o, "use_indexes", ForeignServerRelationId));
	s->read_units_cap = read_cap ? atoi(read_cap) : 0;
	s->write_units_cap = write_cap ? atoi(write_cap) : 0;
	return s;
}

/*
 * How userid gets its credentials on serverid: from its user mapping, or
 * the public mapping; a superuser without either uses the server's ambient
 * sources (the AWS SDKs' default chain), anyone else gets an error.  A
 * mapping without static keys uses the ambient sources too, which only a
 * superuser's mapping, or one a superuser gave ambient_credentials 'true',
 * may do.  Reads catalogs only.
 */
ShardCredSpec *
shard_get_cred_spec(Oid serverid, Oid userid)
{
	ShardCredSpec *c = palloc0(sizeof(ShardCredSpec));
	ForeignServer *server = GetForeignServer(serverid);
	bool		ambient_switch = false;
	HeapTuple	tp;
	UserMapping *um;
	ListCell   *lc;

	c->servername = pstrdup(server->servername);
	tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid),
						 ObjectIdGetDatum(serverid));
	if (!HeapTupleIsValid(tp))
		tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid),
							 ObjectIdGetDatum(serverid));
	if (!HeapTupleIsValid(tp))
	{
		if (!superuser_arg(userid))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
					 errmsg("user \"%s\" has no user mapping for server \"%s\"",
							GetUserNameFromId(userid, false), server->servername),
					 errhint("Create one with CREATE USER MAPPING ... OPTIONS (access_key_id '...', secret_access_key '...').")));
		return c;
	}
	ReleaseSysCache(tp);
	um = GetUserMapping(userid, serverid);
	foreach(lc, um->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		char	   *value = defGetString(def);

		if (strcmp(def->defname, "access_key_id") == 0)
			c->access_key_id = pstrdup(value);
		else if (strcmp(def->defname, "secret_access_key") == 0)
			c->secret_access_key = pstrdup(value);
		else if (strcmp(def->defname, "session_token") == 0)
			c->session_token = pstrdup(value);
		else if (strcmp(def->defname, "profile") == 0)
			c->profile = pstrdup(value);
		else if (strcmp(def->defname, "role_arn") == 0)
			c->role_arn = pstrdup(value);
		else if (strcmp(def->defname, "external_id") == 0)
			c->external_id = pstrdup(value);
		else if (strcmp(def->defname, "role_session_name") == 0)
			c->role_session_name = pstrdup(value);
		else if (strcmp(def->defname, "duration_s") == 0)
			c->duration_s = atoi(value);
		else if (strcmp(def->defname, "ambient_credentials") == 0)
			ambient_switch = parse_bool_option("ambient_credentials", value);
	}
	if ((c->access_key_id == NULL) != (c->secret_access_key == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("user mapping for server \"%s\" lacks option \"%s\"",
						server->servername,
						c->access_key_id == NULL ? "access_key_id" : "secret_access_key")));
	if (c->access_key_id == NULL && !superuser_arg(userid) && !ambient_switch)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("user mapping for server \"%s\" has no access keys", server->servername),
				 errdetail("A non-superuser's user mapping must give access_key_id and secret_access_key (with or without role_arn); only superusers may use the server's environment, shared files, container or instance credentials%s.",
						   c->profile ? ", which the option \"profile\" reads" : ""),
				 errhint("Add access_key_id and secret_access_key to the user mapping, or have a superuser set ambient_credentials 'true' on it.")));
	return c;
}

/* The printable name of a DynamoDB type. */
const char *
ddb_type_name(DdbType type)
{
	return ddb_type_names[type];
}

/* The DdbType named by a ddb_type option value. */
static DdbType
ddb_type_from_name(const char *name)
{
	for (int i = 0; i < DDB_TYPE_ITEM; i++)
		if (strcmp(ddb_type_names[i], name) == 0)
			return (DdbType) i;
	elog(ERROR, "unknown ddb_type \"%s\"", name);
}

/* The column named name, or NULL. */
ShardColumn *
shard_find_column(ShardTable *t, const char *name)
{
	for (int i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].name, name) == 0)
			return &t->columns[i];
	return NULL;
}

/* The index into t->columns of the column with attnum, or -1. */
int
shard_column_index(ShardTable *t, AttrNumber attnum)
{
	for (int i = 0; i < t->ncolumns; i++)
		if (t->columns[i].attnum == attnum)
			return i;
	return -1;
}

/* Load the columns of rel and their options. */
static void
load_columns(ShardTable *t, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	t->columns = palloc0(sizeof(ShardColumn) * desc->natts);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		ShardColumn *col;
		ListCell   *lc;

		if (att->attisdropped)
			continue;
		col = &t->columns[t->ncolumns++];
		col->attnum = att->attnum;
		col->name = pstrdup(NameStr(att->attname));
		col->attribute = col->name;
		col->typid = att->atttypid;
		col->typmod = att->atttypmod;
		col->collation = att->attcollation;
		col->not_null = att->attnotnull;
		col->ddb_type = ddb_type_for_column(col->typid, &col->elemtype);
		foreach(lc, GetForeignColumnOptions(t->relid, att->attnum))
		{
			DefElem    *def = lfirst_node(DefElem, lc);

			if (strcmp(def->defname, "attribute") == 0)
				col->attribute = pstrdup(defGetString(def));
			else if (strcmp(def->defname, "ddb_type") == 0)
			{
				col->ddb_type = ddb_type_from_name(defGetString(def));
				col->explicit_type = true;
			}
		}
		if (strcmp(col->attribute, "*") == 0)
		{
			if (col->typid != JSONOID && col->typid != JSONBOID)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("column \"%s\" of foreign table \"%s\" has attribute '*' but is not of type json or jsonb",
								col->name, t->relname)));
			col->ddb_type = DDB_TYPE_ITEM;
		}
		else if (!ddb_type_fits_column(col->ddb_type, col->typid))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("column \"%s\" of foreign table \"%s\" cannot be stored as DynamoDB type %s",
							col->name, t->relname, ddb_type_name(col->ddb_type)),
					 errhint("Change option \"ddb_type\" or the column's type.")));
	}
}

/* The hint of an option that names a column the table does not have. */
#define MISSING_COLUMN_HINT \
	"To rename or drop a column that an option names, change the option in the same ALTER or first."

/*
 * Check that every field of a template names a column whose values can
 * make key text: a scalar, and a number for a zero-padded field.
 */
static void
check_template_columns(ShardTable *t, KeyTemplate *tmpl, const char *option)
{
	for (int i = 0; i < tmpl->nparts; i++)
	{
		KeyPart    *part = &tmpl->parts[i];
		ShardColumn *col;
		Oid			elem;
		DdbType		stored;

		if (part->kind != KP_COLUMN)
			continue;
		col = shard_find_column(t, part->text);
		if (col == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("option \"%s\" of foreign table \"%s\" names column \"%s\", which does not exist",
							option, t->relname, part->text),
					 errhint(MISSING_COLUMN_HINT)));
		stored = ddb_type_for_column(col->typid, &elem);
		if (stored != DDB_TYPE_S && stored != DDB_TYPE_N && stored != DDB_TYPE_B &&
			stored != DDB_TYPE_BOOL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("column \"%s\" of foreign table \"%s\" is of type %s, which cannot be a field of option \"%s\"",
							col->name, t->relname, format_type_be(col->typid), option),
					 errhint("A key template's fields are scalar columns.")));
		if (part->width > 0 && stored != DDB_TYPE_N)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("column \"%s\" of foreign table \"%s\" is of type %s, but option \"%s\" pads it with zeros",
							col->name, t->relname, format_type_be(col->typid), option),
					 errhint("A zero-padded field {%s:0%d} needs a column of a number type.",
							 col->name, part->width)));
		if (part->form != KT_PLAIN &&
			((col->typid != TIMESTAMPTZOID && col->typid != TIMESTAMPOID &&
			  col->typid != DATEOID) || col->ddb_type != DDB_TYPE_S))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("column \"%s\" of foreign table \"%s\" is of type %s, but option \"%s\" writes it as a time",
							col->name, t->relname, format_type_be(col->typid), option),
					 errhint("Time forms such as {%s:day} and {%s:isoformat} need a date, timestamp or timestamptz column stored as S.",
							 col->name, col->name)));
	}
}

/*
 * The template of the base key: the {shard} field and the literal part
 * before it left out, as keyfmt_render_base renders it; NULL when the
 * template has no {shard} or nothing would be left.
 */
static KeyTemplate *
base_template(KeyTemplate *t)
{
	KeyTemplate *base;
	int			shard = -1;
	int			drop;

	for (int i = 0; i < t->nparts; i++)
		if (t->parts[i].kind == KP_SHARD)
			shard = i;
	if (shard < 0 || t->nparts == 1)
		return NULL;
	if (shard >= 2 && t->parts[shard - 1].kind == KP_LITERAL)
		drop = shard - 1;		/* the literal before it goes too */
	else if (shard == 0 && t->nparts > 2)
		drop = shard;			/* and the literal after it */
	else
		drop = -1;				/* only the field goes */
	base = palloc0(sizeof(KeyTemplate));
	base->parts = palloc0(sizeof(KeyPart) * t->nparts);
	for (int i = 0; i < t->nparts; i++)
	{
		if (i == shard || (drop >= 0 && (i == drop || (drop == shard && i == shard + 1))))
			continue;
		base->parts[base->nparts++] = t->parts[i];
	}
	return base;
}

/*
 * Resolve one key: its attribute name and how its value is built.  The
 * attribute comes from the option, else from the DynamoDB table's key
 * schema; with no template, the key is the column holding that attribute.
 */
static void
resolve_key(ShardTable *t, ShardKey *key, const char *name_option,
			const char *format_option, const char *attribute,
			const char *format, bool required)
{
	key->attribute = attribute ? pstrdup(attribute) : NULL;
	key->format = format ? pstrdup(format) : NULL;
	key->column = -1;
	key->type = DDB_TYPE_S;
	if (format)
	{
		key->template = parse_template_option(format_option, format);
		key->base = base_template(key->template);
		check_template_columns(t, key->template, format_option);
		if (key->attribute == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("option \"%s\" of foreign table \"%s\" needs option \"%s\"",
							format_option, t->relname, name_option)));
		return;
	}
	if (key->attribute == NULL)
	{
		if (required)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("foreign table \"%s\" needs option \"%s\"",
							t->relname, name_option),
					 errhint("Give it with ALTER FOREIGN TABLE ... OPTIONS (ADD %s '...'), or let shard_fdw learn it from DynamoDB: its event trigger does so at any CREATE or ALTER FOREIGN TABLE.",
							 name_option)));
		return;
	}
	for (int i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].attribute, key->attribute) == 0)
			key->column = i;
	if (key->column < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("foreign table \"%s\" has no column for key attribute \"%s\"",
						t->relname, key->attribute),
				 errhint("Add a column for it, or set option \"%s\".  To rename or drop the column that holds it, give the column option \"attribute\" first.",
						 format_option)));
	key->type = t->columns[key->column].ddb_type;
	if (key->type != DDB_TYPE_S && key->type != DDB_TYPE_N && key->type != DDB_TYPE_B)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("column \"%s\" of foreign table \"%s\" holds key attribute \"%s\" but is stored as %s",
						t->columns[key->column].name, t->relname, key->attribute,
						ddb_type_name(key->type)),
				 errhint("Key attributes are S, N or B.")));
}

/*
 * Resolve an index key written with each item: its attribute and template
 * (the validator saw that one comes with the other), or no key.
 */
static void
resolve_index_key(ShardTable *t, ShardKey *key, const char *name_option,
				  const char *attribute, const char *format)
{
	key->column = -1;
	key->type = DDB_TYPE_S;
	if (format == NULL)
		return;
	key->attribute = pstrdup(attribute);
	key->format = pstrdup(format);
	key->template = parse_template_option(psprintf("%s_format", name_option), format);
	check_template_columns(t, key->template, psprintf("%s_format", name_option));
}

/* Parse shard_by into column indexes. */
static List *
parse_shard_by(ShardTable *t, const char *value)
{
	List	   *names;
	List	   *result = NIL;
	ListCell   *lc;
	char	   *copy = pstrdup(value);

	if (!SplitIdentifierString(copy, ',', &names))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"shard_by\": \"%s\"", value),
				 errhint("List column names separated by commas.")));
	foreach(lc, names)
	{
		ShardColumn *col = shard_find_column(t, lfirst(lc));

		if (col == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("option \"shard_by\" of foreign table \"%s\" names column \"%s\", which does not exist",
							t->relname, (char *) lfirst(lc)),
					 errhint(MISSING_COLUMN_HINT)));
		result = lappend_int(result, col - t->columns);
	}
	return result;
}

/*
 * True when column col makes up (part of) key k: the key's column, or a
 * field of its template.
 */
bool
shard_key_has_column(ShardTable *t, const ShardKey *k, int col)
{
	if (k->attribute == NULL)
		return false;
	if (k->template == NULL)
		return k->column == col;
	for (int i = 0; i < k->template->nparts; i++)
		if (k->template->parts[i].kind == KP_COLUMN &&
			strcmp(k->template->parts[i].text, t->columns[col].name) == 0)
			return true;
	return false;
}

/*
 * The option by which the item key uses column col, or NULL:
 * "partition_key" or "sort_key" when that key is the column,
 * "partition_key_format" or "sort_key_format" when its template has a
 * field of it.
 */
const char *
shard_key_option(ShardTable *t, int col)
{
	if (shard_key_has_column(t, &t->pk, col))
		return t->pk.template ? "partition_key_format" : "partition_key";
	if (shard_key_has_column(t, &t->sk, col))
		return t->sk.template ? "sort_key_format" : "sort_key";
	return NULL;
}

/*
 * True when the item key uses column col (see shard_key_option) in t's
 * newest layout or an earlier one still read: its items may hold the
 * column's value only inside their key.
 */
bool
shard_key_uses(ShardTable *t, int col)
{
	for (int i = 0; i < t->nlayouts; i++)
		if (shard_key_option(t->layouts[i], col) != NULL)
			return true;
	return false;
}

/*
 * The option that needs column col to place a row, or NULL: the item
 * key's (see shard_key_option), shard_by, or the template of an index
 * key written with the item ("index_partition_key_format",
 * "index_sort_key_format").
 */
const char *
shard_column_option(ShardTable *t, int col)
{
	const char *option = shard_key_option(t, col);

	if (option == NULL && list_member_int(t->shard_by, col))
		option = "shard_by";
	if (option == NULL && shard_key_has_column(t, &t->index_pk, col))
		option = "index_partition_key_format";
	if (option == NULL && shard_key_has_column(t, &t->index_sk, col))
		option = "index_sort_key_format";
	return option;
}

/*
 * Foreign table relid as options o describe it (shard_get_table without
 * its layout history).
 */
ShardTable *
shard_table_from_options(Oid relid, List *o)
{
	ForeignTable *ft = GetForeignTable(relid);
	ShardTable *t = palloc0(sizeof(ShardTable));
	Relation	rel;
	const char *pk_attr = shard_option_value(o, "partition_key");
	const char *sk_attr = shard_option_value(o, "sort_key");
	const char *shard_by = shard_option_value(o, "shard_by");
	const char *bounds = shard_option_value(o, "range_boundaries");
	const char *index = shard_option_value(o, "index");
	const char *metadata_table = shard_option_value(o, "metadata_table");
	const char *metadata_key = shard_option_value(o, "metadata_key");
	const char *consistent_read = shard_option_value(o, "consistent_read");
	const char *max_read = shard_option_value(o, "max_read_units_per_second");
	const char *max_write = shard_option_value(o, "max_write_units_per_second");
	const char *indexes = shard_option_value(o, "secondary_indexes");
	const char *use_indexes = shard_option_value(o, "use_indexes");
	const char *ttl_attribute = shard_option_value(o, "ttl_attribute");
	const char *read_cap = shard_option_value(o, "max_read_units_per_statement");
	const char *write_cap = shard_option_value(o, "max_write_units_per_statement");
	ShardServer *server = shard_get_server(ft->serverid);
	bool		shards_given = shard_option_value(o, "shards") != NULL;
	bool		base_given = shard_option_value(o, "shard_base") != NULL;

	t->relid = relid;
	t->relname = get_rel_name(relid);
	rel = table_open(relid, NoLock);
	load_columns(t, rel);
	table_close(rel, NoLock);

	t->table = pstrdup(shard_option_value(o, "table"));
	t->index = index ? pstrdup(index) : NULL;
	t->shards = atoi(table_setting(o, "shards"));
	t->strategy = (ShardStrategy) choice_index("none,random,calculated,range,dynamic",
											   table_setting(o, "shard_strategy"));
	(void) shardhash_from_name(table_setting(o, "shard_hash"), &t->hash);
	t->shard_base = atoi(table_setting(o, "shard_base"));
	t->range_normalize = strcmp(table_setting(o, "range_normalize"), "nfkd_lower") == 0;
	t->metadata_table = metadata_table ? pstrdup(metadata_table) : NULL;
	t->metadata_key = metadata_key ? pstrdup(metadata_key) : NULL;
	t->cooldown_s = atoi(table_setting(o, "cooldown_s"));
	t->max_shards = atoi(table_setting(o, "max_shards"));
	t->metadata_cache_ms = atoi(table_setting(o, "metadata_cache_ms"));
	t->legacy_unsharded = parse_bool_option("legacy_unsharded",
											table_setting(o, "legacy_unsharded"));
	t->insert_mode = strcmp(table_setting(o, "insert_mode"), "upsert") == 0 ?
		INSERT_MODE_UPSERT : INSERT_MODE_INSERT;
	t->batch_size = atoi(table_setting(o, "batch_size"));
	t->max_partitions = atoi(table_setting(o, "max_partitions"));
	t->consistent_read = consistent_read ?
		parse_bool_option("consistent_read", consistent_read) :
		server->consistent_read;
	t->max_read_units = max_read ? atoi(max_read) : server->max_read_units;
	t->max_write_units = max_write ? atoi(max_write) : server->max_write_units;
	t->use_indexes = use_indexes ? parse_bool_option("use_indexes", use_indexes) :
		server->use_indexes;
	if (indexes)
		t->indexes = indexes_parse(indexes, &t->nindexes);
	t->ttl_attribute = ttl_attribute ? pstrdup(ttl_attribute) : NULL;
	t->include_expired = parse_bool_option("include_expired",
										   table_setting(o, "include_expired"));
	t->read_units_cap = read_cap ? atoi(read_cap) : server->read_units_cap;
	t->write_units_cap = write_cap ? atoi(write_cap) : server->write_units_cap;

	if (t->strategy == SHARD_DYNAMIC && !base_given)
		t->shard_base = 1;
	if (bounds)
	{
		t->nboundaries = parse_boundaries(bounds, &t->boundaries, &t->boundary_lens);
		if (!shards_given)
			t->shards = t->nboundaries;
	}
	if (shard_by)
		t->shard_by = parse_shard_by(t, shard_by);
	resolve_key(t, &t->pk, "partition_key", "partition_key_format",
				pk_attr, shard_option_value(o, "partition_key_format"), true);
	resolve_key(t, &t->sk, "sort_key", "sort_key_format",
				sk_attr, shard_option_value(o, "sort_key_format"), false);
	resolve_index_key(t, &t->index_pk, "index_partition_key",
					  shard_option_value(o, "index_partition_key"),
					  shard_option_value(o, "index_partition_key_format"));
	resolve_index_key(t, &t->index_sk, "index_sort_key",
					  shard_option_value(o, "index_sort_key"),
					  shard_option_value(o, "index_sort_key_format"));
	if (t->metadata_key == NULL)
		t->metadata_key = pstrdup(pk_attr);
	t->nlayouts = 1;
	t->layouts = palloc(sizeof(ShardTable *));
	t->layouts[0] = t;
	return t;
}

/*
 * The TTL attribute by which reads of t leave out the items whose time to
 * live has passed, or NULL when they keep every item: t has none, or
 * include_expired.
 */
const char *
shard_expiry_attribute(ShardTable *t)
{
	return t->include_expired ? NULL : t->ttl_attribute;
}

/* True when relid is a foreign table of a shard_fdw server. */
bool
shard_is_foreign_table(Oid relid)
{
	HeapTuple	tp;
	Oid			serverid;

	tp = SearchSysCache1(FOREIGNTABLEREL, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tp))
		return false;
	serverid = ((Form_pg_foreign_table) GETSTRUCT(tp))->ftserver;
	ReleaseSysCache(tp);
	return GetForeignServer(serverid)->fdwid ==
		get_foreign_data_wrapper_oid("shard_fdw", false);
}

