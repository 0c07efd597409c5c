/*-------------------------------------------------------------------------
 *
 * awsenv.c
 *		The AWS settings of the server's environment, as the AWS SDKs read
 *		them: the region, and the endpoints of DynamoDB and STS.
 *
 * A setting comes from the server's option first, then the environment
 * variable the SDKs read, then the profile's section of the shared config
 * file (AWS_CONFIG_FILE, or ~/.aws/config; the profile is the user
 * mapping's, else AWS_PROFILE's, else "default"):
 *
 *	region				option region, AWS_REGION, AWS_DEFAULT_REGION,
 *						the profile's region; none is an error
 *	an endpoint			option endpoint (DynamoDB's), AWS_ENDPOINT_URL_<SERVICE>,
 *						AWS_ENDPOINT_URL, the profile's endpoint_url (the
 *						variables and the file's unless
 *						AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true); else
 *						the region's, by the rules of the SDKs' endpoint
 *						resolution
 *	FIPS, dual-stack	options use_fips_endpoint, use_dualstack_endpoint,
 *						AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT,
 *						the profile's use_fips_endpoint, use_dualstack_endpoint
 *
 * A region's endpoint is its partition's (core/awsregion.h).  FIPS or
 * dual-stack with an endpoint given is refused, as the SDKs refuse it.
 *
 * Nothing here sends a request; a file is read only to resolve a setting
 * the options and the environment leave open.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include "storage/fd.h"
#include "utils/builtins.h"

#include "core/awscreds.h"
#include "core/awsregion.h"

/* The largest shared file read. */
#define MAX_CONFIG_BYTES (1024 * 1024)

/* See shard_catalog.h: a variable of the environment, NULL when unset or empty. */
const char *
awsenv_get(const char *name)
{
	const char *value = getenv(name);

	return value && value[0] ? value : NULL;
}

/* See shard_catalog.h: a shared file's path, its variable's or ~/.aws/<name>. */
char *
awsenv_shared_file(const char *variable, const char *name)
{
	const char *path = awsenv_get(variable);
	const char *home = awsenv_get("HOME");

	if (path)
		return pstrdup(path);
	return psprintf("%s/.aws/%s", home ? home : "", name);
}

/*
 * See shard_catalog.h: the contents of file path, or NULL, with *why NULL
 * when it does not exist, else the reason.
 */
char *
awsenv_read_file(const char *path, char **why)
{
	FILE	   *f = AllocateFile(path, "r");
	StringInfoData buf;
	char		chunk[8192];
	size_t		n;

	*why = NULL;
	if (f == NULL)
	{
		if (errno != ENOENT)
			*why = psprintf("Could not open file \"%s\": %m.", path);
		return NULL;
	}
	initStringInfo(&buf);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && buf.len + n <= MAX_CONFIG_BYTES)
		appendBinaryStringInfo(&buf, chunk, (int) n);
	if (ferror(f))
		*why = psprintf("Could not read file \"%s\": %m.", path);
	else if (n > 0)
		*why = psprintf("File \"%s\" is larger than %d bytes.", path, MAX_CONFIG_BYTES);
	else if (memchr(buf.data, '\0', buf.len) != NULL)
		*why = psprintf("File \"%s\" holds a NUL byte.", path);
	FreeFile(f);
	return *why ? NULL : buf.data;
}

/* See shard_catalog.h: profile, else AWS_PROFILE, else "default". */
const char *
awsenv_profile(const char *profile)
{
	if (profile)
		return profile;
	return awsenv_get("AWS_PROFILE") ? awsenv_get("AWS_PROFILE") : "default";
}

/*
 * key in the section of profile (awsenv_profile) of the shared config
 * file, or NULL; a config file that cannot be read or parsed is an error
 * naming it.
 */
static char *
profile_setting(const char *profile, const char *key)
{
	char	   *path = awsenv_shared_file("AWS_CONFIG_FILE", "config");
	char	   *why;
	char	   *text = awsenv_read_file(path, &why);
	char		err[SFDW_ERRLEN];
	char	   *value;

	if (why == NULL && !awscreds_config_setting(text, awsenv_profile(profile), key,
												&value, err, sizeof(err)))
		why = psprintf("%s.", err);
	if (why)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not read setting \"%s\" of the AWS config file \"%s\"", key, path),
				 errdetail("%s", why)));
	return value;
}

