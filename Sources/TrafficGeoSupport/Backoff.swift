import Foundation

/// Exponential backoff with ±50 % jitter, so that many clients do not retry in step: the wait
/// before try `attempt + 1` (attempt 1 failed: about `first` seconds, then doubling, at most `max`).
package enum Backoff {
    package static func delay(first: Double, attempt: Int, max: Double = .infinity) -> Double {
        Swift.min(max, first * pow(2, Double(attempt - 1))) * Double.random(in: 0.5...1.5)
    }
}
