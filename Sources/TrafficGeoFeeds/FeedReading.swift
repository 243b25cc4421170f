import Foundation
import TrafficGeoModel

/// Picks the reader for a feed: the format named, or the one detected from the content.
public enum FeedReading {
    /// `crs`: the CRS of CSV x/y columns and of GeoJSON positions (any PROJ definition; nil:
    /// WGS84). Atom, RSS and the Autobahn API give WGS84 by definition.
    /// `locationTable`: a TMC location table for DATEX II's ALERT-C locations (`--tmc-table`).
    /// `fields`: which CSV column is which field (`title=advisorymessage`); `note` is
    /// told what a reader recognised on its own (a CSV feed's columns), to be said to the user.
    public static func reader(for format: FeedFormat, crs: String? = nil, locationTable: AlertCLocationTable? = nil,
                              fields: [CSVColumns.Role: String] = [:], note: ((FeedNote) -> Void)? = nil) -> FeedReader {
        switch format {
        case .datex2: return DatexReader(locationTable: locationTable)
        case .wzdx: return WZDxReader()
        case .open511: return Open511Reader()
        case .waze: return WazeCIFSReader()
        case .atom, .rss: return XMLFeedReader(format: format)
        case .autobahn: return AutobahnJSONReader()
        case .geojson: return GeoJSONReader(crs: crs, fields: fields, note: note)
        case .csv: return CSVFeedReader(crs: crs, fields: fields, note: note)
        case .gis: return GISNeedsOGR()
        case .records: return RecordsReader(crs: crs, fields: fields, note: note)
        }
    }

    /// What the feed readers alone answer for a GIS file: GDAL is opened by TrafficGeoOGR, which
    /// the pipeline (FeedIngestor) and the tool use, so that this product needs no GDAL.
    struct GISNeedsOGR: FeedReader {
        func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
            throw FeedError.malformed(input.location, format: .gis,
                                      reason: "a GIS file is read through GDAL/OGR: by the trafficgeo tool, or with TrafficGeoOGR's OGRFeedReader in a program (the TrafficGeo library product)",
                                      entriesRead: 0)
        }
    }

    /// The format of `input`: `forced` when given, else detected from the first bytes.
    /// The format of the input: `forced` when given (refused when the content is plainly of
    /// another kind: XML, JSON or text), else detected from the first bytes.
    public static func format(of input: FeedInput, forced: FeedFormat? = nil) throws -> FeedFormat {
        let head = try input.head()
        if head.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { throw FeedError.empty(input.location) }
        let detected = FeedFormat.detect(head)
        if let forced {
            if let detected, !forced.accepts(family: FeedFormat.contentFamily(head)) {
                throw FeedError.formatMismatch(input.location, forced: forced, detected: detected)
            }
            return forced
        }
        guard let detected else { throw FeedError.unknownFormat(input.location, seen: FeedFormat.describeContent(head)) }
        return detected
    }

    /// Reads a whole feed into memory: for tests and small feeds. Ingest streams instead.
    public static func readAll(_ input: FeedInput, source: String? = nil, format: FeedFormat? = nil) throws -> (incidents: [Incident], skipped: [SkippedEntry]) {
        let reader = reader(for: try self.format(of: input, forced: format))
        var incidents: [Incident] = []
        var skipped: [SkippedEntry] = []
        try reader.read(input, source: source ?? input.location) { event in
            switch event {
            case let .incident(i): incidents.append(i)
            case let .skipped(s): skipped.append(s)
            }
        }
        return (incidents, skipped)
    }
}
