/*
 * sha256.c
 *		The one sha256 of the extension: the key of a stored image
 *		(log/blobs.c) and of a session's lock (tenancy/session_lock.c).
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"

#include "mnemo.h"

/*
 * The sha256 of the n buffers parts[i] of lens[i] bytes, one after the
 * other, into digest (PG_SHA256_DIGEST_LENGTH bytes).
 */
void
MnemoSha256(int n, const void *const *parts, const size_t *lens, uint8 *digest)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	int			i;

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0)
		elog(ERROR, "could not compute a sha256 digest: %s", pg_cryptohash_error(ctx));
	for (i = 0; i < n; i++)
		if (pg_cryptohash_update(ctx, (const uint8 *) parts[i], lens[i]) < 0)
			elog(ERROR, "could not compute a sha256 digest: %s", pg_cryptohash_error(ctx));
	if (pg_cryptohash_final(ctx, digest, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute a sha256 digest: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}
