/*
 * t_sessions.c
 *		Sessions through libmnemo: create, get, get_or_create, list, soft
 *		delete, purge (and its grant), watch; the events they publish.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/*
 * Sessions list newest first by creation time in ms, then by id; the ids
 * here are chosen by the test, not time-ordered, so each session the list
 * test counts on is made in a millisecond of its own.
 */
static void
next_ms(void)
{
	struct timespec ts = {0, 2 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

/* The role of an application without the erasure grant (README "Security
 * and grants"). */
#define APP_ROLE "mnemo_t_sessions_app"

typedef struct seen
{
	int			created;
	int			closed;
	char		last_session[MNEMO_ID_MAX + 1];
} seen;

static int
on_event(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	seen	   *s = arg;

	(void) st;
	if (ev->type == MNEMO_EVENT_SESSION_CREATED)
		s->created++;
	else if (ev->type == MNEMO_EVENT_SESSION_CLOSED)
		s->closed++;
	snprintf(s->last_session, sizeof(s->last_session), "%s",
			 ev->session_id ? ev->session_id : "");
	return 0;
}

/* Run SQL as the cluster's superuser, outside the library. */
static void
admin(PGconn *conn, const char *sql)
{
	PGresult   *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
}

static void
append_text(mnemo_store *st, const char *session_id, const char *text)
{
	mnemo_new_message msg = {0};

	msg.role = "user";
	append_text_message(st, session_id, &msg, text);
}

static void
test_create_and_get(mnemo_store *st, seen *ev)
{
	mnemo_new_session spec = {0};
	mnemo_session *s = NULL;
	mnemo_session *got = NULL;
	mnemo_session *dflt = NULL;
	mnemo_session *child = NULL;
	mnemo_session *untouched = NULL;
	int			rc;

	spec.id = "s1";
	spec.model_id = "gpt-4o";
	spec.provider_id = "openai";
	spec.agent = "coder";
	spec.title = "First";
	spec.metadata = "{\"team\": \"a\"}";
	spec.system_prompt = "Be brief.";
	next_ms();
	rc = mnemo_session_create(st, &spec, &s);
	is_int(rc, MNEMO_OK, "create a session with every field");
	if (s == NULL)
		bail_out("no session: %s", mnemo_errmsg(st));
	is_int(mnemo_errcode(st), 0, "errcode is 0 after a success");
	is_str(mnemo_sqlstate(st), "", "no SQLSTATE after a success");
	is_str(s->id, "s1", "id as given");
	is_str(s->model_id, "gpt-4o", "model_id");
	is_str(s->provider_id, "openai", "provider_id");
	is_str(s->agent, "coder", "agent");
	is_str(s->title, "First", "title");
	is_str(s->metadata, "{\"team\": \"a\"}", "metadata as jsonb text");
	is_str(s->system_prompt, "Be brief.", "system prompt kept for a resume");
	is_str(s->state, "{}", "state starts as {}");
	ok(s->parent_id == NULL, "no parent");
	ok(s->is_active, "a new session is active");
	ok(!s->watched, "not watched");
	is_int(s->last_seq, 0, "no messages yet: last_seq 0");
	ok(s->created_at > 1600000000000LL, "created_at is unix ms");
	is_int(s->updated_at, s->created_at, "updated_at = created_at on creation");
	is_int(ev->created, 1, "create publishes session_created");
	is_str(ev->last_session, "s1", "... with the session id");

	rc = mnemo_session_get(st, "s1", &got);
	is_int(rc, MNEMO_OK, "get the session");
	if (got == NULL)
		bail_out("get s1: %s", mnemo_errmsg(st));
	is_str(got->id, s->id, "get: same id");
	is_str(got->system_prompt, "Be brief.", "get: system prompt");
	is_str(got->metadata, s->metadata, "get: metadata");
	is_int(got->created_at, s->created_at, "get: created_at");

	next_ms();
	rc = mnemo_session_create(st, NULL, &dflt);
	is_int(rc, MNEMO_OK, "create with a NULL spec");
	if (dflt == NULL)
		bail_out("create(NULL): %s", mnemo_errmsg(st));
	ok(strncmp(dflt->id, "sess_", 5) == 0 && strlen(dflt->id) == 31,
	   "a NULL id makes a sess_ ULID (%s)", dflt->id);
	is_str(dflt->model_id, "", "default model_id is \"\"");
	is_str(dflt->provider_id, "", "default provider_id is \"\"");
	is_str(dflt->agent, "default", "default agent is \"default\"");
	is_str(dflt->system_prompt, "", "default system prompt is \"\"");
	ok(dflt->title == NULL && dflt->metadata == NULL, "no title, no metadata");
	is_int(ev->created, 2, "session_created again");

	memset(&spec, 0, sizeof(spec));
	spec.id = "s1-child";
	spec.parent_id = "s1";
	next_ms();
	rc = mnemo_session_create(st, &spec, &child);
	is_int(rc, MNEMO_OK, "create a child session");
	is_str(child ? child->parent_id : NULL, "s1", "the child names its parent");

	/* errors: nothing comes back, *out stays as it was */
	spec.id = "s1";
	spec.parent_id = NULL;
	rc = mnemo_session_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "create with an existing id");
	is_int(mnemo_errcode(st), MNEMO_ERR_DUPLICATE_ID, "mnemo_errcode says so too");
	ok(strstr(mnemo_errmsg(st), "s1") != NULL, "the message names the id: %s", mnemo_errmsg(st));
	ok(untouched == NULL, "*out untouched on failure");
	is_int(ev->created, 3, "a failed create publishes nothing");

	spec.id = "orphan";
	spec.parent_id = "no-such-parent";
	rc = mnemo_session_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "create under a missing parent");

	spec.id = "bad-meta";
	spec.parent_id = NULL;
	spec.metadata = "[1, 2]";
	rc = mnemo_session_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "metadata that is not an object");
	spec.metadata = "{not json";
	rc = mnemo_session_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22P02", "metadata that is not JSON");
	spec.metadata = NULL;
	spec.id = "";
	rc = mnemo_session_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an empty id");
	ok(untouched == NULL, "*out still untouched");
	rc = mnemo_session_get(st, "bad-meta", &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "a refused create wrote nothing");

	rc = mnemo_session_get(st, "s9", &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "get a missing session");
	ok(strstr(mnemo_errmsg(st), "\"s9\"") != NULL, "the message names it: %s", mnemo_errmsg(st));
	rc = mnemo_session_get(st, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get with a NULL id: refused before sending");
	rc = mnemo_session_get(st, "s1", NULL);
	is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "get with a NULL out");
	ok(untouched == NULL, "*out untouched by every failure");

	mnemo_session_free(s);
	mnemo_session_free(got);
	mnemo_session_free(dflt);
	mnemo_session_free(child);
	mnemo_session_free(NULL);
}

