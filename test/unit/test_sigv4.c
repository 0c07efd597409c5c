/*-------------------------------------------------------------------------
 *
 * test_sigv4.c
 *		Unit tests of the SigV4 signer: the AWS test suite, a DynamoDB
 *		request with a session token, and the helpers.
 *
 * The AWS suite lives in a directory tree given on the command line.  Every
 * folder holding a NAME.req is one case: the request is parsed, signed with
 * the suite's credentials and time, and the canonical request, string to
 * sign and Authorization value are compared with NAME.creq, NAME.sts and
 * NAME.authz.  The number of cases run is checked too, so that a missing
 * or unreadable folder fails the suite.
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/pure.h"
#include "core/sigv4.h"
#include "unit.h"

/* What the AWS suite signs with. */
#define SUITE_CASES			34
#define SUITE_ACCESS_KEY	"AKIDEXAMPLE"
#define SUITE_SECRET_KEY	"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_REGION		"us-east-1"
#define SUITE_SERVICE		"service"
#define SUITE_AMZ_DATE		"20150830T123600Z"

#define TOKEN_HEADER		"X-Amz-Security-Token"

/* The case whose token is added to the request after signing. */
#define TOKEN_AFTER_CASE	"post-sts-header-after"

#define EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* The files of one suite case, in the order they are read. */
typedef enum CaseFile
{
	CASE_REQ,					/* the request to sign */
	CASE_SREQ,					/* the request as sent, token included */
	CASE_CREQ,					/* expected canonical request */
	CASE_STS,					/* expected string to sign */
	CASE_AUTHZ,					/* expected Authorization value */
	CASE_NFILES
} CaseFile;

/* A growable list of file paths. */
typedef struct PathList
{
	char	  **paths;
	size_t		n;
	size_t		cap;
} PathList;

/* One request of the suite, parsed from its .req (or .sreq) text. */
typedef struct ParsedRequest
{
	char	   *method;
	char	   *path;
	char	   *query;
	char	  **names;
	Buf		   *values;
	int			nheaders;
	int			cap;
	const char *body;			/* points into the text parsed */
	size_t		body_len;
} ParsedRequest;

/*
 * read_whole_file
 *		Read the file at path into a new buffer.
 *
 * Returns false, with nothing allocated, if the file cannot be read.
 */
static bool
read_whole_file(const char *path, Buf *buf)
{
	FILE	   *f = fopen(path, "rb");
	char		chunk[4096];
	size_t		n;
	bool		ok;

	if (f == NULL)
		return false;
	buf_init(buf);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(buf, chunk, n);
	ok = !ferror(f);
	fclose(f);
	if (!ok)
		sfdw_free(buf->data);
	return ok;
}

/*
 * path_list_add
 *		Append a copy of path to list.
 */
static void
path_list_add(PathList *list, const char *path)
{
	if (list->n == list->cap)
	{
		list->cap = list->cap ? list->cap * 2 : 16;
		list->paths = sfdw_realloc(list->paths, list->cap * sizeof(char *));
	}
	list->paths[list->n++] = sfdw_strndup(path, strlen(path));
}

/*
 * path_cmp
 *		qsort order of paths: byte order.
 */
static int
path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * collect_req_files
 *		Add to list every regular file under dir whose name ends in ".req".
 *
 * Walks sub-directories recursively; a directory that cannot be opened is
 * skipped (the case count then catches it).
 */
static void
collect_req_files(const char *dir, PathList *list)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
	{
		Buf			child;
		struct stat st;
		size_t		len = strlen(de->d_name);

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		buf_init(&child);
		buf_printf(&child, "%s/%s", dir, de->d_name);
		if (stat(child.data, &st) == 0)
		{
			if (S_ISDIR(st.st_mode))
				collect_req_files(child.data, list);
			else if (S_ISREG(st.st_mode) && len > 4 &&
					 strcmp(de->d_name + len - 4, ".req") == 0)
				path_list_add(list, child.data);
		}
		sfdw_free(child.data);
	}
	closedir(d);
}

/*
 * request_add_header
 *		Append a header with the given name and value bytes to req.
 */
