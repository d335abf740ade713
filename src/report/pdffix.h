/*
 * pdffix: repairs the ToUnicode CMaps that libharu 2.3.0 writes for UTF-8 TrueType fonts.
 *
 * libharu's UTF-8 encoder puts the encoding's 'begincidrange' operator into the font's ToUnicode
 * stream, where PDF readers expect 'beginbfrange' or 'beginbfchar'; poppler says "Invalid
 * 'begincidrange' operator in ToUnicode CMap" and search, copy and paste then depend on each
 * reader's own fallback. The codes that encoder writes are the Unicode code points themselves
 * (Identity-H, code = CID = BMP code point), so the right ToUnicode is the identity map of the
 * Basic Multilingual Plane. pdffix_tounicode rewrites each ToUnicode stream object of a document
 * that libharu saved (one classic cross-reference table, no object streams) as that CMap, and
 * shifts the cross-reference table accordingly.
 *
 * Pure: bytes in, bytes out; the caller owns both buffers.
 */
#ifndef MEMFIT_PDFFIX_H
#define MEMFIT_PDFFIX_H

#include <stddef.h>

/*
 * Returns 0 with *out (malloc'ed, *out_len bytes) the repaired document; 1 when there is nothing
 * to repair (*out NULL); -1 when the document is not laid out as libharu writes it or memory ran
 * out (*out NULL: write the input as it is).
 */
int pdffix_tounicode(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len);

#endif
