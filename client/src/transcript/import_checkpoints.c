/*
 * import_checkpoints.c
 *		The checkpoints of a transcript: gathered as the reader meets them,
 *		each at the seq of the messages pushed before it, and restored in
 *		one statement after the last batch.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

/* The checkpoints of a transcript, each at its own seq and time, in one
 * statement: add_checkpoint per element. */
static const mn_stmt checkpoints_stmt = {
	"mnemo_import_checkpoints",
	"SELECT mnemo.add_checkpoint($1::text, c.label, c.auto, c.seq, c.created_at) IS NOT NULL "
	"FROM jsonb_to_recordset($2::jsonb) AS c(label text, auto boolean, seq bigint, created_at bigint)",
	2
};

int
mn_import_checkpoint(mn_import *imp, int64_t line, const char *label, bool is_auto,
					 int64_t created_at)
{
	mn_buf	   *b = &imp->checkpoints;

	if (imp->n_checkpoints % 64 == 0)
	{
		mn_import_cp *grown = realloc(imp->cps, (imp->n_checkpoints + 64) * sizeof(*grown));

		if (grown == NULL)
			return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		imp->cps = grown;
	}
	imp->cps[imp->n_checkpoints].line = line;
	if ((imp->cps[imp->n_checkpoints].label = strdup(label)) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	imp->n_checkpoints++;
	mn_buf_puts(b, b->len > 0 ? ",{\"label\":" : "{\"label\":");
	mn_buf_put_jstr(b, label, strlen(label));
	mn_buf_puts(b, is_auto ? ",\"auto\":true,\"seq\":" : ",\"auto\":false,\"seq\":");
	/* a fresh session: the messages so far are seqs 1 .. their count */
	mn_buf_put_i64(b, imp->imported + (int64_t) imp->n_flight + (int64_t) imp->n_batch);
	if (created_at > 0)
	{
		mn_buf_puts(b, ",\"created_at\":");
		mn_buf_put_i64(b, created_at);
	}
	mn_buf_puts(b, "}");
	return b->oom ? mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory") : MNEMO_OK;
}

int
mn_import_checkpoints_flush(mn_import *imp)
{
	mnemo_store *st = imp->st;
	const char *params[2];
	mn_buf		arr = {0};
	PGresult   *res;
	int64_t		line = 0;

	/* read again (options.update): the checkpoints were restored before */
	if (imp->n_checkpoints == 0 || imp->resumed)
		return MNEMO_OK;
	mn_buf_puts(&arr, "[");
	mn_buf_put(&arr, imp->checkpoints.data, imp->checkpoints.len);
	mn_buf_puts(&arr, "]");
	if (arr.oom)
	{
		mn_buf_free(&arr);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	params[0] = imp->session_id;
	params[1] = arr.data;
	res = mn_exec(st, &checkpoints_stmt, params);
	mn_buf_free(&arr);
	if (res != NULL)
	{
		PQclear(res);
		return MNEMO_OK;
	}
	/* MN004 names the label used twice: the line of its second use */
	if (st->errcode != MNEMO_ERR_DUPLICATE_ID || st->errmsg == NULL)
		return st->errcode;
	for (size_t i = 0; i < imp->n_checkpoints; i++)
	{
		const char *at = strstr(st->errmsg, imp->cps[i].label);

		if (at != NULL && at > st->errmsg && at[-1] == '"' &&
			at[strlen(imp->cps[i].label)] == '"')
			line = imp->cps[i].line;
	}
	return line == 0 ? st->errcode : mn_import_at_line(st, MNEMO_ERR_DUPLICATE_ID, line, 0);
}

void
mn_import_checkpoints_reset(mn_import *imp)
{
	for (size_t i = 0; i < imp->n_checkpoints; i++)
		free(imp->cps[i].label);
	free(imp->cps);
	imp->cps = NULL;
	imp->n_checkpoints = 0;
	mn_buf_free(&imp->checkpoints);
	memset(&imp->checkpoints, 0, sizeof(imp->checkpoints));
}
