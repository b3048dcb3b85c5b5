#ifndef FERRY_CLIBXML2_SHIM_H
#define FERRY_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>
#include <libxml/xmlschemas.h>
#include <libxml/xmlerror.h>
#endif
