// Geodesics on the WGS84 ellipsoid (Karney's algorithm) from GeographicLib, for Swift
// (Sources/TrafficGeo/Projection/Geodesic.swift). Angles in degrees, distances in metres.
#ifndef TRAFFICGEO_TG_GEODESIC_H
#define TRAFFICGEO_TG_GEODESIC_H

#ifdef __cplusplus
extern "C" {
#endif

/// Distance s12 and the azimuths at both ends (azi1 at the start, azi2 at the end) of the
/// shortest geodesic from (lat1, lon1) to (lat2, lon2). azi1 and azi2 may be NULL.
void tg_geodesic_inverse(double lat1, double lon1, double lat2, double lon2,
                         double *s12, double *azi1, double *azi2);

/// The end (lat2, lon2) and its azimuth azi2 of the geodesic leaving (lat1, lon1) on azimuth
/// azi1 for s12 metres. azi2 may be NULL.
void tg_geodesic_direct(double lat1, double lon1, double azi1, double s12,
                        double *lat2, double *lon2, double *azi2);

#ifdef __cplusplus
}
#endif
#endif
