/*-------------------------------------------------------------------------
 *
 * credentials.c
 *		The credentials a connection signs with: a user mapping's static
 *		keys, or the AWS SDKs' default chain read in the server's
 *		environment (environment variables, the shared credentials and
 *		config files with their credential_process, web identity,
 *		container credentials, EC2 instance metadata), and then, when the
 *		mapping names a role, STS AssumeRole signed with those.  Temporary
 *		credentials are kept per connection and fetched again before they
 *		expire.
 *
 * A fetch is a refresh: a small state machine of steps, HTTP exchanges
 * (IMDSv2's token, role name and credentials; STS for each role of a
 * chain) that run on the connection's transport beside its DynamoDB
 * requests, or a credential_process whose output is read as it comes
 * (process.c), while the requests go on signed with the current
 * credentials until the new ones arrive.  Only the first fetch, and a
 * refresh that is late (the current credentials about to expire), is
 * waited for.
 *
 * Nothing is fetched until the first request is signed, so planning and
 * EXPLAIN never wait on the network.  A connection that found its
 * credentials in one source of the chain goes back to that source to
 * refresh them.  Who may use the chain at all is decided where the user
 * mapping is read (option.c): by then the spec says whether it may.
 *
 * Keys, secrets and tokens never reach a message: errors name the source
 * and its reason (a file, an HTTP status, STS's error code and message).
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <sys/stat.h>
#include <time.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "core/awscreds.h"
#include "core/http1.h"
#include "core/sigv4.h"

/* Credentials are fetched again this long before they expire. */
#define REFRESH_MARGIN_S 300

/* Instance metadata and the container endpoint: the SDKs' short timeouts. */
#define METADATA_CONNECT_MS 1000
#define METADATA_TIMEOUT_MS 5000
#define IMDS_ENDPOINT "http://169.254.169.254"
#define IMDS_TOKEN_TTL "21600"

/* A credential_process: the Go SDK's time limit, and the output it may write. */
#define PROCESS_TIMEOUT_MS 60000
#define PROCESS_MAX_OUTPUT (64 * 1024)
#define PROCESS_POLL_MS 20		/* how often a wait for it looks */

/*
 * Attempts of an exchange whose failure the SDKs take for transient, as
 * their standard retry mode makes.
 */
#define EXCHANGE_ATTEMPTS 3

/* The longest file (token, shared files) read. */
#define MAX_FILE_BYTES (1024 * 1024)

/* Where the current credentials came from (after the mapping's own keys). */
typedef enum CredSource
{
	SOURCE_UNKNOWN,				/* not fetched yet: walk the chain */
	SOURCE_MAPPING,
	SOURCE_ENVIRONMENT,
	SOURCE_PROFILE,
	SOURCE_WEB_IDENTITY,
	SOURCE_CONTAINER,
	SOURCE_INSTANCE
} CredSource;

/* Private state behind ShardCredentials. */
struct ShardCredState
{
	MemoryContext cxt;			/* holds the current keys */
	MemoryContext previous_cxt; /* holds the keys they replaced */
	CredSource	source;
	char	   *profile;		/* SOURCE_PROFILE: the profile used */
	int64		fetched_at;		/* epoch seconds */
	int64		expiration;		/* epoch seconds; 0: they do not expire */
	int64		refresh_at;		/* epoch seconds; 0: never */
	struct Refresh *refresh;	/* the fetch under way, or NULL */
	MemoryContext refresh_cxt;	/* holds it; reset when it ends */
};

/* The getenv of name, or NULL when unset or empty. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

/* Whether an environment variable is "true" (any case). */
static bool
env_true(const char *name)
{
	const char *v = env(name);

	return v && pg_strcasecmp(v, "true") == 0;
}

/*
 * Report that source gave no credentials, for reason (a sentence), with an
 * errcode fitting the reason and a hint (a sentence, or NULL).
 */
pg_noreturn static void
source_failed_hint(ShardCredentials *c, int sqlstate, const char *source,
				   const char *reason, const char *hint)
{
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("could not get AWS credentials for server \"%s\" from %s",
					c->spec->servername, source),
			 errdetail("%s", reason),
			 hint ? errhint("%s", hint) : 0));
}

/* source_failed_hint without a hint. */
pg_noreturn static void
source_failed(ShardCredentials *c, int sqlstate, const char *source,
			  const char *reason)
{
	source_failed_hint(c, sqlstate, source, reason, NULL);
}

/*
 * The contents of file path, or NULL when it does not exist (missing_ok);
 * errors name what the file is for.
 */
static char *
read_file(ShardCredentials *c, const char *path, const char *what, bool missing_ok)
{
	FILE	   *f;
	StringInfoData buf;
	char		chunk[8192];
	size_t		n;

	f = AllocateFile(path, "r");
	if (f == NULL)
	{
		if (missing_ok && errno == ENOENT)
			return NULL;
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, what,
					  psprintf("Could not open file \"%s\": %m.", path));
	}
	initStringInfo(&buf);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
	{
		if (buf.len + n > MAX_FILE_BYTES)
		{
			FreeFile(f);
			source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, what,
						  psprintf("File \"%s\" is larger than %d bytes.", path, MAX_FILE_BYTES));
		}
		appendBinaryStringInfo(&buf, chunk, (int) n);
	}
	if (ferror(f))
	{
		FreeFile(f);
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, what,
					  psprintf("Could not read file \"%s\": %m.", path));
	}
	FreeFile(f);
	if (memchr(buf.data, '\0', buf.len) != NULL)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, what,
					  psprintf("File \"%s\" holds a NUL byte.", path));
	return buf.data;
}

