/*
 * t_store.c
 *		The store handle: opening (and each way it is refused), the last
 *		error, the token estimate, server-made ids, reconnecting after the
 *		server went away.
 *
 * Runs in the database PGDATABASE (with the extension); makes three
 * scratch databases beside it, one without the extension, one whose
 * extension claims another version and one with the extension installed at
 * 0.2.0 (its real older version), and drops them at the end.  The reconnect tests
 * stop and start the cluster in MNEMO_TEST_CLUSTER_DIR.
 */
#define _POSIX_C_SOURCE 200809L

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"

#define BARE_DB "t_store_bare"
#define SKEWED_DB "t_store_skewed"
#define OLD_DB "t_store_old"

static PGconn *admin;			/* libpq beside the library: setup and oracle */

static void
quiet(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

static void
admin_exec(const char *sql)
{
	PGresult   *res = PQexec(admin, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(admin));
	PQclear(res);
}

/* Run sql in database db as the test's (super)user. */
static void
exec_in(const char *db, const char *sql)
{
	const char *keys[] = {"dbname", NULL};
	const char *values[] = {db, NULL};
	PGconn	   *conn = PQconnectdbParams(keys, values, 1);
	PGresult   *res;

	if (PQstatus(conn) != CONNECTION_OK)
		bail_out("connect to %s: %s", db, PQerrorMessage(conn));
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
}

static bool
contains(const char *haystack, const char *needle)
{
	return haystack != NULL && strstr(haystack, needle) != NULL;
}

static const char *
library_version(void)
{
	static char v[32];

	snprintf(v, sizeof(v), "%d.%d.%d", MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR,
			 MNEMO_VERSION_PATCH);
	return v;
}

static void
test_open(void)
{
	mnemo_store *st = mnemo_store_open(NULL);

	if (st == NULL)
		bail_out("mnemo_store_open returned NULL");
	is_int(mnemo_errcode(st), MNEMO_OK, "open with the PG* environment (conninfo NULL)");
	if (mnemo_errcode(st) != MNEMO_OK)
		bail_out("cannot open the test database: %s", mnemo_errmsg(st));
	is_str(mnemo_errmsg(st), "", "no error message after a good open");
	is_str(mnemo_sqlstate(st), "", "no SQLSTATE after a good open");
	is_str(mnemo_store_server_version(st), library_version(),
		   "server version is the extension's, equal to the library's");
	mnemo_store_close(st);

	st = mnemo_store_open("");
	is_int(mnemo_errcode(st), MNEMO_OK, "open with \"\" uses the environment too");
	mnemo_store_close(st);

	st = mnemo_store_open("application_name=t_store");
	is_int(mnemo_errcode(st), MNEMO_OK, "open with a connection string, the rest from the environment");
	mnemo_store_close(st);
}

static void
test_uninitialized(void)
{
	mnemo_store *st;
	char		id[MNEMO_ID_MAX + 1];
	char		conninfo[64];

	snprintf(conninfo, sizeof(conninfo), "dbname=%s", BARE_DB);
	st = mnemo_store_open(conninfo);
	if (st == NULL)
		bail_out("mnemo_store_open returned NULL");
	is_int(mnemo_errcode(st), MNEMO_ERR_UNINITIALIZED,
		   "a database without the extension: MNEMO_ERR_UNINITIALIZED");
	ok(contains(mnemo_errmsg(st), "CREATE EXTENSION mnemo"),
	   "the message says to CREATE EXTENSION mnemo (%s)", mnemo_errmsg(st));
	ok(contains(mnemo_errmsg(st), BARE_DB), "the message names the database");
	is_str(mnemo_store_server_version(st), "", "no server version without the extension");

	/* refused handles hold no connection: calls fail cleanly until reconnect */
	is_int(mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION,
		   "a call on the refused handle fails with MNEMO_ERR_CONNECTION");
	ok(contains(mnemo_errmsg(st), "mnemo_store_reconnect"), "and says to reconnect (%s)",
	   mnemo_errmsg(st));

	exec_in(BARE_DB, "CREATE EXTENSION mnemo");
	is_int(mnemo_store_reconnect(st), MNEMO_OK,
		   "after CREATE EXTENSION, mnemo_store_reconnect succeeds");
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "and the handle works");
	is_str(mnemo_store_server_version(st), library_version(), "server version after reconnect");
	mnemo_store_close(st);
}