static void
request_add_header(ParsedRequest *req, const char *name, size_t namelen,
				   const char *value, size_t valuelen)
{
	if (req->nheaders == req->cap)
	{
		req->cap = req->cap ? req->cap * 2 : 8;
		req->names = sfdw_realloc(req->names, req->cap * sizeof(char *));
		req->values = sfdw_realloc(req->values, req->cap * sizeof(Buf));
	}
	req->names[req->nheaders] = sfdw_strndup(name, namelen);
	buf_init(&req->values[req->nheaders]);
	buf_append(&req->values[req->nheaders], value, valuelen);
	req->nheaders++;
}

/*
 * request_free
 *		Release what parse_request allocated in req.
 */
static void
request_free(ParsedRequest *req)
{
	int			i;

	for (i = 0; i < req->nheaders; i++)
	{
		sfdw_free(req->names[i]);
		sfdw_free(req->values[i].data);
	}
	if (req->names != NULL)
		sfdw_free(req->names);
	if (req->values != NULL)
		sfdw_free(req->values);
	if (req->method != NULL)
		sfdw_free(req->method);
	if (req->path != NULL)
		sfdw_free(req->path);
	if (req->query != NULL)
		sfdw_free(req->query);
	memset(req, 0, sizeof(*req));
}

/*
 * next_line
 *		Return the line of text at offset *pos and advance *pos past its '\n'.
 *
 * Sets *len to the line's length without its "\n" or "\r\n".  The last line
 * of a text need not end with '\n'.
 */
static const char *
next_line(const char *text, size_t textlen, size_t *pos, size_t *len)
{
	size_t		start = *pos;
	size_t		stop = start;

	while (stop < textlen && text[stop] != '\n')
		stop++;
	*pos = stop < textlen ? stop + 1 : textlen;
	*len = stop - start;
	if (*len > 0 && text[stop - 1] == '\r')
		(*len)--;
	return text + start;
}

/*
 * parse_request
 *		Parse an HTTP/1.1 request of the suite into req.
 *
 * The request line is "METHOD TARGET VERSION", where the target may hold
 * spaces; header lines are "Name:value" with the value untrimmed; a line
 * opening with a space or tab continues the previous value, joined with a
 * space; the body follows the first empty line.  Returns false if the text
 * is not of that shape; req must be released with request_free either way.
 */
static bool
parse_request(const char *text, size_t textlen, ParsedRequest *req)
{
	size_t		pos = 0;
	const char *line;
	size_t		len;
	const char *sp1;
	const char *sp2;
	const char *qmark;
	size_t		i;

	memset(req, 0, sizeof(*req));
	line = next_line(text, textlen, &pos, &len);
	sp1 = memchr(line, ' ', len);
	sp2 = NULL;
	for (i = len; i > 0 && sp2 == NULL; i--)
		if (line[i - 1] == ' ')
			sp2 = line + i - 1;
	if (sp1 == NULL || sp2 == sp1)
		return false;
	req->method = sfdw_strndup(line, sp1 - line);
	qmark = memchr(sp1 + 1, '?', sp2 - sp1 - 1);
	if (qmark != NULL)
	{
		req->path = sfdw_strndup(sp1 + 1, qmark - sp1 - 1);
		req->query = sfdw_strndup(qmark + 1, sp2 - qmark - 1);
	}
	else
	{
		req->path = sfdw_strndup(sp1 + 1, sp2 - sp1 - 1);
		req->query = sfdw_strndup("", 0);
	}

	req->body = text + textlen;
	req->body_len = 0;
	while (pos < textlen)
	{
		const char *colon;

		line = next_line(text, textlen, &pos, &len);
		if (len == 0)
		{
			req->body = text + pos;
			req->body_len = textlen - pos;
			break;
		}
		if (line[0] == ' ' || line[0] == '\t')
		{
			if (req->nheaders == 0)
				return false;
			buf_putc(&req->values[req->nheaders - 1], ' ');
			buf_append(&req->values[req->nheaders - 1], line, len);
			continue;
		}
		colon = memchr(line, ':', len);
		if (colon == NULL)
			return false;
		request_add_header(req, line, colon - line,
						   colon + 1, len - (colon - line) - 1);
	}
	return true;
}

/*
 * request_find_header
 *		The value of req's first header named name (any case), or NULL.
 */
