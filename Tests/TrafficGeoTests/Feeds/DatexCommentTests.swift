import Testing
@testable import TrafficGeoFeeds
import Foundation
import TrafficGeoModel

/// DATEX II comments as publishers write them: several `<value>`s of one language are lines of
/// one text; a v1.0 situation's description in a non-general comment; the TPEG place name.
@Suite("DATEX II comments and places")
struct DatexCommentTests {
    static func v2(_ comment: String) -> String {
        """
        <?xml version="1.0"?>
        <d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2">
        <exchange><supplierIdentification><country>gb</country><nationalIdentifier>NTIS</nationalIdentifier></supplierIdentification></exchange>
        <payloadPublication xsi:type="SituationPublication" lang="en"><publicationTime>2026-11-26T08:00:00Z</publicationTime>
        <situation id="S1" version="1"><situationRecord xsi:type="AbnormalTraffic" id="S1-1" version="1">
        <situationRecordCreationTime>2026-11-26T07:00:00Z</situationRecordCreationTime><situationRecordVersionTime>2026-11-26T07:50:00Z</situationRecordVersionTime>
        <validity><validityStatus>active</validityStatus><validityTimeSpecification><overallStartTime>2026-11-26T06:40:00Z</overallStartTime></validityTimeSpecification></validity>
        <generalPublicComment><comment><values>\(comment)</values></comment></generalPublicComment>
        <groupOfLocations xsi:type="Point"><pointByCoordinates><pointCoordinates><latitude>52.2</latitude><longitude>-0.9</longitude></pointCoordinates></pointByCoordinates></groupOfLocations>
        </situationRecord></situation></payloadPublication></d2LogicalModel>
        """
    }

    /// Each `key : value` line its own `<value>`: read as one comment of lines, so its fields
    /// give the title, the road and the details (not only the first line, "TYPE : GDP").
    @Test func valuesOfOneLanguageAreLinesOfOneComment() throws {
        let values = ["TYPE : GDP", "Event Location : The M1 southbound between J15 and J14", "Event Reason : Congestion", "Event Status : Currently Active"]
            .map { "<value lang=\"en\">\($0)</value>" }.joined() + "<value lang=\"cy\">Tagfa</value>"
        let incident = try #require(try TestSupport.read(Self.v2(values), name: "nh.xml").incidents.first)
        #expect(incident.road == "M1")
        #expect(incident.title.contains("M1 southbound between J15 and J14"), "\(incident.title)")
        #expect(!incident.title.contains("TYPE : GDP"))
        #expect(incident.properties["reason"] == "Congestion")
        #expect(incident.summary?.contains("Tagfa") == false, "the first language only")
    }

    /// DATEX II v1.0 (the Highways Agency's): the description in `nonGeneralPublicComment`, the
    /// road and place in the TPEG `linkName`.
    @Test func version1CommentsAndLinkNames() throws {
        let doc = """
        <?xml version="1.0" encoding="utf-8"?>
        <d2LogicalModel xmlns="http://datex2.eu/schema/1_0/1_0" modelBaseVersion="1.0">
        <exchange><supplierIdentification><country>gb</country><nationalIdentifier>NTCC</nationalIdentifier></supplierIdentification></exchange>
        <payloadPublication xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="SituationPublication" lang="en">
        <publicationTime>2013-04-24T09:40:02+01:00</publicationTime>
        <situation id="G1"><situationRecord xsi:type="MaintenanceWorks" id="G1-1">
        <situationRecordCreationTime>2013-04-20T15:35:23+01:00</situationRecordCreationTime><situationRecordVersionTime>2013-04-23T17:40:23+01:00</situationRecordVersionTime>
        <nonGeneralPublicComment><comment><value lang="en">The M25 clockwise is closed between junction 9 and junction 10 for resurfacing.</value></comment></nonGeneralPublicComment>
        <groupOfLocations><locationContainedInGroup xsi:type="Point"><tpegpointLocation xsi:type="TPEGFramedPoint">
        <framedPoint><pointCoordinates><latitude>51.3</latitude><longitude>-0.4</longitude></pointCoordinates>
        <name><descriptor><value lang="en">M25 clockwise between J9 and J10</value></descriptor><tpegDescriptorType>linkName</tpegDescriptorType></name>
        <name><descriptor><value lang="en">unknown</value></descriptor><tpegDescriptorType>junctionName</tpegDescriptorType></name>
        </framedPoint></tpegpointLocation></locationContainedInGroup></groupOfLocations>
        </situationRecord></situation></payloadPublication></d2LogicalModel>
        """
        let incident = try #require(try TestSupport.read(doc, name: "ha.xml").incidents.first)
        #expect(incident.road == "M25")
        #expect(incident.summary?.contains("resurfacing") == true)
        #expect(incident.title.contains("closed between junction 9") || incident.title.contains("M25 clockwise between J9 and J10"), "\(incident.title)")
        #expect(!incident.title.contains("unknown"))
    }
}
