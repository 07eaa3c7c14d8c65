/// The screen of a terminal, 80 columns by 24 rows, made from what a
/// program writes: text, line feeds, carriage returns, and the ANSI escapes
/// a full-screen program uses (cursor position, clearing, saving and
/// restoring the cursor). Colours and modes are ignored.
///
/// ```swift
/// var screen = VirtualScreen()
/// screen.feed(Array("\u{1B}[H\u{1B}[2Jhello\r\nworld".utf8))
/// screen.lines  // ["hello", "world"]
/// ```
///
/// What a test reads is what a person would see: a line drawn and then
/// cleared is gone, a line redrawn in place shows its last text, and what
/// the terminal echoed of the typing is where the cursor was.
struct VirtualScreen {
  let width: Int
  let height: Int
  private var cells: [[Character]]
  private var row = 0
  private var column = 0
  private var saved = (row: 0, column: 0)
  private var parser = Parser.text
  /// The bytes of a UTF-8 character not complete yet.
  private var pending: [UInt8] = []

  private enum Parser {
    case text
    case escape
    /// A control sequence, `ESC [`, and its parameters so far.
    case controlSequence(String)
  }

  init(width: Int = 80, height: Int = 24) {
    self.width = width
    self.height = height
    cells = Array(repeating: Array(repeating: " ", count: width), count: height)
  }

  /// The rows, without trailing spaces, without the empty rows at the end.
  var lines: [String] {
    var lines = cells.map { String($0).trimmingTrailingSpaces() }
    while lines.last?.isEmpty == true { lines.removeLast() }
    return lines
  }

  mutating func feed(_ bytes: some Sequence<UInt8>) {
    for byte in bytes { feed(byte) }
  }

  private mutating func feed(_ byte: UInt8) {
    switch parser {
    case .escape:
      switch byte {
      case UInt8(ascii: "["): parser = .controlSequence("")
      case UInt8(ascii: "7"):
        saved = (row, column)
        parser = .text
      case UInt8(ascii: "8"):
        (row, column) = saved
        parser = .text
      default: parser = .text  // other escapes change nothing on the screen here
      }
    case .controlSequence(let parameters):
      switch byte {
      case 0x30...0x3F: parser = .controlSequence(parameters + String(UnicodeScalar(byte)))
      case 0x20...0x2F: break  // intermediate bytes: none of the sequences kept here has one
      case 0x40...0x7E:
        perform(final: UnicodeScalar(byte), parameters: parameters)
        parser = .text
      default: parser = .text
      }
    case .text:
      if !pending.isEmpty || byte >= 0x80 {
        pending.append(byte)
        let expected =
          switch pending[0] {
          case 0xF0...: 4
          case 0xE0...: 3
          case 0xC0...: 2
          default: 1
          }
        guard pending.count >= expected else { return }
        let character = Character(String(decoding: pending, as: UTF8.self))
        pending.removeAll()
        put(character)
        return
      }
      switch byte {
      case 0x1B: parser = .escape
      case UInt8(ascii: "\r"): column = 0
      case UInt8(ascii: "\n"): lineFeed()
      case 0x08: column = max(0, column - 1)
      case UInt8(ascii: "\t"): column = min(width - 1, (column / 8 + 1) * 8)
      case 0x20...0x7E: put(Character(UnicodeScalar(byte)))
      default: break  // bell and other controls
      }
    }
  }

  private mutating func put(_ character: Character) {
    if column >= width {
      column = 0
      lineFeed()
    }
    cells[row][column] = character
    column += 1
  }

  private mutating func lineFeed() {
    if row == height - 1 {
      cells.removeFirst()
      cells.append(Array(repeating: " ", count: width))
    } else {
      row += 1
    }
  }

  private mutating func perform(final: UnicodeScalar, parameters: String) {
    let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
    func number(_ index: Int, default value: Int) -> Int {
      index < numbers.count ? numbers[index] ?? value : value
    }
    switch final {
    case "H", "f":
      row = min(max(number(0, default: 1), 1), height) - 1
      column = min(max(number(1, default: 1), 1), width) - 1
    case "A": row = max(0, row - number(0, default: 1))
    case "B": row = min(height - 1, row + number(0, default: 1))
    case "C": column = min(width - 1, column + number(0, default: 1))
    case "D": column = max(0, column - number(0, default: 1))
    case "G": column = min(max(number(0, default: 1), 1), width) - 1
    case "J":
      switch number(0, default: 0) {
      case 0:
        clear(row: row, from: column)
        for below in (row + 1)..<height { clear(row: below, from: 0) }
      case 1:
        for above in 0..<row { clear(row: above, from: 0) }
        clear(row: row, through: column)
      default:
        for index in 0..<height { clear(row: index, from: 0) }
      }
    case "K":
      switch number(0, default: 0) {
      case 0: clear(row: row, from: column)
      case 1: clear(row: row, through: column)
      default: clear(row: row, from: 0)
      }
    default: break  // colours, modes
    }
  }

  private mutating func clear(row: Int, from start: Int) {
    for index in min(start, width)..<width { cells[row][index] = " " }
  }

  private mutating func clear(row: Int, through end: Int) {
    for index in 0...min(end, width - 1) { cells[row][index] = " " }
  }
}

extension String {
  func trimmingTrailingSpaces() -> String {
    guard let last = lastIndex(where: { $0 != " " }) else { return "" }
    return String(self[...last])
  }
}
