// Why GeographicLib and not PROJ's geodesic.h (the same algorithm, by the same author): libproj
// brings in libcurl, GnuTLS, Kerberos, LDAP and thirty more libraries, whose loading and
// relocation cost every `trafficgeo` process about 8 ms at start, a third of a `near` query
// (docs/benchmarks.md). GeographicLib needs only the C++ runtime, which Foundation loads anyway.
#include "tg_geodesic.h"

#include <GeographicLib/Geodesic.hpp>

namespace {
// Made on first use, not at process start.
const GeographicLib::Geodesic &wgs84() {
    static const GeographicLib::Geodesic ellipsoid(6378137.0, 1 / 298.257223563);
    return ellipsoid;
}
}

extern "C" void tg_geodesic_inverse(double lat1, double lon1, double lat2, double lon2,
                                    double *s12, double *azi1, double *azi2) {
    double distance = 0, start = 0, end = 0;
    // The distance alone is asked for most (ranking); GeographicLib then skips the azimuths' work.
    if (!azi1 && !azi2) {
        wgs84().Inverse(lat1, lon1, lat2, lon2, distance);
        if (s12) *s12 = distance;
        return;
    }
    wgs84().Inverse(lat1, lon1, lat2, lon2, distance, start, end);
    if (s12) *s12 = distance;
    if (azi1) *azi1 = start;
    if (azi2) *azi2 = end;
}

extern "C" void tg_geodesic_direct(double lat1, double lon1, double azi1, double s12,
                                   double *lat2, double *lon2, double *azi2) {
    double latitude = 0, longitude = 0, azimuth = 0;
    wgs84().Direct(lat1, lon1, azi1, s12, latitude, longitude, azimuth);
    if (lat2) *lat2 = latitude;
    if (lon2) *lon2 = longitude;
    if (azi2) *azi2 = azimuth;
}
