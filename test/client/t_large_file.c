/*
 * t_large_file.c
 *		A 50 MB file through mnemo_file_handle: one reference with its
 *		summary, and the file read into memory once.  The process's peak
 *		resident size (getrusage) may grow by the file and bounded working
 *		memory, not by two copies of it: reading it twice (a second buffer
 *		to hash, to estimate or to summarise) would add another 50 MB.
 *
 * Runs in a fresh database of its own (PGDATABASE); the file is written to
 * /tmp and removed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define FILE_MB 50

static long
peak_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int
main(void)
{
	char		path[64];
	FILE	   *f;
	mnemo_store *st;
	mnemo_file_result *r = NULL;
	mnemo_file_options o = MNEMO_FILE_OPTIONS_INIT;
	long		before;
	long		grew_kb;
	long		rows = 0;
	long		size;
	char		line[128];

	snprintf(path, sizeof(path), "/tmp/mnemo-large-%ld.csv", (long) getpid());
	if ((f = fopen(path, "wx")) == NULL)
		bail_out("cannot create %s", path);
	fputs("id,name,score,comment\n", f);
	for (size = 22; size < (long) FILE_MB * 1024 * 1024; rows++)
		size += fprintf(f, "%ld,name-%ld,%ld,%s\n", rows, rows, rows % 97,
						"a comment long enough to make the rows realistic");
	fclose(f);
	st = open_store(NULL);
	before = peak_kb();
	is_int(mnemo_file_handle(st, path, &o, &r), MNEMO_OK, "a %d MB CSV file is handled", FILE_MB);
	grew_kb = peak_kb() - before;
	ok(r && r->ref && r->inline_text == NULL && !r->cached, "as a new reference, not inline text");
	ok(r && r->ref && strcmp(r->ref->file_type, "csv") == 0, "of type csv");
	snprintf(line, sizeof(line), "Rows: %ld", rows);
	ok(r && r->ref && strstr(r->ref->exploration_summary, line) != NULL,
	   "its summary counts every row (%s)", line);
	ok(r && r->ref && strstr(r->ref->exploration_summary, "Columns (4): id, name, score, comment") != NULL,
	   "and names the columns");
	ok(r && r->token_count > FILE_MB * 1024 * 1024 / 8, "its tokens are estimated over the whole content (%d)",
	   r ? r->token_count : 0);
	diag("peak resident size grew by %ld kB for a %ld kB file", grew_kb, size / 1024);
	ok(grew_kb >= size / 1024 / 2, "the file was read into memory (peak grew by %ld kB)", grew_kb);
	ok(grew_kb < size / 1024 * 3 / 2,
	   "but not twice: the peak grew by less than 1.5 times the file (%ld kB < %ld kB)",
	   grew_kb, size / 1024 * 3 / 2);
	mnemo_file_result_free(r);
	unlink(path);
	mnemo_store_close(st);
	return tap_done();
}
