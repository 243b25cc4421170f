import Foundation
import GRDB
import TrafficGeoModel

/// A recurring schedule as a SQL function, for `--active-at` (`IncidentFilter.inEffectSQL`):
/// `tg_in_schedule(schedule, seconds)` is 1 when the schedule's text (`RecurringSchedule.text`)
/// holds at that instant, and also for a text that is no schedule, as `Incident.schedule` reads it.
extension RecurringSchedule {
    static let sqlFunctionName = "tg_in_schedule"

    static func register(on db: Database) {
        db.add(function: DatabaseFunction(sqlFunctionName, argumentCount: 2, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]), let seconds = Double.fromDatabaseValue(values[1]),
                  let schedule = RecurringSchedule(text: text) else { return true }
            return schedule.isInEffect(at: Date(timeIntervalSince1970: seconds))
        })
    }
}
