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

  @Test("--postgres takes a server's URL; the process is named by its host and port")
  func postgres() throws {
    let options = try ServerOptions(arguments: [
      "--port", "8081", "--postgres", "postgres://app:secret@db.local:5433/shop", "--namespace", "orders_2",
      "--max-active", "10",
    ])
    #expect(
      options.postgres
        == PostgresURL(user: "app", password: "secret", host: "db.local", port: 5433, database: "shop"))
    #expect(options.namespace == "orders_2")
    #expect(options.owner == "127.0.0.1:8081")
    let plain = try ServerOptions(arguments: ["--postgres", "postgres://postgres@127.0.0.1"])
    #expect(
      plain.postgres == PostgresURL(user: "postgres", password: nil, host: "127.0.0.1", port: 5432, database: nil))
    #expect(plain.namespace == "orderserver")
    let encoded = try ServerOptions(arguments: ["--postgres", "postgres://us%20er:p%40ss%2Fw@127.0.0.1/my%20db"])
    #expect(
      encoded.postgres
        == PostgresURL(user: "us er", password: "p@ss/w", host: "127.0.0.1", port: 5432, database: "my db"))
  }

  @Test(
    "a command line it cannot run is refused in one line",
    arguments: [
      (["--verbose"], "unknown option --verbose (--help lists them)"),
      (["--port", "70000"], "--port takes a whole number from 0 to 65535, not 70000"),
      (["--store", ""], "--store needs a path, not an empty one"),
      (["--durability", "operating-system"], "--durability applies to a --store or --postgres, and neither was given"),
      (["--idle", "5"], "--idle applies to a --store or --postgres, and neither was given"),
      (["--store"], "--store needs a value"),
      (
        ["--postgres", "mysql://root@host/db"],
        "--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE], not mysql://root@host/db"
      ),
      (
        ["--postgres", "postgres://app@host:99999"],
        "--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE], not postgres://app@host:99999"
      ),
      (
        ["--postgres", "postgres://app@host/shop?sslmode=require"],
        "--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE], not postgres://app@host/shop?sslmode=require"
      ),
      (
        ["--postgres", "postgres://app%zz@host/shop"],
        "--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE], not postgres://app%zz@host/shop"
      ),
      (["--namespace", "orders"], "--namespace applies to --postgres, and none was given"),
      (
        ["--postgres", "postgres://app@h", "--namespace", "Orders"],
        "--namespace is 1 to 40 lowercase letters, digits or '_', starting with a letter, not Orders"
      ),
      (
        ["--postgres", "postgres://app@h", "--store", "/tmp/c.sqlite"],
        "--store and --postgres are two stores: give one"
      ),
      (["--postgres", "postgres://app@h", "--baseline"], "--baseline keeps no store: --postgres does not apply"),
      (
        ["--postgres", "postgres://app@h", "--port", "0"],
        "--postgres needs a --port other than 0: HOST:PORT names this process to the others"
      ),
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
