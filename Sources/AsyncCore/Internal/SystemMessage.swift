#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `strerror`'s words for `code`, and the number: `No such file or
/// directory (errno 2)`. `package`: the journal's and the store's errors use it.
package func systemMessage(_ code: Int32) -> String {
  guard let text = strerror(code) else { return "errno \(code)" }
  return "\(String(cString: text)) (errno \(code))"
}