/* A file's contents with blanks trimmed at both ends (a token file's). */
static char *
read_token_file(ShardCredentials *c, const char *path, const char *what)
{
	char	   *text = read_file(c, path, what, false);
	char	   *end;

	while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
		text++;
	end = text + strlen(text);
	while (end > text && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
		*--end = '\0';
	if (!awscreds_printable(text))
		source_failed(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, what,
					  psprintf("File \"%s\" is empty or holds a blank, a control or a non-ASCII character inside the token.",
							   path));
	return text;
}

/* The path of a shared file: its variable, else ~/.aws/<name>. */
static char *
shared_file_path(const char *variable, const char *name)
{
	const char *home = env("HOME");

	if (env(variable))
		return pstrdup(env(variable));
	return psprintf("%s/.aws/%s", home ? home : "", name);
}

/* ---------------------------------------------------------------------
 * Refreshes: the exchanges of a fetch, one after the other
 * ---------------------------------------------------------------------
 */

/* The exchange or process a refresh waits for. */
typedef enum RefreshStep
{
	STEP_CONTAINER,				/* GET of the container endpoint */
	STEP_IMDS_TOKEN,			/* IMDSv2: PUT of a session token */
	STEP_IMDS_ROLE,				/* IMDS: GET of the role's name */
	STEP_IMDS_CREDS,			/* IMDS: GET of the role's credentials */
	STEP_STS,					/* STS: AssumeRole(WithWebIdentity) */
	STEP_SSO,					/* the SSO portal: GetRoleCredentials */
	STEP_PROCESS				/* a credential_process runs */
} RefreshStep;

/*
 * A fetch of credentials under way: the exchanges of the source, then the
 * roles assumed in turn with what it gave.  All of it lives in the
 * state's refresh_cxt, reset when the refresh ends.
 */
typedef struct Refresh
{
	DdbTransport *transport;	/* whose multi handle runs the exchanges */
	RefreshStep step;
	HttpExchange *x;			/* the exchange in flight, or NULL */
	/* the exchange as it was started, to be sent again */
	const char *method;
	List	   *headers;
	char	   *body;			/* NULL: none; wiped when the refresh ends */
	long		connect_ms;
	long		timeout_ms;
	int			attempts;		/* of the exchange so far */
	TimestampTz retry_at;		/* when it is sent again after a transient
								 * failure; 0: it is not waiting to be */
	ChildProcess *process;		/* STEP_PROCESS: the process running */
	char	   *sso_hint;		/* STEP_SSO: how to log in again */
	char	   *source;			/* what the step asks, for messages */
	char	   *url;			/* where */
	char	   *imds_base;		/* IMDS: the base URL */
	List	   *token_headers;	/* the header of IMDSv2's session token or of
								 * the SSO bearer token */
	char	   *web_token;		/* assume the first role with this web
								 * identity token, not with creds */
	AwsCreds	creds;			/* what the steps so far gave */
	List	   *roles;			/* AwsRole *s still to assume, in turn */
} Refresh;

/* Start (or start again) the exchange r holds. */
static void
refresh_start(Refresh *r)
{
	r->attempts++;
	r->retry_at = 0;
	r->x = transport_exchange_start(r->transport, r->method, r->url, r->headers, r->body,
									r->connect_ms, r->timeout_ms);
}

/*
 * Start the exchange of step; the one before is freed, and its body
 * (which may hold a web identity token) wiped.
 */
static void
refresh_send(Refresh *r, RefreshStep step, const char *method, const char *url,
			 List *headers, const char *body, long connect_ms, long timeout_ms)
{
	if (r->x)
		transport_exchange_free(r->x);
	if (r->body)
		explicit_bzero(r->body, strlen(r->body));
	r->step = step;
	r->method = method;
	r->url = pstrdup(url);
	r->headers = headers;
	r->body = body ? pstrdup(body) : NULL;
	r->connect_ms = connect_ms;
	r->timeout_ms = timeout_ms;
	r->attempts = 0;
	refresh_start(r);
}

/*
 * The status and body of the exchange of r that ended, or an error naming
 * the source when no answer came; *stale as transport_exchange_result.
 * IMDSv2's token request that got no answer in time is 0, for
 * instance_token to fall back to IMDSv1.
 */
static long
refresh_answer(ShardCredentials *c, Refresh *r, StringInfo *body, bool *stale)
{
	char		err[SFDW_ERRLEN];
	bool		timed_out;
	long		status = transport_exchange_result(r->x, body, stale, &timed_out, err,
												   sizeof(err));

	if (status == 0 && !*stale && !(timed_out && r->step == STEP_IMDS_TOKEN))
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("The request to %s failed: %s.", r->url, err));
	return status;
}

/* Wipe a set of credentials' secret and token. */
static void
wipe_creds(AwsCreds *creds)
{
	if (creds->secret_access_key)
		explicit_bzero(creds->secret_access_key, strlen(creds->secret_access_key));
	if (creds->session_token)
		explicit_bzero(creds->session_token, strlen(creds->session_token));
}

/* A copy of the credentials an answer gave; the parser's secrets are wiped. */
static AwsCreds
palloc_creds(AwsCreds *in)
{
	AwsCreds	out;

	out.access_key_id = pstrdup(in->access_key_id);
	out.secret_access_key = pstrdup(in->secret_access_key);
	out.session_token = in->session_token ? pstrdup(in->session_token) : NULL;
	out.expiration = in->expiration;
	wipe_creds(in);
	return out;
}

/*
 * The credentials in the answer of a JSON source (container, instance
 * metadata), which is wiped; errors name source.
 */
static AwsCreds
json_answer(ShardCredentials *c, const char *source, long status, StringInfo body)
{
	AwsCreds	creds;
	AwsError	error;
	AwsAnswer	answer = awscreds_parse_json(body->data, body->len, &creds, &error);

	if (answer == AWS_ANSWER_ERROR)
		source_failed(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, source,
					  psprintf("It answered with error %s (HTTP %ld): %s", error.code, status,
							   error.message));
	if (status != 200)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, source,
					  psprintf("It answered with HTTP status %ld.", status));
	if (answer == AWS_ANSWER_MALFORMED)
		source_failed(c, ERRCODE_FDW_INVALID_DATA_TYPE, source,
					  psprintf("Its answer is not credentials: %s.", error.message));
	explicit_bzero(body->data, body->len);
	return palloc_creds(&creds);
}

