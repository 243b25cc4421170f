import GRDB
import TrafficGeoSupport

/// Folded text as SQL functions, for word search in the store (`IncidentFilter+SQL`).
extension TextFolding {
    static let sqlFunctionName = "tg_fold"
    /// The same with umlauts as their plain vowels (Mülheim → mulheim), as people type them on
    /// keyboards without umlauts; search matches either form.
    static let plainSQLFunctionName = "tg_fold_plain"

    static func register(on db: Database) {
        db.add(function: DatabaseFunction(sqlFunctionName, argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return nil }
            return TextFolding.fold(text)
        })
        db.add(function: DatabaseFunction(plainSQLFunctionName, argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return nil }
            return TextFolding.foldPlain(text)
        })
    }
}
