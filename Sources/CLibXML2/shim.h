#ifndef FERRY_CLIBXML2_SHIM_H
#define FERRY_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>
#include <libxml/xmlschemas.h>
#include <libxml/xmlerror.h>

/// Frees memory libxml2 allocated (`xmlFree` is a macro or a function-pointer variable,
/// depending on how libxml2 was built; Swift can call neither form directly everywhere).
static inline void ferry_xmlFree(void *pointer) {
    xmlFree(pointer);
}
#endif