static void
test_version_mismatch(void)
{
	mnemo_store *st;
	char		conninfo[64];

	/* as if the SQL objects had been updated and the library not */
	exec_in(SKEWED_DB, "CREATE EXTENSION mnemo");
	exec_in(SKEWED_DB, "UPDATE pg_catalog.pg_extension SET extversion = '9.9.0' "
			"WHERE extname = 'mnemo'");

	snprintf(conninfo, sizeof(conninfo), "dbname=%s", SKEWED_DB);
	st = mnemo_store_open(conninfo);
	if (st == NULL)
		bail_out("mnemo_store_open returned NULL");
	is_int(mnemo_errcode(st), MNEMO_ERR_VERSION_MISMATCH,
		   "extension version 9.9.0 with library 0.13: MNEMO_ERR_VERSION_MISMATCH");
	ok(contains(mnemo_errmsg(st), "9.9.0") && contains(mnemo_errmsg(st), library_version()),
	   "the message names both versions (%s)", mnemo_errmsg(st));
	is_str(mnemo_store_server_version(st), library_version(),
		   "server version reports the loaded library even when refused");
	is_int(mnemo_store_reconnect(st), MNEMO_ERR_VERSION_MISMATCH,
		   "reconnect checks the version again");

	exec_in(SKEWED_DB, "UPDATE pg_catalog.pg_extension SET extversion = '0.13.0' "
			"WHERE extname = 'mnemo'");
	is_int(mnemo_store_reconnect(st), MNEMO_OK, "once the versions agree, reconnect succeeds");
	mnemo_store_close(st);
}

/*
 * A database whose extension is still at 0.2.0, as an installation left
 * before ALTER EXTENSION ... UPDATE: refused with the mismatch, until the
 * update.
 */
static void
test_older_version(void)
{
	mnemo_store *st;
	char		id[MNEMO_ID_MAX + 1];
	char		conninfo[64];

	exec_in(OLD_DB, "CREATE EXTENSION mnemo VERSION '0.2.0'");
	snprintf(conninfo, sizeof(conninfo), "dbname=%s", OLD_DB);
	st = mnemo_store_open(conninfo);
	if (st == NULL)
		bail_out("mnemo_store_open returned NULL");
	is_int(mnemo_errcode(st), MNEMO_ERR_VERSION_MISMATCH,
		   "extension installed at 0.2.0 with library 0.13: MNEMO_ERR_VERSION_MISMATCH");
	ok(contains(mnemo_errmsg(st), "0.2.0") && contains(mnemo_errmsg(st), library_version()),
	   "the message names both versions (%s)", mnemo_errmsg(st));
	is_int(mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION,
		   "a call on the refused handle fails with MNEMO_ERR_CONNECTION");

	exec_in(OLD_DB, "ALTER EXTENSION mnemo UPDATE");
	is_int(mnemo_store_reconnect(st), MNEMO_OK,
		   "after ALTER EXTENSION mnemo UPDATE, mnemo_store_reconnect succeeds");
	is_int(mnemo_state_update(st, "sess_none", "{}", NULL), MNEMO_ERR_SESSION_NOT_FOUND,
		   "and 0.13.0's functions answer (update_state of a missing session: MN001)");
	mnemo_store_close(st);
}

static void
test_connection_errors(void)
{
	mnemo_store *st;
	char		id[MNEMO_ID_MAX + 1] = "untouched";

	st = mnemo_store_open("host=/nonexistent-mnemo-dir port=1 connect_timeout=5");
	if (st == NULL)
		bail_out("mnemo_store_open returned NULL");
	is_int(mnemo_errcode(st), MNEMO_ERR_CONNECTION, "an unreachable server: MNEMO_ERR_CONNECTION");
	ok(contains(mnemo_errmsg(st), "/nonexistent-mnemo-dir"),
	   "the message is libpq's, naming the socket (%s)", mnemo_errmsg(st));
	ok(mnemo_errmsg(st)[strlen(mnemo_errmsg(st)) - 1] != '\n', "without libpq's trailing newline");
	is_str(mnemo_sqlstate(st), "", "no SQLSTATE for a client-side failure");
	is_int(mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION, "calls on it fail the same way");
	is_str(id, "untouched", "and leave their out-parameters alone");
	is_int(mnemo_store_reconnect(st), MNEMO_ERR_CONNECTION, "reconnect fails the same way");
	mnemo_store_close(st);

	st = mnemo_store_open("this is not a conninfo");
	is_int(mnemo_errcode(st), MNEMO_ERR_CONNECTION, "a malformed connection string: MNEMO_ERR_CONNECTION");
	ok(contains(mnemo_errmsg(st), "\"=\""), "with libpq's parse error (%s)", mnemo_errmsg(st));
	mnemo_store_close(st);

	mnemo_store_close(NULL);
	ok(1, "mnemo_store_close(NULL) does nothing");
	is_int(mnemo_errcode(NULL), MNEMO_ERR_NOMEM, "a NULL handle (failed allocation) reads as NOMEM");
	is_str(mnemo_errmsg(NULL), "out of memory", "with its message");
	is_str(mnemo_sqlstate(NULL), "", "and no SQLSTATE");
	is_str(mnemo_store_server_version(NULL), "", "server version of NULL is \"\"");
}

