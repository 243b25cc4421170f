import TrafficGeoProjection

/// The 3-D Hilbert curve on a 2²¹ grid per axis (John Skilling, "Programming the Hilbert curve",
/// AIP Conf. Proc. 707, 2004: axes to transposed index, then bit interleaving).
enum HilbertCurve3D {
    static let bits = 21
    static let side = 1 << bits

    static func index(_ x0: UInt32, _ y0: UInt32, _ z0: UInt32) -> UInt64 {
        var x = (x0, y0, z0)
        func get(_ i: Int) -> UInt32 { i == 0 ? x.0 : i == 1 ? x.1 : x.2 }
        func set(_ i: Int, _ v: UInt32) { if i == 0 { x.0 = v } else if i == 1 { x.1 = v } else { x.2 = v } }
        let top: UInt32 = 1 << (bits - 1)
        // Inverse undo of the excess work.
        var q = top
        while q > 1 {
            let p = q - 1
            for i in 0..<3 {
                if get(i) & q != 0 {
                    x.0 ^= p
                } else {
                    let t = (x.0 ^ get(i)) & p
                    x.0 ^= t
                    set(i, get(i) ^ t)
                }
            }
            q >>= 1
        }
        // Gray encode.
        x.1 ^= x.0
        x.2 ^= x.1
        var t: UInt32 = 0
        q = top
        while q > 1 {
            if x.2 & q != 0 { t ^= q - 1 }
            q >>= 1
        }
        x.0 ^= t; x.1 ^= t; x.2 ^= t
        // Interleave the transposed bits, most significant first.
        var key: UInt64 = 0
        for b in stride(from: bits - 1, through: 0, by: -1) {
            key = (key << 3) | UInt64((x.0 >> UInt32(b)) & 1) << 2 | UInt64((x.1 >> UInt32(b)) & 1) << 1 | UInt64((x.2 >> UInt32(b)) & 1)
        }
        return key
    }
}

extension HilbertCurve3D {
    /// The curve index of a geocentric point on a fixed grid over the whole Earth (cells of
    /// about 6 m): computable for each point on its own, before the extent of a feed is known.
    static func index(of p: GeocentricPoint) -> UInt64 {
        let half = 6_400_000.0, scale = Double(side - 1) / (2 * half)
        func cell(_ v: Double) -> UInt32 { UInt32(Swift.max(0, Swift.min(Double(side - 1), (v + half) * scale))) }
        return index(cell(p.x), cell(p.y), cell(p.z))
    }
}