/* Ask the container endpoint (ECS task role, EKS Pod Identity). */
static void
container_begin(ShardCredentials *c, Refresh *r)
{
	const char *relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *token_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *token = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char	   *url = relative ? awscreds_container_relative_url(relative) :
		pstrdup(full ? full : "");
	List	   *headers = NIL;

	r->source = psprintf("the container credentials endpoint %s", url);
	if (relative == NULL && full == NULL)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, "the container credentials endpoint",
					  "Neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set.");
	if (relative == NULL && !awscreds_container_url_ok(full))
		source_failed(c, ERRCODE_FDW_INVALID_OPTION_NAME, r->source,
					  "AWS_CONTAINER_CREDENTIALS_FULL_URI must be an https URL, or an http URL of a loopback address or of the ECS or EKS credentials agent.");
	if (token_file)
		token = read_token_file(c, token_file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	else if (token && !awscreds_printable(token))
		source_failed(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, r->source,
					  "AWS_CONTAINER_AUTHORIZATION_TOKEN holds a blank, a control or a non-ASCII character.");
	if (token)
		headers = lappend(headers, psprintf("Authorization: %s", token));
	refresh_send(r, STEP_CONTAINER, "GET", url, headers, NULL, METADATA_CONNECT_MS,
				 METADATA_TIMEOUT_MS);
}

/* The base URL of instance metadata. */
static char *
imds_endpoint(void)
{
	const char *e = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	size_t		len;

	if (e == NULL)
		return pstrdup(IMDS_ENDPOINT);
	len = strlen(e);
	while (len > 0 && e[len - 1] == '/')
		len--;
	return pnstrdup(e, len);
}

/*
 * Ask instance metadata for the instance profile's credentials: IMDSv2's
 * session token (PUT) first.
 */
static void
instance_begin(Refresh *r)
{
	r->imds_base = imds_endpoint();
	r->source = psprintf("EC2 instance metadata (IMDSv2) at %s", r->imds_base);
	refresh_send(r, STEP_IMDS_TOKEN, "PUT", psprintf("%s/latest/api/token", r->imds_base),
				 list_make1(pstrdup("X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL)),
				 "", METADATA_CONNECT_MS, METADATA_TIMEOUT_MS);
}

/*
 * IMDSv2's session token came: ask for the role's name with it.  When the
 * token request was refused (HTTP 403, 404, 405) or got no answer in time
 * (status 0: a container behind a hop limit of 1 never sees it), ask
 * IMDSv1, without a token, as the SDKs do, unless
 * AWS_EC2_METADATA_V1_DISABLED is true.
 */
static void
instance_token(ShardCredentials *c, Refresh *r, long status, StringInfo body)
{
	const char *role_url = psprintf("%s/latest/meta-data/iam/security-credentials/", r->imds_base);

	if (status == 0 || status == 403 || status == 404 || status == 405)
	{
		const char *why = status ?
			psprintf("The session token request (PUT /latest/api/token) answered with HTTP status %ld", status) :
			"The session token request (PUT /latest/api/token) got no answer in time";

		if (env_true("AWS_EC2_METADATA_V1_DISABLED"))
			source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
						  psprintf("%s, and AWS_EC2_METADATA_V1_DISABLED is true: IMDSv1 is not used.", why));
		r->source = psprintf("EC2 instance metadata (IMDSv1) at %s", r->imds_base);
		refresh_send(r, STEP_IMDS_ROLE, "GET", role_url, NIL, NULL, METADATA_CONNECT_MS,
					 METADATA_TIMEOUT_MS);
		return;
	}
	if (status != 200 || !awscreds_printable(body->data))
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  status != 200 ?
					  psprintf("The session token request (PUT /latest/api/token) answered with HTTP status %ld.", status) :
					  "The session token it gave is empty or not printable.");
	r->token_headers = list_make1(psprintf("X-aws-ec2-metadata-token: %s", body->data));
	explicit_bzero(body->data, body->len);
	refresh_send(r, STEP_IMDS_ROLE, "GET", role_url, r->token_headers, NULL,
				 METADATA_CONNECT_MS, METADATA_TIMEOUT_MS);
}

/* The role's name came: ask for its credentials. */
static void
instance_role(ShardCredentials *c, Refresh *r, long status, StringInfo body)
{
	char	   *role;
	char	   *nl;

	if (status == 404)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  "The instance has no IAM role (instance profile).");
	if (status != 200)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("The role name request answered with HTTP status %ld.", status));
	role = pstrdup(body->data);
	nl = strpbrk(role, "\r\n");
	if (nl)
		*nl = '\0';
	if (!awscreds_printable(role) || strchr(role, '/') || strchr(role, '?') || strchr(role, '#'))
		source_failed(c, ERRCODE_FDW_INVALID_DATA_TYPE, r->source,
					  "The role name it gave is empty or not a plain name.");
	refresh_send(r, STEP_IMDS_CREDS, "GET",
				 psprintf("%s/latest/meta-data/iam/security-credentials/%s", r->imds_base, role),
				 r->token_headers, NULL, METADATA_CONNECT_MS, METADATA_TIMEOUT_MS);
}

/*
 * The SigV4 headers of an STS request of body to url signed with creds
 * (service "sts", the server's region), as "Name: value" strings, Host
 * (as url writes it) among them.
 */
