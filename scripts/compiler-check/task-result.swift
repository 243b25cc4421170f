// The smallest program that shows the release-only crash of `ingest autobahn:` (issue 38):
// Swift 6.3.1 on Linux x86_64, at -O (also -Osize, -Ounchecked), prints 0; at -Onone, 5.
//
//     swiftc -O -parse-as-library task-result.swift -o /tmp/task-result && /tmp/task-result
//
// The child task returns a tuple whose first element (k) is evaluated before the `try await`
// in the same expression. LLVM's dead-store elimination (found with -Xllvm -opt-bisect-limit:
// the first bad pass is DSEPass on the closure) removes the store of k into the task's result
// buffer that precedes the suspension, so the caller reads whatever the buffer held. It needs
// the Result-of-Data payload and a real suspension (Task.sleep); with Task.yield, or a Result of
// [UInt8], the bug does not show — it is fragile, which is why the code avoids the whole shape:
// a child task's answer is built after every await, in its own statement (scripts/compiler-check/run
// finds the shape in Sources).
import Foundation

func fetch() async throws -> Data {
    try await Task.sleep(for: .milliseconds(1))
    return Data(repeating: 65, count: 100)
}

@main struct Main {
    static func main() async {
        let k = 5
        let task = Task { () -> (Int, Result<Data, Error>) in
            do { return (k, .success(try await fetch())) } catch { return (k, .failure(error)) }
        }
        print(await task.value.0)
    }
}
