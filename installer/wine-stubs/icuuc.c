/*
 * Build-time stand-in for the Windows system icuuc.dll, which Wine 8 lacks.
 *
 * Qt 6.10+ (Qt6Core.dll) imports the ICU converter API from it. This stub
 * makes every converter unavailable, so Qt falls back to its built-in UTF
 * codecs. Only installed into the Wine prefix used for building and for the
 * smoke test; never shipped in the bundle (Windows 10 1903+ has icuuc.dll).
 */
#include <stddef.h>
#include <stdint.h>

#define EXPORT __declspec(dllexport)
#define U_MISSING_RESOURCE_ERROR 2

typedef int UErrorCode;

static void fail(UErrorCode *err)
{
    if (err != NULL && *err <= 0)
        *err = U_MISSING_RESOURCE_ERROR;
}

EXPORT void *ucnv_open(const char *name, UErrorCode *err) { (void)name; fail(err); return NULL; }
EXPORT void ucnv_close(void *cnv) { (void)cnv; }
EXPORT void ucnv_reset(void *cnv) { (void)cnv; }
EXPORT int8_t ucnv_getMaxCharSize(const void *cnv) { (void)cnv; return 1; }
EXPORT const char *ucnv_getName(const void *cnv, UErrorCode *err) { (void)cnv; fail(err); return NULL; }
EXPORT void ucnv_getToUCallBack(const void *cnv, void **action, const void **context)
{ (void)cnv; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_getFromUCallBack(const void *cnv, void **action, const void **context)
{ (void)cnv; if (action) *action = NULL; if (context) *context = NULL; }
EXPORT void ucnv_setToUCallBack(void *cnv, void *a, const void *c, void **oa, const void **oc, UErrorCode *err)
{ (void)cnv; (void)a; (void)c; if (oa) *oa = NULL; if (oc) *oc = NULL; fail(err); }
EXPORT void ucnv_setFromUCallBack(void *cnv, void *a, const void *c, void **oa, const void **oc, UErrorCode *err)
{ (void)cnv; (void)a; (void)c; if (oa) *oa = NULL; if (oc) *oc = NULL; fail(err); }
EXPORT void ucnv_cbToUWriteUChars(void *args, const void *source, int32_t length, int32_t offset, UErrorCode *err)
{ (void)args; (void)source; (void)length; (void)offset; fail(err); }
EXPORT void ucnv_cbFromUWriteUChars(void *args, const void **source, const void *limit, int32_t offset, UErrorCode *err)
{ (void)args; (void)source; (void)limit; (void)offset; fail(err); }
EXPORT void ucnv_toUnicode(void *cnv, void **t, const void *tl, const char **s, const char *sl, int32_t *o, int8_t f, UErrorCode *err)
{ (void)cnv; (void)t; (void)tl; (void)s; (void)sl; (void)o; (void)f; fail(err); }
EXPORT void ucnv_fromUnicode(void *cnv, char **t, const char *tl, const void **s, const void *sl, int32_t *o, int8_t f, UErrorCode *err)
{ (void)cnv; (void)t; (void)tl; (void)s; (void)sl; (void)o; (void)f; fail(err); }
EXPORT int32_t ucnv_toUCountPending(const void *cnv, UErrorCode *err) { (void)cnv; fail(err); return 0; }
EXPORT int32_t ucnv_fromUCountPending(const void *cnv, UErrorCode *err) { (void)cnv; fail(err); return 0; }
EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *err)
{ (void)name; (void)standard; fail(err); return NULL; }
EXPORT const char *ucnv_getAvailableName(int32_t n) { (void)n; return NULL; }
EXPORT int32_t ucnv_countAvailable(void) { return 0; }
EXPORT void UCNV_FROM_U_CALLBACK_SUBSTITUTE(const void *c, void *a, const void *u, int32_t l, int32_t cp, int r, UErrorCode *err)
{ (void)c; (void)a; (void)u; (void)l; (void)cp; (void)r; fail(err); }
EXPORT void UCNV_TO_U_CALLBACK_SUBSTITUTE(const void *c, void *a, const char *b, int32_t l, int r, UErrorCode *err)
{ (void)c; (void)a; (void)b; (void)l; (void)r; fail(err); }

/* Lets tests/test_packaging.py recognise this stub if it ever reached a bundle. */
__attribute__((used)) static const char yupana_marker[] = "YUPANA-WINE-BUILD-STUB";