static const char *
request_find_header(const ParsedRequest *req, const char *name)
{
	int			i;

	for (i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->names[i], name) == 0)
			return req->values[i].data;
	return NULL;
}

/*
 * read_case_file
 *		Read stem + ext into buf, failing a CHECK if it cannot be read.
 */
static bool
read_case_file(const char *stem, const char *ext, Buf *buf)
{
	Buf			path;
	bool		ok;

	buf_init(&path);
	buf_printf(&path, "%s%s", stem, ext);
	ok = read_whole_file(path.data, buf);
	if (!ok)
		printf("     cannot read %s\n", path.data);
	CHECK(ok);
	sfdw_free(path.data);
	return ok;
}

/*
 * run_suite_case
 *		Sign the request of one suite case and compare the three results.
 *
 * req_path names the case's .req file.  The token the suite's session
 * token cases use is taken from the signed request (.sreq): where the .req
 * lacks it, it is signed as a header added before signing, except in the
 * case that adds it after signing.  Returns whether the case ran.
 */
static bool
run_suite_case(const char *req_path)
{
	size_t		stemlen = strlen(req_path) - strlen(".req");
	char	   *stem = sfdw_strndup(req_path, stemlen);
	const char *name = strrchr(stem, '/') ? strrchr(stem, '/') + 1 : stem;
	static const char *const exts[CASE_NFILES] = {
		".req", ".sreq", ".creq", ".sts", ".authz"
	};
	Buf			files[CASE_NFILES];
	int			nread = 0;
	int			failed_before = unit_failed;
	bool		ran = false;

	while (nread < CASE_NFILES &&
		   read_case_file(stem, exts[nread], &files[nread]))
		nread++;
	if (nread == CASE_NFILES)
	{
		ParsedRequest req;
		ParsedRequest sreq;
		bool		parsed_req = parse_request(files[CASE_REQ].data,
											   files[CASE_REQ].len, &req);
		bool		parsed_sreq = parse_request(files[CASE_SREQ].data,
												files[CASE_SREQ].len, &sreq);

		CHECK(parsed_req);
		CHECK(parsed_sreq);
		if (parsed_req && parsed_sreq)
		{
			SigV4Header *headers = sfdw_alloc((req.nheaders + 1) *
											  sizeof(SigV4Header));
			int			nheaders = 0;
			const char *token = request_find_header(&sreq, TOKEN_HEADER);
			SigV4Input in;
			SigV4Output out;
			char		err[256] = "";
			bool		ok;
			int			i;

			for (i = 0; i < req.nheaders; i++)
			{
				headers[nheaders].name = req.names[i];
				headers[nheaders].value = req.values[i].data;
				nheaders++;
			}
			if (token != NULL &&
				request_find_header(&req, TOKEN_HEADER) == NULL &&
				strcmp(name, TOKEN_AFTER_CASE) != 0)
			{
				headers[nheaders].name = TOKEN_HEADER;
				headers[nheaders].value = token;
				nheaders++;
			}

			memset(&in, 0, sizeof(in));
			in.method = req.method;
			in.path = req.path;
			in.query = req.query;
			in.headers = headers;
			in.nheaders = nheaders;
			in.payload = (const unsigned char *) req.body;
			in.payload_len = req.body_len;
			in.access_key = SUITE_ACCESS_KEY;
			in.secret_key = SUITE_SECRET_KEY;
			in.region = SUITE_REGION;
			in.service = SUITE_SERVICE;
			in.amz_date = SUITE_AMZ_DATE;
			in.normalize_path = true;

			ok = sigv4_sign(&in, &out, err, sizeof(err));
			CHECK(ok);
			if (ok)
			{
				CHECK_STR(out.canonical_request.data, files[CASE_CREQ].data);
				CHECK_STR(out.string_to_sign.data, files[CASE_STS].data);
				CHECK_STR(out.authorization.data, files[CASE_AUTHZ].data);
				ran = true;
			}
			else
				printf("     sigv4_sign: %s\n", err);
			sigv4_output_free(&out);
			sfdw_free(headers);
		}
		request_free(&req);
		request_free(&sreq);
	}
	while (nread > 0)
		sfdw_free(files[--nread].data);
	if (unit_failed != failed_before)
		printf("     in case %s\n", name);
	sfdw_free(stem);
	return ran;
}