static List *
sts_signed_headers(ShardCredentials *c, const char *url, const char *body,
				   const AwsCreds *creds)
{
	char		amz_date[17];
	char	   *host = http1_url_host(url);
	SigV4Header hdrs[4];
	int			nhdrs = 0;
	SigV4Input	in;
	SigV4Output out;
	char		err[SFDW_ERRLEN];
	List	   *list = NIL;

	sigv4_amz_date(aws_signing_time(), amz_date);
	hdrs[nhdrs++] = (SigV4Header) {"host", host};
	hdrs[nhdrs++] = (SigV4Header) {"content-type", "application/x-www-form-urlencoded; charset=utf-8"};
	hdrs[nhdrs++] = (SigV4Header) {"x-amz-date", amz_date};
	if (creds->session_token)
		hdrs[nhdrs++] = (SigV4Header) {"x-amz-security-token", creds->session_token};
	sigv4_post_input(&in, hdrs, nhdrs, body, strlen(body), creds->access_key_id,
					 creds->secret_access_key, c->server->region, "sts", amz_date);
	if (!sigv4_sign(&in, &out, err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not sign an STS request: %s", err)));
	/*
	 * Host as well: libcurl's own would leave out a port that is the
	 * scheme's default (https://sts.example:443), which the signature covers
	 */
	for (int i = 0; i < nhdrs; i++)
		list = lappend(list, psprintf("%s: %s", hdrs[i].name, hdrs[i].value));
	list = lappend(list, psprintf("Authorization: %s", out.authorization.data));
	sigv4_output_free(&out);
	return list;
}

/* The errcode of an STS error code. */
static int
sts_sqlstate(const char *code)
{
	if (strcmp(code, "AccessDenied") == 0)
		return ERRCODE_INSUFFICIENT_PRIVILEGE;
	if (strcmp(code, "ExpiredTokenException") == 0 || strcmp(code, "ExpiredToken") == 0 ||
		strcmp(code, "InvalidIdentityToken") == 0 || strcmp(code, "IDPRejectedClaim") == 0 ||
		strcmp(code, "InvalidClientTokenId") == 0 || strcmp(code, "SignatureDoesNotMatch") == 0)
		return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
	return ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
}

/*
 * Call STS for the first role left: AssumeRoleWithWebIdentity with r's
 * web identity token, which is not signed, or else AssumeRole signed with
 * r's credentials.
 */
static void
sts_begin(ShardCredentials *c, Refresh *r)
{
	AwsRole    *role = linitial(r->roles);
	const char *web_token = r->web_token;
	const char *action = web_token ? "AssumeRoleWithWebIdentity" : "AssumeRole";
	char	   *url = awsenv_endpoint("sts", "sts", NULL, c->server->region, c->server->use_fips,
									  c->server->use_dualstack, c->spec->profile);
	char	   *session = role->session_name ? pstrdup(role->session_name) :
		env("AWS_ROLE_SESSION_NAME") && web_token ? pstrdup(env("AWS_ROLE_SESSION_NAME")) :
		psprintf("shard_fdw-%ld", (long) time(NULL));
	char	   *body = awscreds_sts_body(role, session, web_token);
	List	   *headers;

	r->roles = list_delete_first(r->roles);
	r->source = psprintf("STS %s of role \"%s\" at %s", action, role->role_arn, url);
	headers = web_token ?
		list_make1(pstrdup("Content-Type: application/x-www-form-urlencoded; charset=utf-8")) :
		sts_signed_headers(c, url, body, &r->creds);
	refresh_send(r, STEP_STS, "POST", psprintf("%s/", url), headers, body,
				 c->server->connect_timeout_ms, c->server->request_timeout_ms);
	explicit_bzero(body, strlen(body));
	if (web_token)
	{
		explicit_bzero(r->web_token, strlen(r->web_token));
		r->web_token = NULL;
	}
}

/* The credentials in STS's answer, which is wiped; errors name r's source. */
static AwsCreds
sts_answer(ShardCredentials *c, Refresh *r, long status, StringInfo answer)
{
	AwsCreds	got;
	AwsError	error;
	AwsAnswer	kind = awscreds_parse_sts(answer->data, answer->len, &got, &error);

	if (kind == AWS_ANSWER_ERROR)
		source_failed(c, sts_sqlstate(error.code), r->source,
					  psprintf("STS answered with error %s (HTTP %ld): %s", error.code, status,
							   error.message));
	if (status != 200)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("STS answered with HTTP status %ld.", status));
	if (kind == AWS_ANSWER_MALFORMED)
		source_failed(c, ERRCODE_FDW_INVALID_DATA_TYPE, r->source,
					  psprintf("STS's answer is not credentials: %s.", error.message));
	explicit_bzero(answer->data, answer->len);
	return palloc_creds(&got);
}

/*
 * Assume role with the web identity token in token_file, before the roles
 * r already has.
 */
static void
web_identity_begin(ShardCredentials *c, Refresh *r, const char *token_file,
				   const AwsRole *role)
{
	AwsRole    *copy = palloc(sizeof(AwsRole));

	*copy = *role;
	r->web_token = read_token_file(c, token_file, "the web identity token file");
	r->roles = lcons(copy, r->roles);
}

/*
 * Ask the SSO portal for the role of sso's account, with the token `aws
 * sso login` cached for its session (or legacy start URL); profile names
 * the profile in the hint to log in again.
 */
static void
sso_begin(ShardCredentials *c, Refresh *r, const char *profile, const AwsSso *sso)
{
	char	   *endpoint = awsenv_endpoint("sso", "portal.sso", NULL, sso->region, false, false,
										   c->spec->profile);
	char	   *file = awscreds_sso_cache_file(sso->cache_key);
	const char *home = env("HOME");
	char	   *path;
	char	   *text;
	char	   *hint;
	char	   *token;
	int64_t		expires_at;
	bool		parsed;
	char		err[SFDW_ERRLEN];

	r->source = psprintf("the SSO portal at %s (role \"%s\" of account %s)", endpoint,
						 sso->role_name, sso->account_id);
	if (file == NULL)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  "The name of the SSO cache's token file, a SHA-1 hash, could not be computed.");
	path = psprintf("%s/.aws/sso/cache/%s", home ? home : "", file);
	hint = sso->session ?
		psprintf("Run \"aws sso login --sso-session %s\" as the operating system user the PostgreSQL server runs as.",
				 sso->session) :
		psprintf("Run \"aws sso login --profile %s\" as the operating system user the PostgreSQL server runs as.",
				 profile);
	text = read_file(c, path, r->source, true);
	if (text == NULL)
		source_failed_hint(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, r->source,
						   psprintf("There is no cached SSO token: file \"%s\" does not exist.", path),
						   hint);
	parsed = awscreds_parse_sso_token(text, strlen(text), &token, &expires_at, err, sizeof(err));
	explicit_bzero(text, strlen(text));
	if (!parsed)
		source_failed_hint(c, ERRCODE_FDW_INVALID_DATA_TYPE, r->source,
						   psprintf("The cached SSO token file \"%s\" is not one: %s.", path, err),
						   hint);
	if (expires_at <= (int64_t) time(NULL))
		source_failed_hint(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, r->source,
						   psprintf("The cached SSO token in \"%s\" expired at %s.", path,
									timestamptz_to_str(time_t_to_timestamptz((pg_time_t) expires_at))),
						   hint);
	r->sso_hint = hint;
	r->token_headers = list_make1(psprintf("x-amz-sso_bearer_token: %s", token));
	explicit_bzero(token, strlen(token));
	refresh_send(r, STEP_SSO, "GET", awscreds_sso_url(endpoint, sso), r->token_headers, NULL,
				 c->server->connect_timeout_ms, c->server->request_timeout_ms);
}

