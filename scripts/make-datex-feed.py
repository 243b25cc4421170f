#!/usr/bin/env python3
"""Write a large synthetic DATEX II v2 situation publication of N situation records for ingest benchmarks.

National feeds run to hundreds of MB (NDW's roadworks feed is ~171 MB); the samples in
../shared/data/standards are a few KB. This writes N situations in the shapes the v2.3 schema
allows and real feeds use: one to three records each (Accident, VehicleObstruction,
MaintenanceWorks, AbnormalTraffic, RoadOrCarriagewayOrLaneManagement, SpeedManagement,
ReroutingManagement), multilingual comments, validity, impact with delays and lanes, point
locations with locationForDisplay, linear ones with start and end coordinates, TPEG points and
ALERT-C codes beside them, and some national extension elements trafficgeo skips. About 3.3 KB
per record: 50,000 records (about 28,600 situations) make ~165 MB. Deterministic for a given --seed.

  scripts/make-datex-feed.py 50000 -o /tmp/datex-50k.xml [--seed 1] [--gzip] [--plain-comments]

The comments name German junctions ("zwischen AS Wenden und AS Krombach"), so ingest also learns
where those are, as it does from a German feed; --plain-comments writes words that name none
(as a Dutch or French feed's would, for trafficgeo's junction learning).
"""
import argparse
import gzip
import random

RECORDS = [
    ("Accident", "<accidentType>collision</accidentType>"),
    ("VehicleObstruction", "<vehicleObstructionType>brokenDownVehicle</vehicleObstructionType>"),
    ("MaintenanceWorks", "<roadMaintenanceType>resurfacingWork</roadMaintenanceType>"),
    ("AbnormalTraffic", "<abnormalTrafficType>queuingTraffic</abnormalTrafficType>"),
    ("RoadOrCarriagewayOrLaneManagement", "<roadOrCarriagewayOrLaneManagementType>laneClosures</roadOrCarriagewayOrLaneManagementType>"),
    ("SpeedManagement", "<speedManagementType>speedRestrictionInOperation</speedManagementType><temporarySpeedLimit>80</temporarySpeedLimit>"),
    ("ReroutingManagement", "<reroutingManagementType>followDiversionSigns</reroutingManagementType>"),
]


def point(lat, lon, rnd):
    return (
        '<groupOfLocations xsi:type="Point"><locationForDisplay><latitude>%.6f</latitude><longitude>%.6f</longitude></locationForDisplay>'
        '<supplementaryPositionalDescription><affectedCarriagewayAndLanes><carriageway>mainCarriageway</carriageway><lane>lane1</lane>'
        '</affectedCarriagewayAndLanes></supplementaryPositionalDescription>'
        '<tpegPointLocation xsi:type="TpegSimplePoint"><tpegDirection>northBound</tpegDirection><tpegSimplePointLocationType>nonLinkedPoint</tpegSimplePointLocationType>'
        '<point xsi:type="TpegNonJunctionPoint"><pointCoordinates><latitude>%.6f</latitude><longitude>%.6f</longitude></pointCoordinates>'
        '<name><descriptor><values><value lang="de">Ort %d</value></values></descriptor><tpegOtherPointDescriptorType>townName</tpegOtherPointDescriptorType></name>'
        '<name><descriptor><values><value lang="de">A%d</value></values></descriptor><tpegOtherPointDescriptorType>linkName</tpegOtherPointDescriptorType></name>'
        '</point></tpegPointLocation>'
        '<alertCPoint xsi:type="AlertCMethod2Point"><alertCLocationCountryCode>D</alertCLocationCountryCode><alertCLocationTableNumber>1</alertCLocationTableNumber>'
        '<alertCLocationTableVersion>17.0</alertCLocationTableVersion><alertCDirection><alertCDirectionCoded>positive</alertCDirectionCoded></alertCDirection>'
        '<alertCMethod2PrimaryPointLocation><alertCLocation><specificLocation>%d</specificLocation></alertCLocation></alertCMethod2PrimaryPointLocation></alertCPoint>'
        '<pointExtension><nationalPointExtension><nationalCode>%d</nationalCode></nationalPointExtension></pointExtension></groupOfLocations>'
    ) % (lat, lon, lat, lon, rnd.randint(1, 999), rnd.randint(1, 99), rnd.randint(1000, 60000), rnd.randint(1, 10**6))


def linear(lat, lon, rnd):
    lat2, lon2 = lat + rnd.uniform(-0.05, 0.05), lon + rnd.uniform(-0.05, 0.05)
    return (
        '<groupOfLocations xsi:type="Linear"><locationForDisplay><latitude>%.6f</latitude><longitude>%.6f</longitude></locationForDisplay>'
        '<supplementaryPositionalDescription><affectedCarriagewayAndLanes><carriageway>mainCarriageway</carriageway><lane>lane2</lane>'
        '</affectedCarriagewayAndLanes></supplementaryPositionalDescription>'
        '<linearExtension><linearByCoordinatesExtension><linearCoordinatesStartPoint><pointCoordinates><latitude>%.6f</latitude><longitude>%.6f</longitude>'
        '</pointCoordinates></linearCoordinatesStartPoint><linearCoordinatesEndPoint><pointCoordinates><latitude>%.6f</latitude><longitude>%.6f</longitude>'
        '</pointCoordinates></linearCoordinatesEndPoint></linearByCoordinatesExtension></linearExtension>'
        '<alertCLinear xsi:type="AlertCMethod4Linear"><alertCLocationCountryCode>D</alertCLocationCountryCode><alertCLocationTableNumber>1</alertCLocationTableNumber>'
        '<alertCLocationTableVersion>17.0</alertCLocationTableVersion><alertCDirection><alertCDirectionCoded>negative</alertCDirectionCoded></alertCDirection>'
        '<alertCMethod4PrimaryPointLocation><alertCLocation><specificLocation>%d</specificLocation></alertCLocation><offsetDistance><offsetDistance>%d</offsetDistance></offsetDistance></alertCMethod4PrimaryPointLocation>'
        '<alertCMethod4SecondaryPointLocation><alertCLocation><specificLocation>%d</specificLocation></alertCLocation><offsetDistance><offsetDistance>%d</offsetDistance></offsetDistance></alertCMethod4SecondaryPointLocation>'
        '</alertCLinear></groupOfLocations>'
    ) % ((lat + lat2) / 2, (lon + lon2) / 2, lat, lon, lat2, lon2, rnd.randint(1000, 60000), rnd.randint(0, 900),
         rnd.randint(1000, 60000), rnd.randint(0, 900))