/*
 * test_aws_suite
 *		Run every case of the AWS suite found under dir.
 */
static void
test_aws_suite(const char *dir)
{
	PathList	list = {NULL, 0, 0};
	int			ran = 0;
	size_t		i;

	collect_req_files(dir, &list);
	if (list.n > 0)
		qsort(list.paths, list.n, sizeof(char *), path_cmp);
	for (i = 0; i < list.n; i++)
	{
		if (run_suite_case(list.paths[i]))
			ran++;
		sfdw_free(list.paths[i]);
	}
	if (list.paths != NULL)
		sfdw_free(list.paths);
	if (ran != SUITE_CASES)
		printf("     %d AWS suite cases ran under %s\n", ran, dir);
	CHECK(ran == SUITE_CASES);
}

/*
 * starts_with
 *		Whether str is non-NULL and opens with prefix.
 */
static bool
starts_with(const char *str, const char *prefix)
{
	return str != NULL && strncmp(str, prefix, strlen(prefix)) == 0;
}

/*
 * sign_suite_request
 *		Sign a request with the suite's credentials and time.
 *
 * A helper for the hand-written cases below; returns what sigv4_sign does.
 */
static bool
sign_suite_request(const char *method, const char *path, const char *query,
				   const SigV4Header *headers, int nheaders,
				   bool normalize_path, SigV4Output *out,
				   char *err, size_t errlen)
{
	SigV4Input	in;

	memset(&in, 0, sizeof(in));
	in.method = method;
	in.path = path;
	in.query = query;
	in.headers = headers;
	in.nheaders = nheaders;
	in.access_key = SUITE_ACCESS_KEY;
	in.secret_key = SUITE_SECRET_KEY;
	in.region = SUITE_REGION;
	in.service = SUITE_SERVICE;
	in.amz_date = SUITE_AMZ_DATE;
	in.normalize_path = normalize_path;
	return sigv4_sign(&in, out, err, errlen);
}

/*
 * test_canonical_forms
 *		Paths and queries the AWS suite does not cover.
 */
static void
test_canonical_forms(void)
{
	static const SigV4Header headers[] = {
		{"Host", "example.amazonaws.com"},
		{"X-Amz-Date", SUITE_AMZ_DATE},
	};
	SigV4Output out;
	char		err[256] = "";

	/* Dot segments, an escape sent in the path, odd query pieces. */
	CHECK(sign_suite_request("GET", "/a/./b/../c%20d/", "b=2&a=&c&a=%7e+x&",
							 headers, 2, true, &out, err, sizeof(err)));
	CHECK_STR(out.canonical_request.data,
			  "GET\n/a/c%2520d/\na=&a=~%2Bx&b=2&c=\n"
			  "host:example.amazonaws.com\nx-amz-date:" SUITE_AMZ_DATE "\n\n"
			  "host;x-amz-date\n" EMPTY_SHA256);
	sigv4_output_free(&out);

	/* Without normalization (S3) the path is signed as sent. */
	CHECK(sign_suite_request("GET", "/a//b/../c%20d", "",
							 headers, 2, false, &out, err, sizeof(err)));
	CHECK(starts_with(out.canonical_request.data, "GET\n/a//b/../c%20d\n\n"));
	sigv4_output_free(&out);

	/* An empty path is "/". */
	CHECK(sign_suite_request("GET", "", "", headers, 2, true,
							 &out, err, sizeof(err)));
	CHECK(starts_with(out.canonical_request.data, "GET\n/\n\n"));
	sigv4_output_free(&out);
}

/*
 * test_malformed_input
 *		sigv4_sign refuses what it cannot sign, says why and leaks nothing.
 */
