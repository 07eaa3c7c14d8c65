import AsyncCoreNavigation
import Testing

/// Deep links read into routes, good and bad.
@Suite("DeepLinks", .hangDetector)
struct DeepLinksTests {
  let links = DeepLinks<LinkRoute>(scheme: "app")
    .rule("property/:id") { try .property(id: $0.int("id")) }
    .rule("photos") { _ in .photos }
    .rule("search/:q") { try .search(query: $0.string("q")) }  // before "search", which it starts with
    .rule("search") { try .search(query: $0.string("q")) }
    .rule("page/:name") { try .page($0.string("name")) }

  func routes(_ link: String) -> Result<[LinkRoute], DeepLinkError> {
    Result { () throws(DeepLinkError) in try links.routes(for: link) }
  }

  @Test(
    "a link gives its routes, bottom first",
    arguments: [
      ("app://property/42", [LinkRoute.property(id: 42)]),
      ("app://property/42/photos", [.property(id: 42), .photos]),
      ("app://property/42/property/7", [.property(id: 42), .property(id: 7)]),
      ("app://search?q=london", [.search(query: "london")]),
      ("app://search/london/property/42", [.search(query: "london"), .property(id: 42)]),
      ("app://", []),
      ("app:///", []),
      ("app://?q=x#top", []),
    ] as [(String, [LinkRoute])]
  )
  func goodLinks(link: String, expected: [LinkRoute]) {
    #expect(routes(link) == .success(expected))
  }

  @Test(
    "empty segments, fragments and the scheme's case do not matter",
    arguments: [
      "app://property/42/", "app://property/42//", "app:///property/42", "app://property//42",
      "APP://property/42", "App://property/42#reviews", "app://property/42?utm_source=mail",
    ]
  )
  func lenientParts(link: String) {
    #expect(routes(link) == .success([.property(id: 42)]))
  }

  @Test(
    "percent escapes are decoded in segments and queries; + is a space only in a query",
    arguments: [
      ("app://search?q=new%20york", LinkRoute.search(query: "new york")),
      ("app://search?q=new+york", .search(query: "new york")),
      ("app://search/new+york", .search(query: "new+york")),
      ("app://search/S%C3%A3o%20Paulo", .search(query: "São Paulo")),
      ("app://page/a%2Fb", .page("a/b")),
      ("app://search?q=a%26b&q=second", .search(query: "a&b")),
      ("app://search?%71=encoded-name", .search(query: "encoded-name")),
      ("app://property/%34%32", .property(id: 42)),
      ("app://search?q=%e2%82%ac", .search(query: "€")),
    ] as [(String, LinkRoute)]
  )
  func percentEncoding(link: String, expected: LinkRoute) {
    #expect(routes(link) == .success([expected]))
  }

  @Test(
    "bad links give an error saying which part is wrong",
    arguments: [
      ("", DeepLinkError.notALink("")),
      ("property/42", .notALink("property/42")),
      ("app:property/42", .notALink("app:property/42")),
      ("app:/property/42", .notALink("app:/property/42")),
      ("://property/42", .notALink("://property/42")),
      ("1app://property/42", .notALink("1app://property/42")),
      (" app://property/42", .notALink(" app://property/42")),
      ("https://property/42", .unknownScheme("https")),
      ("apps://property/42", .unknownScheme("apps")),
      ("app://listing/42", .noMatchingRule(path: "listing/42")),
      ("app://Property/42", .noMatchingRule(path: "Property/42")),
      ("app://property", .noMatchingRule(path: "property")),
      ("app://property/42/map", .noMatchingRule(path: "map")),
      ("app://property/42/photos/extra/1", .noMatchingRule(path: "extra/1")),
      ("app://property/abc", .invalidParameter(name: "id", value: "abc", expected: "an integer")),
      ("app://property/4.2", .invalidParameter(name: "id", value: "4.2", expected: "an integer")),
      ("app://property/%2042", .invalidParameter(name: "id", value: " 42", expected: "an integer")),
      (
        "app://property/99999999999999999999",
        .invalidParameter(name: "id", value: "99999999999999999999", expected: "an integer")
      ),
      ("app://search", .missingParameter("q")),
      ("app://search?q=", .missingParameter("q")),
      ("app://search?q", .missingParameter("q")),
      ("app://search?query=london", .missingParameter("q")),
      ("app://search?q=100%", .badPercentEncoding("100%")),
      ("app://search?q=%G1", .badPercentEncoding("%G1")),
      ("app://page/%4", .badPercentEncoding("%4")),
      ("app://page/%FF", .badPercentEncoding("%FF")),
      ("app://page/%C3", .badPercentEncoding("%C3")),
    ] as [(String, DeepLinkError)]
  )
  func badLinks(link: String, expected: DeepLinkError) {
    #expect(routes(link) == .failure(expected))
  }

