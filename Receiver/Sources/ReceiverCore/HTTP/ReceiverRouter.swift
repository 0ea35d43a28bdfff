import Hummingbird
import Logging
import NIOCore

/// The receiver's routes, on Hummingbird's `Router`.
///
/// Middleware first, so that every request passes through it, the router's 404 included: the request log
/// (``RequestLogMiddleware``, one line per request at `info` once it is answered, with Hummingbird's request id,
/// method and path, the answer's status, a postback's verdict and code, and the latency, escaped by
/// ``ReceiverLogHandler``) and `MetricsMiddleware` (request counts and durations, mapped to bounded labels by
/// ``ReceiverMetrics``). Then `POST` on Apple's two postback paths, `GET /healthz`, `GET /readyz`, and `GET /metrics`
/// unless it has a listener of its own (`--metrics-address`). Anything else is the router's 404, which the
/// connection guard answers and closes without reading the body.
///
/// Paths match as the router matches them: case-sensitively, component by component, so a trailing slash or an
/// empty component (`//`) does not change the route; the path is never decoded.
enum ReceiverRouter {
    static func postbacks(endpoint: PostbackEndpoint, readiness: Readiness, metricsPage: MetricsPage?)
        -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestLogMiddleware(.info))
        router.add(middleware: MetricsMiddleware())
        router.post(ReceiverRoute.appAttribution.routerPath!) { request, context in
            await endpoint.receive(request, context: context, route: .appAttribution)
        }
        router.post(ReceiverRoute.skAdNetwork.routerPath!) { request, context in
            await endpoint.receive(request, context: context, route: .skAdNetwork)
        }
        router.get(ReceiverRoute.health.routerPath!) { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"],
                     body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get(ReceiverRoute.readiness.routerPath!) { _, _ in
            await readiness.check()
                ? Response(status: .ok, headers: [.contentType: "text/plain"],
                           body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
                : PostbackEndpoint.empty(.serviceUnavailable)
        }
        if let metricsPage {
            router.get(ReceiverRoute.metrics.routerPath!) { _, _ in metricsPage.render() }
        }
        return router
    }

    /// The `--metrics-address` listener: `GET /metrics` and the router's 404 for anything else. Not logged per
    /// request, nor counted (a scrape every few seconds is not traffic).
    static func metrics(_ page: MetricsPage) -> Router<BasicRequestContext> {
        let router = Router()
        router.get(ReceiverRoute.metrics.routerPath!) { _, _ in page.render() }
        return router
    }
}
