import ArgumentParser
import CoreMetrics
import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// The feed loop's metrics as a file in Prometheus's text format, for node_exporter's textfile
/// collector (`ingest --every --metrics-file /var/lib/node_exporter/textfile/trafficgeo.prom`).
///
/// Why a file and not a port: the loop is a writer with no reason to listen on the network (its
/// unit runs without any), node_exporter is already on the machines a desk runs, and `serve`
/// answers /metrics for everything the store knows (each source's age and failures, from feed
/// health, which the loop records). The file is replaced whole (written beside it, then renamed),
/// so the collector never reads half of it.
final class MetricsTextfile: Sendable {
    let path: String
    let registry = PrometheusCollectorRegistry()
    /// Sources are read side by side: one write at a time (the box holds nothing; its lock is
    /// the one lock type, NIOLockedValueBox).
    private let writing = NIOLockedValueBox(())

    /// Bootstraps swift-metrics into this file's registry (once per process).
    init(path: String) {
        self.path = path
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        write()
    }

    /// A usage error when `path` cannot be the file (checked before the loop starts).
    static func validate(_ path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--metrics-file: the folder \(folder) does not exist.")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ValidationError("--metrics-file: \(path) is a folder; name the file, such as \(path)/trafficgeo.prom.")
        }
    }

    func write() {
        writing.withLockedValue { _ in writeNow() }
    }

    private func writeNow() {
        let temporary = path + ".\(getpid()).tmp"
        do {
            try Data(registry.emitToBuffer()).write(to: URL(fileURLWithPath: temporary))
            // Readable by node_exporter's user whatever the service's umask: metrics are not secret.
            chmod(temporary, 0o644)
            guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            Terminal.printError("trafficgeo: warning: could not write the metrics file \(path): \(error)")
        }
    }
}
