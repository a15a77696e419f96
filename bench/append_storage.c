/*
 * append_storage.c
 *		bench/append's byte measures: table bytes and WAL per turn, search
 *		not indexed and indexed, and ten copies of one image; each measured
 *		once, as they are deterministic.
 *
 * A side's bytes are the growth of the heap, TOAST (with its index) and
 * each index of every table in its schema: plain (the hand-written table,
 * only its own key), plain_gin (the same table with the GIN expression
 * index a user would add for full-text search, over to_tsvector('simple',
 * content): 'simple' is what mnemo's search uses, src/search.c) and mnemo
 * (every table the extension writes, whatever its storage).  WAL is
 * pg_current_wal_lsn() around a side's load, each side alone after a
 * CHECKPOINT.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "common.h"

#define MAX_RELS 64
#define NAMEDATALEN_BENCH 96		/* a relation name and its kind */
#define IMAGE_COPIES 10

typedef struct Sizes
{
	int			n;
	char		name[MAX_RELS][NAMEDATALEN_BENCH];
	long long	bytes[MAX_RELS];
} Sizes;

/* Heap, TOAST (with its index) and each index of every table in schema. */
static void
rel_sizes(PGconn *conn, const char *schema, Sizes *s)
{
	const char *values[1] = {schema};
	PGresult   *res = run_params(conn,
								 "SELECT c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' ELSE ' (heap)' END, "
								 "       pg_relation_size(c.oid) "
								 "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
								 " WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') "
								 "UNION ALL "
								 "SELECT c.relname || ' (TOAST)', pg_total_relation_size(c.reltoastrelid) "
								 "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
								 " WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltoastrelid <> 0 "
								 "ORDER BY 1", 1, values);
	int			i;

	s->n = PQntuples(res) < MAX_RELS ? PQntuples(res) : MAX_RELS;
	for (i = 0; i < s->n; i++)
	{
		snprintf(s->name[i], sizeof(s->name[i]), "%s", PQgetvalue(res, i, 0));
		s->bytes[i] = atoll(PQgetvalue(res, i, 1));
	}
	PQclear(res);
}

/* Print each relation's growth over per; return the total over per. */
static double
size_growth(const char *schema, const Sizes *before, const Sizes *after, int per,
			const char *unit)
{
	long long	total = 0;
	int			i,
				j;

	for (i = 0; i < after->n; i++)
	{
		long long	grown = after->bytes[i];

		for (j = 0; j < before->n; j++)
			if (strcmp(before->name[j], after->name[i]) == 0)
				grown -= before->bytes[j];
		total += grown;
		if (grown != 0)
			printf("  %-9s %-49s %12.1f %s\n", schema, after->name[i], (double) grown / per, unit);
	}
	return (double) total / per;
}