static void
test_get_or_create(mnemo_store *st)
{
	mnemo_new_session spec = {0};
	mnemo_session *s = NULL;
	mnemo_session *fresh = NULL;
	mnemo_session *untouched = NULL;
	int			rc;

	spec.id = "s1";
	spec.model_id = "another-model";
	rc = mnemo_session_get_or_create(st, &spec, &s);
	is_int(rc, MNEMO_OK, "get_or_create of an existing id");
	is_str(s ? s->model_id : NULL, "gpt-4o", "returns the existing row unchanged");
	is_str(s ? s->system_prompt : NULL, "Be brief.", "... system prompt too");

	spec.id = "goc";
	spec.agent = "planner";
	spec.system_prompt = "Plan.";
	next_ms();
	rc = mnemo_session_get_or_create(st, &spec, &fresh);
	is_int(rc, MNEMO_OK, "get_or_create of a new id");
	is_str(fresh ? fresh->id : NULL, "goc", "creates it with that id");
	is_str(fresh ? fresh->model_id : NULL, "another-model", "... and the spec's fields");
	is_str(fresh ? fresh->agent : NULL, "planner", "... agent");
	is_str(fresh ? fresh->system_prompt : NULL, "Plan.", "... system prompt");

	rc = mnemo_session_get_or_create(st, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get_or_create needs a spec");
	spec.id = NULL;
	rc = mnemo_session_get_or_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get_or_create needs an id");
	spec.id = "goc-orphan";
	spec.parent_id = "nobody";
	rc = mnemo_session_get_or_create(st, &spec, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "get_or_create under a missing parent");
	ok(untouched == NULL, "*out untouched");

	mnemo_session_free(s);
	mnemo_session_free(fresh);
}

static void
test_list_and_soft_delete(mnemo_store *st, seen *ev)
{
	mnemo_sessions *all = NULL;
	mnemo_sessions *children = NULL;
	mnemo_sessions *page = NULL;
	mnemo_sessions *active = NULL;
	mnemo_sessions *inactive = NULL;
	mnemo_sessions *untouched = NULL;
	mnemo_session_filter filter = {0};
	mnemo_session *s = NULL;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {0};
	mnemo_message_ref ref = {"unchanged", 42};
	bool		found = false;
	size_t		i;
	int			rc;

	/* created so far, oldest first: s1, sess_..., s1-child, goc */
	rc = mnemo_session_list(st, NULL, &all);
	is_int(rc, MNEMO_OK, "list with a NULL filter");
	if (all == NULL)
		bail_out("list: %s", mnemo_errmsg(st));
	is_int(all->count, 4, "four active sessions");
	if (all->count == 4)
	{
		is_str(all->items[0].id, "goc", "newest first: goc");
		is_str(all->items[1].id, "s1-child", "then s1-child");
		is_str(all->items[3].id, "s1", "oldest last: s1");
	}

	filter.parent_id = "s1";
	rc = mnemo_session_list(st, &filter, &children);
	is_int(rc, MNEMO_OK, "list the children of s1");
	is_int(children ? children->count : 0, 1, "one child");
	is_str(children && children->count ? children->items[0].id : NULL, "s1-child", "s1-child");

	filter.parent_id = NULL;
	filter.limit = 2;
	filter.offset = 1;
	rc = mnemo_session_list(st, &filter, &page);
	is_int(rc, MNEMO_OK, "list a page");
	is_int(page ? page->count : 0, 2, "limit 2");
	is_str(page && page->count ? page->items[0].id : NULL, "s1-child", "offset 1 skips the newest");

	filter.limit = -1;
	filter.offset = 0;
	rc = mnemo_session_list(st, &filter, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "list with a negative limit");
	ok(untouched == NULL, "*out untouched");

	rc = mnemo_session_soft_delete(st, "s1-child");
	is_int(rc, MNEMO_OK, "soft delete");
	is_int(ev->closed, 1, "soft delete publishes session_closed");
	is_str(ev->last_session, "s1-child", "... with the session id");
	rc = mnemo_session_get(st, "s1-child", &s);
	is_int(rc, MNEMO_OK, "a soft-deleted session stays readable");
	ok(s != NULL && !s->is_active, "is_active is false");
	mnemo_session_free(s);

	rc = mnemo_session_list(st, NULL, &active);
	is_int(rc, MNEMO_OK, "list again");
	is_int(active ? active->count : 0, 3, "the default list leaves it out");
	for (i = 0; active && i < active->count; i++)
		if (strcmp(active->items[i].id, "s1-child") == 0)
			found = true;
	ok(!found, "s1-child is not among the active");
	filter.limit = 0;
	filter.include_inactive = true;
	rc = mnemo_session_list(st, &filter, &inactive);
	is_int(rc, MNEMO_OK, "list with include_inactive");
	is_int(inactive ? inactive->count : 0, 4, "it is back");

	part.type = "text";
	part.text = "too late";
	msg.role = "user";
	msg.n_parts = 1;
	msg.parts = &part;
	rc = mnemo_message_append(st, "s1-child", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_SESSION_INACTIVE, "MN012", "append to a soft-deleted session");
	is_str(ref.id, "unchanged", "the ref is untouched");

	rc = mnemo_session_soft_delete(st, "s9");
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "soft delete of a missing session");
	rc = mnemo_session_soft_delete(st, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "soft delete of NULL");
	is_int(ev->closed, 1, "failed deletes publish nothing");

	mnemo_sessions_free(all);
	mnemo_sessions_free(children);
	mnemo_sessions_free(page);
	mnemo_sessions_free(active);
	mnemo_sessions_free(inactive);
	mnemo_sessions_free(NULL);
}

