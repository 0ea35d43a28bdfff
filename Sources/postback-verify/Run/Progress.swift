import Dispatch

/// Progress on standard error for long runs on a terminal: items, rate, elapsed; nothing otherwise.
struct Progress {
    private let stream: StandardStream
    private let enabled: Bool
    private let started: UInt64
    private var lastShown: UInt64 = 0
    private var shown = false

    init(stream: StandardStream, enabled: Bool, started: UInt64) {
        self.stream = stream
        self.enabled = enabled
        self.started = started
    }

    /// Shows the count at most twice a second, and only once the run has lasted a second.
    mutating func update(items: Int) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - started > 1_000_000_000, now - lastShown > 500_000_000 else { return }
        lastShown = now
        shown = true
        let seconds = Double(now - started) / 1e9
        stream.write(raw: "\r\u{1B}[K\(items) items, \(Int(Double(items) / seconds)) items/s, \(Int(seconds)) s")
        stream.flush()
    }

    /// Clears the progress line before the summary.
    mutating func clear() {
        guard shown else { return }
        stream.write(raw: "\r\u{1B}[K")
        stream.flush()
        shown = false
    }
}
