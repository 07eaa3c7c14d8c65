/// Text for amounts and counts, without Foundation's formatters.
enum Money {
  /// `123456` cents as `$1,234.56`.
  static func format(_ cents: Int) -> String {
    let fraction = cents % 100
    return "$\(grouped(cents / 100)).\(fraction < 10 ? "0" : "")\(fraction)"
  }

  /// `1234567` as `1,234,567`.
  static func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
      text.append(digit)
    }
    return value < 0 ? "-\(text)" : text
  }
}
