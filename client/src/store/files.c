/*
 * files.c
 *		File references: the content-addressed cache of large files.
 *
 * A reference is keyed by the sha256 of the content; storing one again
 * replaces it.  The lookups return *out = NULL, not an error, when there is
 * no such file: a cache miss is the expected answer, not a failure.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define FILE_COLUMNS "content_id, path, file_type, token_count, exploration_summary, created_at"

static const mn_stmt store_stmt = {
	"mnemo_file_ref_store",
	"SELECT " FILE_COLUMNS " FROM mnemo.store_file_reference($1::text, $2::text, "
	"$3::text, $4::integer, $5::text)",
	5
};

static const mn_stmt get_stmt = {
	"mnemo_file_ref_get",
	"SELECT " FILE_COLUMNS " FROM mnemo.get_file_reference($1::text)",
	1
};

static const mn_stmt get_by_path_stmt = {
	"mnemo_file_ref_get_by_path",
	"SELECT " FILE_COLUMNS " FROM mnemo.get_file_reference_by_path($1::text)",
	1
};

static void
file_ref_clear(mnemo_file_ref *f)
{
	free(f->content_id);
	free(f->path);
	free(f->file_type);
	free(f->exploration_summary);
	memset(f, 0, sizeof(*f));
}

MNEMO_API void
mnemo_file_ref_free(mnemo_file_ref *f)
{
	if (f == NULL)
		return;
	file_ref_clear(f);
	free(f);
}

static int
file_ref_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_file_ref *f = item;

	if (!mn_str_into(res, row, mn_col(res, "content_id"), &f->content_id) ||
		!mn_str_into(res, row, mn_col(res, "path"), &f->path) ||
		!mn_str_into(res, row, mn_col(res, "file_type"), &f->file_type) ||
		!mn_str_into(res, row, mn_col(res, "exploration_summary"), &f->exploration_summary))
	{
		file_ref_clear(f);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	f->token_count = (int) mn_get_i64(res, row, mn_col(res, "token_count"));
	f->created_at = mn_get_i64(res, row, mn_col(res, "created_at"));
	return MNEMO_OK;
}

/*
 * The single row of res as a new file reference, or *out = NULL for a row
 * of NULLs (no such file); res is cleared.
 */
static int
file_ref_result(mnemo_store *st, PGresult *res, mnemo_file_ref **out)
{
	void	   *f;
	int			rc;

	rc = mn_row_new(st, res, "file reference", "content_id", sizeof(mnemo_file_ref),
					file_ref_from_row, &f);
	if (rc == MNEMO_OK)
		*out = f;
	return rc;
}

MNEMO_API int
mnemo_file_ref_store(mnemo_store *st, const mnemo_new_file_ref *f, mnemo_file_ref **out)
{
	char		token_count[24];
	const char *params[5];
	PGresult   *res;
	mnemo_file_ref *stored = NULL;
	int			rc;

	if ((rc = mn_begin(st, f != NULL && f->content_id != NULL && f->path != NULL,
					   "content id and path are required")) != MNEMO_OK)
		return rc;
	params[0] = f->content_id;
	params[1] = f->path;
	params[2] = f->file_type;	/* NULL: the server's "unknown" */
	params[3] = mn_i64_param(token_count, f->token_count);
	params[4] = f->exploration_summary;	/* NULL: "" */
	res = mn_exec(st, &store_stmt, params);
	if (res == NULL)
		return st->errcode;
	if (out == NULL)
	{
		PQclear(res);
		return MNEMO_OK;
	}
	rc = file_ref_result(st, res, &stored);
	if (rc != MNEMO_OK)
		return rc;
	if (stored == NULL)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "store_file_reference returned no row");
	*out = stored;
	return MNEMO_OK;
}

static int
get_with(mnemo_store *st, const mn_stmt *stmt, const char *key, mnemo_file_ref **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, key != NULL && out != NULL,
					   "the key and out are required")) != MNEMO_OK)
		return rc;
	params[0] = key;
	return file_ref_result(st, mn_exec(st, stmt, params), out);
}

MNEMO_API int
mnemo_file_ref_get(mnemo_store *st, const char *content_id, mnemo_file_ref **out)
{
	return get_with(st, &get_stmt, content_id, out);
}

MNEMO_API int
mnemo_file_ref_get_by_path(mnemo_store *st, const char *path, mnemo_file_ref **out)
{
	return get_with(st, &get_by_path_stmt, path, out);
}
