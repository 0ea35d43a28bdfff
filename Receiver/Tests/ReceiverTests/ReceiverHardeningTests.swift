import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Slow and hostile clients, bounded queues and readiness (issue 23 items 2 and 4), in process: real sockets on
/// 127.0.0.1 where the connection's fate is the point (`.live`), the router client elsewhere. The built binary
/// under 2,000 slow clients and wrk is Tests/slow.sh.
@Suite struct ReceiverHardeningTests {
    @Test("a client dribbling its request a byte every 100 ms is closed by the request deadline, not kept alive")
    func requestDeadlineClosesASlowClient() async throws {
        var receiver = try TestReceiver()
        receiver.configuration.requestTimeoutMilliseconds = 300
        try await receiver.application().test(.live) { client in
            let port = try #require(client.port)
            let outcome = await RawClient.offPool {
                let raw = try RawClient(port: port)
                let request = Array("POST \(TestReceiver.appAttributionPath) HTTP/1.1\r\nHost: x\r\n".utf8)
                    + Array("Content-Length: 100\r\n\r\n".utf8)
                let started = Date()
                for byte in request + Array(repeating: UInt8(ascii: "x"), count: 100) {
                    guard raw.send([byte]), raw.isOpen(waiting: 0.1) else { break }
                }
                return (Date().timeIntervalSince(started), raw.isOpen(waiting: 0))
            }
            let (seconds, stillOpen) = try outcome.get()
            #expect(!stillOpen)
            // 0.3 s deadline; the client would have needed 16 s to send it all, and never idled 30 s.
            #expect(seconds < 1.5, "closed after \(seconds) s")
        }
        // This client's connection, and perhaps the test client's own idle one (a fresh connection must send its
        // request within the deadline too).
        #expect(receiver.metric("postback_receiver_request_timeouts_total", [:]) >= 1)
        // Nothing stored (the metrics, not the archive: its file may still be closing as the application ends).
        #expect(receiver.metric("postback_receiver_stored_total", ["verdict": "valid"]) == 0)
        #expect(receiver.metric("postback_receiver_stored_total", ["verdict": "invalid"]) == 0)
    }