static void
test_server_errors(mnemo_store *st)
{
	char		id[MNEMO_ID_MAX + 1] = "untouched";
	mnemo_session *s = NULL;
	int			rc;

	rc = mnemo_new_id(st, "bad prefix!", id);
	is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "new_id with a bad prefix: INVALID_ARGUMENT");
	is_int(mnemo_errcode(st), rc, "mnemo_errcode is the returned code");
	is_str(mnemo_sqlstate(st), "22023", "mnemo_sqlstate is the server's");
	ok(contains(mnemo_errmsg(st), "bad prefix!") && !contains(mnemo_errmsg(st), "ERROR:"),
	   "mnemo_errmsg is the server's primary message (%s)", mnemo_errmsg(st));
	is_str(id, "untouched", "the id buffer is left alone on failure");

	rc = mnemo_new_id(st, NULL, id);
	is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "new_id with a NULL prefix: INVALID_ARGUMENT");
	is_str(mnemo_sqlstate(st), "22004", "sqlstate 22004");

	rc = mnemo_session_get(st, "t_store-no-such-session", &s);
	is_int(rc, MNEMO_ERR_SESSION_NOT_FOUND, "a missing session: SESSION_NOT_FOUND");
	is_str(mnemo_sqlstate(st), "MN001", "sqlstate MN001");
	ok(contains(mnemo_errmsg(st), "t_store-no-such-session"), "the message names the id (%s)",
	   mnemo_errmsg(st));
	ok(s == NULL, "and *out stays NULL");

	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "the next good call");
	is_int(mnemo_errcode(st), MNEMO_OK, "clears the error code");
	is_str(mnemo_errmsg(st), "", "the message");
	is_str(mnemo_sqlstate(st), "", "and the SQLSTATE");
}

static void
test_strerror(void)
{
	static const int codes[] = {
		MNEMO_OK, MNEMO_ERR_SESSION_NOT_FOUND, MNEMO_ERR_MESSAGE_NOT_FOUND,
		MNEMO_ERR_PART_NOT_FOUND, MNEMO_ERR_DUPLICATE_ID, MNEMO_ERR_IMMUTABLE_FIELD,
		MNEMO_ERR_INVALID_SWAP, MNEMO_ERR_RUN_ALREADY_CLAIMED, MNEMO_ERR_RUN_ALREADY_COMPLETED,
		MNEMO_ERR_RUN_NOT_CLAIMED, MNEMO_ERR_RUN_NOT_COMPLETED, MNEMO_ERR_CHECKPOINT_NOT_FOUND,
		MNEMO_ERR_SESSION_INACTIVE, MNEMO_ERR_SESSION_AMBIGUOUS, MNEMO_ERR_INVALID_ARGUMENT, MNEMO_ERR_PERMISSION,
		MNEMO_ERR_RETRY, MNEMO_ERR_SERVER, MNEMO_ERR_CONNECTION, MNEMO_ERR_UNINITIALIZED,
		MNEMO_ERR_VERSION_MISMATCH, MNEMO_ERR_NOMEM, MNEMO_ERR_IO, MNEMO_ERR_FORMAT,
		MNEMO_ERR_PROTOCOL, MNEMO_ERR_NOT_FOUND, MNEMO_ERR_NO_PROVIDER, MNEMO_ERR_HTTP,
		MNEMO_ERR_AUTH, MNEMO_ERR_RATE_LIMITED, MNEMO_ERR_NETWORK, MNEMO_ERR_TIMEOUT,
		MNEMO_ERR_STREAM, MNEMO_ERR_CANCELLED
	};
	size_t		n = sizeof(codes) / sizeof(codes[0]);
	bool		all_named = true,
				distinct = true;

	for (size_t i = 0; i < n; i++)
	{
		const char *s = mnemo_strerror(codes[i]);

		if (s == NULL || *s == '\0' || strcmp(s, mnemo_strerror(12345)) == 0)
		{
			all_named = false;
			diag("code %d has no description", codes[i]);
		}
		for (size_t j = 0; j < i; j++)
			if (s != NULL && strcmp(s, mnemo_strerror(codes[j])) == 0)
			{
				distinct = false;
				diag("codes %d and %d share \"%s\"", codes[i], codes[j], s);
			}
	}
	ok(all_named, "mnemo_strerror describes each of the %zu codes", n);
	ok(distinct, "with a different text for each");
	is_str(mnemo_strerror(MNEMO_ERR_SESSION_NOT_FOUND), "session not found", "e.g. SESSION_NOT_FOUND");
	is_str(mnemo_strerror(12345), "unknown error", "an unknown code is \"unknown error\"");
}

