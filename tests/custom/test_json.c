/* The spec reader's JSON (src/custom/json.h) is strictly RFC 8259: every form strtod or a lax
 * reader would take (hex and hex-float numbers, 1., .5, +1, NaN, trailing commas, raw control
 * characters, bad escapes, lone surrogates, invalid UTF-8, duplicate keys, deep nesting, numbers
 * beyond a double) is refused with its line, column and what was expected; valid edge cases are
 * read exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "custom/json.h"
#include "test.h"

static char err[512];

/// text is refused with a message containing `needle` (which names the position).
static void reject(const char *text, const char *needle) {
    err[0] = 0;
    ogj_doc *d = ogj_parse(text, err, sizeof err);
    CHECKF(d == NULL && strstr(err, needle) != NULL, "'%s': got %s, message \"%s\" lacks \"%s\"",
           text, d ? "a document" : "NULL", err, needle);
    CHECKF(!strncmp(err, "line ", 5), "'%s': message \"%s\" names no line", text, err);
    ogj_free(d);
}

/// The root of text, which must parse (the caller frees *doc).
static const ogj_value *accept(const char *text, ogj_doc **doc) {
    err[0] = 0;
    *doc = ogj_parse(text, err, sizeof err);
    CHECKF(*doc != NULL, "'%s' refused: %s", text, err);
    return ogj_root(*doc);
}

static void check_number(const char *text, double want) {
    ogj_doc *d;
    const ogj_value *v = accept(text, &d);
    CHECKF(v && v->type == OGJ_NUMBER && v->number == want && signbit(v->number) == signbit(want),
           "'%s' read as %.17g", text, v ? v->number : NAN);
    ogj_free(d);
}

static void check_string(const char *text, const char *want) {
    ogj_doc *d;
    const ogj_value *v = accept(text, &d);
    CHECKF(v && v->type == OGJ_STRING && !strcmp(v->string, want), "'%s' read as \"%s\"", text,
           v && v->string ? v->string : "(none)");
    ogj_free(d);
}

static void test_numbers_refused(void) {
    // forms strtod accepts, which the old reader let through
    reject("0x10", "line 1, column 2: invalid number '0x10': expected '.', 'e', 'E' or the end of "
                   "the number after a leading 0, found 'x10'");
    reject("0X1p4", "line 1, column 2: invalid number '0X1p4'");
    reject("1.", "line 1, column 3: invalid number '1.': expected a digit after '.', found the end "
                 "of the text");
    reject("1.e5", "line 1, column 3: invalid number '1.e5': expected a digit after '.', found "
                   "'e5'");
    reject("[1.]", "line 1, column 4: invalid number '1.': expected a digit after '.', found ']'");
    // forms strtod refuses or reads partly
    reject("01", "line 1, column 2: invalid number '01': expected '.', 'e', 'E' or the end of the "
                 "number after a leading 0, found '1'");
    reject("-01", "line 1, column 3: invalid number '-01'");
    reject("+1", "line 1, column 1: expected a value (object, array, string, number, true, false "
                 "or null), found '+'");
    reject(".5", "line 1, column 1: expected a value (object, array, string, number, true, false "
                 "or null), found '.'");
    reject("-", "line 1, column 2: invalid number '-': expected a digit after '-', found the end");
    reject("-.5", "expected a digit after '-', found '.'");
    reject("1e", "line 1, column 3: invalid number '1e': expected a digit in the exponent, found "
                 "the end of the text");
    reject("1e+", "line 1, column 4: invalid number '1e+': expected a digit in the exponent");
    reject("[1E-]", "line 1, column 5: invalid number '1E-': expected a digit in the exponent, "
                    "found ']'");
    reject("1.5.2", "line 1, column 4: invalid number '1.5.2': expected a digit, 'e', 'E' or the "
                    "end of the number, found '.'");
    reject("1e5e3", "line 1, column 4: invalid number '1e5e3': expected a digit or the end of the "
                    "number, found 'e3'");
    reject("12abc", "line 1, column 3: invalid number '12abc'");
    reject("NaN", "line 1, column 1: expected a value (object, array, string, number, true, false "
                  "or null), found 'NaN'");
    reject("Infinity", "found 'Infinity'");
    reject("-Infinity", "line 1, column 2: invalid number '-Infinity': expected a digit after "
                        "'-', found 'Infinity'");
    reject("[nan]", "line 1, column 2: expected a value");
    // beyond the range of a double: an error, not inf
    reject("1e400", "line 1, column 1: number '1e400' is out of range: expected a magnitude of at "
                    "most 1.7976931348623157e308");
    reject("{\"a\":\n  -2e308}", "line 2, column 3: number '-2e308' is out of range");
    char big[400] = "1"; // 1e309 written out in full
    memset(big + 1, '0', 309);
    big[310] = 0;
    reject(big, "line 1, column 1: number '1000000000");
    reject(big, "is out of range");
}

static void test_numbers_accepted(void) {
    check_number("0", 0);
    check_number("-0", -0.0);
    check_number("-0.0", -0.0);
    check_number("1E+2", 100);
    check_number("1e2", 100);
    check_number("0.5e-3", 0.5e-3);
    check_number("-12.25E0", -12.25);
    check_number("1E-02", 0.01);
    check_number(" \t\r\n 42 \n", 42);
    check_number("1.7976931348623157e308", 1.7976931348623157e308); // the largest double
    check_number("4.9e-324", 4.9e-324);                             // the smallest subnormal
    check_number("1e-400", 0); // below the range: rounds to 0, as strtod does (no error)
    check_number("123456789012345678901234567890", 123456789012345678901234567890.0);
}

static void test_strings_refused(void) {
    reject("\"a\nb\"", "line 1, column 3: control character 0x0a in a string: expected it escaped "
                       "(\\n, \\t, \\u000a...)");
    reject("\"\t\"", "line 1, column 2: control character 0x09 in a string");
    reject("\"\x01\"", "control character 0x01 in a string");
    reject("\"\x1f\"", "control character 0x1f in a string");
    reject("\"\\x41\"", "line 1, column 2: invalid escape: expected one of \\\" \\\\ \\/ \\b \\f "
                        "\\n \\r \\t \\uXXXX after '\\', found 'x41'");
    reject("\"\\a\"", "invalid escape: expected one of");
    reject("\"\\'\"", "found '''");
    reject("\"\\", "invalid escape: expected one of");
    reject("\"\\u12\"", "line 1, column 2: invalid escape: expected 4 hex digits after \\u");
    reject("\"\\u12G4\"", "expected 4 hex digits after \\u");
    reject("\"\\U0041\"", "invalid escape");
    // surrogates: only high-low pairs
    reject("\"\\uD800\"", "line 1, column 2: lone surrogate \\uD800: expected a low surrogate "
                          "\\uDC00-\\uDFFF after it");
    reject("\"x\\uDBFFy\"", "line 1, column 3: lone surrogate \\uDBFF");
    reject("\"\\uD800\\u0041\"", "lone surrogate \\uD800: expected a low surrogate");
    reject("\"\\uD800\\uD800\"", "lone surrogate \\uD800");
    reject("\"\\uDC00\"", "line 1, column 2: lone surrogate \\uDC00: expected a high surrogate "
                          "\\uD800-\\uDBFF before it");
    reject("\"\\uD800\\uDC00\\uDFFF\"", "line 1, column 14: lone surrogate \\uDFFF");
    reject("\"\\u0000\"", "\\u0000 is not supported");
    // invalid UTF-8: stray continuation, bad lead bytes, overlong, surrogate, beyond U+10FFFF,
    // truncated sequences
    reject("\"\x80\"", "line 1, column 2: invalid UTF-8 in a string: found byte 0x80");
    reject("\"ab\xff\"", "line 1, column 4: invalid UTF-8 in a string: found byte 0xff");
    reject("\"\xc0\xaf\"", "found byte 0xc0"); // overlong '/'
    reject("\"\xc1\xbf\"", "found byte 0xc1");
    reject("\"\xe0\x80\xaf\"", "found byte 0xe0");     // overlong
    reject("\"\xed\xa0\x80\"", "found byte 0xed");     // encoded surrogate U+D800
    reject("\"\xf4\x90\x80\x80\"", "found byte 0xf4"); // U+110000
    reject("\"\xf5\x80\x80\x80\"", "found byte 0xf5");
    reject("\"\xc3\"", "found byte 0xc3");       // truncated by the quote
    reject("\"\xe2\x82\"", "found byte 0xe2");   // truncated
    reject("\"\xf0\x9f\x98", "found byte 0xf0"); // truncated by the end of the text
    reject("\"\xc3\xa9\xc3\"", "line 1, column 3: invalid UTF-8"); // columns count characters
    reject("\xc3\xa9", "line 1, column 1: expected a value (object, array, string, number, true, "
                       "false or null), found byte 0xc3");
    // unterminated
    reject("\"abc", "line 1, column 5: unterminated string (opened at line 1, column 1): expected "
                    "'\"', found the end of the text");
    reject("[\"a\\\"]", "unterminated string (opened at line 1, column 2)");
}

static void test_strings_accepted(void) {
    check_string("\"\"", "");
    check_string("\"plain text\"", "plain text");
    check_string("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t");
    check_string("\"\\u00e9\"", "\xc3\xa9"); // e acute
    check_string("\"\\u00E9t\\u00e9\"", "\xc3\xa9t\xc3\xa9");
    check_string("\"\\u0041\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"",
                 "A\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
    check_string("\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80");  // U+1F600, a surrogate pair
    check_string("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf");  // U+10FFFF
    check_string("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", // raw UTF-8: e acute, euro, emoji
                 "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    check_string("\"\x7f\"", "\x7f"); // DEL is not a control character in JSON's grammar
}

static void test_structure_refused(void) {
    reject("[1,]", "line 1, column 4: trailing comma before ']': expected a value");
    reject("[1, ]", "line 1, column 5: trailing comma before ']'");
    reject("{\"a\": 1,}", "line 1, column 9: trailing comma before '}': expected a string key "
                          "after ','");
    reject("{\"a\": 1,\n}", "line 2, column 1: trailing comma before '}'");
    reject("[,1]", "line 1, column 2: expected a value");
    reject("[1,,2]", "line 1, column 4: expected a value");
    reject("[1 2]", "line 1, column 4: expected ',' or ']' after an array item, found '2'");
    reject("{\"a\" 1}", "line 1, column 6: expected ':' after the key \"a\", found '1'");
    reject("{\"a\": 1 \"b\": 2}", "expected ',' or '}' after an object member, found '\"'");
    reject("{a: 1}", "line 1, column 2: expected a string key, found 'a'");
    reject("{'a': 1}", "expected a string key, found '''");
    reject("{1: 1}", "expected a string key, found '1'");
    reject("[1", "line 1, column 3: expected ',' or ']' after an array item, found the end of the "
                 "text");
    reject("{", "line 1, column 2: expected a string key, found the end of the text");
    reject("{\"a\": }", "line 1, column 7: expected a value");
    reject("[1]]", "line 1, column 4: expected the end of the text after the document, found ']'");
    // leading and trailing garbage, comments, empty documents
    reject("", "line 1, column 1: expected a value (object, array, string, number, true, false or "
               "null), found the end of the text");
    reject("  \n ", "line 2, column 2: expected a value");
    reject("x{}", "line 1, column 1: expected a value");
    reject("\xef\xbb\xbf{}", "found byte 0xef"); // a byte order mark
    reject("{} x", "line 1, column 4: expected the end of the text after the document, found 'x'");
    reject("{}\n// c", "line 2, column 1: expected the end of the text");
    reject("[1] [2]", "expected the end of the text after the document, found '['");
    reject("/* c */ 1", "expected a value");
    reject("[1,\v2]", "found byte 0x0b"); // JSON's whitespace is space, tab, LF and CR only
    reject("[1,\f2]", "found byte 0x0c");
    // literals are whole words, in lower case
    reject("tru", "found 'tru'");
    reject("nullx", "line 1, column 1: expected a value (object, array, string, number, true, "
                    "false or null), found 'nullx'");
    reject("[true1]", "found 'true1'");
    reject("True", "found 'True'");
    reject("None", "found 'None'");
    reject("[undefined]", "found 'undefined'");
}

