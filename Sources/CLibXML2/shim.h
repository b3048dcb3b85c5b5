#ifndef FERRY_CLIBXML2_SHIM_H
#define FERRY_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// libxml2 built with ICU includes ICU's own headers (<unicode/ucnv.h>) for its converters. They
// clash with the copy of ICU that Foundation brings (_FoundationICU) in any module that sees
// both, which fails a fresh build ("'U_MF_…' from module '_FoundationICU' is not present in
// definition of 'enum UErrorCode'"). Ferry reads UTF-8 only and never touches the converter
// fields those headers declare (the last two of xmlCharEncodingHandler, a struct Ferry never
// holds by value), so they are left out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>
#include <libxml/xmlschemas.h>
#include <libxml/xmlschemastypes.h>
#include <libxml/xmlerror.h>

/// Frees memory libxml2 allocated (`xmlFree` is a macro or a function-pointer variable,
/// depending on how libxml2 was built; Swift can call neither form directly everywhere).
static inline void ferry_xmlFree(void *pointer) {
    xmlFree(pointer);
}

/// Builds libxml2's table of built-in schema types. libxml2 2.9 builds it lazily, unlocked, on the
/// first schema parse, so two threads compiling their first schemas at once race: both build the
/// table and one copy leaks (LeakSanitizer reports it) while the other thread may read a table
/// being replaced. Called once, under Swift's once-only global initialisation, before any schema
/// is parsed. Newer libxml2 releases deprecate this call (hence the pragma); calling it after the
/// table is built does nothing.
static inline void ferry_xmlSchemaInitTypes(void) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    xmlSchemaInitTypes();
#pragma clang diagnostic pop
}
#endif