static int
server_estimate(const char *text)
{
	const char *params[1] = {text};
	PGresult   *res = PQexecParams(admin, "SELECT mnemo.estimate_tokens($1::text)", 1, NULL,
								   params, NULL, NULL, 0);
	int			v;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("estimate_tokens: %s", PQerrorMessage(admin));
	v = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

static void
test_estimate_tokens(void)
{
	static const char *const texts[] = {
		"", "a", "abc", "abcd", "abcde", "abcdefgh", "abcdefghi",
		"h\xc3\xa9llo w\xc3\xb6rld",	/* héllo wörld: 11 characters, 13 bytes */
		"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9"
		"\xe3\x83\x88",			/* 日本語のテキスト: 8 characters, 24 bytes */
		"\xf0\x9f\x99\x82\xf0\x9f\x99\x82\xf0\x9f\x99\x82\xf0\x9f\x99\x82\xf0\x9f\x99\x82",
		"\xc3\xa9\xc3\xa9\xc3\xa9",	/* 3 characters, 6 bytes: 1 token, not 1 */
		"tab\there\nnewline\r\n and spaces   ",
	};
	char	   *long_text;
	bool		all_equal = true;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
	{
		int			mine = mnemo_estimate_tokens(texts[i]);
		int			theirs = server_estimate(texts[i]);

		if (mine != theirs)
		{
			all_equal = false;
			diag("\"%s\": client %d, server %d", texts[i], mine, theirs);
		}
	}
	ok(all_equal, "mnemo_estimate_tokens equals mnemo.estimate_tokens for ASCII, multibyte and empty text");
	is_int(mnemo_estimate_tokens(""), 0, "\"\" is 0 tokens");
	is_int(mnemo_estimate_tokens("abc"), 1, "a short text is at least 1 token");
	is_int(mnemo_estimate_tokens(NULL), 0, "NULL is 0 tokens");
	/* 5 emoji are 20 bytes but 5 characters: 1 token, not 5 */
	is_int(mnemo_estimate_tokens(texts[9]), 1, "characters are counted, not bytes");

	long_text = malloc(100001);
	if (long_text == NULL)
		bail_out("out of memory");
	for (int i = 0; i < 100000; i++)
		long_text[i] = (i % 7 == 0) ? ' ' : (char) ('a' + i % 26);
	long_text[100000] = '\0';
	is_int(mnemo_estimate_tokens(long_text), server_estimate(long_text),
		   "a 100,000-character text: the same as the server");
	free(long_text);
}

static void
test_new_id(mnemo_store *st)
{
	char		a[MNEMO_ID_MAX + 1],
				b[MNEMO_ID_MAX + 1];

	is_int(mnemo_new_id(st, "msg", a), MNEMO_OK, "mnemo_new_id(\"msg\")");
	ok(strncmp(a, "msg_", 4) == 0 && strlen(a) == 4 + 26, "is msg_ and a 26-character ULID (%s)", a);
	is_int(mnemo_new_id(st, "msg", b), MNEMO_OK, "a second id");
	ok(strcmp(a, b) < 0, "sorts after the first (%s < %s)", a, b);
	is_int(mnemo_new_id(st, "my-app_2", a), MNEMO_OK, "a prefix with '-', '_' and digits");
	ok(strncmp(a, "my-app_2_", 9) == 0, "keeps it (%s)", a);
}

static int	saved_stderr = -1;
static FILE *captured;

/* Send fd 2 to a temporary file, to see what the library writes there. */
static void
stderr_capture_start(void)
{
	fflush(stderr);
	captured = tmpfile();
	saved_stderr = dup(2);
	if (captured == NULL || saved_stderr < 0 || dup2(fileno(captured), 2) < 0)
		bail_out("cannot capture stderr");
}

/* Restore fd 2; the number of bytes written to it meanwhile. */
static long
stderr_capture_end(void)
{
	long		size;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	fseek(captured, 0, SEEK_END);
	size = ftell(captured);
	if (size > 0)
	{
		char		buf[512];
		size_t		len;

		rewind(captured);
		len = fread(buf, 1, sizeof(buf) - 1, captured);
		buf[len] = '\0';
		diag("stderr: %s", buf);
	}
	fclose(captured);
	return size;
}

/* Run the cluster script; false if it failed. */
static bool
cluster(const char *what)
{
	const char *dir = getenv("MNEMO_TEST_CLUSTER_DIR");
	char		cmd[1024];

	snprintf(cmd, sizeof(cmd), "bash test/cluster.sh %s '%s' >/dev/null 2>&1", what, dir);
	return system(cmd) == 0;
}

static void
test_reconnect(mnemo_store *st)
{
	char		id[MNEMO_ID_MAX + 1];
	int			rc;
	PGresult   *res;

	/* the server ends our backend: the next call sees the connection gone */
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "new_id before the backend is terminated");
	stderr_capture_start();
	res = PQexec(admin, "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity "
				 "WHERE application_name = 't_store_reconnect'");
	ok(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1,
	   "pg_terminate_backend ends the handle's backend");
	PQclear(res);
	/* the FATAL message waits on the idle connection; a poll reads it */
	(void) mnemo_feed_poll(st, 200);
	rc = mnemo_new_id(st, "msg", id);
	is_int(rc, MNEMO_ERR_CONNECTION, "the next call fails with MNEMO_ERR_CONNECTION");
	ok(*mnemo_errmsg(st) != '\0', "with a message (%s)", mnemo_errmsg(st));
	is_int(mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION, "and so does the one after");
	is_int(stderr_capture_end(), 0,
		   "the library wrote nothing to stderr (no server FATAL printed by libpq)");
	is_int(mnemo_store_reconnect(st), MNEMO_OK, "mnemo_store_reconnect");
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "the same prepared statement works again");

	if (getenv("MNEMO_TEST_CLUSTER_DIR") == NULL)
	{
		for (int i = 0; i < 6; i++)
			ok(1, "# SKIP MNEMO_TEST_CLUSTER_DIR is not set: no server restart");
		return;
	}

	/* the whole server goes away and comes back */
	PQfinish(admin);
	admin = NULL;
	if (!cluster("stop"))
		bail_out("bash test/cluster.sh stop failed");
	rc = mnemo_new_id(st, "msg", id);
	is_int(rc, MNEMO_ERR_CONNECTION, "with the server stopped: MNEMO_ERR_CONNECTION");
	diag("the message: %s", mnemo_errmsg(st));
	is_int(mnemo_store_reconnect(st), MNEMO_ERR_CONNECTION,
		   "reconnect while it is down: MNEMO_ERR_CONNECTION");
	ok(*mnemo_errmsg(st) != '\0', "with libpq's message (%s)", mnemo_errmsg(st));
	if (!cluster("start"))
		bail_out("bash test/cluster.sh start failed");
	is_int(mnemo_store_reconnect(st), MNEMO_OK, "reconnect once the server is back");
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "the prepared statement works again");
	is_str(mnemo_store_server_version(st), library_version(), "and the version was checked again");
	admin = PQconnectdb("");
	if (PQstatus(admin) != CONNECTION_OK)
		bail_out("reconnect the oracle: %s", PQerrorMessage(admin));
}