/* The credentials in the SSO portal's answer, which is wiped. */
static AwsCreds
sso_answer(ShardCredentials *c, Refresh *r, long status, StringInfo body)
{
	AwsCreds	creds;
	AwsError	error;
	AwsAnswer	answer = awscreds_parse_sso_role(body->data, body->len, &creds, &error);

	if (status == 401 || status == 403)
		source_failed_hint(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, r->source,
						   psprintf("It refused the cached SSO token with HTTP status %ld%s%s.", status,
									answer == AWS_ANSWER_ERROR ? ": " : "",
									answer == AWS_ANSWER_ERROR ? error.message : ""),
						   r->sso_hint);
	if (status != 200)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("It answered with HTTP status %ld%s%s.", status,
							   answer == AWS_ANSWER_ERROR ? ": " : "",
							   answer == AWS_ANSWER_ERROR ? error.message : ""));
	if (answer != AWS_ANSWER_CREDENTIALS)
		source_failed(c, ERRCODE_FDW_INVALID_DATA_TYPE, r->source,
					  psprintf("Its answer is not credentials: %s.", error.message));
	explicit_bzero(body->data, body->len);
	return palloc_creds(&creds);
}

/* Run profile's credential_process; its output is read as it comes. */
static void
process_begin(ShardCredentials *c, Refresh *r, const char *profile, const char *command)
{
	char		err[SFDW_ERRLEN];

	r->source = psprintf("the credential_process of profile \"%s\"", profile);
	r->step = STEP_PROCESS;
	r->process = child_start(command, PROCESS_TIMEOUT_MS, PROCESS_MAX_OUTPUT, err, sizeof(err));
	if (r->process == NULL)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("It could not be started: %s.", err));
}

/*
 * The credentials a credential_process that ended wrote; errors say its
 * exit status or why it was killed, never what it wrote on standard error
 * (nobody reads it) or output.
 */
static AwsCreds
process_answer(ShardCredentials *c, Refresh *r)
{
	StringInfo	out;
	char		err[SFDW_ERRLEN];
	int			status = child_result(r->process, &out, err, sizeof(err));
	AwsCreds	creds;
	AwsError	error;

	if (status < 0)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("It %s.", err));
	if (status != 0)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, r->source,
					  psprintf("It exited with status %d (what it wrote on standard error is not read).",
							   status));
	if (awscreds_parse_process(out->data, out->len, &creds, &error) != AWS_ANSWER_CREDENTIALS)
		source_failed(c, ERRCODE_FDW_INVALID_DATA_TYPE, r->source,
					  psprintf("Its output is not credentials of version 1: %s.", error.message));
	child_stop(r->process);
	r->process = NULL;
	return palloc_creds(&creds);
}

/*
 * Whether the step r waits for is over (its exchange answered or failed,
 * its process ended, the backoff before its exchange is sent again
 * passed), without waiting.
 */
static bool
step_over(Refresh *r)
{
	if (r->retry_at)
		return GetCurrentTimestamp() >= r->retry_at;
	return r->process ? child_done(r->process) : transport_exchange_done(r->x);
}

/*
 * Wait for the step of r: until its exchange ends, or a little while for
 * its process or its backoff, the transport moving on meanwhile.
 * Interruptible.
 */
static void
step_wait(Refresh *r)
{
	if (r->retry_at)
		transport_pause(r->transport, (r->retry_at - GetCurrentTimestamp()) / 1000 + 1);
	else if (r->process)
		transport_pause(r->transport, PROCESS_POLL_MS);
	else
		transport_exchange_wait(r->x);
}

/*
 * Whether an error code is one the SDKs retry: DynamoDB's throttles and
 * transient errors (retry.c), STS's Throttling and IDPCommunicationError
 * (the identity provider of a web identity token did not answer STS),
 * and the REST services' TooManyRequestsException.
 */
static bool
transient_code(const char *code)
{
	return retry_is_throttle(code) || retry_is_transient(code) ||
		strcmp(code, "Throttling") == 0 || strcmp(code, "IDPCommunicationError") == 0 ||
		strcmp(code, "TooManyRequestsException") == 0;
}

/*
 * After r's exchange answered with status and body: when the SDKs take
 * the failure for transient (HTTP 429 or 5xx, or a transient error code
 * in STS's, the container endpoint's or IMDS's answer) and the exchange
 * has attempts left, schedule it to be sent again after a throttle's
 * backoff (up to 0.5 s, then 1 s) and return true.
 */
static bool
retry_later(Refresh *r, long status, StringInfo body)
{
	AwsCreds	creds;
	AwsError	error;
	AwsAnswer	answer = AWS_ANSWER_MALFORMED;

	if (status == 200 || r->attempts >= EXCHANGE_ATTEMPTS)
		return false;
	if (r->step == STEP_STS)
		answer = awscreds_parse_sts(body->data, body->len, &creds, &error);
	else if (r->step == STEP_CONTAINER || r->step == STEP_IMDS_CREDS)
		answer = awscreds_parse_json(body->data, body->len, &creds, &error);
	if (answer == AWS_ANSWER_CREDENTIALS)
		wipe_creds(&creds);
	if (status != 429 && status < 500 &&
		!(answer == AWS_ANSWER_ERROR && transient_code(error.code)))
		return false;
	transport_exchange_free(r->x);
	r->retry_at = GetCurrentTimestamp() + retry_backoff_us(r->attempts, true);
	return true;
}

