/*
 * blobs.c
 *		Binary parts stored once per tenant, as bytes: mnemo.blobs.
 *
 * An image part appended with "data" (base64) is stored with "data"
 * replaced by {"sha256": hex, "bytes": n}, naming a row of mnemo.blobs keyed
 * by (tenant, sha256 of the bytes) that holds the decoded bytes once, however
 * many parts of the tenant's sessions carry them.  "data" is a string in
 * every part an append accepts (parts.c), so an object there is always such
 * a reference.  Reads turn it back into the appended base64 (MNEMO_PART_CONTENT
 * in log.h, the one place that does).  So that this is exact, a part is
 * converted only when its data decodes strictly and encodes back to the same
 * string (pg_b64_encode: no line breaks, canonical padding and bits); any
 * other data stays in the part as text, as before.  Estimates and the
 * rendering of an image do not change (render.c reads "bytes").
 *
 * A row counts its references (refs): the image parts of the tenant that
 * name it.  An append adds to it with INSERT ... ON CONFLICT DO UPDATE, which
 * takes the row lock until commit; a purge (MnemoReleaseBlobs) locks the rows
 * its session names, subtracts the session's references and deletes the rows
 * that reach none.  So a purge never deletes a row an append in flight is
 * about to reference: either the append's upsert came first and the purge
 * waits for it and sees its reference, or the purge came first and the
 * upsert waits for its commit, finds the row gone and inserts it anew with
 * the bytes it carries.  Both lock the rows in sha256 order, so two calls
 * naming the same images cannot deadlock on them; each holds its own session
 * lock only, so neither waits for the other's session.
 *
 * Rows are per tenant: the same image in two tenants is two rows, and an
 * append never reads, locks or waits on another tenant's row (doc/security.md).
 *
 * Under Citus, mnemo.blobs is a reference table (it has no session column),
 * and a call delegated to a session's node may not write one: there, images
 * stay in their parts as text, as before blobs (doc/scale-out.md).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/base64.h"
#include "common/sha2.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "mnemo.h"
#include "log/log.h"

static SPIPlanPtr upsert_plan;
static SPIPlanPtr lock_plan;
static SPIPlanPtr delete_plan;
static SPIPlanPtr release_plan;

/* an image of a call with the digest of its bytes */
typedef struct BlobRef
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	int			part;			/* the first part that carries it */
	int64		refs;			/* how many parts of the call do */
} BlobRef;

/* Whether mnemo.blobs is written here: not where Citus replicates it. */
static bool
BlobsWritable(void)
{
	return !MnemoCitusTable(get_relname_relid("blobs", get_namespace_oid("mnemo", false)));
}

static int
CompareRefs(const void *a, const void *b)
{
	return memcmp(((const BlobRef *) a)->digest, ((const BlobRef *) b)->digest,
				  PG_SHA256_DIGEST_LENGTH);
}

/*
 * Whether part is an image with a "data" string (not a url, nor an object
 * naming a blob); if so, *data and *len are that string's, in the part.
 */
static bool
ImageData(const MnemoPart *part, const char **data, int *len)
{
	JsonbValue	buf;
	JsonbValue *v;

	if (strcmp(part->part_type, "image") != 0)
		return false;
	v = getKeyJsonValueFromContainer(&part->content->root, "data", 4, &buf);
	if (v == NULL || v->type != jbvString)
		return false;
	*data = v->val.string.val;
	*len = v->val.string.len;
	return true;
}

/*
 * The bytes of base64 text data as a palloc'd bytea, or NULL unless data
 * decodes strictly and pg_b64_encode gives data back exactly.
 */
