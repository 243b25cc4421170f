// GeographicLib (apt libgeographiclib-dev) is C++: Swift reaches it through the C functions of
// the CGeodesic target. This module only carries its compiler and linker flags (pkg-config
// "geographiclib") to that target; it declares nothing itself.
#ifndef TRAFFICGEO_CGEOGRAPHICLIB_SHIM_H
#define TRAFFICGEO_CGEOGRAPHICLIB_SHIM_H
#endif
