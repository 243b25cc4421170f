import Foundation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// A filter field that asks for at least so much of one of an incident's measures
/// (`IncidentMeasure`: a delay, lanes restricted), declared once in `QueryField.measure`.
/// Everything else is made from the declaration: the reading of its text (`read`), the filter's
/// condition (`IncidentFilter.minimums`, which both stores and the in-memory test compare with
/// the measure's own column), a watch's fingerprint, the CQL2 queryable (`Queryable.measure`),
/// its OpenAPI parameter, its control on the map page and its rows in docs/query-fields.md.
public struct MeasureCondition: Sendable {
    /// How the value is written on every surface.
    public enum Notation: Sendable {
        /// A length of time with its unit (10m, 1h), for a measure kept in minutes.
        case minutes
        /// A whole number (2).
        case count
    }

    public var measure: IncidentMeasure
    public var notation: Notation
    /// What the measure is, in a phrase: "delay" ("Only incidents with at least this delay").
    public var noun: String
    /// Its name as a CQL2 queryable (`delay >= 10`, in the measure's unit).
    public var queryable: String
    /// Its title in the queryables document and on the map page ("Delay").
    public var title: String
    /// An example value, in the field's notation ("10m").
    public var example: String

    public init(_ measure: IncidentMeasure, notation: Notation, noun: String, queryable: String, title: String, example: String) {
        self.measure = measure
        self.notation = notation
        self.noun = noun
        self.queryable = queryable
        self.title = title
        self.example = example
    }

    /// The unit the measure is compared in, in words.
    public var unitWords: String {
        switch notation {
        case .minutes: "minutes"
        case .count: "a count"
        }
    }

    /// The field's text as the measure's number (minutes for a delay), or the problem in words.
    public func read(_ text: String, field: QueryField) throws(QueryTextError) -> Double {
        let bare = text.trimmingCharacters(in: .whitespaces)
        switch notation {
        case .minutes:
            guard let seconds = DurationExpression.parse(bare), seconds <= DurationExpression.longest else {
                let why = PlainNumber.parse(bare) != nil ? "needs its unit: \(bare)m or \(bare)h" : "is not a length of time: \(DurationExpression.accepted)"
                throw QueryTextError(field, text, why)
            }
            return seconds / 60
        case .count:
            guard let n = Int(bare), n >= 0, n <= 1_000 else { throw QueryTextError(field, text, "is not a whole number from 0 to 1000") }
            return Double(n)
        }
    }

    /// The field's text for a number of the measure (what `read` gives back): how a CQL2
    /// comparison is asked through the field.
    public func text(for number: Double) -> String {
        let plain = PlainNumber.text(number)
        switch notation {
        case .minutes: return plain + "m"
        case .count: return plain
        }
    }

    /// What the field asks, for `--help`, the OpenAPI document and docs/query-fields.md.
    public func help() -> String {
        let form = notation == .minutes ? "a length of time with its unit, such as \(example) or 1h" : "a whole number, such as \(example)"
        return "Only incidents with at least this \(noun) (\(form)); a range a feed gives (15-20) counts as its upper end, "
            + "and incidents whose feed gives no \(noun) are left out."
    }

    /// The JSON Schema of the value as a query parameter. A length of time is a string with no
    /// pattern, as `since` and `unconfirmed-after` are: `DurationExpression` reads "10 M" and
    /// "1.5h " too, and an empty value is no condition, as for every field; a pattern narrower
    /// than that made schemathesis (scripts/test) count `min-delay=` as wrongly accepted.
    public var parameterSchema: String {
        switch notation {
        case .minutes: return #"{"type":"string"}"#
        case .count: return #"{"type":"integer","minimum":0,"maximum":1000}"#
        }
    }

    /// What a CQL2 comparison of it means, for the queryables document.
    public func queryableDescription(parameter: String) -> String {
        "The incident's \(noun) in \(unitWords) (a range counts as its upper end), as the \(parameter) parameter; "
            + "incidents whose feed gives none are not <, <=, =, <>, >, >= anything (as NULL in SQL; NOT keeps them out too). =, <>, <, <=, >, >=, IS NULL."
    }
}