  @Test("the first rule whose pattern matches decides, even when its route throws")
  func firstMatchingRuleDecides() {
    let links = DeepLinks<LinkRoute>(scheme: "app")
      .rule("property/:id") { try .property(id: $0.int("id")) }
      .rule("property/:slug") { try .page($0.string("slug")) }
      .rule("property/:id/photos") { _ in .photos }
    #expect(throws: DeepLinkError.invalidParameter(name: "id", value: "villa", expected: "an integer")) {
      try links.routes(for: "app://property/villa")
    }
    // The shorter pattern, declared first, matches before the longer one,
    // which is never tried: "photos" is then left with no rule.
    #expect(throws: DeepLinkError.noMatchingRule(path: "photos")) {
      try links.routes(for: "app://property/1/photos")
    }
  }

  @Test("a rule may throw its own invalidParameter; a pattern parameter hides a query one of the same name")
  func ruleChecksAndNames() throws {
    let links = DeepLinks<LinkRoute>(scheme: "app")
      .rule("property/:id") { parameters in
        let id = try parameters.int("id")
        guard id > 0 else {
          throw DeepLinkError.invalidParameter(name: "id", value: "\(id)", expected: "a positive id")
        }
        return .property(id: id)
      }
    #expect(throws: DeepLinkError.invalidParameter(name: "id", value: "-1", expected: "a positive id")) {
      try links.routes(for: "app://property/-1")
    }
    #expect(try links.routes(for: "app://property/+5?id=9") == [.property(id: 5)])
  }

  @Test("an error of a rule's own type becomes rejected, with the segments the rule matched")
  func foreignErrors() {
    struct Closed: Error {}
    let links = DeepLinks<LinkRoute>(scheme: "app")
      .rule("photos") { _ in .photos }
      .rule("page/:name") { _ in throw Closed() }
    #expect(throws: DeepLinkError.rejected(path: "page/a b", reason: "Closed()")) {
      try links.routes(for: "app://photos/page/a%20b")
    }
  }

  @Test("links with no rule read only the root link")
  func noRules() {
    let links = DeepLinks<LinkRoute>(scheme: "my-app.v2")
    #expect(throws: Never.self) { try links.routes(for: "my-app.v2://") }
    #expect(throws: DeepLinkError.noMatchingRule(path: "x")) { try links.routes(for: "my-app.v2://x") }
  }

  @Test("an error's description cannot add lines to a log, hide characters in it, or flood it")
  func descriptionsAreLogSafe() throws {
    let links = DeepLinks<LinkRoute>(scheme: "app").rule("photos") { _ in .photos }
    func message(_ link: String) -> String {
      do {
        _ = try links.routes(for: link)
        return "no error"
      } catch {
        return "\(error)"
      }
    }
    #expect(message("app://photos%0AERROR%20forged") == #"no rule matches the path "photos\u{A}ERROR forged""#)
    #expect(message("app://a%00b%E2%80%8Bc") == #"no rule matches the path "a\u{0}b\u{200B}c""#)
    #expect(message("app://say%22hi%22") == #"no rule matches the path "say\"hi\"""#)
    let long = message("app://" + String(repeating: "x", count: 100_000))
    #expect(long == "no rule matches the path \"" + String(repeating: "x", count: 200) + "… (99800 more bytes)\"")
    #expect(message("app://caf%C3%A9") == #"no rule matches the path "café""#)
  }

  /// Texts a link can carry that are short in `Character`s or long once
  /// escaped: each must give a description under 1 KB.
  enum Flood: String, CaseIterable, Sendable {
    case zeroWidthJoiners, combiningMarks, lineFeeds, quotes, emojiWithSkinTones, ideographs

    /// 100,000 of them (the combining marks on one letter: one `Character`).
    var text: String {
      switch self {
      case .zeroWidthJoiners: String(repeating: "\u{200D}", count: 100_000)
      case .combiningMarks: "e" + String(repeating: "\u{301}", count: 100_000)
      case .lineFeeds: String(repeating: "\n", count: 100_000)
      case .quotes: String(repeating: "\"", count: 100_000)
      case .emojiWithSkinTones: String(repeating: "👍🏽", count: 100_000)
      case .ideographs: String(repeating: "漢", count: 100_000)
      }
    }
  }

  @Test("every error's description stays under 1 KB, however the link's text is built", arguments: Flood.allCases)
  func descriptionsAreBounded(flood: Flood) {
    let text = flood.text
    let errors: [DeepLinkError] = [
      .notALink(text), .unknownScheme(text), .badPercentEncoding(text), .noMatchingRule(path: text),
      .missingParameter(text), .invalidParameter(name: text, value: text, expected: text),
      .rejected(path: text, reason: text),
    ]
    for error in errors {
      let description = error.description
      #expect(description.utf8.count < 1024, "\(flood): \(description.utf8.count) bytes")
      #expect(description.unicodeScalars.count < 1024, "\(flood): \(description.unicodeScalars.count) scalars")
      #expect(description.contains("more bytes)"), "\(flood): the cut is not marked")
    }
  }

  @Test("a link made of invisible characters reads as a bounded, escaped error")
  func invisibleLinkIsBounded() {
    let links = DeepLinks<LinkRoute>(scheme: "app").rule("photos") { _ in .photos }
    let joiners = String(repeating: "%E2%80%8D", count: 100_000)  // U+200D, percent-encoded
    #expect {
      _ = try links.routes(for: "app://" + joiners)
    } throws: { error in
      let text = "\(error)"
      return text.utf8.count < 1024 && text.hasPrefix(#"no rule matches the path "\u{200D}\u{200D}"#)
    }
  }

  @Test("errors describe themselves in a sentence")
  func descriptions() {
    #expect("\(DeepLinkError.noMatchingRule(path: "map"))" == "no rule matches the path \"map\"")
    #expect(
      "\(DeepLinkError.invalidParameter(name: "id", value: "abc", expected: "an integer"))"
        == "the parameter \"id\" is \"abc\", not an integer")
  }

  @Test("patterns with letters of any script and URL punctuation are accepted and match their links")
  func wellFormedPatterns() throws {
    let links = DeepLinks<String>(scheme: "app")
      .rule("café/:id") { "café \(try $0.int("id"))" }
      .rule("日本/:id") { "日本 \(try $0.int("id"))" }
      .rule("a-b_c.d~e") { _ in "punctuation" }
      .rule("x:y") { _ in "colon inside" }
    #expect(try links.routes(for: "app://caf%C3%A9/7") == ["café 7"])
    #expect(try links.routes(for: "app://%E6%97%A5%E6%9C%AC/8") == ["日本 8"])
    #expect(try links.routes(for: "app://a-b_c.d~e/x:y") == ["punctuation", "colon inside"])
  }

  @Test(
    "a malformed pattern or scheme is a programmer error, naming the pattern and the character",
    arguments: [
      "", "/", ":", "property/:", "a/:id/:id", "bad scheme", "search?q=:q", "100%25", "new york", "a#b",
      "tab\tbed", "zero\u{200B}width", "no\u{00A0}break", "right\u{202E}left", "bom\u{FEFF}",
    ]
  )
  func malformedPatterns(pattern: String) async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [pattern] in
      if pattern == "bad scheme" {
        _ = DeepLinks<Int>(scheme: "app link")
      } else {
        _ = DeepLinks<Int>(scheme: "app").rule(pattern) { _ in 1 }
      }
    }
    guard let result else { return }
    let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(standardError.contains("AsyncCore: DeepLinks"), "standard error: \(standardError)")
    if pattern != "bad scheme", pattern.unicodeScalars.allSatisfy({ $0.isASCII && $0 != "\t" }) {
      // The message names the pattern, as written.
      #expect(standardError.contains("DeepLinks.rule(\"\(pattern)\")"), "standard error: \(standardError)")
    }
    if let invisible = pattern.unicodeScalars.first(where: { !$0.isASCII || $0 == "\t" }) {
      // …and the character, by its code point, whatever it looks like.
      let hex = String(invisible.value, radix: 16, uppercase: true)
      let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
      #expect(standardError.contains("cannot contain \(code)"), "standard error: \(standardError)")
    }
  }
}