static void
test_watch(mnemo_store *st)
{
	mnemo_session *s = NULL;
	int			rc;

	rc = mnemo_session_watch(st, "s1");
	is_int(rc, MNEMO_OK, "watch");
	mnemo_session_get(st, "s1", &s);
	ok(s != NULL && s->watched, "the session is watched");
	mnemo_session_free(s);
	s = NULL;
	rc = mnemo_session_unwatch(st, "s1");
	is_int(rc, MNEMO_OK, "unwatch");
	mnemo_session_get(st, "s1", &s);
	ok(s != NULL && !s->watched, "no longer watched");
	mnemo_session_free(s);

	rc = mnemo_session_watch(st, "s9");
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "watch a missing session");
	rc = mnemo_session_unwatch(st, "s9");
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "unwatch a missing session");
	rc = mnemo_session_watch(st, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "watch NULL");
}

static void
test_purge(mnemo_store *st)
{
	mnemo_new_session spec = {0};
	mnemo_session *s = NULL;
	mnemo_session *untouched = NULL;
	mnemo_store *app;
	PGconn	   *conn;
	int64_t		deleted = -1;
	int			rc;

	/* an application role granted what README "Security and grants" says */
	conn = PQconnectdb("");
	if (PQstatus(conn) != CONNECTION_OK)
		bail_out("connect: %s", PQerrorMessage(conn));
	admin(conn, "SET client_min_messages = warning");
	admin(conn, "DO $$ BEGIN "
		  "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" APP_ROLE "') THEN "
		  "CREATE ROLE " APP_ROLE " LOGIN; END IF; END $$");
	admin(conn, "GRANT USAGE ON SCHEMA mnemo TO " APP_ROLE);
	admin(conn, "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA mnemo TO " APP_ROLE);
	admin(conn, "REVOKE EXECUTE ON FUNCTION mnemo.purge_session(text) FROM " APP_ROLE);
	admin(conn, "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA mnemo TO " APP_ROLE);
	admin(conn, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA mnemo TO " APP_ROLE);
	admin(conn, "GRANT DELETE ON mnemo.context_items TO " APP_ROLE);

	app = open_store("user=" APP_ROLE);
	spec.id = "app-session";
	rc = mnemo_session_create(app, &spec, &s);
	is_int(rc, MNEMO_OK, "the application role creates a session");
	mnemo_session_free(s);
	s = NULL;
	append_text(app, "app-session", "one");
	append_text(app, "app-session", "two");
	append_text(app, "app-session", "three");

	rc = mnemo_session_purge(app, "app-session", &deleted);
	is_err(app, rc, MNEMO_ERR_PERMISSION, "42501", "purge without EXECUTE on purge_session");
	is_int(deleted, -1, "*deleted untouched");
	rc = mnemo_session_get(app, "app-session", &s);
	is_int(rc, MNEMO_OK, "the session is still there");
	is_int(s ? s->last_seq : 0, 3, "with its three messages");
	mnemo_session_free(s);
	s = NULL;
	mnemo_store_close(app);

	rc = mnemo_session_purge(st, "app-session", &deleted);
	is_int(rc, MNEMO_OK, "purge as a role with the grant");
	is_int(deleted, 3, "*deleted counts the messages");
	rc = mnemo_session_get(st, "app-session", &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "the session is gone");
	rc = mnemo_session_purge(st, "app-session", NULL);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "purge of a missing session");
	rc = mnemo_session_purge(st, NULL, &deleted);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "purge of NULL");
	is_int(deleted, 3, "*deleted untouched by failures");
	ok(untouched == NULL, "*out untouched");

	/* the role is cluster-wide: leave nothing behind */
	admin(conn, "DROP OWNED BY " APP_ROLE);
	admin(conn, "DROP ROLE " APP_ROLE);
	PQfinish(conn);
}

