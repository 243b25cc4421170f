/// Reads a decimal number such as "50.941278" or "-7.25".
///
/// Why not only `Double(String)`: it goes through strtod, a tenth of reading a CSV row or feed
/// entry with coordinates. Coordinates have at most 15 significant digits, and then the value
/// is exactly an integer below 2^53 divided by a power of ten below 10^22, both exact doubles,
/// so one IEEE division gives the correctly rounded result, the same double strtod gives
/// (Clinger's fast path). Anything else (exponents, more digits, "inf", hex) goes to
/// `Double(String)`.
package enum DecimalText {
    private static let powersOfTen: [Double] = (0...15).map { pow10($0) }

    package static func double(_ text: some StringProtocol) -> Double? {
        var text = String(text)
        if let value = text.withUTF8(plainDecimal) { return value }
        return Double(text)
    }

    /// `[+-]? digits ( . digits )?` with at most 15 digits in all, read as `double` reads it;
    /// nil for anything else (which `double` may still read).
    package static func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        var mantissa: UInt64 = 0, digits = 0, fractionDigits = 0
        var integerDigits = 0
        while i < bytes.count, bytes[i] &- 0x30 < 10 {
            mantissa = mantissa * 10 + UInt64(bytes[i] &- 0x30)
            digits += 1; integerDigits += 1; i += 1
            if digits > 15 { return nil }
        }
        guard integerDigits > 0 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < bytes.count, bytes[i] &- 0x30 < 10 {
                mantissa = mantissa * 10 + UInt64(bytes[i] &- 0x30)
                digits += 1; fractionDigits += 1; i += 1
                if digits > 15 { return nil }
            }
            guard fractionDigits > 0 else { return nil }
        }
        guard i == bytes.count else { return nil }
        let value = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -value : value
    }

    private static func pow10(_ n: Int) -> Double {
        var value = 1.0
        for _ in 0..<n { value *= 10 }   // exact: every power up to 10^22 is a double
        return value
    }
}
