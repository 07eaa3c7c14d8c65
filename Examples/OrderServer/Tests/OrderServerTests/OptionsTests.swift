import OrderServer
import Testing

@Suite("OrderServer: its command line")
struct OptionsTests {
  @Test("flags parse into options; --help asks for the usage")
  func parses() throws {
    let options = try ServerOptions(arguments: [
      "--port", "0", "--store", "/tmp/c.sqlite", "--durability", "operating-system", "--max-active", "5",
    ])
    #expect(options.port == 0)
    #expect(options.store == "/tmp/c.sqlite")
    #expect(options.durability == .operatingSystem)
    #expect(options.maxActive == 5)
    #expect(!options.help)
    #expect(try ServerOptions(arguments: ["--help"]).help)
    #expect(ServerOptions.usage.hasPrefix("usage: order-server [--host 127.0.0.1]"))
  }

  @Test(
    "a command line it cannot run is refused in one line",
    arguments: [
      (["--verbose"], "unknown option --verbose (--help lists them)"),
      (["--port", "70000"], "--port takes a whole number from 0 to 65535, not 70000"),
      (["--store", ""], "--store needs a path, not an empty one"),
      (["--durability", "operating-system"], "--durability applies to a --store, and none was given"),
      (["--idle", "5"], "--idle applies to a --store, and none was given"),
      (["--store"], "--store needs a value"),
    ])
  func refuses(arguments: [String], message: String) {
    #expect(throws: UsageError.self) { try ServerOptions(arguments: arguments) }
    do {
      _ = try ServerOptions(arguments: arguments)
    } catch {
      #expect(error.description == message)
    }
  }
}