int
main(void)
{
	mnemo_store *st;

	admin = PQconnectdb("");
	if (PQstatus(admin) != CONNECTION_OK)
		bail_out("cannot connect: %s", PQerrorMessage(admin));
	/* DROP DATABASE IF EXISTS says when there was nothing to drop */
	PQsetNoticeProcessor(admin, quiet, NULL);
	admin_exec("DROP DATABASE IF EXISTS " BARE_DB);
	admin_exec("DROP DATABASE IF EXISTS " SKEWED_DB);
	admin_exec("DROP DATABASE IF EXISTS " OLD_DB);
	admin_exec("CREATE DATABASE " BARE_DB);
	admin_exec("CREATE DATABASE " SKEWED_DB);
	admin_exec("CREATE DATABASE " OLD_DB);

	test_open();
	test_uninitialized();
	test_version_mismatch();
	test_older_version();
	test_connection_errors();
	test_strerror();
	test_estimate_tokens();

	st = mnemo_store_open("application_name=t_store_reconnect");
	if (mnemo_errcode(st) != MNEMO_OK)
		bail_out("open: %s", mnemo_errmsg(st));
	test_server_errors(st);
	test_new_id(st);
	test_reconnect(st);
	mnemo_store_close(st);

	admin_exec("DROP DATABASE IF EXISTS " BARE_DB);
	admin_exec("DROP DATABASE IF EXISTS " SKEWED_DB);
	admin_exec("DROP DATABASE IF EXISTS " OLD_DB);
	PQfinish(admin);
	return tap_done();
}
