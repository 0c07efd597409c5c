/*-------------------------------------------------------------------------
 *
 * awscreds.h
 *		What the AWS credential sources send and keep, read in plain C: the
 *		shared credentials and config files (INI) and the profile they
 *		name, STS's XML answers (AssumeRole, AssumeRoleWithWebIdentity and
 *		errors), the JSON of the container endpoint and of EC2 instance
 *		metadata, of a credential_process's output, of the SSO token cache
 *		and of the SSO portal, their timestamps, the form bodies of STS
 *		requests and the SSO portal's URL.
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
	AWS_SOURCE_NONE,			/* nowhere: the profile holds no credentials */
	AWS_SOURCE_STATIC,			/* keys written in the profile */
	AWS_SOURCE_ENVIRONMENT,		/* credential_source = Environment */
	AWS_SOURCE_WEB_IDENTITY,	/* web_identity_token_file */
	AWS_SOURCE_CONTAINER,		/* credential_source = EcsContainer */
	AWS_SOURCE_INSTANCE,		/* credential_source = Ec2InstanceMetadata */
	AWS_SOURCE_SSO,				/* the SSO portal, with the cached token */
	AWS_SOURCE_PROCESS			/* credential_process */
} AwsSource;

/*
 * An SSO profile's settings, its sso-session's filled in: the role of an
 * account that the token cached by `aws sso login` gets from the portal.
 */
typedef struct AwsSso
{
	char	   *session;		/* the sso-session's name; NULL: legacy */
	char	   *start_url;
	char	   *region;			/* of the portal */
	char	   *account_id;
	char	   *role_name;
	char	   *cache_key;		/* the session's name, or (legacy) the
								 * start URL: see awscreds_sso_cache_file */
} AwsSso;

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
	AwsSso		sso;			/* AWS_SOURCE_SSO */
	char	   *credential_process; /* AWS_SOURCE_PROCESS: a command line */
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
 * [profile name] ([default] for the default profile) and SSO sessions
 * [sso-session name]; a setting in the credentials file wins over the
 * config file's.  A profile's first credentials come, as in the AWS SDKs,
 * from the source of its role_arn (source_profile, credential_source or
 * web_identity_token_file), else from its keys, else from SSO (sso_session
 * or any of the legacy sso_start_url, sso_region, sso_account_id,
 * sso_role_name), else from its credential_process.  A profile with none
 * of these (a region only, say) resolves with plan->source
 * AWS_SOURCE_NONE, for the caller to pass over or refuse; a source_profile
 * without credentials is an error.
 *
 * Returns false with the reason in err when a file is malformed, the
 * profile is in neither, its keys are incomplete, its role has no source,
 * a source_profile is missing, holds no credentials or loops,
 * credential_source names an unknown source, or its SSO settings are
 * incomplete or contradict its sso-session's.  *found is set to whether
 * the profile is in either file (false also when both are NULL; true
 * when a file is malformed, since it may hold the profile), so that a
 * caller can tell "no such profile" from a bad one.
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
 * awscreds_parse_process
 *		Read the standard output of a credential_process: a JSON object
 *		with Version 1, AccessKeyId, SecretAccessKey, and optionally
 *		SessionToken and Expiration (without it the credentials do not
 *		expire).  Returns AWS_ANSWER_CREDENTIALS, or AWS_ANSWER_MALFORMED
 *		with the reason in error->message (which never quotes the output).
 */
extern AwsAnswer awscreds_parse_process(const char *out, size_t len,
										AwsCreds *creds, AwsError *error);

/*
 * awscreds_parse_sso_token
 *		Read a token file of the SSO cache (~/.aws/sso/cache/<name>.json,
 *		see awscreds_sso_cache_file): its accessToken into *token (from
 *		sfdw_alloc) and its expiresAt into *expires_at (epoch seconds).
 *		Returns false with the reason in err (which never quotes the token)
 *		when either is missing or malformed.
 */
extern bool awscreds_parse_sso_token(const char *text, size_t len, char **token,
									 int64_t *expires_at, char *err, size_t errlen);

/*
 * awscreds_parse_sso_role
 *		Read the SSO portal's answer to GetRoleCredentials:
 *		{"roleCredentials": {"accessKeyId", "secretAccessKey",
 *		"sessionToken", "expiration" (epoch milliseconds)}}, or an error's
 *		{"message"} (its code, the x-amzn-ErrorType header, is not read:
 *		error->code stays empty).
 */
extern AwsAnswer awscreds_parse_sso_role(const char *body, size_t len,
										 AwsCreds *creds, AwsError *error);

/*
 * awscreds_sso_cache_file
 *		The name of the SSO cache's token file for key (an sso-session's
 *		name, or a legacy profile's sso_start_url): the lower-case hex SHA-1
 *		of key, then ".json", as the AWS CLI names it.  Returns a string
 *		from sfdw_alloc, or NULL when OpenSSL cannot compute SHA-1.
 */
extern char *awscreds_sso_cache_file(const char *key);

/*
 * awscreds_sso_url
 *		The URL of the SSO portal's GetRoleCredentials for sso's role, on
 *		endpoint (no "/" at its end): endpoint/federation/credentials
 *		?role_name=...&account_id=..., the values URI-encoded.  Returns a
 *		string from sfdw_alloc.
 */
extern char *awscreds_sso_url(const char *endpoint, const AwsSso *sso);

/*
 * awscreds_parse_time
 *		Read an ISO 8601 UTC time ("2026-11-25T15:00:00Z", fractional
 *		seconds allowed, and "+00:00" or the older AWS CLI's "UTC" in place
 *		of "Z") into epoch seconds; false when it is not one.
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