/* ---------------------------------------------------------------------
 * The chain
 * ---------------------------------------------------------------------
 */

/* The keys in AWS_ACCESS_KEY_ID etc.; false when they are not both set. */
static bool
environment_creds(AwsCreds *out)
{
	if (env("AWS_ACCESS_KEY_ID") == NULL || env("AWS_SECRET_ACCESS_KEY") == NULL)
		return false;
	out->access_key_id = pstrdup(env("AWS_ACCESS_KEY_ID"));
	out->secret_access_key = pstrdup(env("AWS_SECRET_ACCESS_KEY"));
	out->session_token = env("AWS_SESSION_TOKEN") ? pstrdup(env("AWS_SESSION_TOKEN")) : NULL;
	out->expiration = 0;
	return true;
}

/*
 * Begin to fetch the credentials of profile from the shared files: its
 * keys, or its source's first exchange, and the roles it assumes after.
 * With skipped (the profile the chain looks at by default) a profile that
 * holds no credentials, or (unless must_exist) is in neither file, is
 * passed over, as the SDKs pass it over: false, with why appended to
 * skipped.  Any other failure is an error.
 */
static bool
profile_begin(ShardCredentials *c, Refresh *r, const char *profile, bool must_exist,
			  StringInfo skipped)
{
	char	   *creds_path = shared_file_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
	char	   *config_path = shared_file_path("AWS_CONFIG_FILE", "config");
	char	   *source = psprintf("profile \"%s\"", profile);
	char	   *creds_text = read_file(c, creds_path, source, true);
	char	   *config_text = read_file(c, config_path, source, true);
	AwsProfilePlan plan;
	char		err[SFDW_ERRLEN];
	bool		found;
	bool		ok;

	ok = awscreds_resolve_profile(creds_text, config_text, profile, &plan, &found,
								  err, sizeof(err));
	if (skipped && (ok ? plan.source == AWS_SOURCE_NONE : !found && !must_exist))
	{
		if (ok)
			appendStringInfo(skipped, "; shared files: profile \"%s\" holds no credentials", profile);
		else
			appendStringInfo(skipped, "; shared files: no profile \"%s\" in \"%s\" or \"%s\"", profile,
							 creds_path, config_path);
		return false;
	}
	if (ok && plan.source == AWS_SOURCE_NONE)
		snprintf(err, sizeof(err), "profile \"%s\" holds no credentials: no keys (aws_access_key_id, aws_secret_access_key), role_arn, SSO settings (sso_session, sso_start_url) or credential_process",
				 profile);
	err[0] = pg_toupper((unsigned char) err[0]);
	if (!ok || plan.source == AWS_SOURCE_NONE)
		ereport(ERROR,
				(errcode(found ? ERRCODE_FDW_INVALID_OPTION_NAME : ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("could not get AWS credentials for server \"%s\" from %s",
						c->spec->servername, source),
				 errdetail("%s (shared credentials file \"%s\"%s, config file \"%s\"%s).",
						   err, creds_path, creds_text ? "" : ", which does not exist",
						   config_path, config_text ? "" : ", which does not exist")));
	for (int i = 0; i < plan.nroles; i++)
	{
		AwsRole    *role = palloc(sizeof(AwsRole));

		*role = plan.roles[i];
		r->roles = lappend(r->roles, role);
	}
	switch (plan.source)
	{
		case AWS_SOURCE_NONE:
			pg_unreachable();
		case AWS_SOURCE_STATIC:
			r->creds = plan.creds;
			break;
		case AWS_SOURCE_ENVIRONMENT:
			if (!environment_creds(&r->creds))
				source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, source,
							  "Its credential_source is Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set.");
			break;
		case AWS_SOURCE_CONTAINER:
			container_begin(c, r);
			break;
		case AWS_SOURCE_INSTANCE:
			instance_begin(r);
			break;
		case AWS_SOURCE_WEB_IDENTITY:
			web_identity_begin(c, r, plan.web_identity_token_file, &plan.web_role);
			break;
		case AWS_SOURCE_SSO:
			sso_begin(c, r, profile, &plan.sso);
			break;
		case AWS_SOURCE_PROCESS:
			process_begin(c, r, profile, plan.credential_process);
			break;
	}
	return true;
}

/* Begin with AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN. */
static void
env_web_identity_begin(ShardCredentials *c, Refresh *r)
{
	AwsRole		role;

	memset(&role, 0, sizeof(role));
	role.role_arn = (char *) env("AWS_ROLE_ARN");
	if (role.role_arn == NULL)
		source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, "web identity",
					  "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not.");
	web_identity_begin(c, r, env("AWS_WEB_IDENTITY_TOKEN_FILE"), &role);
}

/*
 * Begin to walk the SDKs' default chain, or go back to the source that
 * gave the current credentials: r gets the credentials, or the first
 * exchange of the source is started.  Errors name the source that failed;
 * when no source applies, the error lists why each was passed over.
 */
