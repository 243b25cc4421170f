#ifndef TRAFFICGEO_CPROJ_SHIM_H
#define TRAFFICGEO_CPROJ_SHIM_H
#include <proj.h>
#include <geodesic.h>
#endif
