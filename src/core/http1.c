/*-------------------------------------------------------------------------
 *
 * http1.c
 *		HTTP/1.1 framing of a client: POST requests written byte for byte,
 *		responses parsed from the bytes as they arrive.
 *
 * The parser is a state machine (Http1State) over the bytes fed.  Lines
 * (the status line, header lines, chunk sizes, trailers) are found with
 * memchr and read where they lie in the bytes fed; only a line cut by the
 * end of a feed is gathered in the response's line buffer.  Body bytes go
 * from the bytes fed to the body in one buf_append a run, the room for a
 * Content-Length or a chunk reserved before its bytes come.
 *
 * Every check that ends a parse is made at a point that does not depend
 * on where the bytes were cut: a line is judged once it is whole, and a
 * limit on a line's length as soon as the bytes held of it exceed the
 * limit, which the whole line then does as well.  The one line judged
 * before it is whole is the status line: a peer that does not speak HTTP
 * seldom ends a line, so once more than SHOW_LEN + 1 bytes of it are held
 * (more than SHOW_LEN of them its text, whatever line end follows) and
 * they do not begin "HTTP/1.x ", the parse fails with the reason it would
 * give on the whole line, showing the same bytes.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/ddbjson.h"
#include "core/http1.h"

/* How many bytes of an offending text a reason shows. */
#define SHOW_LEN 40

/* Room for SHOW_LEN bytes each escaped as \xNN, "..." and the NUL. */
#define SHOWN_SIZE (SHOW_LEN * 4 + 4)

/* The most hex digits of a chunk size: any more could overflow. */
#define CHUNK_SIZE_DIGITS 16

/* RFC 9110's token characters, of which header names are made. */
static const bool token_char[256] = {
	['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true,
	['\''] = true, ['*'] = true, ['+'] = true, ['-'] = true, ['.'] = true,
	['^'] = true, ['_'] = true, ['`'] = true, ['|'] = true, ['~'] = true,
	['0' ... '9'] = true,
	['A' ... 'Z'] = true,
	['a' ... 'z'] = true,
};

/* True when c is an ASCII digit (isdigit would depend on the locale). */
static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* True when c is a blank of HTTP: a space or a tab. */
static inline bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Write at most SHOW_LEN bytes of text into shown (SHOWN_SIZE bytes) for
 * a reason, escaped by ddb_append_printable, with "..." after them when
 * the text is longer.
 */
static void
show(char *shown, const char *text, size_t len)
{
	Buf			b;

	buf_init(&b);
	ddb_append_printable(&b, text, len > SHOW_LEN ? SHOW_LEN : len);
	if (len > SHOW_LEN)
		buf_puts(&b, "...");
	memcpy(shown, b.data, b.len + 1);
	sfdw_free(b.data);
}

/* Strip blanks from both ends of the len bytes at *s. */
static void
trim(const char **s, size_t *len)
{
	while (*len > 0 && is_blank(**s))
	{
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && is_blank((*s)[*len - 1]))
		(*len)--;
}

/*
 * Take the next element of a comma-separated list ending at end, blanks
 * trimmed, into *elem and *elemlen, and move *s past it and its comma
 * (to NULL after the last).  Returns false when no element is left.  An
 * empty list has one empty element, and so has every place between two
 * commas.
 */
static bool
next_element(const char **s, const char *end, const char **elem,
			 size_t *elemlen)
{
	const char *comma;

	if (*s == NULL)
		return false;
	comma = memchr(*s, ',', end - *s);
	*elem = *s;
	*elemlen = (comma != NULL ? comma : end) - *s;
	trim(elem, elemlen);
	*s = comma != NULL ? comma + 1 : NULL;
	return true;
}

/*
 * Are the len bytes of s the lower-case name lower, the ASCII letters of
 * s taken in any case?  (strncasecmp would depend on the locale.)
 */
static bool
same_name(const char *s, size_t len, const char *lower)
{
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (lower[i] == '\0' || c != (unsigned char) lower[i])
			return false;
	}
	return lower[len] == '\0';
}

