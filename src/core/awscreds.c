/*-------------------------------------------------------------------------
 *
 * awscreds.c
 *		The AWS credential sources' formats in plain C: the shared
 *		credentials and config files and the profiles they hold, STS's XML
 *		answers, the JSON of the container endpoint, instance metadata, a
 *		credential_process, the SSO cache and the SSO portal, STS's form
 *		bodies and the SSO portal's URL.  See awscreds.h.
 *
 *-------------------------------------------------------------------------
 */
#include "core/awscreds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "core/ddbjson.h"
#include "core/sigv4.h"

/* ---------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------
 */

/* A copy of str, or NULL for NULL. */
static char *
dup_or_null(const char *str)
{
	return str ? sfdw_strndup(str, strlen(str)) : NULL;
}

/* See awscreds.h. */
bool
awscreds_printable(const char *str)
{
	if (str == NULL || *str == '\0')
		return false;
	for (; *str; str++)
		if ((unsigned char) *str <= ' ' || (unsigned char) *str >= 0x7f)
			return false;
	return true;
}

/* See awscreds.h. */
void
awscreds_free_creds(AwsCreds *creds)
{
	sfdw_free(creds->access_key_id);
	sfdw_free(creds->secret_access_key);
	sfdw_free(creds->session_token);
	memset(creds, 0, sizeof(*creds));
}

/* Free what a role holds. */
static void
free_role(AwsRole *role)
{
	sfdw_free(role->role_arn);
	sfdw_free(role->external_id);
	sfdw_free(role->session_name);
	memset(role, 0, sizeof(*role));
}

/* See awscreds.h. */
void
awscreds_free_plan(AwsProfilePlan *plan)
{
	awscreds_free_creds(&plan->creds);
	sfdw_free(plan->web_identity_token_file);
	free_role(&plan->web_role);
	sfdw_free(plan->sso.session);
	sfdw_free(plan->sso.start_url);
	sfdw_free(plan->sso.region);
	sfdw_free(plan->sso.account_id);
	sfdw_free(plan->sso.role_name);
	sfdw_free(plan->sso.cache_key);
	sfdw_free(plan->credential_process);
	for (int i = 0; i < plan->nroles; i++)
		free_role(&plan->roles[i]);
	memset(plan, 0, sizeof(*plan));
}

/* ---------------------------------------------------------------------
 * The shared files (INI)
 * ---------------------------------------------------------------------
 */

/* What a section of the shared files is. */
typedef enum IniKind
{
	INI_PROFILE,				/* [name], [profile name], [default] */
	INI_SSO_SESSION				/* [sso-session name] of the config file */
} IniKind;

/* One "key = value" of a section, or a section header (key NULL). */
typedef struct IniEntry
{
	IniKind		kind;
	char	   *profile;		/* the name of the profile or session */
	char	   *key;
	char	   *value;
} IniEntry;

typedef struct IniFile
{
	const char *what;			/* "credentials file", "config file" */
	int			n;
	int			cap;
	IniEntry   *entries;
} IniFile;