PLAIN = False


def record(sid, k, kind, sub, lat, lon, rnd):
    hour = rnd.randint(0, 23)
    text = (
        '<situationRecord xsi:type="%s" id="%s_%d" version="%d"><situationRecordCreationTime>2026-11-26T%02d:00:00Z</situationRecordCreationTime>'
        '<situationRecordVersionTime>2026-11-26T%02d:15:00Z</situationRecordVersionTime><probabilityOfOccurrence>certain</probabilityOfOccurrence>'
        '<source><sourceIdentification>Verkehrszentrale</sourceIdentification><reliable>true</reliable></source>'
        '<validity><validityStatus>definedByValidityTimeSpec</validityStatus><validityTimeSpecification><overallStartTime>2026-11-26T%02d:00:00Z</overallStartTime>'
        '<overallEndTime>2099-12-%02dT18:00:00Z</overallEndTime></validityTimeSpecification></validity>'
        '<impact><capacityRemaining>50</capacityRemaining><numberOfLanesRestricted>%d</numberOfLanesRestricted><numberOfOperationalLanes>1</numberOfOperationalLanes>'
        '<originalNumberOfLanes>3</originalNumberOfLanes><trafficConstrictionType>carriagewayPartiallyObstructed</trafficConstrictionType>'
        '<delays><delayTimeValue>%d</delayTimeValue></delays></impact>'
        '<generalPublicComment><comment><values><value lang="de">A%d Köln Richtung Olpe zwischen AS Wenden und AS Krombach: %s, %d km Stau, bitte Rettungsgasse bilden.</value>'
        '<value lang="en">A%d Cologne towards Olpe between Wenden and Krombach: %s, %d km queue.</value></values></comment><commentType>description</commentType></generalPublicComment>'
        '<situationRecordExtension><nationalExtension><priority>%d</priority><internalReference>ref-%d-%d</internalReference></nationalExtension></situationRecordExtension>'
        '%s%s</situationRecord>'
    ) % (kind, sid, k, rnd.randint(1, 9), hour, hour, hour, rnd.randint(1, 28), rnd.randint(1, 2), rnd.randint(60, 3600),
         rnd.randint(1, 99), kind, rnd.randint(1, 9), rnd.randint(1, 99), kind, rnd.randint(1, 9), rnd.randint(1, 5), rnd.randint(1, 10**6), k,
         sub, point(lat, lon, rnd) if rnd.random() < 0.6 else linear(lat, lon, rnd))
    if PLAIN:
        text = text.replace("Köln Richtung Olpe zwischen AS Wenden und AS Krombach", "Noord richting Zuid bij de brug ")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--plain-comments", action="store_true", help="comments that name no German junctions")
    a = ap.parse_args()
    global PLAIN
    PLAIN = a.plain_comments
    rnd = random.Random(a.seed)
    out = gzip.open(a.output, "wt", encoding="utf-8") if a.gzip else open(a.output, "w", encoding="utf-8")
    with out as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" '
                'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><exchange><supplierIdentification>'
                '<country>de</country><nationalIdentifier>synthetic</nationalIdentifier></supplierIdentification></exchange>\n'
                '<payloadPublication xsi:type="SituationPublication" lang="de"><publicationTime>2026-11-26T08:00:00Z</publicationTime>'
                '<publicationCreator><country>de</country><nationalIdentifier>synthetic</nationalIdentifier></publicationCreator>\n')
        written, i = 0, 0
        while written < a.count:
            i += 1
            sid = "SYN%07d" % i
            lat, lon = rnd.uniform(47.3, 55.0), rnd.uniform(5.9, 15.0)
            f.write('<situation id="%s" version="%d"><overallSeverity>%s</overallSeverity><situationVersionTime>2026-11-26T08:00:00Z</situationVersionTime>'
                    '<headerInformation><confidentiality>noRestriction</confidentiality><informationStatus>real</informationStatus></headerInformation>'
                    % (sid, rnd.randint(1, 9), rnd.choice(["low", "medium", "high"])))
            for k in range(min(rnd.choice([1, 1, 2, 3]), a.count - written)):
                written += 1
                kind, sub = rnd.choice(RECORDS)
                f.write(record(sid, k, kind, sub, lat, lon, rnd))
            f.write("</situation>\n")
        f.write("</payloadPublication></d2LogicalModel>\n")


if __name__ == "__main__":
    main()
