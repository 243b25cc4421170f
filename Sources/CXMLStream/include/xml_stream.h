// A small C layer over libxml2's SAX2 parser for the Atom/RSS readers (SAXParser.swift).
// libxml2's own headers are not imported into Swift: they pull in ICU headers that clash with
// Foundation's bundled ICU. This header exposes only what the readers need.
#ifndef TRAFFICGEO_XML_STREAM_H
#define TRAFFICGEO_XML_STREAM_H

typedef struct xml_stream_callbacks {
    /// attributes: 5 pointers per attribute (localname, prefix, URI, value start, value end).
    void (*start_element)(void *user, const unsigned char *localname, const unsigned char *prefix,
                          const unsigned char *uri, int nb_attributes, const unsigned char **attributes);
    void (*end_element)(void *user, const unsigned char *localname, const unsigned char *prefix, const unsigned char *uri);
    /// Text and CDATA.
    void (*characters)(void *user, const unsigned char *text, int length);
    /// An ENTITY declaration in the DTD; external = 1 for SYSTEM/PUBLIC ones.
    void (*entity_declaration)(void *user, const unsigned char *name, int external);
    /// An error (not a warning): libxml2's code, position and message.
    void (*error)(void *user, int code, int line, int column, const char *message);
} xml_stream_callbacks;

typedef struct xml_stream xml_stream;

/// Reads up to `length` bytes into `buffer`: the count, 0 at the end of the input, -1 on an error.
typedef int (*xml_stream_read)(void *user, char *buffer, int length);

/// A parser that pulls its input through `read` as it needs it (libxml2 detects the encoding
/// from the first bytes). No network, no entity substitution, libxml2's default limits. NULL
/// when out of memory.
xml_stream *xml_stream_create(const xml_stream_callbacks *callbacks, void *user, xml_stream_read read);
/// Parses the whole document, calling back as it goes; returns 1 when it was well-formed.
int xml_stream_parse(xml_stream *stream);
/// Stops after the current callback.
void xml_stream_stop(xml_stream *stream);
int xml_stream_line(xml_stream *stream);
int xml_stream_column(xml_stream *stream);
void xml_stream_free(xml_stream *stream);

#endif