/* Trim blanks at both ends of [*start, *end). */
static void
trim(const char **start, const char **end)
{
	while (*start < *end && (**start == ' ' || **start == '\t' || **start == '\r'))
		(*start)++;
	while (*end > *start && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
		(*end)--;
}

/* Append an entry to f (strings copied; key and value may be NULL). */
static void
ini_add(IniFile *f, IniKind kind, const char *profile, const char *key, size_t keylen,
		const char *value, size_t valuelen)
{
	IniEntry   *e;

	if (f->n == f->cap)
	{
		f->cap = f->cap ? f->cap * 2 : 16;
		f->entries = f->entries ?
			sfdw_realloc(f->entries, (size_t) f->cap * sizeof(IniEntry)) :
			sfdw_alloc((size_t) f->cap * sizeof(IniEntry));
	}
	e = &f->entries[f->n++];
	e->kind = kind;
	e->profile = sfdw_strndup(profile, strlen(profile));
	e->key = key ? sfdw_strndup(key, keylen) : NULL;
	e->value = value ? sfdw_strndup(value, valuelen) : NULL;
}

/* Free a parsed file. */
static void
ini_free(IniFile *f)
{
	for (int i = 0; i < f->n; i++)
	{
		sfdw_free(f->entries[i].profile);
		sfdw_free(f->entries[i].key);
		sfdw_free(f->entries[i].value);
	}
	sfdw_free(f->entries);
	f->entries = NULL;
	f->n = f->cap = 0;
}

/*
 * The name after a section header's word (len bytes of name starting with
 * it, then a blank), or NULL when the header is not word and a name.
 */
static char *
section_name(const char *name, size_t len, const char *word)
{
	size_t		wlen = strlen(word);
	const char *start = name + wlen + 1;
	const char *end = name + len;

	if (len <= wlen + 1 || memcmp(name, word, wlen) != 0 ||
		(name[wlen] != ' ' && name[wlen] != '\t'))
		return NULL;
	trim(&start, &end);
	return start < end ? sfdw_strndup(start, (size_t) (end - start)) : NULL;
}

/*
 * The profile or session a section header names, its kind in *kind: in
 * the credentials file the name itself, in the config file "profile NAME",
 * "default" or "sso-session NAME"; NULL for the config file's other
 * sections (services), which are skipped.
 */
static char *
section_profile(const char *name, size_t len, bool config, IniKind *kind)
{
	char	   *session;

	*kind = INI_PROFILE;
	if (!config || (len == 7 && memcmp(name, "default", 7) == 0))
		return sfdw_strndup(name, len);
	session = section_name(name, len, "sso-session");
	if (session)
	{
		*kind = INI_SSO_SESSION;
		return session;
	}
	return section_name(name, len, "profile");
}

/*
 * Parse a file's text into f.  Blank lines and lines starting with '#' or
 * ';' are skipped, as are indented lines (a nested setting's sub-keys) and
 * the settings of sections that are not profiles.  Returns false with the
 * line's number in err on a line that is neither a [section] nor a
 * "key = value", or a setting before any section.
 */
static bool
ini_parse(IniFile *f, const char *text, bool config, char *err, size_t errlen)
{
	const char *p = text;
	char	   *profile = NULL;
	IniKind		kind = INI_PROFILE;
	bool		in_section = false;
	int			lineno = 0;

	while (*p)
	{
		const char *eol = strchr(p, '\n');
		const char *start = p;
		const char *end = eol ? eol : p + strlen(p);
		bool		indented = (*p == ' ' || *p == '\t');

		lineno++;
		p = eol ? eol + 1 : end;
		trim(&start, &end);
		if (start == end || *start == '#' || *start == ';')
			continue;
		if (*start == '[')
		{
			const char *close = memchr(start, ']', (size_t) (end - start));
			const char *nstart = start + 1;
			const char *nend = close;

			if (close == NULL)
			{
				sfdw_set_error(err, errlen, "line %d of the %s opens a section with \"[\" but does not close it",
							   lineno, f->what);
				sfdw_free(profile);
				return false;
			}
			trim(&nstart, &nend);
			sfdw_free(profile);
			profile = nstart < nend ?
				section_profile(nstart, (size_t) (nend - nstart), config, &kind) : NULL;
			in_section = true;
			if (profile)
				ini_add(f, kind, profile, NULL, 0, NULL, 0);
			continue;
		}
		if (indented && in_section)
			continue;
		{
			const char *eq = memchr(start, '=', (size_t) (end - start));
			const char *kend = eq;
			const char *vstart = eq ? eq + 1 : NULL;
			const char *vend = end;

			if (eq == NULL || eq == start || !in_section)
			{
				sfdw_set_error(err, errlen, !in_section && eq ?
							   "line %d of the %s sets a value outside any [section]" :
							   "line %d of the %s is neither a [section] nor a \"key = value\" setting",
							   lineno, f->what);
				sfdw_free(profile);
				return false;
			}
			trim(&start, &kend);
			trim(&vstart, &vend);
			if (profile)
				ini_add(f, kind, profile, start, (size_t) (kend - start),
						vstart, (size_t) (vend - vstart));
		}
	}
	sfdw_free(profile);
	return true;
}

/* Whether the profile or session of kind named profile has a section in f. */
static bool
ini_has(const IniFile *f, IniKind kind, const char *profile)
{
	for (int i = 0; i < f->n; i++)
		if (f->entries[i].kind == kind && strcmp(f->entries[i].profile, profile) == 0)
			return true;
	return false;
}

/* The last value of key in the sections of kind named profile in f, or NULL. */
static const char *
ini_get(const IniFile *f, IniKind kind, const char *profile, const char *key)
{
	const char *value = NULL;

	for (int i = 0; i < f->n; i++)
	{
		const IniEntry *e = &f->entries[i];

		if (e->key && e->kind == kind && strcasecmp(e->key, key) == 0 &&
			strcmp(e->profile, profile) == 0)
			value = e->value;
	}
	return value && value[0] ? value : NULL;
}

/* Both files, credentials first. */
typedef struct Profiles
{
	IniFile		creds;
	IniFile		config;
} Profiles;

/* A setting of profile: the credentials file's, else the config file's. */
static const char *
setting(const Profiles *p, const char *profile, const char *key)
{
	const char *v = ini_get(&p->creds, INI_PROFILE, profile, key);

	return v ? v : ini_get(&p->config, INI_PROFILE, profile, key);
}

/* Read the role settings of profile into role. */
static bool
read_role(const Profiles *p, const char *profile, AwsRole *role,
		  char *err, size_t errlen)
{
	const char *duration = setting(p, profile, "duration_seconds");

	role->role_arn = dup_or_null(setting(p, profile, "role_arn"));
	role->external_id = dup_or_null(setting(p, profile, "external_id"));
	role->session_name = dup_or_null(setting(p, profile, "role_session_name"));
	if (duration)
	{
		char	   *end;
		long		v = strtol(duration, &end, 10);

		if (*end != '\0' || v < 900 || v > 43200)
		{
			sfdw_set_error(err, errlen, "duration_seconds of profile \"%.64s\" must be a whole number of seconds between 900 and 43200",
						   profile);
			return false;
		}
		role->duration_s = (int) v;
	}
	return true;
}

/* The settings that make a profile an SSO profile, by their index below. */
static const char *const sso_keys[] = {
	"sso_session", "sso_start_url", "sso_region", "sso_account_id", "sso_role_name"
};

enum
{
	SSO_SESSION,
	SSO_START_URL,				/* this one and the next an sso-session gives */
	SSO_REGION,
	SSO_ACCOUNT_ID,
	SSO_ROLE_NAME,
	SSO_NKEYS
};

/*
 * Read the SSO settings of profile into sso, those of its sso-session
 * section (sso_start_url, sso_region) filling in; false with the reason
 * when the session has no section, contradicts the profile, or a setting
 * is missing.
 */
static bool
read_sso(const Profiles *p, const char *profile, AwsSso *sso, char *err, size_t errlen)
{
	const char *values[SSO_NKEYS];
	const char *session;

	for (int i = 0; i < SSO_NKEYS; i++)
		values[i] = setting(p, profile, sso_keys[i]);
	session = values[SSO_SESSION];
	if (session && !ini_has(&p->config, INI_SSO_SESSION, session))
	{
		sfdw_set_error(err, errlen, "the sso_session \"%.64s\" of profile \"%.64s\" has no [sso-session %.64s] section in the config file",
					   session, profile, session);
		return false;
	}
	for (int i = SSO_START_URL; session && i <= SSO_REGION; i++)
	{
		const char *v = ini_get(&p->config, INI_SSO_SESSION, session, sso_keys[i]);

		if (v && values[i] && strcmp(v, values[i]) != 0)
		{
			sfdw_set_error(err, errlen, "the %s of profile \"%.64s\" differs from that of its sso-session \"%.64s\"",
						   sso_keys[i], profile, session);
			return false;
		}
		if (v)
			values[i] = v;
	}
	for (int i = SSO_START_URL; i < SSO_NKEYS; i++)
		if (values[i] == NULL)
		{
			if (session && i <= SSO_REGION)
				sfdw_set_error(err, errlen, "neither profile \"%.64s\" nor its sso-session \"%.64s\" gives %s",
							   profile, session, sso_keys[i]);
			else
				sfdw_set_error(err, errlen, "profile \"%.64s\" is an SSO profile but lacks %s",
							   profile, sso_keys[i]);
			return false;
		}
	sso->session = dup_or_null(session);
	sso->start_url = dup_or_null(values[SSO_START_URL]);
	sso->region = dup_or_null(values[SSO_REGION]);
	sso->account_id = dup_or_null(values[SSO_ACCOUNT_ID]);
	sso->role_name = dup_or_null(values[SSO_ROLE_NAME]);
	sso->cache_key = dup_or_null(session ? session : values[SSO_START_URL]);
	return true;
}

/*
 * Where profile, which assumes no role, gets its credentials: its keys,
 * else SSO, else its credential_process, else nowhere (AWS_SOURCE_NONE).
 * False with the reason when they are incomplete.
 */
static bool
resolve_base(const Profiles *p, const char *profile, AwsProfilePlan *plan,
			 char *err, size_t errlen)
{
	const char *akid = setting(p, profile, "aws_access_key_id");
	const char *secret = setting(p, profile, "aws_secret_access_key");
	const char *process = setting(p, profile, "credential_process");

	if (akid || secret)
	{
		if (akid == NULL || secret == NULL)
		{
			sfdw_set_error(err, errlen, "profile \"%.64s\" lacks %s", profile,
						   akid ? "aws_secret_access_key" : "aws_access_key_id");
			return false;
		}
		plan->source = AWS_SOURCE_STATIC;
		plan->creds.access_key_id = dup_or_null(akid);
		plan->creds.secret_access_key = dup_or_null(secret);
		plan->creds.session_token = dup_or_null(setting(p, profile, "aws_session_token"));
		return true;
	}
	if (setting(p, profile, "web_identity_token_file"))
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" has a web_identity_token_file but no role_arn",
					   profile);
		return false;
	}
	for (int i = 0; i < SSO_NKEYS; i++)
		if (setting(p, profile, sso_keys[i]))
		{
			plan->source = AWS_SOURCE_SSO;
			return read_sso(p, profile, &plan->sso, err, errlen);
		}
	if (process)
	{
		plan->source = AWS_SOURCE_PROCESS;
		plan->credential_process = dup_or_null(process);
		return true;
	}
	plan->source = AWS_SOURCE_NONE;
	return true;
}