/* See http1.h. */
bool
http1_write_request(Buf *out, const char *path,
					const SigV4Header *hdrs, int nhdrs,
					const char *body, size_t body_len,
					char *err, size_t errlen)
{
	char		shown[SHOWN_SIZE];
	size_t		pathlen = strlen(path);
	size_t		size;

	if (path[0] != '/')
	{
		show(shown, path, pathlen);
		sfdw_set_error(err, errlen, "the request path \"%s\" does not start with '/'",
					   shown);
		return false;
	}
	for (size_t i = 0; i < pathlen; i++)
		if ((unsigned char) path[i] <= ' ' || path[i] == 0x7F)
		{
			show(shown, path, pathlen);
			sfdw_set_error(err, errlen,
						   "the request path \"%s\" holds a control character or a space",
						   shown);
			return false;
		}

	/*
	 * Check every header before writing, so that out is left as it was,
	 * and add up the request's size: the fixed bytes of the request line
	 * and of the Content-Length line (the widest length), the path, the
	 * body, and each header line written.
	 */
	size = sizeof("POST  HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n") +
		pathlen + body_len;
	for (int i = 0; i < nhdrs; i++)
	{
		const char *name = hdrs[i].name;
		size_t		namelen = strlen(name);

		if (namelen == 0)
		{
			sfdw_set_error(err, errlen, "a request header name is empty");
			return false;
		}
		for (size_t k = 0; k < namelen; k++)
			if (!token_char[(unsigned char) name[k]])
			{
				show(shown, name, namelen);
				sfdw_set_error(err, errlen,
							   "the request header name \"%s\" holds a character that is not a token character",
							   shown);
				return false;
			}
		if (hdrs[i].value[strcspn(hdrs[i].value, "\r\n")] != '\0')
		{
			show(shown, name, namelen);
			sfdw_set_error(err, errlen,
						   "the value of request header \"%s\" holds a CR or an LF",
						   shown);
			return false;
		}
		size += namelen + strlen(hdrs[i].value) + 4;
	}

	buf_reserve(out, size);
	buf_puts(out, "POST ");
	buf_append(out, path, pathlen);
	buf_puts(out, " HTTP/1.1\r\n");
	for (int i = 0; i < nhdrs; i++)
	{
		if (hdrs[i].value[0] == '\0')
			continue;
		buf_puts(out, hdrs[i].name);
		buf_puts(out, ": ");
		buf_puts(out, hdrs[i].value);
		buf_puts(out, "\r\n");
	}
	buf_printf(out, "Content-Length: %zu\r\n\r\n", body_len);
	if (body_len > 0)
		buf_append(out, body, body_len);
	return true;
}

/* See http1.h. */
char *
http1_url_host(const char *url)
{
	const char *start = strstr(url, "://");

	start = start ? start + 3 : url;
	return sfdw_strndup(start, strcspn(start, "/"));
}

/* The number at s, two digits, when it is at most max; else -1. */
static int
two_digits(const char *s, int max)
{
	int			v;

	if (!is_digit(s[0]) || !is_digit(s[1]))
		return -1;
	v = (s[0] - '0') * 10 + (s[1] - '0');
	return v <= max ? v : -1;
}

/* The index of the three letters at s in names (three letters each), or -1. */
static int
name_index(const char *s, const char *names)
{
	for (int i = 0; names[i * 3] != '\0'; i++)
		if (memcmp(s, names + i * 3, 3) == 0)
			return i;
	return -1;
}