static long long
wal_lsn(PGconn *conn)
{
	PGresult   *res = exec_ok(conn, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
	long long	v = atoll(PQgetvalue(res, 0, 0));

	PQclear(res);
	return v;
}

/* `turns` turns of l on c's side into schema's tables: sizes and WAL/turn. */
static double
load_side(Conn *c, enum side side, const char *schema, const Load *l, Sizes *before,
		  Sizes *after)
{
	long long	lsn;
	double		wal;

	rel_sizes(c->conn, schema, before);
	exec_cmd(c->conn, "CHECKPOINT");
	lsn = wal_lsn(c->conn);
	run_turns(c, side, l, NULL);
	wal = (double) (wal_lsn(c->conn) - lsn) / l->n;
	rel_sizes(c->conn, schema, after);
	return wal;
}

/*
 * Rows 5 to 7: `turns` turns into fresh sessions of each side, then mnemo's
 * session indexed for search by index_search (as a scheduled job or the
 * next search would) against the plain table with its own GIN index.
 */
void
measure_storage(void)
{
	Conn		c[2],
				gin;
	Sizes		before[2],
				after[2],
				indexed,
				gin_before,
				gin_after;
	const char *schema[2] = {"plain", "mnemo"};
	double		per_turn[2],
				wal[2],
				indexed_per_turn,
				indexed_wal,
				gin_per_turn,
				gin_wal;
	Load	   *l = make_load(turns, 1, false);
	int			side;

	for (side = PLAIN; side <= MNEMO; side++)
	{
		open_conn(&c[side], true);
		wal[side] = load_side(&c[side], side, schema[side], l, &before[side], &after[side]);
	}
	{
		const char *values[1] = {c[MNEMO].session};
		long long	lsn = wal_lsn(c[MNEMO].conn);

		PQclear(run_params(c[MNEMO].conn, "SELECT mnemo.index_search($1)", 1, values));
		indexed_wal = wal[MNEMO] + (double) (wal_lsn(c[MNEMO].conn) - lsn) / turns;
		rel_sizes(c[MNEMO].conn, "mnemo", &indexed);
	}
	open_conn(&gin, true);
	gin.insert = "plain_gin_insert";
	gin_wal = load_side(&gin, PLAIN, "plain_gin", l, &gin_before, &gin_after);

	printf("storage: %d turns of user ~200 B + assistant ~800 B into each side's tables\n", turns);
	for (side = PLAIN; side <= MNEMO; side++)
		per_turn[side] = size_growth(schema[side], &before[side], &after[side], turns, "B/turn");
	report("table bytes/turn (heap+TOAST+indexes)", "B", per_turn[MNEMO], per_turn[PLAIN]);
	report("WAL bytes/turn", "B", wal[MNEMO], wal[PLAIN]);
	goal_add(ROW_BYTES, per_turn[MNEMO], per_turn[PLAIN]);
	goal_add(ROW_WAL, wal[MNEMO], wal[PLAIN]);

	printf("search indexed: mnemo.index_search() over mnemo's session; the plain table "
		   "with its own GIN index (plain_gin):\n");
	indexed_per_turn = size_growth("mnemo", &before[MNEMO], &indexed, turns, "B/turn");
	gin_per_turn = size_growth("plain_gin", &gin_before, &gin_after, turns, "B/turn");
	report("table bytes/turn, search indexed", "B", indexed_per_turn, gin_per_turn);
	report("WAL bytes/turn, search indexed", "B", indexed_wal, gin_wal);
	report("  the same bytes against the bare plain table", "B", indexed_per_turn,
		   per_turn[PLAIN]);
	goal_add(ROW_BYTES_INDEXED, indexed_per_turn, gin_per_turn);

	PQfinish(c[PLAIN].conn);
	PQfinish(c[MNEMO].conn);
	PQfinish(gin.conn);
	free_load(l);
}

static char *
base64(const unsigned char *p, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char	   *out = malloc((n + 2) / 3 * 4 + 1),
			   *o = out;
	size_t		i;

	if (!out)
		die("out of memory");
	for (i = 0; i + 2 < n; i += 3)
	{
		*o++ = abc[p[i] >> 2];
		*o++ = abc[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		*o++ = abc[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		*o++ = abc[p[i + 2] & 63];
	}
	if (i < n)
	{
		*o++ = abc[p[i] >> 2];
		*o++ = abc[((p[i] & 3) << 4) | (i + 1 < n ? p[i + 1] >> 4 : 0)];
		*o++ = i + 1 < n ? abc[(p[i + 1] & 15) << 2] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/*
 * Row 10: IMAGE_COPIES messages each carrying the same image of
 * image_bytes, as a client sends it (base64 in an image part); the plain
 * side stores the same base64 in its content column, which is what a user
 * writes by hand.  The image's bytes are a PNG signature and then
 * pseudo-random, as compressed image data is: TOAST compression gains
 * nothing on either side.
 */
void
measure_image(int image_bytes)
{
	static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char *raw = malloc(image_bytes);
	uint64_t	rng = 0x5DEECE66DULL;
	char	   *b64,
			   *json;
	double		bytes[2];
	int			side,
				i;

	if (!raw)
		die("out of memory");
	for (i = 0; i < image_bytes; i++)
	{
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		raw[i] = i < (int) sizeof(png) ? png[i] : (unsigned char) rng;
	}
	b64 = base64(raw, image_bytes);
	json = malloc(strlen(b64) + 128);
	if (!json)
		die("out of memory");
	sprintf(json, "[{\"role\": \"user\", \"parts\": [{\"type\": \"image\", "
			"\"media_type\": \"image/png\", \"data\": \"%s\"}]}]", b64);

	printf("image: %d messages carrying the same %d-byte image (%zu bytes of base64)\n",
		   IMAGE_COPIES, image_bytes, strlen(b64));
	for (side = PLAIN; side <= MNEMO; side++)
	{
		const char *schema = side == MNEMO ? "mnemo" : "plain";
		Conn		c;
		Sizes		before,
					after;

		open_conn(&c, true);
		new_session(&c, side);
		rel_sizes(c.conn, schema, &before);
		for (i = 1; i <= IMAGE_COPIES; i++)
		{
			char		seq[16];
			const char *mnemo_values[2] = {c.session, json};
			const char *plain_values[4] = {c.session, seq, "user", b64};

			snprintf(seq, sizeof(seq), "%d", i);
			if (side == MNEMO)
				PQclear(run_prepared(c.conn, "mnemo_append", 2, mnemo_values));
			else
				PQclear(run_prepared(c.conn, c.insert, 4, plain_values));
		}
		rel_sizes(c.conn, schema, &after);
		bytes[side] = size_growth(schema, &before, &after, 1, "B");
		PQfinish(c.conn);
	}
	report("image: bytes for 10 copies of one image", "B", bytes[MNEMO], bytes[PLAIN]);
	printf("  mnemo per copy: %.2f x the image's raw bytes (plain: %.2f x)\n",
		   bytes[MNEMO] / IMAGE_COPIES / image_bytes, bytes[PLAIN] / IMAGE_COPIES / image_bytes);
	goal_add(ROW_IMAGE, bytes[MNEMO], bytes[PLAIN]);
	free(json);
	free(b64);
	free(raw);
}
