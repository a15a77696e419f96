/*
 * lists.c
 *		What every wrapper does around its statement: check its arguments,
 *		then turn the result into a list, one struct or one number.
 *
 * The list types of mnemo.h differ only in their item type, and C has no
 * way to name "a list of T" once; so the helpers take the sizes and a
 * converter that sees its item through void *, and the typed glue (storing
 * the items in the list, freeing it with its own free function) is the one
 * MN_LIST_RESULT macro of store.h.  No list struct is ever accessed
 * through another struct type.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int
mn_begin(mnemo_store *st, bool args_ok, const char *required)
{
	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (st->in_callback)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "the handle is running a turn's part callback, which must not use it");
	if (!args_ok)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "%s", required);
	return MNEMO_OK;
}

void *
mn_list_alloc(mnemo_store *st, PGresult *res, size_t list_size, size_t item_size,
			  void **items)
{
	int			n = PQntuples(res);
	void	   *list = calloc(1, list_size);

	*items = NULL;
	if (list != NULL && n > 0)
	{
		*items = calloc((size_t) n, item_size);
		if (*items == NULL)
		{
			free(list);
			list = NULL;
		}
	}
	if (list == NULL)
	{
		PQclear(res);
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	return list;
}

int
mn_list_fill(mnemo_store *st, PGresult *res, void *items, size_t item_size, size_t *count,
			 mn_row_fn fn)
{
	int			n = PQntuples(res);
	int			rc = MNEMO_OK;
	int			i;

	for (i = 0; i < n && rc == MNEMO_OK; i++)
	{
		/* counted first: a half-filled item is freed with the others */
		(*count)++;
		rc = fn(st, res, i, (char *) items + (size_t) i * item_size);
	}
	PQclear(res);
	return rc;
}

int
mn_row_new(mnemo_store *st, PGresult *res, const char *what, const char *key, size_t size,
		   mn_row_fn fn, void **out)
{
	void	   *obj;
	int			rc;

	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "expected one %s row", what);
	}
	if (key != NULL && PQgetisnull(res, 0, mn_col(res, key)))
	{
		PQclear(res);
		*out = NULL;
		return MNEMO_OK;
	}
	obj = calloc(1, size);
	if (obj == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	rc = fn(st, res, 0, obj);
	PQclear(res);
	if (rc != MNEMO_OK)
	{
		free(obj);
		return rc;
	}
	*out = obj;
	return MNEMO_OK;
}

int
mn_i64_result(mnemo_store *st, PGresult *res, const char *col, const char *missing,
			  int64_t *out)
{
	int64_t		v;

	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, col)))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "%s", missing);
	}
	v = mn_get_i64(res, 0, mn_col(res, col));
	PQclear(res);
	if (out != NULL)
		*out = v;
	return MNEMO_OK;
}

int
mn_id_copy(mnemo_store *st, const char *id, const char *what, char dst[MNEMO_ID_MAX + 1])
{
	size_t		len = strlen(id);

	if (len > MNEMO_ID_MAX)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "%s id of %zu bytes", what, len);
	memcpy(dst, id, len + 1);
	return MNEMO_OK;
}

char *
mn_id_array(mnemo_store *st, const char *const *ids, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == NULL)
		{
			mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "%s[%zu] is NULL", what, i);
			return NULL;
		}
	return mn_text_array(st, ids, n);
}
