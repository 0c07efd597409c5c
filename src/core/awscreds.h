/*-------------------------------------------------------------------------
 *
 * awscreds.h
 *		What the AWS credential sources send and keep, read in plain C: the
 *		shared credentials and config files (INI) and the profile they
 *		name, STS's XML answers (AssumeRole, AssumeRoleWithWebIdentity and
 *		errors), the JSON of the container endpoint and of EC2 instance
 *		metadata, their timestamps, and the form bodies of STS requests.
 *
 * Nothing here does I/O or reads the environment: credentials.c reads the
 * files and variables, makes the requests and hands the texts in.  Every
 * string handed out is allocated with sfdw_alloc; the caller frees it with
 * its memory context (or awscreds_free_*, in the tests).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_AWSCREDS_H
#define SHARD_FDW_AWSCREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pure.h"

/* A set of credentials; the token and the expiry may be absent. */
typedef struct AwsCreds
{
	char	   *access_key_id;
	char	   *secret_access_key;
	char	   *session_token;	/* NULL when none */
	int64_t		expiration;		/* epoch seconds; 0: they do not expire */
} AwsCreds;

/* A role to assume and how. */
typedef struct AwsRole
{
	char	   *role_arn;
	char	   *external_id;	/* NULL when none */
	char	   *session_name;	/* NULL: the caller's default */
	int			duration_s;		/* 0: STS's default */
} AwsRole;

/* Where the first credentials of a profile come from. */
typedef enum AwsSource
{
	AWS_SOURCE_STATIC,			/* keys written in the profile */
	AWS_SOURCE_ENVIRONMENT,		/* credential_source = Environment */
	AWS_SOURCE_WEB_IDENTITY,	/* web_identity_token_file */
	AWS_SOURCE_CONTAINER,		/* credential_source = EcsContainer */
	AWS_SOURCE_INSTANCE			/* credential_source = Ec2InstanceMetadata */
} AwsSource;

/* The longest chain of roles a profile may assume one after the other. */
#define AWS_MAX_ROLES 8

/*
 * What a profile says: where its first credentials come from, then the
 * roles assumed in turn with them (source_profile chains), the last one
 * the profile's own.  For AWS_SOURCE_WEB_IDENTITY, web_role is assumed
 * with the token and roles[] follow.
 */
typedef struct AwsProfilePlan
{
	AwsSource	source;
	AwsCreds	creds;			/* AWS_SOURCE_STATIC */
	char	   *web_identity_token_file;	/* AWS_SOURCE_WEB_IDENTITY */
	AwsRole		web_role;		/* AWS_SOURCE_WEB_IDENTITY */
	int			nroles;
	AwsRole		roles[AWS_MAX_ROLES];
} AwsProfilePlan;

/*
 * awscreds_config_setting
 *		The value of key (region, endpoint_url, use_fips_endpoint, ...) in
 *		profile's section of the text of a config file (NULL: no file), into
 *		*value, or NULL when the profile or the key is absent.  Returns false,
 *		*value NULL, with the line at fault in err when the text is not a
 *		config file.
 */
extern bool awscreds_config_setting(const char *config_text, const char *profile,
									const char *key, char **value,
									char *err, size_t errlen);

/*
 * awscreds_resolve_profile
 *		Resolve profile from the texts of the shared credentials file and
 *		of the config file (either may be NULL: no such file).
 *
 * The credentials file names a profile [name], the config file
 * [profile name] ([default] for the default profile); a setting in the
 * credentials file wins over the config file's.  Returns false with the
 * reason in err when a file is malformed, the profile is in neither, its
 * keys are incomplete, its role has no source, a source_profile is missing
 * or loops, or credential_source names an unknown source.  *found is set
 * to whether the profile is in either file (false also when both are
 * NULL; true when a file is malformed, since it may hold the profile), so
 * that a caller can tell "no such profile" from a bad one.
 */
extern bool awscreds_resolve_profile(const char *credentials_text,
									 const char *config_text,
									 const char *profile,
									 AwsProfilePlan *plan, bool *found,
									 char *err, size_t errlen);

/* What an answer of a credential source turned out to be. */
typedef enum AwsAnswer
{
	AWS_ANSWER_CREDENTIALS,		/* creds filled in */
	AWS_ANSWER_ERROR,			/* the service's error: code and message */
	AWS_ANSWER_MALFORMED		/* neither: the reason is in message */
} AwsAnswer;

/* The error a service answered with, or the reason an answer is malformed. */
typedef struct AwsError
{
	char		code[SFDW_ERRLEN];
	char		message[SFDW_ERRLEN];
} AwsError;

/*
 * awscreds_parse_sts
 *		Read STS's XML answer to AssumeRole or AssumeRoleWithWebIdentity:
 *		the Credentials of its Result, or an ErrorResponse's Code and
 *		Message.  Every credential must be present and printable ASCII and
 *		the Expiration an ISO 8601 UTC time.
 */
extern AwsAnswer awscreds_parse_sts(const char *body, size_t len,
									AwsCreds *creds, AwsError *error);

/*
 * awscreds_parse_json
 *		Read the JSON credentials of the container endpoint or of instance
 *		metadata: AccessKeyId, SecretAccessKey, Token, Expiration (the
 *		last two optional).  An IMDS "Code" other than "Success", or a
 *		container endpoint's {"code", "message"}, is the service's error.
 */
extern AwsAnswer awscreds_parse_json(const char *body, size_t len,
									 AwsCreds *creds, AwsError *error);

/*
 * awscreds_parse_time
 *		Read an ISO 8601 UTC time ("2026-11-25T15:00:00Z", fractional
 *		seconds and "+00:00" allowed) into epoch seconds; false when it is
 *		not one.
 */
extern bool awscreds_parse_time(const char *text, int64_t *epoch);

/*
 * awscreds_sts_body
 *		The form body of an STS request (query protocol, version
 *		2011-06-15): AssumeRole when web_identity_token is NULL, else
 *		AssumeRoleWithWebIdentity with that token.  session_name must be
 *		set.  Returns a string from sfdw_alloc.
 */
extern char *awscreds_sts_body(const AwsRole *role, const char *session_name,
							   const char *web_identity_token);

/*
 * awscreds_container_relative_url
 *		The URL of a container credentials relative URI (ECS's
 *		AWS_CONTAINER_CREDENTIALS_RELATIVE_URI): the ECS agent's address,
 *		http://169.254.170.2, then the URI, a "/" put between them when the
 *		URI does not start with one.  Returns a string from sfdw_alloc.
 */
extern char *awscreds_container_relative_url(const char *relative);

/*
 * awscreds_container_url_ok
 *		Whether the SDKs allow a container credentials full URI: https, or
 *		http to a loopback address (127.0.0.0/8, [::1]) or to the ECS or
 *		EKS agents (169.254.170.2, 169.254.170.23, [fd00:ec2::23]).  Host
 *		names other than "localhost" are refused over http.
 */
extern bool awscreds_container_url_ok(const char *url);

/*
 * awscreds_printable
 *		Whether str is non-empty printable ASCII without blanks, as a key,
 *		secret or token sent in a header must be.
 */
extern bool awscreds_printable(const char *str);

/* Free what awscreds filled in (for hosts without memory contexts). */
extern void awscreds_free_creds(AwsCreds *creds);
extern void awscreds_free_plan(AwsProfilePlan *plan);

#endif							/* SHARD_FDW_AWSCREDS_H */