static bytea *
DecodeExactly(const char *data, int len)
{
	bytea	   *bytes = palloc(VARHDRSZ + pg_b64_dec_len(len));
	int			n = pg_b64_decode(data, len, VARDATA(bytes), pg_b64_dec_len(len));
	char	   *again;
	bool		exact;

	/* pg_b64_enc_len is a bound; the exact length is 4 per 3 bytes begun */
	if (n < 0 || (n + 2) / 3 * 4 != len)
	{
		pfree(bytes);
		return NULL;
	}
	again = palloc(pg_b64_enc_len(n) + 1);
	exact = pg_b64_encode(VARDATA(bytes), n, again, pg_b64_enc_len(n) + 1) == len &&
		memcmp(again, data, len) == 0;
	pfree(again);
	if (!exact)
	{
		pfree(bytes);
		return NULL;
	}
	SET_VARSIZE(bytes, VARHDRSZ + n);
	return bytes;
}

static void
Sha256(const bytea *bytes, uint8 *digest)
{
	const void *parts[1] = {VARDATA(bytes)};
	size_t		lens[1] = {VARSIZE(bytes) - VARHDRSZ};

	MnemoSha256(1, parts, lens, digest);
}

static bytea *
DigestBytea(const uint8 *digest)
{
	bytea	   *b = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	SET_VARSIZE(b, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	memcpy(VARDATA(b), digest, PG_SHA256_DIGEST_LENGTH);
	return b;
}

/*
 * The stored content of n parts of tenant's (parts[i] NULL: no part),
 * stored[i] NULL for a part stored as given, else its content naming its blob; the blobs are written
 * (or their references counted) before this returns.  The caller holds the
 * session lock and writes the parts in the same transaction.  One image's
 * bytes are held at a time: the bytes are decoded again for the write.
 */
Jsonb	  **
MnemoStoreBlobs(const char *tenant, int n, const MnemoPart *const *parts)
{
	Jsonb	  **stored = NULL;
	BlobRef    *refs = NULL;
	int			nrefs = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		const char *data;
		int			len;
		bytea	   *bytes;
		BlobRef    *ref;
		char		hex[PG_SHA256_DIGEST_LENGTH * 2 + 1];
		char	   *json;

		if (parts[i] == NULL || !ImageData(parts[i], &data, &len) || len == 0 ||
			(bytes = DecodeExactly(data, len)) == NULL)
			continue;
		if (stored == NULL)
		{
			if (!BlobsWritable())
				return NULL;
			stored = palloc0(sizeof(Jsonb *) * n);
			refs = palloc(sizeof(BlobRef) * n);
		}
		ref = &refs[nrefs++];
		Sha256(bytes, ref->digest);
		ref->part = i;
		ref->refs = 1;
		hex_encode((const char *) ref->digest, PG_SHA256_DIGEST_LENGTH, hex);
		hex[PG_SHA256_DIGEST_LENGTH * 2] = '\0';
		json = psprintf("{\"data\": {\"sha256\": \"%s\", \"bytes\": %u}}", hex,
						(unsigned) (VARSIZE(bytes) - VARHDRSZ));
		stored[i] = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
													   JsonbPGetDatum(parts[i]->content),
													   DirectFunctionCall1(jsonb_in,
																		   CStringGetDatum(json))));
		pfree(json);
		pfree(bytes);
	}
	if (nrefs == 0)
		return NULL;

	/* one row per image, in digest order (see the head comment) */
	qsort(refs, nrefs, sizeof(BlobRef), CompareRefs);
	MnemoPrepare(&upsert_plan,
				 "INSERT INTO mnemo.blobs AS b (sha256, bytes, refs, created_at, tenant) "
				 "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, sha256) "
				 "DO UPDATE SET refs = b.refs + excluded.refs",
				 5, (Oid[]) {BYTEAOID, BYTEAOID, INT8OID, INT8OID, TEXTOID});
	for (i = 0; i < nrefs; i++)
	{
		const char *data;
		int			len;
		Datum		values[5];
		int			same = i;

		while (i + 1 < nrefs && CompareRefs(&refs[i + 1], &refs[same]) == 0)
			i++;
		(void) ImageData(parts[refs[same].part], &data, &len);
		values[0] = PointerGetDatum(DigestBytea(refs[same].digest));
		values[1] = PointerGetDatum(DecodeExactly(data, len));
		values[2] = Int64GetDatum(i - same + 1);
		values[3] = Int64GetDatum(MnemoNowMs());
		values[4] = CStringGetTextDatum(tenant);
		MnemoExecute(upsert_plan, values, NULL, false, 0);
		pfree(DatumGetPointer(values[1]));
	}
	pfree(refs);
	return stored;
}

