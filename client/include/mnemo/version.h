/*
 * mnemo/version.h
 *		The library's version, the one place it is written: the soname
 *		(libmnemo.so.MAJOR), the file name and mnemo.pc are scraped from it
 *		by client/Makefile, and mnemo_store_open checks the server's
 *		extension against MAJOR.MINOR.
 *
 * The ABI: MNEMO_VERSION_MAJOR is the soname, so it changes whenever a
 * program built against the previous version could break: a function
 * removed or changed, or a public struct that changes size or layout.  A
 * renamed function keeps its old name exported as a deprecated alias until
 * the next major.  Option and spec structs only ever gain fields at the end
 * (a new major), and a field's zero value, or its _INIT macro's value, keeps
 * the old behaviour: code that initialises with the _INIT macro compiles
 * and behaves the same against the next version.  Before 1.0 each minor
 * may do so (0.4 and 0.5 gave option and result structs new fields), so the
 * soname is libmnemo.so.0.MINOR: a program is rebuilt for each 0.x minor,
 * which it needs anyway to meet the extension of that version.
 */
#ifndef MNEMO_API_VERSION_H
#define MNEMO_API_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MNEMO_VERSION_MAJOR 0
#define MNEMO_VERSION_MINOR 13
#define MNEMO_VERSION_PATCH 0

#if defined(MNEMO_BUILDING_LIBRARY) && defined(__GNUC__)
#define MNEMO_API __attribute__((visibility("default")))
#else
#define MNEMO_API
#endif

/* The longest id the extension accepts, in bytes (without the NUL). */
#define MNEMO_ID_MAX 256

/*
 * How deep a part may nest: the part object is level 1, each array or object
 * or scalar inside a level deeper ({"type": "text", "text": "hi"} is 2 deep,
 * so a tool's input may nest one level less than its part).  The
 * server refuses deeper parts (22023); the library refuses them before
 * sending (MNEMO_ERR_FORMAT), and a mnemo JSONL line, which holds its parts
 * two levels down, may nest MNEMO_MAX_JSON_DEPTH + 2 levels.
 */
#define MNEMO_MAX_JSON_DEPTH 512

#if defined(__GNUC__)
#define MNEMO_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define MNEMO_DEPRECATED(msg)
#endif

#endif							/* MNEMO_API_VERSION_H */
