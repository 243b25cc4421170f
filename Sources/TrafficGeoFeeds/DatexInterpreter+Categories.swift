import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// A situation's category from its records (docs/feeds.md has the table), and record types in words.
extension DatexInterpreter {
    /// The category of a record type (the local part of its `xsi:type`), refined by its subtype.
    func category(_ type: String, tree: RecordTree, node: Int32) -> IncidentCategory {
        func sub(_ element: Int32) -> String? { tree.firstText(element, in: node) }
        switch type {
        case "Accident": return .accident
        case "VehicleObstruction":
            let kind = sub(n.vehicleObstructionType) ?? ""
            return kind.lowercased().contains("wrong") ? .wrongWayDriver : .obstacle
        case "AnimalPresenceObstruction", "EnvironmentalObstruction", "GeneralObstruction", "InfrastructureDamageObstruction", "Obstruction":
            return .obstacle
        case "AbnormalTraffic":
            switch sub(n.abnormalTrafficType) ?? "" {
            case "stationaryTraffic": return .standstill
            case "slowTraffic", "heavyTraffic": return .slowTraffic
            default: return .queue
            }
        case "MaintenanceWorks", "ConstructionWorks", "Roadworks", "RoadworksManagement": return .roadworks
        case "RoadOrCarriagewayOrLaneManagement", "RoadOrCarriagewayOrLaneManagementEnhanced":
            let kind = (sub(n.laneManagementType) ?? "").lowercased()
            return kind.contains("closed") || kind.contains("closure") ? .closure : .restriction
        case "SpeedManagement", "GeneralNetworkManagement", "NetworkManagement", "AuthorityOperation", "GeneralInstructionOrMessageToRoadUsers",
             "RoadsideAssistance":
            return .restriction
        case "ReroutingManagement", "ReroutingManagementEnhanced": return .detour
        case "WinterDrivingManagement", "PoorEnvironmentConditions", "WeatherRelatedRoadConditions": return .weather
        case "NonWeatherRelatedRoadConditions", "DisturbanceActivity", "EquipmentOrSystemFault", "PoorRoadInfrastructure": return .danger
        case "PublicEvent": return .event
        default:
            if type.hasSuffix("Obstruction") { return .obstacle }
            if type.hasSuffix("Works") { return .roadworks }
            if type.contains("Weather") || type.contains("Environment") { return .weather }
            if type.hasSuffix("Management") { return .restriction }
            if type.hasSuffix("Conditions") { return .danger }
            return .other
        }
    }

    /// The elements that say which kind of a record type it is.
    static let subtypeElements = [
        "accidentType", "vehicleObstructionType", "obstructionType", "animalPresenceType", "environmentalObstructionType",
        "abnormalTrafficType", "roadMaintenanceType", "constructionWorkType", "roadOrCarriagewayOrLaneManagementType",
        "poorEnvironmentType", "weatherRelatedRoadConditionType", "nonWeatherRelatedRoadConditionType", "publicEventType",
        "reroutingManagementType", "speedManagementType", "winterEquipmentManagementType", "disturbanceActivityType",
        "authorityOperationType", "generalNetworkManagementType",
    ]

    /// The category a situation's `causeType` names, when it names one.
    static func category(cause: String) -> IncidentCategory? {
        switch cause {
        case "accident", "earlierAccident": .accident
        case "roadMaintenance", "roadworks": .roadworks
        case "obstruction", "vehicleObstruction": .obstacle
        case "poorWeather", "frost", "excessiveHeat", "weather": .weather
        case "congestion", "holidayTraffic", "shearWeightOfTraffic", "rubberNecking", "heavyTraffic": .queue
        case "largeNumbersOfVisitors", "roadsideEvent", "publicEvent": .event
        case "equipmentFailure", "infrastructureFailure", "technicalProblems", "securityIncident", "vandalism": .danger
        default: nil
        }
    }

    /// Which record of a situation names it: the cause before the measures taken for it.
    static func rank(_ category: IncidentCategory) -> Int {
        switch category {
        case .wrongWayDriver: 0
        case .accident: 1
        case .obstacle: 2
        case .danger: 3
        case .weather: 4
        case .roadworks: 5
        case .event: 6
        case .standstill: 7
        case .queue: 8
        case .slowTraffic: 9
        case .closure: 10
        case .detour: 11
        case .restriction: 12
        case .other: 13
        }
    }

    /// The first line of a text, white space normalised, at most 160 characters.
    static func firstLine(_ text: String) -> String {
        let utf8 = text.utf8
        let end = utf8.firstIndex { $0 == 0x0A || $0 == 0x0D } ?? utf8.endIndex
        let line = String(text[..<end]).normalizedWhitespace
        return line.utf8.count > 160 ? String(line.prefix(160)) : line
    }

    /// "VehicleObstruction" → "Vehicle obstruction".
    static func phrase(_ type: String, category: IncidentCategory) -> String {
        if type == "SituationRecord" { return category.rawValue.prefix(1).uppercased() + category.rawValue.dropFirst() }
        var out = ""
        for ch in type {
            if ch.isUppercase, !out.isEmpty { out.append(" "); out.append(contentsOf: ch.lowercased()) } else { out.append(ch) }
        }
        return out
    }
}
