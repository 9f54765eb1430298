/* A small JSON reader for operator specs: the whole document becomes a tree of ogj_value nodes
 * in one allocation-owning ogj_doc. Strict RFC 8259 syntax (no comments, no trailing commas);
 * errors name the line and column. */
#ifndef OG_CUSTOM_JSON_H
#define OG_CUSTOM_JSON_H

#include <stdbool.h>
#include <stddef.h>

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

/// Parses text; NULL with a message ("line 3, column 7: expected ':' after an object key").
ogj_doc *ogj_parse(const char *text, char *err, size_t errsize);
void ogj_free(ogj_doc *doc);
const ogj_value *ogj_root(const ogj_doc *doc);
/// The value of `key` in an object, or NULL.
const ogj_value *ogj_get(const ogj_value *obj, const char *key);
const char *ogj_type_name(ogj_type t);

#endif