static void
test_malformed_input(void)
{
	static const SigV4Header headers[] = {
		{"Host", "example.amazonaws.com"},
		{"X-Amz-Date", SUITE_AMZ_DATE},
	};
	static const SigV4Header bad_name[] = {
		{"Host", "example.amazonaws.com"},
		{"X Amz", "x"},
	};
	SigV4Output out;
	char		err[256];
	SigV4Input	in;

	err[0] = '\0';
	CHECK(!sign_suite_request("GET", "/", "a=%zz", headers, 2, true,
							  &out, err, sizeof(err)));
	CHECK(err[0] != '\0');
	CHECK(out.canonical_request.data == NULL &&
		  out.string_to_sign.data == NULL &&
		  out.authorization.data == NULL);
	sigv4_output_free(&out);

	err[0] = '\0';
	CHECK(!sign_suite_request("GET", "/", "a=%4", headers, 2, true,
							  &out, err, sizeof(err)));
	CHECK(err[0] != '\0');

	err[0] = '\0';
	CHECK(!sign_suite_request("GET", "/", "", headers + 1, 1, true,
							  &out, err, sizeof(err)));
	CHECK(strstr(err, "host") != NULL);

	err[0] = '\0';
	CHECK(!sign_suite_request("GET", "/", "", bad_name, 2, true,
							  &out, err, sizeof(err)));
	CHECK(err[0] != '\0');

	memset(&in, 0, sizeof(in));
	in.method = "GET";
	in.path = "/";
	in.query = "";
	in.headers = headers;
	in.nheaders = 2;
	in.access_key = SUITE_ACCESS_KEY;
	in.secret_key = SUITE_SECRET_KEY;
	in.region = SUITE_REGION;
	in.service = SUITE_SERVICE;
	in.amz_date = "2015-08-30T12:36:00Z";
	err[0] = '\0';
	CHECK(!sigv4_sign(&in, &out, err, sizeof(err)));
	CHECK(err[0] != '\0');

	in.amz_date = SUITE_AMZ_DATE;
	in.region = "us-east-1/x";
	CHECK(!sigv4_sign(&in, &out, NULL, 0));
}

/*
 * sign_dynamodb_list_tables
 *		Sign a DynamoDB ListTables call carrying session token token.
 */
static bool
sign_dynamodb_list_tables(const char *token, const unsigned char *signing_key,
						  SigV4Output *out)
{
	static const char body[] = "{}";
	SigV4Header headers[5] = {
		{"host", "dynamodb.us-east-1.amazonaws.com"},
		{"Content-Type", "application/x-amz-json-1.0"},
		{"X-Amz-Date", SUITE_AMZ_DATE},
		{"X-Amz-Target", "DynamoDB_20120810.ListTables"},
		{TOKEN_HEADER, token},
	};
	SigV4Input	in;
	char		err[256] = "";

	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.path = "/";
	in.query = "";
	in.headers = headers;
	in.nheaders = 5;
	in.payload = (const unsigned char *) body;
	in.payload_len = strlen(body);
	in.access_key = SUITE_ACCESS_KEY;
	in.secret_key = SUITE_SECRET_KEY;
	in.region = "us-east-1";
	in.service = "dynamodb";
	in.amz_date = SUITE_AMZ_DATE;
	in.normalize_path = true;
	in.signing_key = signing_key;
	return sigv4_sign(&in, out, err, sizeof(err));
}

/*
 * test_dynamodb_session_token
 *		A DynamoDB request signed with temporary credentials.
 *
 * The expected Authorization is a known answer computed once with
 * python3-botocore 1.29.27 (Debian 12): botocore.auth.SigV4Auth for
 * service "dynamodb" and region "us-east-1", credentials AKIDEXAMPLE, the
 * suite's secret and token "FQoGZXIvYXdzEXAMPLEsessiontoken1", clock fixed
 * at 2015-08-30 12:36:00 UTC, add_auth applied to an AWSRequest POST of
 * body "{}" to https://dynamodb.us-east-1.amazonaws.com/ with the headers
 * Content-Type and X-Amz-Target below (botocore adds host, X-Amz-Date and
 * X-Amz-Security-Token itself).
 */