/* See shard_catalog.h. */
char *
awsenv_region(const char *option, const char *profile)
{
	if (option)
		return pstrdup(option);
	if (awsenv_get("AWS_REGION"))
		return pstrdup(awsenv_get("AWS_REGION"));
	if (awsenv_get("AWS_DEFAULT_REGION"))
		return pstrdup(awsenv_get("AWS_DEFAULT_REGION"));
	return profile_setting(profile, "region");
}

/*
 * A boolean setting: option (-1: not given), else the variable, else the
 * profile's key; false when none says.  A value that is not true or false
 * is an error naming where it comes from.
 */
static bool
bool_setting(int option, const char *variable, const char *key, const char *profile)
{
	const char *value;
	const char *source = variable;

	if (option >= 0)
		return option;
	value = awsenv_get(variable);
	if (value == NULL)
	{
		value = profile_setting(profile, key);
		source = psprintf("setting %s of the AWS config file", key);
	}
	if (value == NULL || pg_strcasecmp(value, "false") == 0)
		return false;
	if (pg_strcasecmp(value, "true") == 0)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for %s: \"%s\"", source, value),
			 errhint("It is true or false.")));
	pg_unreachable();
}

/* url without the slashes that end it. */
static char *
trimmed_url(const char *url)
{
	size_t		len = strlen(url);

	while (len > 0 && url[len - 1] == '/')
		len--;
	return pnstrdup(url, len);
}

/*
 * The endpoint of a service: service names its variable
 * (AWS_ENDPOINT_URL_<SERVICE>, upper-cased) and its messages, host the
 * start of its host name in a region ("dynamodb", "portal.sso"); option is
 * the endpoint given by the server, if any, use_fips and use_dualstack
 * the server's options (-1: not given).
 */
char *
awsenv_endpoint(const char *service, const char *host, const char *option,
				const char *region, int use_fips, int use_dualstack, const char *profile)
{
	char	   *variable = psprintf("AWS_ENDPOINT_URL_%s", service);
	const char *configured = option;
	bool		fips;
	bool		dualstack;
	char		url[256];
	char		err[SFDW_ERRLEN];

	for (char *c = variable; *c; c++)
		*c = pg_toupper((unsigned char) *c);
	if (configured == NULL && !bool_setting(-1, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
											"ignore_configured_endpoint_urls", profile))
	{
		configured = awsenv_get(variable);
		if (configured == NULL)
			configured = awsenv_get("AWS_ENDPOINT_URL");
		if (configured == NULL)
			configured = profile_setting(profile, "endpoint_url");
	}
	fips = bool_setting(use_fips, "AWS_USE_FIPS_ENDPOINT", "use_fips_endpoint", profile);
	dualstack = bool_setting(use_dualstack, "AWS_USE_DUALSTACK_ENDPOINT",
							 "use_dualstack_endpoint", profile);
	if (configured && (fips || dualstack))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot use a %s endpoint with the endpoint given for %s, \"%s\"",
						fips ? "FIPS" : "dual-stack", service, configured),
				 errhint("Use one or the other: the FIPS and dual-stack endpoints are the region's.")));
	if (configured)
		return trimmed_url(configured);
	if (!awsregion_endpoint(host, region, fips, dualstack, url, sizeof(url), err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no %s endpoint for region \"%s\"", service, region),
				 errdetail("The %s.", err),
				 errhint("Set the region to one of AWS's, or give the endpoint.")));
	return pstrdup(url);
}

/* See shard_catalog.h. */
void
awsenv_resolve_server(ShardServer *server, const char *profile)
{
	const char *servername = GetForeignServer(server->serverid)->servername;

	if (server->region == NULL)
		server->region = awsenv_region(NULL, profile);
	if (server->region == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("server \"%s\" has no AWS region", servername),
				 errdetail("Neither its option region, nor AWS_REGION or AWS_DEFAULT_REGION in the server's environment, nor profile \"%s\" of the AWS config file gives one.",
						   awsenv_profile(profile)),
				 errhint("Set it: ALTER SERVER %s OPTIONS (ADD region 'us-east-1').",
						 quote_identifier(servername))));
	server->endpoint = awsenv_endpoint("dynamodb", "dynamodb", server->endpoint, server->region,
									   server->use_fips, server->use_dualstack, profile);
}