/* a login role with the grants doc/security.md gives an application role */
static void
app_role(PGconn *conn, const char *role)
{
	char		sql[512];

	snprintf(sql, sizeof(sql), "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') "
			 "THEN CREATE ROLE %s LOGIN; END IF; END $$", role, role);
	admin(conn, sql);
	snprintf(sql, sizeof(sql), "GRANT USAGE ON SCHEMA mnemo TO %s", role);
	admin(conn, sql);
}

/*
 * Session ids are unique within a tenant: two application roles each have a
 * session "shared-id"; a superuser, who sees both, gets MN013 until
 * mnemo.tenant (here in the connection's options) says whose it means.
 */
static void
test_same_id(void)
{
	mnemo_new_session spec = {.id = "shared-id"};
	mnemo_session *s = NULL;
	mnemo_store *a,
			   *b,
			   *super,
			   *super_b;
	PGconn	   *conn = PQconnectdb("");
	int64_t		deleted = -1;
	int			rc;

	if (PQstatus(conn) != CONNECTION_OK)
		bail_out("connect: %s", PQerrorMessage(conn));
	admin(conn, "SET client_min_messages = warning");
	app_role(conn, APP_ROLE "_a");
	app_role(conn, APP_ROLE "_b");
	a = open_store("user=" APP_ROLE "_a");
	b = open_store("user=" APP_ROLE "_b");
	is_int(mnemo_session_create(a, &spec, &s), MNEMO_OK, "tenant a creates shared-id");
	mnemo_session_free(s);
	s = NULL;
	is_int(mnemo_session_create(b, &spec, &s), MNEMO_OK, "tenant b creates a session of the same id");
	mnemo_session_free(s);
	s = NULL;
	is_err(b, mnemo_session_create(b, &spec, &s), MNEMO_ERR_DUPLICATE_ID, "MN004",
		   "a second one of tenant b's is a duplicate");
	append_text(a, "shared-id", "a's one");
	append_text(b, "shared-id", "b's one");
	append_text(b, "shared-id", "b's two");
	rc = mnemo_session_get(a, "shared-id", &s);
	is_int(s && rc == MNEMO_OK ? s->last_seq : -1, 1, "tenant a reads its own: one message");
	mnemo_session_free(s);
	s = NULL;
	rc = mnemo_session_get(b, "shared-id", &s);
	is_int(s && rc == MNEMO_OK ? s->last_seq : -1, 2, "tenant b reads its own: two messages");
	mnemo_session_free(s);
	s = NULL;

	super = open_store(NULL);
	rc = mnemo_session_get(super, "shared-id", &s);
	is_err(super, rc, MNEMO_ERR_SESSION_AMBIGUOUS, "MN013",
		   "a superuser, who sees both, gets SESSION_AMBIGUOUS");
	ok(s == NULL, "and no session");
	rc = mnemo_session_purge(super, "shared-id", &deleted);
	is_err(super, rc, MNEMO_ERR_SESSION_AMBIGUOUS, "MN013", "a purge by that id too, purging nothing");
	super_b = open_store("options='-c mnemo.tenant=" APP_ROLE "_b'");
	rc = mnemo_session_purge(super_b, "shared-id", &deleted);
	is_int(rc, MNEMO_OK, "with mnemo.tenant = tenant b, the superuser purges b's");
	is_int(deleted, 2, "its two messages");
	rc = mnemo_session_get(super, "shared-id", &s);
	is_int(s && rc == MNEMO_OK ? s->last_seq : -1, 1, "the id then names a's session alone");
	mnemo_session_free(s);
	s = NULL;
	rc = mnemo_session_purge(super, "shared-id", &deleted);
	is_int(rc, MNEMO_OK, "which the superuser purges");

	mnemo_store_close(super_b);
	mnemo_store_close(super);
	mnemo_store_close(b);
	mnemo_store_close(a);
	admin(conn, "DROP OWNED BY " APP_ROLE "_a, " APP_ROLE "_b");
	admin(conn, "DROP ROLE " APP_ROLE "_a, " APP_ROLE "_b");
	PQfinish(conn);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);
	seen		ev = {0};

	if (mnemo_event_subscribe(st, MNEMO_EVENT_ANY, on_event, &ev) <= 0)
		bail_out("subscribe: %s", mnemo_errmsg(st));
	test_create_and_get(st, &ev);
	test_get_or_create(st);
	test_list_and_soft_delete(st, &ev);
	test_watch(st);
	test_purge(st);
	test_same_id();
	mnemo_store_close(st);
	return tap_done();
}