/*
 * Resolve profile into plan, depth roles deep already; visited holds the
 * profiles on the way, to find loops.
 */
static bool
resolve(const Profiles *p, const char *profile, AwsProfilePlan *plan,
		const char **visited, int depth, char *err, size_t errlen)
{
	const char *role_arn = setting(p, profile, "role_arn");
	const char *source_profile;
	const char *credential_source;
	const char *token_file;

	if (!ini_has(&p->creds, INI_PROFILE, profile) && !ini_has(&p->config, INI_PROFILE, profile))
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" is in neither the shared credentials file nor the config file",
					   profile);
		return false;
	}
	if (role_arn == NULL)
		return resolve_base(p, profile, plan, err, errlen);

	if (depth >= AWS_MAX_ROLES)
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" chains more than %d roles",
					   profile, AWS_MAX_ROLES);
		return false;
	}
	source_profile = setting(p, profile, "source_profile");
	credential_source = setting(p, profile, "credential_source");
	token_file = setting(p, profile, "web_identity_token_file");
	if ((source_profile != NULL) + (credential_source != NULL) + (token_file != NULL) > 1)
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" gives more than one of source_profile, credential_source and web_identity_token_file",
					   profile);
		return false;
	}
	if (token_file)
	{
		plan->source = AWS_SOURCE_WEB_IDENTITY;
		plan->web_identity_token_file = dup_or_null(token_file);
		return read_role(p, profile, &plan->web_role, err, errlen);
	}
	if (source_profile && strcmp(source_profile, profile) == 0)
	{
		/* a profile that is its own source uses its own keys */
		const char *akid = setting(p, profile, "aws_access_key_id");
		const char *secret = setting(p, profile, "aws_secret_access_key");

		if (akid == NULL || secret == NULL)
		{
			sfdw_set_error(err, errlen, "profile \"%.64s\" is its own source_profile but lacks %s",
						   profile, akid ? "aws_secret_access_key" : "aws_access_key_id");
			return false;
		}
		plan->source = AWS_SOURCE_STATIC;
		plan->creds.access_key_id = dup_or_null(akid);
		plan->creds.secret_access_key = dup_or_null(secret);
		plan->creds.session_token = dup_or_null(setting(p, profile, "aws_session_token"));
	}
	else if (source_profile)
	{
		for (int i = 0; i < depth; i++)
			if (strcmp(visited[i], source_profile) == 0)
			{
				sfdw_set_error(err, errlen, "the source_profile of profile \"%.64s\" leads back to profile \"%.64s\"",
							   profile, source_profile);
				return false;
			}
		visited[depth] = profile;
		if (!resolve(p, source_profile, plan, visited, depth + 1, err, errlen))
			return false;
		if (plan->source == AWS_SOURCE_NONE)
		{
			sfdw_set_error(err, errlen, "profile \"%.64s\", the source_profile of profile \"%.64s\", holds no credentials",
						   source_profile, profile);
			return false;
		}
	}
	else if (credential_source)
	{
		if (strcmp(credential_source, "Environment") == 0)
			plan->source = AWS_SOURCE_ENVIRONMENT;
		else if (strcmp(credential_source, "EcsContainer") == 0)
			plan->source = AWS_SOURCE_CONTAINER;
		else if (strcmp(credential_source, "Ec2InstanceMetadata") == 0)
			plan->source = AWS_SOURCE_INSTANCE;
		else
		{
			sfdw_set_error(err, errlen, "credential_source \"%.64s\" of profile \"%.64s\" is not Environment, EcsContainer or Ec2InstanceMetadata",
						   credential_source, profile);
			return false;
		}
	}
	else
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" has a role_arn but no source_profile, credential_source or web_identity_token_file",
					   profile);
		return false;
	}
	if (plan->nroles >= AWS_MAX_ROLES)
	{
		sfdw_set_error(err, errlen, "profile \"%.64s\" chains more than %d roles",
					   profile, AWS_MAX_ROLES);
		return false;
	}
	return read_role(p, profile, &plan->roles[plan->nroles++], err, errlen);
}

