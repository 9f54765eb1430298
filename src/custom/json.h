/* A small JSON reader for operator specs: the whole document becomes a tree of ogj_value nodes
 * in one allocation-owning ogj_doc. Strictly RFC 8259:
 *   - numbers exactly  -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?  (no 0x10, 1., .5,
 *     +1, 01, NaN or Infinity); one beyond the range of a double (1e400) is an error, one below
 *     it rounds to 0 or a subnormal as strtod does;
 *   - strings: valid UTF-8, no raw control characters, only the escapes \" \\ \/ \b \f \n \r
 *     \t \uXXXX, surrogates only in high-low pairs; \u0000 is refused (strings here are
 *     NUL-terminated, so it would silently cut one short);
 *   - no comments, trailing commas or text after the document;
 *   - a key given twice in one object is an error (RFC 8259 leaves it open; a spec must not
 *     silently take one of two values);
 *   - arrays and objects nest at most OGJ_MAX_DEPTH levels.
 * Every error names the line and column (in characters, from 1) and what was expected there. */
#ifndef OG_CUSTOM_JSON_H
#define OG_CUSTOM_JSON_H

#include <stdbool.h>
#include <stddef.h>

/// Deepest nesting of arrays and objects accepted (bounds the reader's recursion).
#define OGJ_MAX_DEPTH 64

typedef enum { OGJ_NULL, OGJ_BOOL, OGJ_NUMBER, OGJ_STRING, OGJ_ARRAY, OGJ_OBJECT } ogj_type;

typedef struct ogj_value {
    ogj_type type;
    bool boolean;
    double number;
    char *string;             // OGJ_STRING (NUL-terminated, escapes decoded)
    int count;                // OGJ_ARRAY / OGJ_OBJECT: number of items
    struct ogj_value **items; // items (arrays) or values (objects)
    char **keys;              // OGJ_OBJECT: keys, parallel to items
    int line;                 // where the value starts, for messages
} ogj_value;

typedef struct ogj_doc ogj_doc;

/// Parses NUL-terminated text; NULL with a message in err (when errsize > 0), e.g.
/// "line 3, column 7: expected ':' after the key \"name\", found '='".
ogj_doc *ogj_parse(const char *text, char *err, size_t errsize);
void ogj_free(ogj_doc *doc);
const ogj_value *ogj_root(const ogj_doc *doc);
/// The value of `key` in an object, or NULL.
const ogj_value *ogj_get(const ogj_value *obj, const char *key);
const char *ogj_type_name(ogj_type t);

#endif