static void test_duplicate_keys(void) {
    reject("{\"a\": 1, \"a\": 2}", "line 1, column 10: duplicate key \"a\": expected each key "
                                   "once in an object (first at line 1, column 2)");
    // the earliest repetition is named, wherever the keys sort
    reject("{\"z\": 1, \"b\": 2,\n \"z\": 3, \"b\": 4, \"b\": 5}",
           "line 2, column 2: duplicate key \"z\": expected each key once in an object (first at "
           "line 1, column 2)");
    reject("{\"x\": {\"k\": 1, \"j\": 2, \"k\": [3]}}", "line 1, column 24: duplicate key \"k\"");
    // keys compare after decoding escapes
    reject("{\"\\u0061\": 1, \"a\": 2}", "duplicate key \"a\"");
    // the same key in different objects is fine
    ogj_doc *d;
    const ogj_value *v = accept("{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}, \"A\": 3}", &d);
    CHECK(v && v->type == OGJ_OBJECT && v->count == 3);
    ogj_free(d);
    // many keys (sorted, not compared pairwise): the last repeats the first
    enum { N = 20000 };
    char *t = malloc(N * 24 + 32), *o = t;
    o += sprintf(o, "{");
    for (int i = 0; i < N; i++) o += sprintf(o, "%s\"k%d\": %d", i ? ", " : "", i, i);
    strcpy(o, "}");
    v = accept(t, &d);
    CHECK(v && v->count == N && ogj_get(v, "k19999")->number == 19999);
    ogj_free(d);
    sprintf(o, ", \"k0\": 0}");
    reject(t, "duplicate key \"k0\"");
    free(t);
}

