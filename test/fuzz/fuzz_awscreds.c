/*-------------------------------------------------------------------------
 *
 * fuzz_awscreds.c
 *		libFuzzer target: what the credential sources send or hold
 *		(awscreds.c).  The first byte picks the reader: 's' an STS XML
 *		answer, 'j' container or instance metadata JSON, 'c' a
 *		credential_process's output, 'k' a token of the SSO cache, 'o' the
 *		SSO portal's answer, 't' an ISO 8601 time, 'u' a container URL,
 *		anything else the shared files: the credentials file, a NUL, the
 *		config file, a NUL, a profile name.
 *
 * Credentials and tokens that parse must be printable (they go into HTTP
 * headers); a plan that resolves must name its source's settings.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "core/awscreds.h"

/* Abort unless the parsed credentials are fit to send. */
static void
check_creds(const AwsCreds *c)
{
	if (!awscreds_printable(c->access_key_id) || !awscreds_printable(c->secret_access_key) ||
		(c->session_token && !awscreds_printable(c->session_token)))
		abort();
}

/* A NUL-terminated copy of [p, p + n). */
static char *
copy(const unsigned char *p, size_t n)
{
	return sfdw_strndup((const char *) p, n);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	AwsCreds	creds;
	AwsError	error;
	char	   *text;

	if (size == 0)
		return 0;
	text = copy(data + 1, size - 1);
	switch (data[0])
	{
		case 's':
			if (awscreds_parse_sts((const char *) data + 1, size - 1, &creds, &error) ==
				AWS_ANSWER_CREDENTIALS)
				check_creds(&creds);
			awscreds_free_creds(&creds);
			break;
		case 'j':
			if (awscreds_parse_json((const char *) data + 1, size - 1, &creds, &error) ==
				AWS_ANSWER_CREDENTIALS)
				check_creds(&creds);
			awscreds_free_creds(&creds);
			break;
		case 'c':
			if (awscreds_parse_process((const char *) data + 1, size - 1, &creds, &error) ==
				AWS_ANSWER_CREDENTIALS)
				check_creds(&creds);
			awscreds_free_creds(&creds);
			break;
		case 'o':
			if (awscreds_parse_sso_role((const char *) data + 1, size - 1, &creds, &error) ==
				AWS_ANSWER_CREDENTIALS)
				check_creds(&creds);
			awscreds_free_creds(&creds);
			break;
		case 'k':
			{
				char	   *token;
				int64_t		expires;
				char		err[SFDW_ERRLEN];

				if (awscreds_parse_sso_token((const char *) data + 1, size - 1, &token,
											 &expires, err, sizeof(err)) &&
					!awscreds_printable(token))
					abort();
				sfdw_free(token);
				break;
			}
		case 't':
			{
				int64_t		t;

				(void) awscreds_parse_time(text, &t);
				break;
			}
		case 'u':
			(void) awscreds_container_url_ok(text);
			break;
		default:
			{
				const unsigned char *end = data + size;
				const unsigned char *a = data + 1;
				const unsigned char *b = memchr(a, '\0', (size_t) (end - a));
				const unsigned char *c = b ? memchr(b + 1, '\0', (size_t) (end - b - 1)) : NULL;
				AwsProfilePlan plan;
				char		err[SFDW_ERRLEN];
				bool		found;

				if (c == NULL)
					break;
				if (awscreds_resolve_profile((const char *) a, (const char *) b + 1,
											 (const char *) c + 1 < (const char *) end ?
											 text + (c + 1 - a) : "default",
											 &plan, &found, err, sizeof(err)))
				{
					if (!found || (plan.source == AWS_SOURCE_STATIC &&
								   (plan.creds.access_key_id == NULL ||
									plan.creds.secret_access_key == NULL)) ||
						(plan.source == AWS_SOURCE_WEB_IDENTITY &&
						 plan.web_identity_token_file == NULL) ||
						(plan.source == AWS_SOURCE_SSO &&
						 (plan.sso.start_url == NULL || plan.sso.region == NULL ||
						  plan.sso.account_id == NULL || plan.sso.role_name == NULL ||
						  plan.sso.cache_key == NULL)) ||
						(plan.source == AWS_SOURCE_PROCESS && plan.credential_process == NULL) ||
						(plan.source == AWS_SOURCE_NONE && plan.nroles > 0) ||
						plan.nroles > AWS_MAX_ROLES)
						abort();
					awscreds_free_plan(&plan);
				}
				break;
			}
	}
	sfdw_free(text);
	return 0;
}
