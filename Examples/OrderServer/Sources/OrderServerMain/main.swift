import Logging
import OrderServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes a line straight to a descriptor: unbuffered, so a reader of a
/// pipe sees it at once.
func writeLine(_ text: String, to descriptor: Int32) {
  let bytes = Array((text + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

let options: ServerOptions
do {
  options = try ServerOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  writeLine("order-server: \(error)", to: 2)
  exit(64)
}
if options.help {
  writeLine(ServerOptions.usage, to: 1)
  exit(0)
}
var logger = Logger(label: "order-server")
logger.logLevel = .notice
do {
  try await runServer(options, logger: logger) { host, port in
    // The tests and the load report read this line for the port.
    writeLine("listening on \(host):\(port)", to: 1)
  }
  writeLine("stopped", to: 1)
} catch {
  writeLine("order-server: \(error)", to: 2)
  exit(1)
}
