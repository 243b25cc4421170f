import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import TrafficGeoSupport

/// Network failures in words a user can act on, instead of SwiftNIO's type names
/// (`SocketAddressError.UnknownHost`, "connection reset (error set): Connection refused (errno: 111)").
public enum NetworkErrorText {
    /// What kind of failure it was: one that says nobody is listening (the server is down or the
    /// address is wrong) is not worth retrying many times.
    public enum Kind: Sendable, Equatable {
        case refused, unknownHost, unreachable, timeout, tls, other
    }

    /// The kind and a short explanation of a connection failure to `host:port`.
    public static func describe(_ error: Error) -> (kind: Kind, text: String) {
        switch error {
        case let error as NIOConnectionError:
            if let dns = error.dnsAError ?? error.dnsAAAAError {
                let reason = (dns as? SocketAddressError.UnknownHost)?.errorDescription ?? plain(dns)
                return (.unknownHost, "cannot resolve the host name '\(error.host)' (\(reason)); check the URL and the network")
            }
            if let first = error.connectionErrors.first {
                let inner = describe(first.error)
                return (inner.kind, inner.text)
            }
            return (.unreachable, "cannot connect to \(error.host):\(error.port)")
        case let error as SocketAddressError.UnknownHost:
            return (.unknownHost, "cannot resolve the host name '\(error.host)' (\(error.errorDescription)); check the URL and the network")
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED:
                return (.refused, "connection refused (is the server running, and is the port right?)")
            case ENETUNREACH, EHOSTUNREACH:
                return (.unreachable, "the network or host is unreachable (\(String(cString: strerror(error.errnoCode))))")
            case ETIMEDOUT:
                return (.timeout, "the connection timed out")
            case ECONNRESET:
                return (.other, "the server closed the connection")
            default:
                return (.other, String(cString: strerror(error.errnoCode)))
            }
        case let error as ChannelError:
            if case .connectTimeout = error { return (.timeout, "connecting timed out") }
            return (.other, plain(error))
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout: return (.timeout, "connecting timed out")
            case .readTimeout, .deadlineExceeded: return (.timeout, "the server did not answer in time")
            case .remoteConnectionClosed: return (.other, "the server closed the connection before answering")
            case .tlsHandshakeTimeout: return (.tls, "the TLS handshake timed out")
            default: return (.other, plain(error))
            }
        default:
            // NIOSSL's errors (not imported here): a handshake that failed is a server that does
            // not speak TLS there, or one whose certificate is not trusted. Its own words hold
            // source paths and OpenSSL codes, no help.
            let text = String(describing: error)
            if text.contains("handshakeFailed") || text.contains("BoringSSL") || text.contains("NIOSSL") {
                let certificate = text.contains("CERTIFICATE") || text.contains("certificate")
                return (.tls, certificate ? "the server's TLS certificate is not trusted (self-signed, expired, or for another name)"
                                          : "the TLS handshake failed: does the server speak https on this port (an http:// URL?)")
            }
            return (.other, plain(error))
        }
    }

    /// An error's own description, without credentials, on one line, at most 200 characters.
    static func plain(_ error: Error) -> String {
        let text = Redaction.redact(String(describing: error)).normalizedWhitespace
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
