/*
 * store.c
 *		The store handle: connect, check the extension, reconnect, close.
 *
 * A handle is usable only after the database has shown it has the mnemo
 * extension in a version this library speaks: pg_extension names the SQL
 * objects' version, mnemo.version() the loaded C library's, and both must
 * be this library's major.minor (and equal to each other: a server whose
 * library was upgraded without ALTER EXTENSION ... UPDATE is half one
 * version and half another).  When the check fails the connection is
 * closed again, so a refused handle holds nothing on the server and every
 * later call fails with MNEMO_ERR_CONNECTION until a reconnect succeeds;
 * the open's own error stays readable until then.
 *
 * Server notices (and a FATAL message that arrives while the connection is
 * idle, as when the server shuts down) would go to the application's stderr
 * through libpq's default notice processor: a library has no business
 * writing there, so they are dropped; the errors that matter reach the
 * caller through the next call's result.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static const mn_stmt extversion_stmt = {
	"mnemo_store_extversion",
	"SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'mnemo'",
	0
};

static const mn_stmt version_stmt = {
	"mnemo_store_version",
	"SELECT mnemo.version() AS version",
	0
};

/* major.minor of a version string "X.Y[.Z...]"; false if it is not one. */
static bool
major_minor(const char *v, long *major, long *minor)
{
	char	   *end;

	*major = strtol(v, &end, 10);
	if (end == v || *end != '.')
		return false;
	v = end + 1;
	*minor = strtol(v, &end, 10);
	return end != v && (*end == '\0' || *end == '.');
}

static void
disconnect(mnemo_store *st)
{
	PQfinish(st->conn);
	st->conn = NULL;
	mn_stmt_reset(st);
}

/* The single text value of a one-row result, malloc'd; NULL for no row. */
static int
single_value(mnemo_store *st, const mn_stmt *stmt, char **value)
{
	PGresult   *res = mn_exec(st, stmt, NULL);

	*value = NULL;
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) &&
		(*value = strdup(PQgetvalue(res, 0, 0))) == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	PQclear(res);
	return MNEMO_OK;
}

static int
check_extension(mnemo_store *st)
{
	char	   *extversion = NULL;
	char	   *loaded = NULL;
	long		major,
				minor;
	int			rc;

	free(st->server_version);
	st->server_version = NULL;

	if ((rc = single_value(st, &extversion_stmt, &extversion)) != MNEMO_OK)
		return rc;
	if (extversion == NULL)
		return mn_fail(st, MNEMO_ERR_UNINITIALIZED,
					   "the mnemo extension is not installed in database \"%s\"; "
					   "run CREATE EXTENSION mnemo in it first", PQdb(st->conn));

	if ((rc = single_value(st, &version_stmt, &loaded)) != MNEMO_OK)
		goto done;
	if (loaded == NULL)
	{
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "mnemo.version() returned NULL");
		goto done;
	}
	/* what mnemo_store_server_version reports, even when refused below */
	st->server_version = loaded;

	if (!major_minor(loaded, &major, &minor) ||
		major != MNEMO_VERSION_MAJOR || minor != MNEMO_VERSION_MINOR)
		rc = mn_fail(st, MNEMO_ERR_VERSION_MISMATCH,
					 "the mnemo extension's library is version %s but libmnemo %d.%d.%d "
					 "supports %d.%d.x",
					 loaded, MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR, MNEMO_VERSION_PATCH,
					 MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR);
	else if (strcmp(extversion, loaded) != 0)
		rc = mn_fail(st, MNEMO_ERR_VERSION_MISMATCH,
					 "the mnemo extension in this database is version %s but the server "
					 "loaded its library version %s; run ALTER EXTENSION mnemo UPDATE",
					 extversion, loaded);
done:
	free(extversion);
	return rc;
}

static void
drop_notice(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

/* Connect (or reset) and check; on failure the connection is closed. */
static int
connect_and_check(mnemo_store *st)
{
	int			rc;

	mn_stmt_reset(st);
	if (st->conn != NULL)
		PQreset(st->conn);
	else if ((st->conn = PQconnectdb(st->conninfo)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else
		PQsetNoticeProcessor(st->conn, drop_notice, NULL);

	if (PQstatus(st->conn) != CONNECTION_OK)
		rc = mn_fail_result(st, NULL);
	else
		rc = check_extension(st);
	if (rc != MNEMO_OK)
		disconnect(st);
	return rc;
}

MNEMO_API mnemo_store *
mnemo_store_open(const char *conninfo)
{
	mnemo_store *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	if ((st->conninfo = strdup(conninfo ? conninfo : "")) == NULL)
	{
		free(st);
		return NULL;
	}
	(void) connect_and_check(st);
	return st;
}

MNEMO_API void
mnemo_store_close(mnemo_store *st)
{
	if (st == NULL)
		return;
	while (st->n_attached > 0)
		st->attached[--st->n_attached]->release(st);
	PQfinish(st->conn);
	free(st->conninfo);
	free(st->server_version);
	free(st->errmsg);
	free(st->prepared);
	free(st);
}

MNEMO_API int
mnemo_store_reconnect(mnemo_store *st)
{
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_NOMEM;
	mn_clear_error(st);
	if (st->in_callback)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "the handle is running a turn's part callback, which must not use it");
	if ((rc = connect_and_check(st)) != MNEMO_OK)
		return rc;
	for (size_t i = 0; i < st->n_attached; i++)
		if (st->attached[i]->resume != NULL &&
			(rc = st->attached[i]->resume(st)) != MNEMO_OK)
			return rc;
	return MNEMO_OK;
}

void
mn_attach(mnemo_store *st, const mn_attachment *a)
{
	for (size_t i = 0; i < st->n_attached; i++)
		if (st->attached[i] == a)
			return;
	/* a fixed table: one slot per room that keeps state, never more */
	if (st->n_attached < MN_MAX_ATTACHMENTS)
		st->attached[st->n_attached++] = a;
}

MNEMO_API const char *
mnemo_store_server_version(const mnemo_store *st)
{
	return st != NULL && st->server_version != NULL ? st->server_version : "";
}
