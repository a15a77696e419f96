/*
 * handle.c
 *		mnemo_file_handle: a file as inline text or as a content-addressed
 *		reference (seed 002, "Large File Handling").
 *
 * The file is read once, into one buffer that is hashed, estimated and
 * summarised in place.  The reference is written with the one store call
 * (mnemo_file_ref_store), an upsert on (tenant, content_id): two processes
 * that miss the cache for the same bytes at once both store, the second
 * waits for the first and replaces its row with an equal one, and neither
 * sees a duplicate key.  Only the id, the name, the type, the estimate and
 * the summary are stored, never the content.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "files/files.h"
#include "store/store.h"

/* "sha256:" and 64 hex digits */
#define CONTENT_ID_LEN (7 + 2 * 32)

MNEMO_API void
mnemo_file_result_free(mnemo_file_result *r)
{
	if (r == NULL)
		return;
	free(r->inline_text);
	mnemo_file_ref_free(r->ref);
	free(r->part);
	free(r);
}

/*
 * The whole file in *data (NUL-terminated) and *len.  Opened without
 * blocking: a plain open of a FIFO waits for a writer, forever if none
 * comes, before fstat could tell that it is no regular file (O_NONBLOCK
 * changes nothing for reading a regular file).
 */
static int
read_file(mnemo_store *st, const char *path, char **data, size_t *len)
{
	int			fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE	   *f;
	struct stat sb;
	char	   *buf;
	size_t		n;

	if (fd < 0)
		return mn_fail(st, MNEMO_ERR_IO, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
	{
		close(fd);
		return mn_fail(st, MNEMO_ERR_IO, "%s is not a regular file", path);
	}
	if ((f = fdopen(fd, "rb")) == NULL)
	{
		int			err = errno;

		close(fd);
		return mn_fail(st, MNEMO_ERR_IO, "cannot open %s: %s", path, strerror(err));
	}
	if ((buf = malloc((size_t) sb.st_size + 1)) == NULL)
	{
		fclose(f);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory reading %s", path);
	}
	n = fread(buf, 1, (size_t) sb.st_size, f);
	if (ferror(f) || n != (size_t) sb.st_size)
	{
		fclose(f);
		free(buf);
		return mn_fail(st, MNEMO_ERR_IO, "cannot read %s", path);
	}
	fclose(f);
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return MNEMO_OK;
}

static bool
content_id(const char *data, size_t len, char id[CONTENT_ID_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char hex[] = "0123456789abcdef";

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		return false;
	memcpy(id, "sha256:", 7);
	for (unsigned int i = 0; i < mdlen; i++)
	{
		id[7 + 2 * i] = hex[md[i] >> 4];
		id[8 + 2 * i] = hex[md[i] & 15];
	}
	id[CONTENT_ID_LEN] = '\0';
	return true;
}

/* The part to append, as JSON text, in r->part. */
static int
make_part(mnemo_store *st, mnemo_file_result *r, const char *path)
{
	json_object *o = json_object_new_object();
	const char *s;
	bool		good = o != NULL;

	if (good && r->ref == NULL)
		good = json_object_object_add(o, "type", json_object_new_string("text")) == 0 &&
			json_object_object_add(o, "text", json_object_new_string(r->inline_text)) == 0;
	else if (good)
		good = json_object_object_add(o, "type", json_object_new_string("file_ref")) == 0 &&
			json_object_object_add(o, "content_id",
								   json_object_new_string(r->ref->content_id)) == 0 &&
			json_object_object_add(o, "path", json_object_new_string(path)) == 0 &&
			json_object_object_add(o, "file_type",
								   json_object_new_string(r->ref->file_type)) == 0 &&
			json_object_object_add(o, "token_count",
								   json_object_new_int(r->ref->token_count)) == 0 &&
			json_object_object_add(o, "summary",
								   json_object_new_string(r->ref->exploration_summary)) == 0;
	s = good ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
	if (s != NULL)
		r->part = strdup(s);
	json_object_put(o);
	if (r->part == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

int
mn_file_reference(mnemo_store *st, const char *path, const char *data, size_t len,
				  int token_count, mnemo_file_ref **ref, bool *cached)
{
	char		id[CONTENT_ID_LEN + 1];
	mnemo_new_file_ref spec = MNEMO_NEW_FILE_REF_INIT;
	mn_buf		summary = {0};
	int			rc;

	if (!content_id(data, len, id))
		return mn_fail(st, MNEMO_ERR_NOMEM, "sha256 of %s failed", path);
	if ((rc = mnemo_file_ref_get(st, id, ref)) != MNEMO_OK || *ref != NULL)
	{
		*cached = *ref != NULL;
		return rc;
	}
	*cached = false;
	spec.content_id = id;
	spec.path = path;
	spec.file_type = mn_file_type(path);
	spec.token_count = token_count;
	mn_explore(spec.file_type, data, len, &summary);
	if (summary.oom)
	{
		mn_buf_free(&summary);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	spec.exploration_summary = summary.data ? summary.data : "";
	rc = mnemo_file_ref_store(st, &spec, ref);
	mn_buf_free(&summary);
	return rc;
}

MNEMO_API int
mnemo_file_handle(mnemo_store *st, const char *path, const mnemo_file_options *opts,
				  mnemo_file_result **out)
{
	int			threshold = opts != NULL && opts->inline_threshold > 0 ?
		opts->inline_threshold : MN_FILE_INLINE_THRESHOLD;
	mnemo_file_result *r;
	char	   *data = NULL;
	size_t		len = 0;
	int			rc;

	if ((rc = mn_begin(st, path != NULL && path[0] != '\0' && out != NULL,
					   "a path and out are required")) != MNEMO_OK)
		return rc;
	if ((rc = read_file(st, path, &data, &len)) != MNEMO_OK)
		return rc;
	/* PostgreSQL's text holds neither a NUL byte nor anything but UTF-8 */
	if (memchr(data, '\0', len) != NULL || !mn_utf8_valid(data, len))
	{
		bool		nul = memchr(data, '\0', len) != NULL;

		free(data);
		return mn_fail(st, MNEMO_ERR_BINARY_FILE, "%s is a binary file (%s): refused", path,
					   nul ? "it holds NUL bytes" : "not UTF-8");
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
	{
		free(data);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	r->token_count = mnemo_estimate_tokens(data);
	if (r->token_count < threshold)
	{
		r->inline_text = data;
		data = NULL;
		rc = MNEMO_OK;
	}
	else
		rc = mn_file_reference(st, path, data, len, r->token_count, &r->ref, &r->cached);
	free(data);
	if (rc == MNEMO_OK)
		rc = make_part(st, r, path);
	if (rc != MNEMO_OK)
	{
		mnemo_file_result_free(r);
		return rc;
	}
	*out = r;
	return MNEMO_OK;
}
