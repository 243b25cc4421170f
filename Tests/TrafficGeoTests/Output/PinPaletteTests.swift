import Foundation
import Testing
@testable import TrafficGeoModel

/// The pin colours stay apart for colour-blind readers: each pair is compared in CIELAB (ΔE*76)
/// as seen with normal vision and as simulated for protanopia, deuteranopia and tritanopia
/// (Machado, Oliveira and Fernandes 2009, severity 1, on linear sRGB).
@Suite("pin colours for colour-blind readers")
struct PinPaletteTests {
    static let simulations: [String: [[Double]]] = [
        "normal": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
    ]

    static func lab(_ hex: String, seenWith matrix: [[Double]]) -> [Double] {
        let value = Int(hex.dropFirst(), radix: 16)!
        let srgb = [(value >> 16) & 255, (value >> 8) & 255, value & 255].map { Double($0) / 255 }
        let linear = srgb.map { $0 <= 0.04045 ? $0 / 12.92 : pow(($0 + 0.055) / 1.055, 2.4) }
        let seen = matrix.map { row in max(0, min(1, zip(row, linear).map(*).reduce(0, +))) }
        let x = 0.4124 * seen[0] + 0.3576 * seen[1] + 0.1805 * seen[2]
        let y = 0.2126 * seen[0] + 0.7152 * seen[1] + 0.0722 * seen[2]
        let z = 0.0193 * seen[0] + 0.1192 * seen[1] + 0.9505 * seen[2]
        func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116 }
        let (fx, fy, fz) = (f(x / 0.9505), f(y), f(z / 1.089))
        return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)]
    }

    @Test func everyPairOfPinColoursStaysApartInEveryKindOfVision() {
        let colours: [PinColor] = [.red, .green, .purple]
        for (vision, matrix) in Self.simulations {
            for (i, a) in colours.enumerated() {
                for b in colours[(i + 1)...] {
                    let la = Self.lab(a.hex, seenWith: matrix), lb = Self.lab(b.hex, seenWith: matrix)
                    let difference = zip(la, lb).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
                    #expect(difference >= 40, "\(a) and \(b) are \(Int(difference)) apart with \(vision)")
                }
            }
        }
    }

    /// The former palette fails the same test: the check can fail.
    @Test func theFormerRedAndGreenWereOneColourForADeuteranope() {
        let matrix = Self.simulations["deuteranopia"]!
        let la = Self.lab("#d62728", seenWith: matrix), lb = Self.lab("#2ca02c", seenWith: matrix)
        #expect(zip(la, lb).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot() < 10)
    }
}