/* See awscreds.h. */
bool
awscreds_resolve_profile(const char *credentials_text, const char *config_text,
						 const char *profile, AwsProfilePlan *plan, bool *found,
						 char *err, size_t errlen)
{
	Profiles	p;
	const char *visited[AWS_MAX_ROLES];
	bool		ok;

	memset(&p, 0, sizeof(p));
	memset(plan, 0, sizeof(*plan));
	*found = false;
	p.creds.what = "shared credentials file";
	p.config.what = "config file";
	ok = (credentials_text == NULL ||
		  ini_parse(&p.creds, credentials_text, false, err, errlen)) &&
		(config_text == NULL ||
		 ini_parse(&p.config, config_text, true, err, errlen));
	/* a malformed file may hold the profile: it is for the caller to report */
	*found = !ok;
	if (ok)
	{
		*found = ini_has(&p.creds, INI_PROFILE, profile) ||
			ini_has(&p.config, INI_PROFILE, profile);
		ok = resolve(&p, profile, plan, visited, 0, err, errlen);
	}
	if (!ok)
		awscreds_free_plan(plan);
	ini_free(&p.creds);
	ini_free(&p.config);
	return ok;
}

/* See awscreds.h. */
bool
awscreds_config_setting(const char *config_text, const char *profile, const char *key,
						char **value, char *err, size_t errlen)
{
	IniFile		config;
	bool		ok;

	memset(&config, 0, sizeof(config));
	config.what = "config file";
	*value = NULL;
	ok = config_text == NULL || ini_parse(&config, config_text, true, err, errlen);
	if (ok && config_text != NULL)
		*value = dup_or_null(ini_get(&config, INI_PROFILE, profile, key));
	ini_free(&config);
	return ok;
}

/* ---------------------------------------------------------------------
 * Times
 * ---------------------------------------------------------------------
 */

/* Read exactly n digits at *p into *value; advance *p. */
static bool
digits(const char **p, int n, int *value)
{
	*value = 0;
	for (int i = 0; i < n; i++)
	{
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return false;
		*value = *value * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;
	int64_t		doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* See awscreds.h. */
bool
awscreds_parse_time(const char *text, int64_t *epoch)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = text;
	int			y,
				mo,
				d,
				h,
				mi,
				s;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
		!digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
		return false;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
		!digits(&p, 2, &s))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || s > 60)
		return false;
	if (*p == '.')
	{
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (!((*p == 'Z' || *p == 'z') && p[1] == '\0') && strcmp(p, "+00:00") != 0 &&
		strcmp(p, "UTC") != 0)
		return false;
	*epoch = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	return true;
}

/* ---------------------------------------------------------------------
 * STS's XML
 * ---------------------------------------------------------------------
 */

#define XML_MAX_DEPTH 16

/* The elements of an STS answer that matter, as the parse finds them. */
typedef struct StsFields
{
	char	   *root;			/* the root element's name */
	char	   *result;			/* its first child's name */
	char	   *akid;
	char	   *secret;
	char	   *token;
	char	   *expiration;
	char	   *code;
	char	   *message;
} StsFields;

/* Free what a parse collected. */
static void
sts_fields_free(StsFields *f)
{
	sfdw_free(f->root);
	sfdw_free(f->result);
	sfdw_free(f->akid);
	sfdw_free(f->secret);
	sfdw_free(f->token);
	sfdw_free(f->expiration);
	sfdw_free(f->code);
	sfdw_free(f->message);
}