static void test_depth(void) {
    // OGJ_MAX_DEPTH nested arrays are fine, one more is refused (not a stack overflow)
    char t[2 * OGJ_MAX_DEPTH + 8];
    for (int extra = 0; extra <= 1; extra++) {
        int n = OGJ_MAX_DEPTH + extra;
        memset(t, '[', (size_t)n);
        memset(t + n, ']', (size_t)n);
        t[2 * n] = 0;
        ogj_doc *d = ogj_parse(t, err, sizeof err);
        if (!extra)
            CHECKF(d != NULL, "%d levels: %s", n, err);
        else
            CHECKF(!d && strstr(err, "line 1, column 65: arrays and objects nested deeper than 64 "
                                     "levels (expected at most 64)"),
                   "%s", err);
        ogj_free(d);
    }
    // a depth bomb of a megabyte of '[' and of '{"a":' mixed in
    enum { BOMB = 1 << 20 };
    char *b = malloc(BOMB + 1);
    memset(b, '[', BOMB);
    b[BOMB] = 0;
    reject(b, "nested deeper than 64 levels");
    for (size_t i = 0; i + 5 <= BOMB; i += 5) memcpy(b + i, "{\"a\":", 5);
    reject(b, "nested deeper than 64 levels");
    free(b);
}

static void test_documents_accepted(void) {
    ogj_doc *d;
    const ogj_value *v = accept("{}", &d);
    CHECK(v && v->type == OGJ_OBJECT && v->count == 0 && !ogj_get(v, "a"));
    ogj_free(d);
    v = accept("[]", &d);
    CHECK(v && v->type == OGJ_ARRAY && v->count == 0);
    ogj_free(d);
    v = accept(" \t\r\n[ \t\r\n{ \t\r\n} \t\r\n, \t\r\n[ ] \t\r\n] \t\r\n", &d);
    CHECK(v && v->type == OGJ_ARRAY && v->count == 2 && v->items[0]->type == OGJ_OBJECT &&
          v->items[1]->type == OGJ_ARRAY);
    ogj_free(d);
    v = accept("{\"name\": \"f\",\n \"n\": [1, -0.5e1, true, false, null],\n \"o\": {\"\": 0}}",
               &d);
    CHECK(v && v->type == OGJ_OBJECT && v->count == 3);
    const ogj_value *n = ogj_get(v, "n"), *obj = ogj_get(v, "o");
    CHECK(n && n->type == OGJ_ARRAY && n->count == 5 && n->line == 2);
    CHECK(n && n->items[1]->number == -5 && n->items[2]->boolean && !n->items[3]->boolean &&
          n->items[4]->type == OGJ_NULL);
    CHECK(obj && obj->line == 3 && ogj_get(obj, "") && ogj_get(obj, "")->number == 0);
    CHECK(!strcmp(ogj_get(v, "name")->string, "f"));
    ogj_free(d);
    // any value may be the document
    v = accept("true", &d);
    CHECK(v && v->type == OGJ_BOOL && v->boolean);
    ogj_free(d);
    v = accept("null", &d);
    CHECK(v && v->type == OGJ_NULL);
    ogj_free(d);
}

static void test_api_edges(void) {
    // no message buffer, NULL text, a tiny buffer truncated and not overrun
    CHECK(ogj_parse("[1,]", NULL, 0) == NULL);
    CHECK(ogj_parse(NULL, err, sizeof err) == NULL && !strcmp(err, "no text"));
    char small[8] = "xxxxxxx";
    CHECK(ogj_parse("[1,]", small, 4) == NULL && strlen(small) == 3 && small[4] == 'x');
    ogj_free(NULL);
    CHECK(ogj_root(NULL) == NULL && ogj_get(NULL, "a") == NULL);
    CHECK(!strcmp(ogj_type_name(OGJ_OBJECT), "object"));
}

int main(void) {
    RUN(test_numbers_refused);
    RUN(test_numbers_accepted);
    RUN(test_strings_refused);
    RUN(test_strings_accepted);
    RUN(test_structure_refused);
    RUN(test_duplicate_keys);
    RUN(test_depth);
    RUN(test_documents_accepted);
    RUN(test_api_edges);
    return test_summary();
}