static void
test_dynamodb_session_token(void)
{
	SigV4Output first;
	SigV4Output second;

	CHECK(sign_dynamodb_list_tables("FQoGZXIvYXdzEXAMPLEsessiontoken1", NULL,
									&first));
	CHECK_STR(first.authorization.data,
			  "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
			  "dynamodb/aws4_request, SignedHeaders=content-type;host;"
			  "x-amz-date;x-amz-security-token;x-amz-target, "
			  "Signature=d6d9d97cdb6a3089f4a67bd31a7601541c6dfbcacbedccf163369b85c1c845c6");
	CHECK(first.authorization.data != NULL &&
		  strstr(first.authorization.data, ";x-amz-security-token;") != NULL);

	CHECK(sign_dynamodb_list_tables("FQoGZXIvYXdzEXAMPLEsessiontoken2", NULL,
									&second));
	CHECK(first.authorization.data != NULL &&
		  second.authorization.data != NULL &&
		  strcmp(first.authorization.data, second.authorization.data) != 0);

	sigv4_output_free(&first);
	sigv4_output_free(&second);
}

/*
 * test_signing_key
 *		A signing key derived once signs as the one derived per request
 *		does, and a key of another day does not.
 */
static void
test_signing_key(void)
{
	unsigned char key[SIGV4_KEY_LEN];
	unsigned char other_day[SIGV4_KEY_LEN];
	SigV4Output derived;
	SigV4Output given;
	SigV4Output wrong;

	CHECK(sigv4_signing_key(SUITE_SECRET_KEY, SUITE_AMZ_DATE, "us-east-1",
							"dynamodb", key));
	CHECK(sigv4_signing_key(SUITE_SECRET_KEY, "20150831T000000Z", "us-east-1",
							"dynamodb", other_day));
	CHECK(sign_dynamodb_list_tables("token", NULL, &derived));
	CHECK(sign_dynamodb_list_tables("token", key, &given));
	CHECK(sign_dynamodb_list_tables("token", other_day, &wrong));
	CHECK_STR(given.authorization.data, derived.authorization.data);
	CHECK(strcmp(wrong.authorization.data, derived.authorization.data) != 0);
	sigv4_output_free(&derived);
	sigv4_output_free(&given);
	sigv4_output_free(&wrong);
}

/*
 * test_long_secrets
 *		HMAC keys of a block (64 bytes) and longer: "AWS4" and a secret of
 *		60, 61 and 120 characters, the longer ones hashed first (RFC 2104).
 *		The expected keys come from Python's hmac module.
 */
static void
test_long_secrets(void)
{
	static const struct
	{
		int			len;
		const char *key;
	}			cases[] = {
		{60, "540349234b6135198cbc7740c67d8a52ea5eabaf0380778c3afa8082beea8b94"},
		{61, "b9dfbb7e3ff4a7505109465fc9896862503899d0302192ce914be68b1a478909"},
		{120, "135f108a708ae702cf979432fb962a7722fcb9aa6721f914ca723dba508a102a"},
	};
	const char *secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
		"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
		"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		char		cut[128];
		unsigned char key[SIGV4_KEY_LEN];
		char		hex[2 * SIGV4_KEY_LEN + 1];

		snprintf(cut, sizeof(cut), "%.*s", cases[i].len, secret);
		CHECK(sigv4_signing_key(cut, "20150830T123600Z", "us-east-1",
								"dynamodb", key));
		for (int k = 0; k < SIGV4_KEY_LEN; k++)
			snprintf(hex + 2 * k, 3, "%02x", key[k]);
		CHECK_STR(hex, cases[i].key);
	}
}

/*
 * test_helpers
 *		sigv4_amz_date and sigv4_sha256_hex.
 */
static void
test_helpers(void)
{
	char		date[17];
	char		hex[65];

	sigv4_amz_date((time_t) 1440938160, date);
	CHECK_STR(date, SUITE_AMZ_DATE);
	sigv4_amz_date((time_t) 0, date);
	CHECK_STR(date, "19700101T000000Z");
	sigv4_amz_date((time_t) 951782400, date);
	CHECK_STR(date, "20000229T000000Z");

	sigv4_sha256_hex(NULL, 0, hex);
	CHECK_STR(hex, EMPTY_SHA256);
	sigv4_sha256_hex((const unsigned char *) "abc", 3, hex);
	CHECK_STR(hex,
			  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/*
 * suite_sigv4
 *		Every SigV4 test; the AWS suite is in unit_testdata_dir.
 */
void
suite_sigv4(void)
{
	test_aws_suite(unit_testdata_dir);
	test_canonical_forms();
	test_malformed_input();
	test_dynamodb_session_token();
	test_signing_key();
	test_long_secrets();
	test_helpers();
}