static void
chain_begin(ShardCredentials *c, Refresh *r)
{
	struct ShardCredState *st = c->state;
	StringInfoData tried;

	switch (st->source)
	{
		case SOURCE_ENVIRONMENT:
			if (!environment_creds(&r->creds))
				source_failed(c, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, "the environment",
							  "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set.");
			return;
		case SOURCE_PROFILE:
			profile_begin(c, r, st->profile, true, NULL);
			return;
		case SOURCE_WEB_IDENTITY:
			env_web_identity_begin(c, r);
			return;
		case SOURCE_CONTAINER:
			container_begin(c, r);
			return;
		case SOURCE_INSTANCE:
			instance_begin(r);
			return;
		case SOURCE_MAPPING:
		case SOURCE_UNKNOWN:
			break;
	}

	if (c->spec->profile)
	{
		st->source = SOURCE_PROFILE;
		st->profile = MemoryContextStrdup(c->cxt, c->spec->profile);
		profile_begin(c, r, st->profile, true, NULL);
		return;
	}
	initStringInfo(&tried);
	if (environment_creds(&r->creds))
	{
		st->source = SOURCE_ENVIRONMENT;
		return;
	}
	appendStringInfoString(&tried, "environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set");
	if (env("AWS_WEB_IDENTITY_TOKEN_FILE"))
	{
		st->source = SOURCE_WEB_IDENTITY;
		env_web_identity_begin(c, r);
		return;
	}
	appendStringInfoString(&tried, "; web identity: AWS_WEB_IDENTITY_TOKEN_FILE is not set");
	{
		const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";

		st->profile = MemoryContextStrdup(c->cxt, profile);
		if (profile_begin(c, r, profile, env("AWS_PROFILE") != NULL, &tried))
		{
			st->source = SOURCE_PROFILE;
			return;
		}
	}
	if (env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || env("AWS_CONTAINER_CREDENTIALS_FULL_URI"))
	{
		st->source = SOURCE_CONTAINER;
		container_begin(c, r);
		return;
	}
	appendStringInfoString(&tried, "; container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set");
	if (!env_true("AWS_EC2_METADATA_DISABLED"))
	{
		st->source = SOURCE_INSTANCE;
		instance_begin(r);
		return;
	}
	appendStringInfoString(&tried, "; instance metadata: AWS_EC2_METADATA_DISABLED is true");
	ereport(ERROR,
			(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
			 errmsg("no AWS credentials found for server \"%s\"", c->spec->servername),
			 errdetail("Tried the server's %s.", tried.data),
			 errhint("Give the user mapping access_key_id and secret_access_key, or set up one of the AWS SDKs' credential sources in the PostgreSQL server's environment.")));
}

/* ---------------------------------------------------------------------
 * The cache
 * ---------------------------------------------------------------------
 */

/*
 * The credentials of a connection to server for spec, with nothing
 * fetched yet.  Allocated in the current memory context, which must live
 * as long as the connection.
 */
ShardCredentials *
credentials_create(ShardServer *server, ShardCredSpec *spec)
{
	ShardCredentials *c = palloc0(sizeof(ShardCredentials));

	c->server = server;
	c->spec = spec;
	c->cxt = CurrentMemoryContext;
	c->state = palloc0(sizeof(struct ShardCredState));
	c->state->cxt = AllocSetContextCreate(CurrentMemoryContext, "shard_fdw credentials",
										  ALLOCSET_SMALL_SIZES);
	c->state->previous_cxt = AllocSetContextCreate(CurrentMemoryContext,
												   "shard_fdw previous credentials",
												   ALLOCSET_SMALL_SIZES);
	c->state->refresh_cxt = AllocSetContextCreate(CurrentMemoryContext,
												  "shard_fdw credential refresh",
												  ALLOCSET_SMALL_SIZES);
	return c;
}

/*
 * End c's refresh, if one is under way: its exchange is stopped, the
 * secrets it holds are wiped and its memory is freed.
 */
static void
refresh_end(ShardCredentials *c)
{
	Refresh    *r = c->state->refresh;

	if (r == NULL)
		return;
	wipe_creds(&r->creds);
	if (r->web_token)
		explicit_bzero(r->web_token, strlen(r->web_token));
	if (r->token_headers)
		explicit_bzero(linitial(r->token_headers), strlen(linitial(r->token_headers)));
	if (r->body)
		explicit_bzero(r->body, strlen(r->body));
	c->state->refresh = NULL;
	MemoryContextReset(c->state->refresh_cxt);
}

/* Wipe a secret, if there is one. */
static void
wipe(char *secret)
{
	if (secret)
		explicit_bzero(secret, strlen(secret));
}

/* Wipe the keys c's current ones replaced and free them. */
static void
forget_previous_keys(ShardCredentials *c)
{
	wipe(c->previous_secret_access_key);
	wipe(c->previous_session_token);
	c->previous_secret_access_key = c->previous_session_token = NULL;
	MemoryContextReset(c->state->previous_cxt);
}

/* Wipe every key c holds and end its refresh; it is about to be freed. */
void
credentials_destroy(ShardCredentials *c)
{
	refresh_end(c);
	forget_previous_keys(c);
	wipe(c->secret_access_key);
	wipe(c->session_token);
	c->access_key_id = c->secret_access_key = c->session_token = NULL;
	MemoryContextReset(c->state->cxt);
}

/* Make got c's credentials, fetched at now. */
static void
install_credentials(ShardCredentials *c, const AwsCreds *got, int64 now)
{
	struct ShardCredState *st = c->state;
	MemoryContext emptied = st->previous_cxt;
	MemoryContext old;

	/* the current keys become the previous ones, still blanked in errors */
	forget_previous_keys(c);
	c->previous_secret_access_key = c->secret_access_key;
	c->previous_session_token = c->session_token;
	st->previous_cxt = st->cxt;
	st->cxt = emptied;
	old = MemoryContextSwitchTo(st->cxt);
	c->access_key_id = pstrdup(got->access_key_id);
	c->secret_access_key = pstrdup(got->secret_access_key);
	c->session_token = got->session_token ? pstrdup(got->session_token) : NULL;
	MemoryContextSwitchTo(old);
	c->generation++;
	st->fetched_at = now;
	st->expiration = got->expiration;
	st->refresh_at = got->expiration == 0 ? 0 :
		got->expiration - now > 2 * REFRESH_MARGIN_S ? got->expiration - REFRESH_MARGIN_S :
		now + (got->expiration - now) / 2;
}

/*
 * The refresh's credentials are in: assume the next role with them, or
 * make them c's and end the refresh.
 */
static void
refresh_next(ShardCredentials *c)
{
	Refresh    *r = c->state->refresh;
	int64		now = (int64) time(NULL);

	if (r->roles != NIL)
	{
		sts_begin(c, r);
		return;
	}
	if (r->creds.expiration != 0 && r->creds.expiration <= now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("the AWS credentials for server \"%s\" expired when they were fetched",
						c->spec->servername),
				 errdetail("The credentials from %s expired at %s.",
						   credentials_source_name(c),
						   timestamptz_to_str(time_t_to_timestamptz((pg_time_t) r->creds.expiration)))));
	install_credentials(c, &r->creds, now);
	refresh_end(c);
}