/* Append the character reference or entity at *p (after '&') to out. */
static bool
xml_entity(const char **p, const char *end, Buf *out)
{
	static const struct
	{
		const char *name;
		char		c;
	}			named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
	const char *s = *p;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
	{
		size_t		n = strlen(named[i].name);

		if ((size_t) (end - s) >= n && memcmp(s, named[i].name, n) == 0)
		{
			buf_putc(out, named[i].c);
			*p = s + n;
			return true;
		}
	}
	if (s < end && *s == '#')
	{
		bool		hex = s + 1 < end && s[1] == 'x';
		unsigned long cp = 0;
		const char *q = s + (hex ? 2 : 1);
		const char *first = q;

		for (; q < end && *q != ';'; q++)
		{
			int			v = (*q >= '0' && *q <= '9') ? *q - '0' :
				hex && (*q >= 'a' && *q <= 'f') ? *q - 'a' + 10 :
				hex && (*q >= 'A' && *q <= 'F') ? *q - 'A' + 10 : -1;

			if (v < 0 || cp > 0x10FFFF)
				return false;
			cp = cp * (hex ? 16 : 10) + (unsigned long) v;
		}
		if (q == end || q == first || cp == 0 || cp > 0x10FFFF ||
			(cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		if (cp < 0x80)
			buf_putc(out, (char) cp);
		else if (cp < 0x800)
		{
			buf_putc(out, (char) (0xC0 | (cp >> 6)));
			buf_putc(out, (char) (0x80 | (cp & 0x3F)));
		}
		else if (cp < 0x10000)
		{
			buf_putc(out, (char) (0xE0 | (cp >> 12)));
			buf_putc(out, (char) (0x80 | ((cp >> 6) & 0x3F)));
			buf_putc(out, (char) (0x80 | (cp & 0x3F)));
		}
		else
		{
			buf_putc(out, (char) (0xF0 | (cp >> 18)));
			buf_putc(out, (char) (0x80 | ((cp >> 12) & 0x3F)));
			buf_putc(out, (char) (0x80 | ((cp >> 6) & 0x3F)));
			buf_putc(out, (char) (0x80 | (cp & 0x3F)));
		}
		*p = q + 1;
		return true;
	}
	return false;
}

/* Keep the text of the element the stack ends in, if it is one we want. */
static void
sts_keep(StsFields *f, char **stack, int depth, const Buf *text)
{
	char	  **slot = NULL;
	const char *leaf = stack[depth - 1];

	if (depth == 4 && strcmp(stack[2], "Credentials") == 0)
	{
		if (strcmp(leaf, "AccessKeyId") == 0)
			slot = &f->akid;
		else if (strcmp(leaf, "SecretAccessKey") == 0)
			slot = &f->secret;
		else if (strcmp(leaf, "SessionToken") == 0)
			slot = &f->token;
		else if (strcmp(leaf, "Expiration") == 0)
			slot = &f->expiration;
	}
	else if (depth == 3 && strcmp(stack[1], "Error") == 0)
	{
		if (strcmp(leaf, "Code") == 0)
			slot = &f->code;
		else if (strcmp(leaf, "Message") == 0)
			slot = &f->message;
	}
	if (slot && *slot == NULL)
		*slot = sfdw_strndup(text->data, text->len);
}

/*
 * Walk an XML document, collecting what STS's answers hold into f.
 * Returns false with the reason in err when it is not well-formed XML
 * (as far as this reader checks: tags nest and close, one root, entities
 * known, no text outside the root).
 */
static bool
sts_walk(const char *body, size_t len, StsFields *f, char *err, size_t errlen)
{
	const char *p = body;
	const char *end = body + len;
	char	   *stack[XML_MAX_DEPTH];
	int			depth = 0;
	bool		ok = false;
	bool		rooted = false;
	Buf			text;

	buf_init(&text);
	while (p < end)
	{
		if (*p != '<')
		{
			if (*p == '&')
			{
				p++;
				if (!xml_entity(&p, end, &text))
				{
					sfdw_set_error(err, errlen, "an unknown entity or character reference at byte %ld",
								   (long) (p - body));
					goto done;
				}
				continue;
			}
			if (depth == 0 && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			{
				sfdw_set_error(err, errlen, "text outside the root element at byte %ld",
							   (long) (p - body));
				goto done;
			}
			if (*p == '\0')
			{
				sfdw_set_error(err, errlen, "a NUL byte at byte %ld", (long) (p - body));
				goto done;
			}
			buf_putc(&text, *p++);
			continue;
		}
		if ((size_t) (end - p) >= 4 && memcmp(p, "<!--", 4) == 0)
		{
			const char *close = NULL;

			for (const char *q = p + 4; q + 3 <= end; q++)
				if (memcmp(q, "-->", 3) == 0)
				{
					close = q;
					break;
				}
			if (close == NULL)
			{
				sfdw_set_error(err, errlen, "a comment that does not end");
				goto done;
			}
			p = close + 3;
			continue;
		}
		if ((size_t) (end - p) >= 9 && memcmp(p, "<![CDATA[", 9) == 0)
		{
			const char *close = NULL;

			for (const char *q = p + 9; q + 3 <= end; q++)
				if (memcmp(q, "]]>", 3) == 0)
				{
					close = q;
					break;
				}
			if (close == NULL || depth == 0)
			{
				sfdw_set_error(err, errlen, "a CDATA section that does not end or is outside the root");
				goto done;
			}
			buf_append(&text, p + 9, (size_t) (close - p - 9));
			p = close + 3;
			continue;
		}
		{
			const char *gt = memchr(p, '>', (size_t) (end - p));
			const char *name;
			const char *nend;
			bool		closing;
			bool		empty;

			if (gt == NULL)
			{
				sfdw_set_error(err, errlen, "a tag that does not end at byte %ld", (long) (p - body));
				goto done;
			}
			if (p[1] == '?' || p[1] == '!')
			{
				/* the XML declaration, a processing instruction, a DOCTYPE */
				if (depth > 0 || rooted)
				{
					sfdw_set_error(err, errlen, "a declaration inside the document at byte %ld",
								   (long) (p - body));
					goto done;
				}
				p = gt + 1;
				continue;
			}
			closing = p[1] == '/';
			empty = gt[-1] == '/' && !closing;
			name = p + (closing ? 2 : 1);
			nend = name;
			while (nend < gt && *nend != ' ' && *nend != '\t' && *nend != '\r' &&
				   *nend != '\n' && *nend != '/')
				nend++;
			if (nend == name)
			{
				sfdw_set_error(err, errlen, "a tag without a name at byte %ld", (long) (p - body));
				goto done;
			}
			if (closing)
			{
				if (depth == 0 || strlen(stack[depth - 1]) != (size_t) (nend - name) ||
					memcmp(stack[depth - 1], name, (size_t) (nend - name)) != 0)
				{
					sfdw_set_error(err, errlen, "a closing tag that closes no open element at byte %ld",
								   (long) (p - body));
					goto done;
				}
				sts_keep(f, stack, depth, &text);
				sfdw_free(stack[--depth]);
			}
			else
			{
				if (depth == 0 && rooted)
				{
					sfdw_set_error(err, errlen, "a second root element at byte %ld", (long) (p - body));
					goto done;
				}
				if (depth == XML_MAX_DEPTH)
				{
					sfdw_set_error(err, errlen, "elements nest deeper than %d levels", XML_MAX_DEPTH);
					goto done;
				}
				stack[depth++] = sfdw_strndup(name, (size_t) (nend - name));
				if (depth == 1)
				{
					rooted = true;
					f->root = sfdw_strndup(name, (size_t) (nend - name));
				}
				else if (depth == 2 && f->result == NULL)
					f->result = sfdw_strndup(name, (size_t) (nend - name));
				if (empty)
				{
					buf_reset(&text);
					sts_keep(f, stack, depth, &text);
					sfdw_free(stack[--depth]);
				}
			}
			buf_reset(&text);
			p = gt + 1;
		}
	}
	if (!rooted || depth > 0)
		sfdw_set_error(err, errlen, rooted ? "the document ends inside an element" : "no root element");
	else
		ok = true;
done:
	while (depth > 0)
		sfdw_free(stack[--depth]);
	sfdw_free(text.data);
	return ok;
}

/* Check and copy the credentials an answer gave; false with reason if bad. */
static bool
take_creds(const char *akid, const char *secret, const char *token,
		   const char *expiration, bool need_token_and_expiry,
		   AwsCreds *creds, AwsError *error)
{
	const char *missing = akid == NULL ? "AccessKeyId" :
		secret == NULL ? "SecretAccessKey" :
		need_token_and_expiry && token == NULL ? "SessionToken" :
		need_token_and_expiry && expiration == NULL ? "Expiration" : NULL;
	int64_t		epoch = 0;

	if (missing)
	{
		sfdw_set_error(error->message, sizeof(error->message), "the credentials lack %s", missing);
		return false;
	}
	if (!awscreds_printable(akid) || !awscreds_printable(secret) ||
		(token && !awscreds_printable(token)))
	{
		sfdw_set_error(error->message, sizeof(error->message),
					   "a credential is empty or holds a blank, a control or a non-ASCII character");
		return false;
	}
	if (expiration && !awscreds_parse_time(expiration, &epoch))
	{
		sfdw_set_error(error->message, sizeof(error->message),
					   "the Expiration \"%.40s\" is not an ISO 8601 UTC time", expiration);
		return false;
	}
	creds->access_key_id = dup_or_null(akid);
	creds->secret_access_key = dup_or_null(secret);
	creds->session_token = dup_or_null(token);
	creds->expiration = epoch;
	return true;
}

/* Copy a printable form of an error's code and message into error. */
static void
take_error(const char *code, const char *message, AwsError *error)
{
	Buf			b;

	buf_init(&b);
	ddb_append_printable(&b, code, strlen(code));
	sfdw_set_error(error->code, sizeof(error->code), "%s", b.data);
	buf_reset(&b);
	if (message)
		ddb_append_printable(&b, message, strlen(message));
	sfdw_set_error(error->message, sizeof(error->message), "%s", b.data);
	sfdw_free(b.data);
}

/* See awscreds.h. */
AwsAnswer
awscreds_parse_sts(const char *body, size_t len, AwsCreds *creds, AwsError *error)
{
	StsFields	f;
	AwsAnswer	answer = AWS_ANSWER_MALFORMED;

	memset(&f, 0, sizeof(f));
	memset(creds, 0, sizeof(*creds));
	memset(error, 0, sizeof(*error));
	if (!sts_walk(body, len, &f, error->message, sizeof(error->message)))
		goto done;
	if (strcmp(f.root, "ErrorResponse") == 0)
	{
		if (f.code == NULL || f.code[0] == '\0')
			sfdw_set_error(error->message, sizeof(error->message), "an ErrorResponse without an Error Code");
		else
		{
			take_error(f.code, f.message, error);
			answer = AWS_ANSWER_ERROR;
		}
		goto done;
	}
	if (strcmp(f.root, "AssumeRoleResponse") != 0 &&
		strcmp(f.root, "AssumeRoleWithWebIdentityResponse") != 0)
	{
		sfdw_set_error(error->message, sizeof(error->message), "the root element is <%.64s>, not an STS response",
					   f.root);
		goto done;
	}
	if (f.result == NULL || strlen(f.result) + 2 != strlen(f.root) ||
		strncmp(f.result, f.root, strlen(f.root) - 8) != 0 ||
		strcmp(f.result + strlen(f.root) - 8, "Result") != 0)
	{
		sfdw_set_error(error->message, sizeof(error->message), "<%.64s> does not begin with its Result", f.root);
		goto done;
	}
	if (take_creds(f.akid, f.secret, f.token, f.expiration, true, creds, error))
		answer = AWS_ANSWER_CREDENTIALS;
done:
	sts_fields_free(&f);
	return answer;
}

/* ---------------------------------------------------------------------
 * The container endpoint's and instance metadata's JSON
 * ---------------------------------------------------------------------
 */

/* A string member of obj, or NULL when absent or not a string. */
static const char *
json_string(const DdbJson *obj, const char *key, bool *wrong)
{
	const DdbJson *v = ddbjson_get(obj, key);

	if (v == NULL || v->kind == DJ_NULL)
		return NULL;
	if (v->kind != DJ_STRING || strlen(v->str) != v->len)
	{
		*wrong = true;
		return NULL;
	}
	return v->str;
}

/* See awscreds.h. */
AwsAnswer
awscreds_parse_json(const char *body, size_t len, AwsCreds *creds, AwsError *error)
{
	DdbJson    *root;
	AwsAnswer	answer = AWS_ANSWER_MALFORMED;
	bool		wrong = false;
	const char *code;
	const char *lower_code;

	memset(creds, 0, sizeof(*creds));
	memset(error, 0, sizeof(*error));
	root = ddbjson_parse(body, len, error->message, sizeof(error->message));
	if (root == NULL)
		return AWS_ANSWER_MALFORMED;
	if (root->kind != DJ_OBJECT)
	{
		sfdw_set_error(error->message, sizeof(error->message), "the answer is not a JSON object");
		goto done;
	}
	code = json_string(root, "Code", &wrong);
	lower_code = json_string(root, "code", &wrong);
	if (code && strcmp(code, "Success") != 0)
	{
		take_error(code, json_string(root, "Message", &wrong), error);
		answer = AWS_ANSWER_ERROR;
	}
	else if (lower_code)
	{
		take_error(lower_code, json_string(root, "message", &wrong), error);
		answer = AWS_ANSWER_ERROR;
	}
	else
	{
		const char *akid = json_string(root, "AccessKeyId", &wrong);
		const char *secret = json_string(root, "SecretAccessKey", &wrong);
		const char *token = json_string(root, "Token", &wrong);
		const char *expiration = json_string(root, "Expiration", &wrong);

		if (wrong)
			sfdw_set_error(error->message, sizeof(error->message), "a credential member is not a string");
		else if (take_creds(akid, secret, token, expiration, false, creds, error))
			answer = AWS_ANSWER_CREDENTIALS;
	}
done:
	ddbjson_free(root);
	return answer;
}

/* ---------------------------------------------------------------------
 * A credential_process's output, the SSO cache and the SSO portal
 * ---------------------------------------------------------------------
 */

/*
 * Parse len bytes of body as a JSON object into *root; false with the
 * reason in err (the tree, if any, freed) when it is none.
 */
static bool
json_object(const char *body, size_t len, DdbJson **root, char *err, size_t errlen)
{
	*root = ddbjson_parse(body, len, err, errlen);
	if (*root == NULL)
		return false;
	if ((*root)->kind != DJ_OBJECT)
	{
		sfdw_set_error(err, errlen, "it is not a JSON object");
		ddbjson_free(*root);
		*root = NULL;
		return false;
	}
	return true;
}

/* See awscreds.h. */
AwsAnswer
awscreds_parse_process(const char *out, size_t len, AwsCreds *creds, AwsError *error)
{
	DdbJson    *root;
	const DdbJson *version;
	AwsAnswer	answer = AWS_ANSWER_MALFORMED;
	bool		wrong = false;
	const char *akid;
	const char *secret;
	const char *token;
	const char *expiration;

	memset(creds, 0, sizeof(*creds));
	memset(error, 0, sizeof(*error));
	if (!json_object(out, len, &root, error->message, sizeof(error->message)))
		return AWS_ANSWER_MALFORMED;
	version = ddbjson_get(root, "Version");
	akid = json_string(root, "AccessKeyId", &wrong);
	secret = json_string(root, "SecretAccessKey", &wrong);
	token = json_string(root, "SessionToken", &wrong);
	expiration = json_string(root, "Expiration", &wrong);
	if (version == NULL)
		sfdw_set_error(error->message, sizeof(error->message), "it has no Version");
	else if (version->kind != DJ_NUMBER || strcmp(version->str, "1") != 0)
		sfdw_set_error(error->message, sizeof(error->message), "its Version is not 1");
	else if (wrong)
		sfdw_set_error(error->message, sizeof(error->message), "a credential member is not a string");
	else if (take_creds(akid, secret, token, expiration, false, creds, error))
		answer = AWS_ANSWER_CREDENTIALS;
	ddbjson_free(root);
	return answer;
}

/* See awscreds.h. */
bool
awscreds_parse_sso_token(const char *text, size_t len, char **token,
						 int64_t *expires_at, char *err, size_t errlen)
{
	DdbJson    *root;
	bool		wrong = false;
	const char *access;
	const char *expires;
	bool		ok = false;

	*token = NULL;
	if (!json_object(text, len, &root, err, errlen))
		return false;
	access = json_string(root, "accessToken", &wrong);
	expires = json_string(root, "expiresAt", &wrong);
	if (wrong || access == NULL || expires == NULL)
		sfdw_set_error(err, errlen, "it lacks the string accessToken or expiresAt");
	else if (!awscreds_printable(access))
		sfdw_set_error(err, errlen, "its accessToken is empty or holds a blank, a control or a non-ASCII character");
	else if (!awscreds_parse_time(expires, expires_at))
		sfdw_set_error(err, errlen, "its expiresAt \"%.40s\" is not an ISO 8601 UTC time", expires);
	else
	{
		*token = dup_or_null(access);
		ok = true;
	}
	ddbjson_free(root);
	return ok;
}

/* See awscreds.h. */
AwsAnswer
awscreds_parse_sso_role(const char *body, size_t len, AwsCreds *creds, AwsError *error)
{
	DdbJson    *root;
	const DdbJson *role;
	const DdbJson *expiration;
	AwsAnswer	answer = AWS_ANSWER_MALFORMED;
	bool		wrong = false;
	const char *message;

	memset(creds, 0, sizeof(*creds));
	memset(error, 0, sizeof(*error));
	if (!json_object(body, len, &root, error->message, sizeof(error->message)))
		return AWS_ANSWER_MALFORMED;
	role = ddbjson_get(root, "roleCredentials");
	message = json_string(root, "message", &wrong);
	if (message == NULL)
		message = json_string(root, "Message", &wrong);
	if (role == NULL && message)
	{
		take_error("", message, error);
		answer = AWS_ANSWER_ERROR;
	}
	else if (role == NULL || role->kind != DJ_OBJECT)
		sfdw_set_error(error->message, sizeof(error->message), "it has no roleCredentials object");
	else
	{
		const char *akid = json_string(role, "accessKeyId", &wrong);
		const char *secret = json_string(role, "secretAccessKey", &wrong);
		const char *token = json_string(role, "sessionToken", &wrong);
		char	   *end = NULL;
		long long	ms = 0;

		expiration = ddbjson_get(role, "expiration");
		if (expiration && expiration->kind == DJ_NUMBER)
			ms = strtoll(expiration->str, &end, 10);
		if (wrong)
			sfdw_set_error(error->message, sizeof(error->message), "a credential member is not a string");
		else if (token == NULL)
			sfdw_set_error(error->message, sizeof(error->message), "the credentials lack sessionToken");
		else if (end == NULL || *end != '\0' || ms <= 0)
			sfdw_set_error(error->message, sizeof(error->message),
						   "the credentials lack an expiration in whole milliseconds since 1970");
		else if (take_creds(akid, secret, token, NULL, false, creds, error))
		{
			creds->expiration = (int64_t) (ms / 1000);
			answer = AWS_ANSWER_CREDENTIALS;
		}
	}
	ddbjson_free(root);
	return answer;
}

/* ---------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------
 */

/* Append "&name=value" (value form-encoded) to out. */
static void
form_param(Buf *out, const char *name, const char *value)
{
	buf_printf(out, "&%s=", name);
	sigv4_uri_encode(out, value, strlen(value));
}

/* See awscreds.h. */
char *
awscreds_sts_body(const AwsRole *role, const char *session_name,
				  const char *web_identity_token)
{
	Buf			out;

	buf_init(&out);
	buf_puts(&out, web_identity_token ? "Action=AssumeRoleWithWebIdentity" : "Action=AssumeRole");
	buf_puts(&out, "&Version=2011-06-15");
	form_param(&out, "RoleArn", role->role_arn);
	form_param(&out, "RoleSessionName", session_name);
	if (role->duration_s > 0)
		buf_printf(&out, "&DurationSeconds=%d", role->duration_s);
	if (role->external_id && web_identity_token == NULL)
		form_param(&out, "ExternalId", role->external_id);
	if (web_identity_token)
		form_param(&out, "WebIdentityToken", web_identity_token);
	return out.data;
}

/* See awscreds.h. */
char *
awscreds_sso_cache_file(const char *key)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	Buf			out;

	if (!EVP_Digest(key, strlen(key), digest, &n, EVP_sha1(), NULL))
		return NULL;
	buf_init(&out);
	for (unsigned int i = 0; i < n; i++)
		buf_printf(&out, "%02x", digest[i]);
	buf_puts(&out, ".json");
	return out.data;
}

/* See awscreds.h. */
char *
awscreds_sso_url(const char *endpoint, const AwsSso *sso)
{
	Buf			out;

	buf_init(&out);
	buf_printf(&out, "%s/federation/credentials?role_name=", endpoint);
	sigv4_uri_encode(&out, sso->role_name, strlen(sso->role_name));
	buf_puts(&out, "&account_id=");
	sigv4_uri_encode(&out, sso->account_id, strlen(sso->account_id));
	return out.data;
}

/* See awscreds.h. */
char *
awscreds_container_relative_url(const char *relative)
{
	Buf			out;

	buf_init(&out);
	buf_puts(&out, "http://169.254.170.2");
	if (relative[0] != '/')
		buf_puts(&out, "/");
	buf_puts(&out, relative);
	return out.data;
}

/* See awscreds.h. */
bool
awscreds_container_url_ok(const char *url)
{
	static const char *const hosts[] = {
		"169.254.170.2", "169.254.170.23", "[fd00:ec2::23]", "[::1]", "localhost", NULL
	};
	const char *host;
	size_t		hostlen;

	if (strncmp(url, "https://", 8) == 0)
		return url[8] != '\0';
	if (strncmp(url, "http://", 7) != 0)
		return false;
	host = url + 7;
	if (*host == '[')
	{
		const char *close = strchr(host, ']');

		if (close == NULL)
			return false;
		hostlen = (size_t) (close - host) + 1;
	}
	else
		hostlen = strcspn(host, ":/?#");
	if (memchr(host, '@', strcspn(host, "/?#")) != NULL)
		return false;
	for (int i = 0; hosts[i]; i++)
		if (strlen(hosts[i]) == hostlen && strncasecmp(host, hosts[i], hostlen) == 0)
			return true;
	/* 127.0.0.0/8, written as four decimal octets */
	if (hostlen >= 9 && strncmp(host, "127.", 4) == 0)
	{
		int			octets = 2;
		int			value = 0;
		int			ndigits = 0;

		for (size_t i = 4; i < hostlen; i++)
		{
			if (host[i] == '.' && ndigits > 0)
			{
				octets++;
				value = ndigits = 0;
			}
			else if (host[i] >= '0' && host[i] <= '9' && ndigits < 3)
			{
				value = value * 10 + (host[i] - '0');
				ndigits++;
				if (value > 255)
					return false;
			}
			else
				return false;
		}
		return octets == 4 && ndigits > 0;
	}
	return false;
}