    @Test("413 and 404 are answered and the connection closed while an endless chunked body is still coming",
          arguments: [TestReceiver.appAttributionPath, "/elsewhere"])
    func refusalClosesWithoutReadingTheBody(path: String) async throws {
        let receiver = try TestReceiver()
        try await receiver.application().test(.live) { client in
            let port = try #require(client.port)
            let outcome = await RawClient.offPool {
                let raw = try RawClient(port: port)
                let head = "POST \(path) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                let chunk = Array("10000\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 0x10000)
                    + Array("\r\n".utf8)
                let started = Date()
                var sent = 0
                var answer: [UInt8] = []
                guard raw.send(Array(head.utf8)) else { return ("", 0.0, 0) }
                // 1 GiB would take long; the receiver must have closed well before 256 MiB. The answer is read
                // as it comes (the final reset may discard what was not read by then).
                while sent < 256 << 20, Date().timeIntervalSince(started) < 10, raw.send(chunk) {
                    sent += chunk.count
                    answer += raw.receiveAvailable()
                }
                answer += raw.receiveAll(timeout: 2)
                return (String(decoding: answer.prefix(12), as: UTF8.self), Date().timeIntervalSince(started), sent)
            }
            let (answer, seconds, sent) = try outcome.get()
            #expect(answer == (path == "/elsewhere" ? "HTTP/1.1 404" : "HTTP/1.1 413"))
            #expect(seconds < 5, "closed after \(seconds) s, \(sent) bytes sent")
            #expect(sent < 256 << 20)
        }
        // Nothing stored (the metrics, not the archive: its file may still be closing as the application ends).
        #expect(receiver.metric("postback_receiver_stored_total", ["verdict": "valid"]) == 0)
        #expect(receiver.metric("postback_receiver_stored_total", ["verdict": "invalid"]) == 0)
    }

    @Test("past its depth a queue refuses at once (QueueOverloaded) and serves the waiting submissions after")
    func queueRefusesPastItsDepth() async throws {
        let gate = Gate()
        let queue = GroupQueue<Int, Int>(maximumGroupSize: 1, maximumDepth: 2) { inputs in
            await gate.wait()
            return inputs.map { $0 * 10 }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            let first = Task { try await queue.submit(1) }
            // The first is taken into a group (blocked at the gate); two more wait; the fourth is refused.
            try await waitUntil { gate.waiting == 1 }
            let second = Task { try await queue.submit(2) }
            let third = Task { try await queue.submit(3) }
            try await waitUntil { queue.depth == 2 }
            await #expect(throws: QueueOverloaded.self) { try await queue.submit(4) }
            #expect(queue.depth == 2)
            gate.open()
            let outputs = [try await first.value, try await second.value, try await third.value]
            #expect(outputs == [10, 20, 30])
            #expect(queue.depth == 0)
            group.cancelAll()
        }
    }

    @Test("/readyz follows the store's probe: 503 while it throws or hangs past the deadline, 200 once it answers")
    func readinessFollowsTheProbe() async throws {
        let mode = Atomic<Int>(0)  // 0 answers, 1 throws, 2 hangs 2 s
        let readiness = Readiness(probe: {
            switch mode.load(ordering: .relaxed) {
            case 1: throw StorageFailure("unavailable", "down")
            case 2: Thread.sleep(forTimeInterval: 2)
            default: break
            }
        }, deadline: .milliseconds(200))
        #expect(await readiness.check())
        mode.store(1, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(250))  // past the cached answer
        #expect(await readiness.check() == false)
        mode.store(2, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(250))
        let started = ContinuousClock.now
        #expect(await readiness.check() == false)
        #expect(ContinuousClock.now - started < .seconds(1))
        // While the hung probe runs, no second one starts and the answer stays 503.
        try await Task.sleep(for: .milliseconds(250))
        #expect(await readiness.check() == false)
        mode.store(0, ordering: .relaxed)
        try await Task.sleep(for: .seconds(2))
        #expect(await readiness.check())
        #expect(await Readiness(probe: nil, deadline: .seconds(1)).check())
    }

    @Test("/readyz is 200 with a working state; /metrics has the queue and connection gauges and the overload count")
    func readyAndGauges() async throws {
        var receiver = try TestReceiver()
        receiver.configuration.queueDepth = 123
        receiver.configuration.maximumConnections = 77
        try await receiver.application().test(.router) { client in
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            #expect(String(buffer: ready.body) == "ready\n")
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(text.contains("postback_receiver_queue_capacity{queue=\"verification\"} 123"))
            #expect(text.contains("postback_receiver_queue_capacity{queue=\"commit\"} 123"))
            #expect(text.contains("postback_receiver_queue_depth{queue=\"commit\"} 0"))
            #expect(text.contains("postback_receiver_max_connections 77"))
            #expect(text.contains("postback_receiver_not_stored_total{reason=\"overloaded\"} 0"))
        }
    }

    @Test("with a metrics address, /metrics is 404 on the postback listener")
    func metricsAddressTakesMetricsOffThePostbackListener() async throws {
        var receiver = try TestReceiver()
        receiver.configuration.metricsAddress = (host: "127.0.0.1", port: 0)
        try await receiver.application().test(.router) { client in
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .notFound)
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
        }
    }

    @Test("the default connection cap stays below the open-file limit")
    func defaultConnectionCap() {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let cap = ReceiverConfiguration.defaultMaximumConnections()
        #expect(cap <= 4096)
        #expect(cap >= 16)
        if limit.rlim_cur != rlim_t.max {
            #expect(cap <= max(16, Int(limit.rlim_cur) - ReceiverConfiguration.reservedDescriptors))
        }
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 5 s")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Holds a group's processing until opened.
private final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var waiting: Int { state.withLock { $0.waiters.count } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A blocking TCP client on 127.0.0.1 that does what an HTTP client library would not (dribble a request, send
/// an endless body), run on a thread of its own so that it never blocks the receiver's tasks.
private final class RawClient {
    struct Failure: Error {
        let reason: String
    }

    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(reason: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(descriptor)
            throw Failure(reason: "connect: \(errno)")
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
    }

    /// Runs `work` on a new thread and returns its outcome.
    static func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async
        -> Result<Value, any Error> {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result { try work() }) }
        }
    }

    /// Sends all of `bytes`; false once the peer has closed (reset, broken pipe) or the send timed out.
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Whether the connection is still open after waiting up to `seconds` for the peer to close it (answer
    /// bytes read meanwhile are dropped).
    func isOpen(waiting seconds: Double) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 || (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    }

    /// What has arrived, without waiting.
    func receiveAvailable() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? Array(buffer[..<count]) : []
    }

    /// Everything received until the peer closes or `timeout` seconds pass without a byte.
    func receiveAll(timeout: Double) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return received }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return received }
            received += buffer[..<count]
        }
    }
}
