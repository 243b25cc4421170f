import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoOutput
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// The exit codes of trafficgeo, in one place (docs/errors.md lists them for users).
enum TrafficGeoExit {
    /// Everything done; skipped feed entries are warnings, not failures.
    static let success = ExitCode(0)
    /// The database or another resource failed.
    static let failure = ExitCode(1)
    /// Partly done: some feeds failed or ended early; the rest was stored.
    static let partial = ExitCode(3)
    /// A lookup found nothing (geocode, reverse).
    static let notFound = ExitCode(2)
    /// Bad input data (malformed feed, unknown format).  (BSD EX_DATAERR)
    static let dataError = ExitCode(65)
    /// An input file does not exist or cannot be read.  (EX_NOINPUT)
    static let noInput = ExitCode(66)
    /// A network download failed.  (EX_UNAVAILABLE)
    static let unavailable = ExitCode(69)
    /// Output could not be written.  (EX_CANTCREAT)
    static let cannotCreate = ExitCode(73)
    /// The reader of stdout quit (`… | head`): what a shell reports for a command SIGPIPE ended
    /// (128 + 13), which is how trafficgeo ends when no library has ignored that signal.
    static let readerGone = ExitCode(141)

    static func code(for error: Error) -> ExitCode {
        switch error {
        case let feed as FeedError:
            switch feed.code {
            case .notFound, .unreadable: return noInput
            case .download, .httpStatus: return unavailable
            default: return dataError
            }
        case let points as QueryLocations.ReadError: return points.isUnreadable ? noInput : dataError
        case let route as RouteLine.Problem: return route.isUnreadable ? noInput : dataError
        case OutputError.readerGone: return readerGone
        case is OutputError: return cannotCreate
        case let geocoding as GeocodingError:
            switch geocoding.code {
            case .configuration, .userAgentRequired: return ExitCode(64)
            case .connection, .unreachable, .timeout, .serverError, .rateLimited, .forbidden, .httpStatus: return unavailable
            default: return failure
            }
        default: return failure
        }
    }

    /// Runs a command body: library errors become one clear line on stderr and their exit code
    /// (an error escaping `async main` would crash the process instead).
    static func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as ExitCode {
            throw error
        } catch let error as ValidationError {
            throw error
        } catch OutputError.readerGone {
            // Silent, like a command ended by SIGPIPE: the reader has what it wanted.
            throw readerGone
        } catch {
            Terminal.printError("trafficgeo: error: \(describe(error))")
            throw code(for: error)
        }
    }

    /// An error in the command line's words: the library's, with the option or command that
    /// helps where one does (`--format`, `--max-feed-bytes`, `--rate`). The library's words name
    /// no option (serve's clients and Swift programs read them too): the errors name a `Setting`,
    /// and this is the one place that names its option (`advice`).
    static func describe(_ error: any Error) -> String {
        switch error {
        case let feed as FeedError:
            switch feed.code {
            case .unknownFormat:
                let seen = feed.reason.map { ": it is \($0)" } ?? ""
                return "\(feed.location): cannot tell the feed format from its content\(seen). trafficgeo reads Atom, RSS, the Autobahn API's JSON, "
                    + "GeoJSON, CSV, DATEX II, WZDx, Open511, Waze CIFS and, through GDAL, GIS files (KML, GML, Shapefile, GeoPackage, …); if it is one of them, name it with --format "
                    + FeedFormat.allCases.map(\.rawValue).joined(separator: "|")
            case .formatMismatch:
                return "\(feed.location): --format \(feed.format?.rawValue ?? "") was given, but the content is \(feed.detectedContent); leave out --format to read it as that"
            default:
                return with(feed.setting, "\(feed)")
            }
        case let geocoding as GeocodingError:
            return with(geocoding.setting, "\(geocoding)")
        case let store as StoreError:
            if store.code == .cannotOpen, store.kind == .missing { return "\(store); run `trafficgeo ingest --db …` to make it" }
            return "\(store)"
        default:
            return "\(error)"
        }
    }

    /// The option that changes a setting, in words that follow a message.
    static func advice(_ setting: Setting) -> String {
        switch setting {
        case .geocoders: return "--geocoder names the chain"
        case .requestRate: return "--rate sets how many a second"
        case .geocoderTimeout: return "--timeout sets how long to wait"
        case .userAgent: return "--user-agent or TRAFFICGEO_USER_AGENT sets it"
        case .maxEntries: return "--max-entries raises the limit"
        case .maxFeedBytes: return "--max-feed-bytes raises the limit"
        case .feedFormat: return "--format names it"
        case .fieldMapping: return "--field ROLE=COLUMN names a column"
        case .coordinateSystem: return "--crs names it"
        case .keptReading: return "--field or --crs replaces it, --forget-reading drops it"
        case .locationTable: return "--tmc-table names the table"
        }
    }

    /// `message` with its setting's advice after it.
    static func with(_ setting: Setting?, _ message: String) -> String {
        guard let setting else { return message }
        return message + " (" + advice(setting) + ")"
    }
}