/*
 * Begin to fetch c's credentials on t: the mapping's keys, or the chain's
 * source, then the mapping's role assumed with them.  What needs no
 * exchange is done at once.
 */
static void
refresh_begin(ShardCredentials *c, DdbTransport *t)
{
	Refresh    *r = palloc0(sizeof(Refresh));

	r->transport = t;
	c->state->refresh = r;
	if (c->spec->access_key_id)
	{
		c->state->source = SOURCE_MAPPING;
		r->creds.access_key_id = pstrdup(c->spec->access_key_id);
		r->creds.secret_access_key = pstrdup(c->spec->secret_access_key);
		r->creds.session_token = c->spec->session_token ? pstrdup(c->spec->session_token) : NULL;
	}
	else
		chain_begin(c, r);
	if (c->spec->role_arn)
	{
		AwsRole    *role = palloc0(sizeof(AwsRole));

		role->role_arn = c->spec->role_arn;
		role->external_id = c->spec->external_id;
		role->session_name = c->spec->role_session_name;
		role->duration_s = c->spec->duration_s;
		r->roles = lappend(r->roles, role);
	}
	if (r->x == NULL && r->process == NULL)
		refresh_next(c);
}

/*
 * Move c's refresh on as far as the exchanges that ended allow: read each
 * answer, then start the next exchange, or make the credentials c's.  An
 * exchange that timed out unwatched begins the refresh again.
 */
static void
refresh_advance(ShardCredentials *c)
{
	Refresh    *r;

	while ((r = c->state->refresh) != NULL && step_over(r))
	{
		StringInfo	body;
		bool		stale;
		long		status;

		if (r->retry_at)
		{
			refresh_start(r);
			continue;
		}
		if (r->step == STEP_PROCESS)
		{
			r->creds = process_answer(c, r);
			refresh_next(c);
			continue;
		}
		status = refresh_answer(c, r, &body, &stale);

		if (stale)
		{
			DdbTransport *t = r->transport;

			refresh_end(c);
			refresh_begin(c, t);
			continue;
		}
		if (retry_later(r, status, body))
			continue;
		switch (r->step)
		{
			case STEP_IMDS_TOKEN:
				instance_token(c, r, status, body);
				break;
			case STEP_IMDS_ROLE:
				instance_role(c, r, status, body);
				break;
			case STEP_CONTAINER:
			case STEP_IMDS_CREDS:
				r->creds = json_answer(c, r->source, status, body);
				refresh_next(c);
				break;
			case STEP_STS:
				r->creds = sts_answer(c, r, status, body);
				refresh_next(c);
				break;
			case STEP_SSO:
				r->creds = sso_answer(c, r, status, body);
				refresh_next(c);
				break;
			case STEP_PROCESS:
				pg_unreachable();
		}
	}
}

/*
 * Whether c's current credentials may still sign at now: they have a
 * while left (a minute, or a quarter of their life if that is shorter).
 * Past that, a request waits for the refresh, and a failed refresh is the
 * error.
 */
static bool
may_keep_current(ShardCredentials *c, int64 now)
{
	struct ShardCredState *st = c->state;

	return c->access_key_id != NULL && st->expiration != 0 &&
		now < st->expiration - Min(60, (st->expiration - st->fetched_at) / 4);
}

/*
 * Make sure c holds credentials that may sign, and move their refresh on;
 * called before each request on t is signed, and when an exchange of the
 * refresh ends.  The first time, the credentials are fetched and waited
 * for.  Once the refresh time has come (REFRESH_MARGIN_S before they
 * expire, or halfway through a shorter life) a refresh from the same
 * source begins, its exchanges in flight on t beside the requests, which
 * go on signed with the current credentials until the new ones replace
 * them; a request waits for the refresh only when the current ones are
 * about to expire.  A refresh that fails while they still have a while
 * left is a WARNING, and is tried again a little later (cancels and
 * timeouts still end the statement); otherwise it is the error.
 */
void
credentials_ensure(ShardCredentials *c, DdbTransport *t)
{
	struct ShardCredState *st = c->state;
	int64		now = (int64) time(NULL);
	MemoryContext old;

	if (st->refresh == NULL && c->access_key_id &&
		(st->refresh_at == 0 || now < st->refresh_at))
		return;

	old = MemoryContextSwitchTo(st->refresh_cxt);
	PG_TRY();
	{
		if (st->refresh == NULL)
			refresh_begin(c, t);
		refresh_advance(c);
		while (st->refresh != NULL && !may_keep_current(c, (int64) time(NULL)))
		{
			step_wait(st->refresh);
			refresh_advance(c);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(old);
		refresh_end(c);
		if (!may_keep_current(c, now))
			PG_RE_THROW();
		edata = CopyErrorData();
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED || edata->elevel > ERROR)
			PG_RE_THROW();
		FlushErrorState();
		st->refresh_at = now + Max(1, Min(30, (st->expiration - now) / 4));
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("could not refresh the AWS credentials for server \"%s\"; the current ones serve until they expire at %s",
						c->spec->servername,
						timestamptz_to_str(time_t_to_timestamptz((pg_time_t) st->expiration))),
				 errdetail("%s%s%s", edata->message, edata->detail ? " " : "",
						   edata->detail ? edata->detail : "")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
}

/* Where c's credentials come from, for messages. */
const char *
credentials_source_name(ShardCredentials *c)
{
	switch (c->state->source)
	{
		case SOURCE_MAPPING:
			return "the user mapping";
		case SOURCE_ENVIRONMENT:
			return "the environment";
		case SOURCE_PROFILE:
			return "the shared credentials and config files";
		case SOURCE_WEB_IDENTITY:
			return "web identity";
		case SOURCE_CONTAINER:
			return "the container credentials endpoint";
		case SOURCE_INSTANCE:
			return "EC2 instance metadata";
		case SOURCE_UNKNOWN:
			break;
	}
	return "the default credential chain";
}
