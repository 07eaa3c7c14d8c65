#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the figures were measured on.
struct Machine {
  let cpu: String
  let cores: Int
  let memory: String
  let kernel: String
  let toolchain: String
  let date: String

  static func current() -> Machine {
    let cpu =
      readFile("/proc/cpuinfo")?.split(separator: "\n")
      .first { $0.hasPrefix("model name") }
      .flatMap { $0.split(separator: ":", maxSplits: 1).last }?
      .trimmingSpaces ?? "unknown CPU"
    let memoryKB =
      readFile("/proc/meminfo")?.split(separator: "\n")
      .first { $0.hasPrefix("MemTotal") }?
      .split(separator: " ").dropFirst().first.flatMap { Int($0) }
    var name = utsname()
    uname(&name)
    let kernel = withUnsafeBytes(of: &name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return Machine(
      cpu: cpu,
      cores: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
      memory: memoryKB.map { "\($0 / 1_048_576) GiB" } ?? "unknown memory",
      kernel: "\(kernel) \(release) \(machine)",
      toolchain: commandOutput("swift --version 2>/dev/null")?.split(separator: "\n").first.map(String.init)
        ?? "unknown toolchain",
      date: utcDate())
  }
}

extension Substring {
  var trimmingSpaces: String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}

func readFile(_ path: String) -> String? {
  guard let file = fopen(path, "r") else { return nil }
  defer { fclose(file) }
  return readAll(file)
}

func commandOutput(_ command: String) -> String? {
  guard let pipe = popen(command, "r") else { return nil }
  defer { pclose(pipe) }
  let output = readAll(pipe)
  return output.isEmpty ? nil : output
}

/// Everything left in `stream`, as UTF-8 text.
private func readAll(_ stream: UnsafeMutablePointer<FILE>) -> String {
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4_096)
  while true {
    let count = fread(&buffer, 1, buffer.count, stream)
    if count <= 0 { break }
    bytes += buffer[0..<count]
  }
  return String(decoding: bytes, as: UTF8.self)
}

func utcDate() -> String {
  var now = time(nil)
  var parts = tm()
  gmtime_r(&now, &parts)
  var buffer = [Int8](repeating: 0, count: 64)
  let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M UTC", &parts)
  return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Resident memory of this process, in bytes.
func residentBytes() -> Int {
  guard let statm = readFile("/proc/self/statm") else { return 0 }
  let fields = statm.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
  return pages * sysconf(Int32(_SC_PAGESIZE))
}