/* See http1.h. */
bool
http1_parse_date(const char *s, int64_t *epoch)
{
	/* the days of the year before each month's first, in a common year */
	static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
	int			month, day, hour, minute, second, century, decade, year;
	bool		leap;
	int64_t		days;

	/* "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, each field in its place */
	if (strlen(s) != 29 || memcmp(s + 3, ", ", 2) != 0 || s[7] != ' ' || s[11] != ' ' ||
		s[16] != ' ' || s[19] != ':' || s[22] != ':' || strcmp(s + 25, " GMT") != 0 ||
		name_index(s, "MonTueWedThuFriSatSun") < 0)
		return false;
	month = name_index(s + 8, "JanFebMarAprMayJunJulAugSepOctNovDec");
	day = two_digits(s + 5, 31);
	century = two_digits(s + 12, 99);
	decade = two_digits(s + 14, 99);
	hour = two_digits(s + 17, 23);
	minute = two_digits(s + 20, 59);
	second = two_digits(s + 23, 60);
	if (month < 0 || day < 1 || century < 0 || decade < 0 || hour < 0 || minute < 0 ||
		second < 0)
		return false;
	year = century * 100 + decade;
	if (year < 1970)
		return false;
	leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	/* days since 1970-01-01: 477 leap years come before 1970 */
	days = (int64_t) (year - 1970) * 365 +
		((year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 - 477) +
		before[month] + (month > 1 && leap) + day - 1;
	*epoch = days * 86400 + hour * 3600 + minute * 60 + second;
	return true;
}

/* See http1.h. */
void
http1_response_init(Http1Response *r, size_t max_body, SfdwArena *arena)
{
	memset(r, 0, sizeof(Http1Response));
	r->arena = arena;
	buf_init_in(&r->body, arena);
	r->max_body = max_body;
	r->state = HTTP1_STATUS_LINE;
}

/* See http1.h. */
void
http1_response_reset(Http1Response *r)
{
	Buf			body = r->body;
	Buf			line = r->line;
	size_t		max_body = r->max_body;
	SfdwArena  *arena = r->arena;

	memset(r, 0, sizeof(Http1Response));
	r->body = body;
	r->line = line;
	buf_reset(&r->body);
	if (r->line.data != NULL)
		buf_reset(&r->line);
	r->max_body = max_body;
	r->arena = arena;
	r->state = HTTP1_STATUS_LINE;
}

/* See http1.h. */
void
http1_response_free(Http1Response *r)
{
	sfdw_free(r->body.data);
	sfdw_free(r->line.data);
	memset(&r->body, 0, sizeof(Buf));
	memset(&r->line, 0, sizeof(Buf));
}

/*
 * Record why the response is refused and end its parse; returns false for
 * convenience.
 */
static bool fail(Http1Response *r, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

static bool
fail(Http1Response *r, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	r->state = HTTP1_FAILED;
	r->keep_alive = false;
	return false;
}

/*
 * Refuse the response with message fmt, whose one %s shows the len bytes
 * at text (see show).
 */
static bool
fail_showing(Http1Response *r, const char *fmt, const char *text, size_t len)
{
	char		shown[SHOWN_SIZE];

	show(shown, text, len);
	return fail(r, fmt, shown);
}

/* Refuse the response for a body larger than max_body. */
static bool
fail_larger(Http1Response *r)
{
	return fail(r, "the response body is larger than %zu bytes", r->max_body);
}

/*
 * Take the next line from the bytes fed, data[*pos] to data[n - 1], joined
 * to its start held from earlier feeds.  When its LF is there, returns
 * true with the line in *line and *len without its line end (CR LF or LF)
 * and in *size with it; *pos moves past the line.  Otherwise holds the
 * rest of data, moves *pos to n and returns false, with *line, *len and
 * *size the bytes held so far.  A line is valid until the next call.
 */
static bool
take_line(Http1Response *r, const char *data, size_t n, size_t *pos,
		  const char **line, size_t *len, size_t *size)
{
	const char *start = data + *pos;
	size_t		avail = n - *pos;
	const char *lf = memchr(start, '\n', avail);
	size_t		take = lf != NULL ? (size_t) (lf - start) + 1 : avail;

	if (r->line_whole)
	{
		buf_reset(&r->line);
		r->line_whole = false;
	}
	*pos += take;
	if (lf != NULL && r->line.len == 0)
	{
		*line = start;
		*size = take;
	}
	else
	{
		if (r->line.data == NULL)
			buf_init_in(&r->line, r->arena);
		buf_append(&r->line, start, take);
		*line = r->line.data;
		*size = r->line.len;
		r->line_whole = lf != NULL;
	}
	*len = *size;
	if (lf == NULL)
		return false;
	(*len)--;
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*len)--;
	return true;
}

/* Refuse a whole line (its line end stripped) that holds a CR or a NUL. */
static bool
line_clean(Http1Response *r, const char *line, size_t len)
{
	if (memchr(line, '\r', len) != NULL)
		return fail_showing(r, "a line holds a bare CR: \"%s\"", line, len);
	if (memchr(line, '\0', len) != NULL)
		return fail_showing(r, "a line holds a NUL byte: \"%s\"", line, len);
	return true;
}

/* Does a status line begin "HTTP/1.0 " or "HTTP/1.1 "? */
static bool
http1_start(const char *line, size_t len)
{
	return len >= 9 && memcmp(line, "HTTP/1.", 7) == 0 &&
		(line[7] == '0' || line[7] == '1') && line[8] == ' ';
}

/*
 * Read a whole status line whose start http1_start accepted:
 * "HTTP/1.x NNN", then nothing or a space and the reason phrase.
 */
static bool
status_line(Http1Response *r, const char *line, size_t len)
{
	int			status;

	if (!line_clean(r, line, len))
		return false;
	if (len < 12 || line[9] < '1' || line[9] > '9' || !is_digit(line[10]) ||
		!is_digit(line[11]) || (len > 12 && line[12] != ' '))
		return fail_showing(r, "the status line is not HTTP/1.x: \"%s\"", line, len);
	status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
	if (status == 101)
		return fail(r, "the server switched protocols (status 101) unasked");
	r->minor = line[7] - '0';
	r->interim = status < 200;
	if (!r->interim)
		r->status = status;
	r->state = HTTP1_HEADERS;
	return true;
}

/* Read the value of a Content-Length header: one or more equal numbers. */
static bool
content_length(Http1Response *r, const char *value, size_t len)
{
	const char *cur = value;
	const char *elem;
	size_t		elemlen;

	while (next_element(&cur, value + len, &elem, &elemlen))
	{
		size_t		length = 0;
		size_t		digits = 0;

		while (digits < elemlen && is_digit(elem[digits]))
			digits++;
		if (elemlen == 0 || digits < elemlen)
			return fail_showing(r, "Content-Length \"%s\" is not a number", value, len);
		for (size_t i = 0; i < elemlen; i++)
		{
			size_t		d = elem[i] - '0';

			if (length > (SIZE_MAX - d) / 10)
				return fail_larger(r);
			length = length * 10 + d;
		}
		if (r->has_length && length != r->length)
			return fail(r, "Content-Length %zu disagrees with Content-Length %zu",
						length, r->length);
		r->has_length = true;
		r->length = length;
	}
	return true;
}

/* Read the value of a Transfer-Encoding header: chunked, and once. */
static bool
transfer_encoding(Http1Response *r, const char *value, size_t len)
{
	if (r->chunked)
		return fail(r, "Transfer-Encoding chunked comes twice");
	if (!same_name(value, len, "chunked"))
		return fail_showing(r, "unsupported transfer coding \"%s\"", value, len);
	r->chunked = true;
	return true;
}

/* Read the value of a Connection header: its close and keep-alive. */
static void
connection(Http1Response *r, const char *value, size_t len)
{
	const char *cur = value;
	const char *elem;
	size_t		elemlen;

	while (next_element(&cur, value + len, &elem, &elemlen))
	{
		if (same_name(elem, elemlen, "close"))
			r->conn_close = true;
		else if (same_name(elem, elemlen, "keep-alive"))
			r->conn_keep_alive = true;
	}
}

/*
 * Take in a header of the final response: name (namelen bytes) and its
 * value, blanks trimmed.  The headers read are told apart by their
 * lengths, which all differ.
 */
static bool
header_field(Http1Response *r, const char *name, size_t namelen,
			 const char *value, size_t len)
{
	size_t		n = 0;

	switch (namelen)
	{
		case 4:
			if (same_name(name, namelen, "date") && len < sizeof(r->date))
			{
				memcpy(r->date, value, len);
				r->date[len] = '\0';
			}
			break;
		case 10:
			if (same_name(name, namelen, "connection"))
				connection(r, value, len);
			break;
		case 11:
			if (same_name(name, namelen, "x-amz-crc32"))
			{
				while (n < len && n < sizeof(r->crc) - 1 && is_digit(value[n]))
					n++;
				memcpy(r->crc, value, n);
				r->crc[n] = '\0';
			}
			break;
		case 12:
			if (same_name(name, namelen, "content-type"))
			{
				const char *semicolon = memchr(value, ';', len);

				n = semicolon != NULL ? (size_t) (semicolon - value) : len;
				trim(&value, &n);
				if (n > sizeof(r->content_type) - 1)
					n = sizeof(r->content_type) - 1;
				memcpy(r->content_type, value, n);
				r->content_type[n] = '\0';
			}
			break;
		case 14:
			if (same_name(name, namelen, "content-length"))
				return content_length(r, value, len);
			break;
		case 16:
			if (same_name(name, namelen, "x-amzn-requestid"))
				r->request_id = true;
			break;
		case 17:
			if (same_name(name, namelen, "transfer-encoding"))
				return transfer_encoding(r, value, len);
			break;
	}
	return true;
}

/*
 * Read a whole header or trailer line, not empty: "name: value", the name
 * a token right before the colon.  Only the final response's headers are
 * taken in; those of an interim response and the trailers are checked
 * and dropped.
 */
static bool
header_line(Http1Response *r, const char *line, size_t len)
{
	const char *colon;
	const char *value;
	size_t		namelen;
	size_t		valuelen;

	if (!line_clean(r, line, len))
		return false;
	if (is_blank(line[0]))
		return fail_showing(r, "a header line is folded (begins with a blank): \"%s\"",
							line, len);
	colon = memchr(line, ':', len);
	if (colon == NULL)
		return fail_showing(r, "a header line has no colon: \"%s\"", line, len);
	namelen = colon - line;
	if (namelen == 0)
		return fail_showing(r, "a header line has no name: \"%s\"", line, len);
	if (is_blank(line[namelen - 1]))
		return fail_showing(r, "a header name is followed by a blank: \"%s\"", line, len);
	for (size_t i = 0; i < namelen; i++)
		if (!token_char[(unsigned char) line[i]])
			return fail_showing(r, "a header name is not a token: \"%s\"", line, len);
	if (r->interim || r->state == HTTP1_TRAILERS)
		return true;
	value = colon + 1;
	valuelen = len - namelen - 1;
	trim(&value, &valuelen);
	return header_field(r, line, namelen, value, valuelen);
}

/*
 * The empty line that ends a header section: after an interim response
 * the next status line comes; after the final one the body, framed as
 * its headers say; after the trailers the response is whole.
 */
static bool
end_of_section(Http1Response *r)
{
	if (r->state == HTTP1_TRAILERS)
	{
		r->state = HTTP1_FINISHED;
		return true;
	}
	if (r->interim)
	{
		r->state = HTTP1_STATUS_LINE;
		r->section = 0;
		return true;
	}
	if (r->chunked && r->has_length)
		return fail(r, "the response has both Transfer-Encoding and Content-Length");
	if (r->chunked && r->minor == 0)
		return fail(r, "an HTTP/1.0 response has Transfer-Encoding");
	r->keep_alive = !r->conn_close && (r->minor == 1 || r->conn_keep_alive);
	if (r->status == 204 || r->status == 304)
		r->state = HTTP1_FINISHED;
	else if (r->chunked)
		r->state = HTTP1_CHUNK_SIZE;
	else if (r->has_length)
	{
		if (r->length > r->max_body)
			return fail_larger(r);
		buf_reserve(&r->body, r->length);
		r->remaining = r->length;
		r->state = r->length > 0 ? HTTP1_BODY_LENGTH : HTTP1_FINISHED;
	}
	else
	{
		r->keep_alive = false;
		r->state = HTTP1_BODY_TO_CLOSE;
	}
	return true;
}

/*
 * Read a whole chunk-size line: hex digits, then blanks and
 * ";extensions" if any, which are ignored.
 */
static bool
chunk_size_line(Http1Response *r, const char *line, size_t len)
{
	char		shown[SHOWN_SIZE];
	uint64_t	size = 0;
	size_t		digits = 0;
	size_t		i;
	int			d;

	if (!line_clean(r, line, len))
		return false;
	while (digits < len && (d = hex_digit_value(line[digits])) >= 0)
	{
		if (digits == CHUNK_SIZE_DIGITS)
		{
			show(shown, line, len);
			return fail(r, "chunk size \"%s\" has more than %d hex digits",
						shown, CHUNK_SIZE_DIGITS);
		}
		size = size * 16 + d;
		digits++;
	}
	i = digits;
	while (i < len && is_blank(line[i]))
		i++;
	if (digits == 0 || (i < len && line[i] != ';'))
		return fail_showing(r, "chunk size \"%s\" is not hexadecimal", line, len);
	if (size > r->max_body - r->body.len)
		return fail_larger(r);
	if (size == 0)
	{
		r->state = HTTP1_TRAILERS;
		return true;
	}
	buf_reserve(&r->body, size);
	r->remaining = size;
	r->state = HTTP1_CHUNK_DATA;
	return true;
}

/*
 * Read from the bytes fed toward the next whole line (status, header,
 * chunk size or trailer) and take it in once whole.
 */
static bool
read_line(Http1Response *r, const char *data, size_t n, size_t *pos)
{
	const char *line;
	size_t		len;
	size_t		size;
	bool		whole = take_line(r, data, n, pos, &line, &len, &size);

	if (r->state == HTTP1_CHUNK_SIZE)
	{
		if (size > HTTP1_MAX_CHUNK_LINE)
			return fail(r, "a chunk-size line is longer than %d bytes",
						HTTP1_MAX_CHUNK_LINE);
		return !whole || chunk_size_line(r, line, len);
	}
	if (r->state == HTTP1_STATUS_LINE && (whole || len > SHOW_LEN + 1) &&
		!http1_start(line, len))
		return fail_showing(r, "the status line is not HTTP/1.x: \"%s\"", line, len);
	if (r->section + size > HTTP1_MAX_HEADER_SECTION)
		return fail(r, "the header section is longer than %d bytes",
					HTTP1_MAX_HEADER_SECTION);
	if (!whole)
		return true;
	r->section += size;
	if (r->state == HTTP1_STATUS_LINE)
		return status_line(r, line, len);
	if (len == 0)
		return end_of_section(r);
	return header_line(r, line, len);
}

/* Read the line end after a chunk's data: CR LF or LF, one byte a call. */
static bool
read_chunk_end(Http1Response *r, char c)
{
	if (c == '\r' && !r->chunk_cr)
		r->chunk_cr = true;
	else if (c == '\n')
		r->state = HTTP1_CHUNK_SIZE;
	else
		return fail(r, "the chunk data is not followed by CRLF");
	return true;
}

/* The result a response's state stands for, its reason into err. */
static Http1Result
result(const Http1Response *r, char *err, size_t errlen)
{
	if (r->state == HTTP1_FAILED)
	{
		sfdw_set_error(err, errlen, "%s", r->error);
		return HTTP1_ERROR;
	}
	return r->state == HTTP1_FINISHED ? HTTP1_DONE : HTTP1_MORE;
}

/* See http1.h. */
Http1Result
http1_response_feed(Http1Response *r, const char *data, size_t n,
					size_t *used, char *err, size_t errlen)
{
	size_t		pos = 0;
	size_t		take;

	*used = 0;
	if (r->state == HTTP1_FINISHED || r->state == HTTP1_FAILED)
		return result(r, err, errlen);
	while (pos < n && r->state != HTTP1_FINISHED && r->state != HTTP1_FAILED)
	{
		switch (r->state)
		{
			case HTTP1_STATUS_LINE:
			case HTTP1_HEADERS:
			case HTTP1_CHUNK_SIZE:
			case HTTP1_TRAILERS:
				read_line(r, data, n, &pos);
				break;
			case HTTP1_BODY_LENGTH:
			case HTTP1_CHUNK_DATA:
				take = n - pos < r->remaining ? n - pos : r->remaining;
				buf_append(&r->body, data + pos, take);
				pos += take;
				r->remaining -= take;
				if (r->remaining == 0 && r->state == HTTP1_CHUNK_DATA)
				{
					r->state = HTTP1_CHUNK_END;
					r->chunk_cr = false;
				}
				else if (r->remaining == 0)
					r->state = HTTP1_FINISHED;
				break;
			case HTTP1_CHUNK_END:
				if (read_chunk_end(r, data[pos]))
					pos++;
				break;
			case HTTP1_BODY_TO_CLOSE:
				take = r->max_body - r->body.len;
				if (take > n - pos)
					take = n - pos;
				buf_append(&r->body, data + pos, take);
				pos += take;
				if (pos < n)
					fail_larger(r);
				break;
			case HTTP1_FINISHED:
			case HTTP1_FAILED:
				break;
		}
	}
	r->received += pos;
	if (r->state == HTTP1_FINISHED)
		*used = pos;
	else if (r->state != HTTP1_FAILED)
		*used = n;
	return result(r, err, errlen);
}

/* See http1.h. */
Http1Result
http1_response_eof(Http1Response *r, char *err, size_t errlen)
{
	if (r->state == HTTP1_BODY_TO_CLOSE)
		r->state = HTTP1_FINISHED;
	else if (r->state != HTTP1_FINISHED && r->state != HTTP1_FAILED)
	{
		if (r->received == 0)
			fail(r, "the connection closed before any answer");
		else
			fail(r, "the connection closed after %zu bytes, before the answer was complete",
				 r->received);
	}
	return result(r, err, errlen);
}

/* ---------------------------------------------------------------------
 * Exchanges on kept-alive connections
 * ---------------------------------------------------------------------
 */

/* See http1.h. */
void
http1_exchange_init(Http1Exchange *x, const char *out, size_t out_len,
					size_t max_body, SfdwArena *arena)
{
	memset(x, 0, sizeof(Http1Exchange));
	x->out = out;
	x->out_len = out_len;
	http1_response_init(&x->answer, max_body, arena);
}

/* See http1.h. */
void
http1_exchange_free(Http1Exchange *x)
{
	http1_response_free(&x->answer);
}

/* See http1.h. */
void
http1_exchange_on(Http1Exchange *x, bool reused)
{
	x->reused = reused;
	x->sent = 0;
}

/* See http1.h. */
void
http1_exchange_sent(Http1Exchange *x, size_t n)
{
	x->sent += n;
}

/*
 * End the exchange as failed (how, why), noting whether the whole request
 * had gone out on the connection that failed.
 */
static Http1Next
exchange_fail(Http1Exchange *x, Http1Failure failure, const char *reason)
{
	x->reached |= x->sent == x->out_len;
	x->done = true;
	x->failure = failure;
	sfdw_set_error(x->reason, sizeof(x->reason), "%s", reason);
	return HTTP1_BROKEN;
}

/*
 * The connection failed before the answer was whole: resend on a new one
 * when it was a kept-alive connection the server may have closed while it
 * was idle, the first time, and before any byte of the answer; else fail.
 */
static Http1Next
exchange_lost(Http1Exchange *x, Http1Failure failure, const char *reason)
{
	if (!x->reused || x->resent || x->answer.received > 0)
		return exchange_fail(x, failure, reason);
	x->reached |= x->sent == x->out_len;
	x->resent = true;
	x->reused = false;
	x->sent = 0;
	http1_response_reset(&x->answer);
	return HTTP1_RESEND;
}

/* See http1.h. */
Http1Next
http1_exchange_received(Http1Exchange *x, const char *data, size_t n)
{
	char		err[SFDW_ERRLEN];
	size_t		used;
	Http1Result r;

	if (x->done)
		return x->failure == HTTP1_FAIL_NONE ? HTTP1_ANSWERED : HTTP1_BROKEN;
	r = http1_response_feed(&x->answer, data, n, &used, err, sizeof(err));
	if (r == HTTP1_ERROR)
		return exchange_fail(x, HTTP1_FAIL_MALFORMED, err);
	if (r == HTTP1_MORE)
		return HTTP1_WAIT;
	/* bytes past the answer were never asked for */
	x->reusable = x->answer.keep_alive && used == n;
	x->done = true;
	return HTTP1_ANSWERED;
}

/* See http1.h. */
Http1Next
http1_exchange_closed(Http1Exchange *x)
{
	char		err[SFDW_ERRLEN];

	if (x->done)
		return x->failure == HTTP1_FAIL_NONE ? HTTP1_ANSWERED : HTTP1_BROKEN;
	if (http1_response_eof(&x->answer, err, sizeof(err)) == HTTP1_DONE)
	{
		x->reusable = false;
		x->done = true;
		return HTTP1_ANSWERED;
	}
	return exchange_lost(x, x->answer.received == 0 ? HTTP1_FAIL_NOTHING : HTTP1_FAIL_PARTIAL,
						 err);
}

/* See http1.h. */
Http1Next
http1_exchange_broken(Http1Exchange *x, const char *reason)
{
	if (x->done)
		return x->failure == HTTP1_FAIL_NONE ? HTTP1_ANSWERED : HTTP1_BROKEN;
	return exchange_lost(x, HTTP1_FAIL_IO, reason);
}

/* See http1.h. */
void
http1_exchange_abandon(Http1Exchange *x, const char *reason)
{
	if (!x->done)
		exchange_fail(x, HTTP1_FAIL_IO, reason);
}
