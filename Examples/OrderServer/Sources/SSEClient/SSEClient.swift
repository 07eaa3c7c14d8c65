import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 client on SwiftNIO, one connection per request or
/// stream: what the tests and the fan-out drive the server with.
public enum HTTP {
  /// A response: its status and its whole body.
  public struct Response: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: String

    public func header(_ name: String) -> String? {
      headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
  }

  /// Sends one request on a new connection and reads the whole response.
  public static func request(
    _ method: HTTPMethod, _ path: String, body: String? = nil, host: String = "127.0.0.1", port: Int,
    group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
  ) async throws -> Response {
    let promise = group.next().makePromise(of: Response.self)
    let channel = try await connect(host: host, port: port, group: group, failing: promise) {
      ResponseCollector(promise: promise)
    }
    var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
    head.headers.add(name: "Host", value: "\(host):\(port)")
    head.headers.add(name: "Connection", value: "close")
    if let body {
      head.headers.add(name: "Content-Type", value: "application/json")
      head.headers.add(name: "Content-Length", value: "\(body.utf8.count)")
    }
    channel.write(HTTPClientRequestPart.head(head), promise: nil)
    if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: body))), promise: nil) }
    defer { channel.close(promise: nil) }
    do {
      try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
    } catch {
      promise.fail(error)
      throw error
    }
    return try await promise.futureResult.get()
  }

  /// Opens a server-sent events stream and calls `onEvent` with each
  /// event's `data`, on the connection's event loop, as it arrives.
  /// Returns once the response's head is in; throws on a status not 200.
  public static func events(
    _ path: String, host: String = "127.0.0.1", port: Int,
    group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    onEvent: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void = {}
  ) async throws -> EventStream {
    let headPromise = group.next().makePromise(of: Int.self)
    let channel = try await connect(host: host, port: port, group: group, failing: headPromise) {
      EventParser(head: headPromise, onEvent: onEvent, onEnd: onEnd)
    }
    var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
    head.headers.add(name: "Host", value: "\(host):\(port)")
    head.headers.add(name: "Accept", value: "text/event-stream")
    channel.write(HTTPClientRequestPart.head(head), promise: nil)
    do {
      try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
    } catch {
      headPromise.fail(error)
      channel.close(promise: nil)
      throw error
    }
    let status = try await headPromise.futureResult.get()
    guard status == 200 else {
      channel.close(promise: nil)
      throw StatusError(status: status)
    }
    return EventStream(channel: channel)
  }

  /// The connection closed after the request was sent and before the
  /// whole response arrived.
  public struct NoResponse: Error, Sendable {}

  /// A connection with HTTP/1.1 client handlers and then `handler`; a
  /// failed connect fails `promise` too, so it is never left pending.
  private static func connect<Value>(
    host: String, port: Int, group: any EventLoopGroup, failing promise: EventLoopPromise<Value>,
    handler: @escaping @Sendable () -> any ChannelInboundHandler
  ) async throws -> any Channel {
    do {
      return try await ClientBootstrap(group: group)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            try channel.pipeline.syncOperations.addHandler(handler())
          }
        }
        .connect(host: host, port: port).get()
    } catch {
      promise.fail(error)
      throw error
    }
  }

  public struct StatusError: Error, Sendable {
    public var status: Int
  }

  /// An open stream; `close()` ends it.
  public struct EventStream: Sendable {
    let channel: any Channel

    public func close() async {
      try? await channel.close()
    }
  }
}

private final class ResponseCollector: ChannelInboundHandler {
  typealias InboundIn = HTTPClientResponsePart
  let promise: EventLoopPromise<HTTP.Response>
  var response = HTTP.Response(status: 0, headers: [], body: "")
  var done = false

  init(promise: EventLoopPromise<HTTP.Response>) { self.promise = promise }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      response.status = Int(head.status.code)
      response.headers = head.headers.map { ($0.name, $0.value) }
    case .body(let buffer):
      response.body += String(buffer: buffer)
    case .end:
      done = true
      promise.succeed(response)
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    if !done { promise.fail(HTTP.NoResponse()) }
    done = true
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if !done { promise.fail(error) }
    done = true
    context.close(promise: nil)
  }
}

/// Splits the body into events (blank-line separated) and passes on each
/// one's `data:` lines, joined by newlines.
private final class EventParser: ChannelInboundHandler {
  typealias InboundIn = HTTPClientResponsePart
  let head: EventLoopPromise<Int>
  let onEvent: @Sendable (String) -> Void
  let onEnd: @Sendable () -> Void
  var pending: [UInt8] = []
  /// Where the search for the next blank line resumes: bytes before it hold none.
  var scanned = 0
  var headed = false
  var ended = false

  init(
    head: EventLoopPromise<Int>, onEvent: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void
  ) {
    self.head = head
    self.onEvent = onEvent
    self.onEnd = onEnd
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let response):
      headed = true
      head.succeed(Int(response.status.code))
    case .body(let buffer):
      pending += buffer.readableBytesView
      var start = 0
      while let end = blankLine(from: max(start, scanned)) {
        if let data = dataLines(pending[start..<end]) { onEvent(data) }
        start = end + 2
      }
      pending.removeSubrange(..<start)
      scanned = max(0, pending.count - 1)
    case .end:
      finish()
    }
  }

  /// The first "\n\n" at or after `start`, by its first byte.
  private func blankLine(from start: Int) -> Int? {
    var index = start
    while index + 1 < pending.count {
      if pending[index] == 10 && pending[index + 1] == 10 { return index }
      index += 1
    }
    return nil
  }

  /// An event's `data:` lines without their field name, joined by newlines;
  /// nil when it has none. Bytes, not characters: a thousand clients parse
  /// every event.
  private func dataLines(_ event: ArraySlice<UInt8>) -> String? {
    var data: [UInt8] = []
    var found = false
    for line in event.split(separator: 10, omittingEmptySubsequences: false) {
      guard line.starts(with: "data:".utf8) else { continue }
      if found { data.append(10) }
      found = true
      var value = line.dropFirst(5)
      if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
      data += value
    }
    return found ? String(decoding: data, as: UTF8.self) : nil
  }

  private func finish() {
    guard !ended else { return }
    ended = true
    onEnd()
  }

  func channelInactive(context: ChannelHandlerContext) {
    if !headed { head.fail(ChannelError.eof) }
    headed = true
    finish()
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if !headed { head.fail(error) }
    headed = true
    context.close(promise: nil)
  }
}
