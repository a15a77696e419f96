/*
 * files.h
 *		Large files (mnemo_file_handle): read a file, return it inline below
 *		the threshold, else as a content-addressed reference with an
 *		exploration summary, cached in mnemo.file_references.
 *
 * Owns: files/ (handle.c: reading, the sha256 content id, the cache and the
 * part; detect.c: the file type; explore.c: the summaries of data and text
 * formats; outline.c: the outlines of source code; lines.c: the line
 * iterator and name lists both of those use).
 * May call: store/ (the file reference wrappers, the token estimate) and
 * core/.  Nothing below calls into files/.
 */
#ifndef MNEMO_FILES_H
#define MNEMO_FILES_H

#include "core/json.h"

/* The inline threshold of mnemo_file_handle, tokens: at or above it a text
 * is stored as a reference. */
#define MN_FILE_INLINE_THRESHOLD 10000

/*
 * The content-addressed reference ("sha256:<hex>") of text data[0..len): the
 * one stored before (*cached), or a new one stored with the exploration
 * summary of the type path names.  *ref is the caller's to free.  Used for
 * large files (mnemo_file_handle) and for outputs compaction takes out of
 * the view whole (compact/engine.c).
 */
int			mn_file_reference(mnemo_store *st, const char *path, const char *data, size_t len,
							  int token_count, mnemo_file_ref **ref, bool *cached);

/* The type of a file from its name: "c", "python", "json", ... or
 * "unknown" (a constant string). */
const char *mn_file_type(const char *path);

/* Append the exploration summary of text[0..len) (NUL-terminated, valid
 * UTF-8) of the given type to out. */
void		mn_explore(const char *type, const char *text, size_t len, mn_buf *out);

/* The outline of a source file (imports, types, functions) for type "c",
 * "python", "javascript" or "typescript"; false for any other type. */
bool		mn_outline(const char *type, const char *text, size_t len, mn_buf *out);

/*
 * What explore.c and outline.c share (lines.c): lines, and lists of names
 * capped at MN_LIST_MAX entries.
 */
#define MN_LIST_MAX 40

typedef struct mn_lines
{
	const char *p;				/* the next line */
	const char *end;
} mn_lines;

/* The next line (without its \n or \r\n) in *line and *len; false at the end. */
bool		mn_next_line(mn_lines *it, const char **line, size_t *len);

typedef struct mn_names
{
	mn_buf		buf;			/* "a, b, c" */
	int			count;			/* all seen, listed or not */
} mn_names;

void		mn_names_add(mn_names *n, const char *s, size_t len);
/* Append "label (N): a, b, ... (+M more)\n" to out when there are any, and
 * free the list. */
void		mn_names_flush(mn_names *n, const char *label, mn_buf *out);

#endif							/* MNEMO_FILES_H */