/*
 * Before a purge deletes the parts of session_id (tenant's): take their
 * references off the blobs they name and delete the blobs left with none.
 * The caller holds the session lock.  Three statements, so that the
 * subtraction reads the rows as they are once locked (READ COMMITTED
 * takes a snapshot per statement).
 */
void
MnemoReleaseBlobs(const char *session_id, const char *tenant)
{
	Datum		values[3];
	Datum	   *digests;
	Datum	   *counts;
	uint64		n;
	uint64		i;

	if (!BlobsWritable())
		return;
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&lock_plan,
				 "SELECT b.sha256, r.n FROM mnemo.blobs b "
				 "JOIN (SELECT pg_catalog.decode(p.content -> 'data' "
				 "             ->> 'sha256', 'hex') AS sha256, "
				 "             pg_catalog.count(*) AS n "
				 "        FROM mnemo.message_parts p "
				 "       WHERE p.session_id = $1 AND p.tenant = $2 AND p.part_type = 'image' "
				 "         AND pg_catalog.jsonb_typeof(p.content -> 'data') = 'object' "
				 "       GROUP BY 1) r ON b.sha256 = r.sha256 "
				 "WHERE b.tenant = $2 ORDER BY b.sha256 FOR UPDATE OF b",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	n = MnemoExecute(lock_plan, values, NULL, false, 0);
	if (n == 0)
		return;
	digests = palloc(sizeof(Datum) * n);
	counts = palloc(sizeof(Datum) * n);
	for (i = 0; i < n; i++)
	{
		bool		isnull;

		digests[i] = datumCopy(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1,
											 &isnull), false, -1);
		counts[i] = Int64GetDatum(MnemoGetInt64(i, 2, NULL));
	}
	values[1] = MnemoArray(BYTEAOID, digests, NULL, n);
	values[2] = MnemoArray(INT8OID, counts, NULL, n);
	values[0] = CStringGetTextDatum(tenant);
	MnemoPrepare(&delete_plan,
				 "DELETE FROM mnemo.blobs b USING unnest($2, $3) AS r(sha256, n) "
				 "WHERE b.tenant = $1 AND b.sha256 = r.sha256 AND b.refs <= r.n",
				 3, (Oid[]) {TEXTOID, BYTEAARRAYOID, INT8ARRAYOID});
	MnemoExecute(delete_plan, values, NULL, false, 0);
	MnemoPrepare(&release_plan,
				 "UPDATE mnemo.blobs b SET refs = b.refs - r.n FROM unnest($2, $3) AS r(sha256, n) "
				 "WHERE b.tenant = $1 AND b.sha256 = r.sha256",
				 3, (Oid[]) {TEXTOID, BYTEAARRAYOID, INT8ARRAYOID});
	MnemoExecute(release_plan, values, NULL, false, 0);
}

/*
 * mnemo._base64(bytes): the base64 of bytes without line breaks, the text
 * an append checked gives the appended string back exactly (DecodeExactly).
 * What MNEMO_PART_CONTENT puts back into a stored image's part: encode()
 * breaks its text every 76 characters, and taking the breaks out again cost
 * a read of a 300 KB image about 1 ms.
 */
PG_FUNCTION_INFO_V1(mnemo_base64);
Datum
mnemo_base64(PG_FUNCTION_ARGS)
{
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	int			n = VARSIZE_ANY_EXHDR(bytes);
	int			max = pg_b64_enc_len(n);
	text	   *out = palloc(VARHDRSZ + max + 1);
	int			len = pg_b64_encode(VARDATA_ANY(bytes), n, VARDATA(out), max + 1);

	if (len < 0)
		elog(ERROR, "could not encode %d bytes as base64", n);
	SET_VARSIZE(out, VARHDRSZ + len);
	PG_RETURN_TEXT_P(out);
}
