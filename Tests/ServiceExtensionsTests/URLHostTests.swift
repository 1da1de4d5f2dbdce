import Foundation
import Testing

@testable import ServiceExtensions

/// The host of a media URL is checked in exactly the form the HTTP client connects to.
@Suite struct URLHostTests {
    /// Hosts the check accepts: what it judges (`kind`), the text the client will read, the URL requested.
    @Test(arguments: [
        ("http://media.example.com/a.jpg?sig=1", URLHost.Kind.name("media.example.com"), "http://media.example.com/a.jpg?sig=1"),
        ("http://Media.Example.COM./a", .name("media.example.com."), "http://media.example.com./a"),
        // Percent-encoded letters are decoded once; the request goes out with the name as checked.
        ("http://ex%61mple.com:8080/p?q=1#f", .name("example.com"), "http://example.com:8080/p?q=1#f"),
        ("http://bücher.example/", .name("xn--bcher-kva.example"), "http://xn--bcher-kva.example/"),
        // Not a dotted quad: a name, which the resolver reads (127.0.0.1) and the check then judges.
        ("http://127.1/", .name("127.1"), "http://127.1/"),
        ("http://8.8.8.8/x", .address(IPAddress("8.8.8.8")!), "http://8.8.8.8/x"),
        ("http://[::1]:81/", .address(IPAddress("::1")!), "http://[::1]:81/"),
        ("http://[fe80::1%25eth0]/", .address(IPAddress("fe80::1")!), "http://[fe80::1%25eth0]/"),
    ])
    func acceptedHosts(url: String, kind: URLHost.Kind, request: String) throws {
        let host = try URLHost(try #require(URL(string: url)))
        #expect(host.kind == kind)
        #expect(host.requestURL.absoluteString == request)
        // What the downloader reads from the request URL is the host that was checked.
        let readBack = try #require(URL(string: host.requestURL.absoluteString)?.host)
        #expect(readBack == host.text)
    }

    /// Hosts that decode to something other than a name or an address: refused, never guessed at.
    @Test(arguments: [
        "http://8.8.8.8%25x.example.test/",  // the client would resolve the name 8.8.8.8%x.example.test
        "http://127.0.0.1%25.attacker.example/",
        "http://1.2.3.4%0a.example/",
        "http://a%00b.example/",
        "http://a%2Fb.example/",
        "http://b%C3%BCcher.example/",  // decodes to non-ASCII: resolvers want the xn-- form
        "http://[fe80::1%25a%2Fb]/",
        "http://[fe80::1%25%65th0]/",  // a zone escaped otherwise than the canonical form
    ])
    func refusedHosts(url: String) throws {
        #expect(throws: AttachmentError.invalidHost) { try URLHost(try #require(URL(string: url))) }
    }

    /// Before, the check stopped reading at `%` and judged 8.8.8.8 (public) while the client resolved the name.
    @Test func theCheckRefusesAHostThatIsAnAddressOnlyToAReaderStoppingAtPercent() async throws {
        let check = DestinationCheck(allowHosts: try HostAllowList.parse(["8.8.8.8", "127.0.0.0/8"]).get())
        for url in ["http://8.8.8.8%25x.example.test/", "http://127.0.0.1%25x.localhost/"] {
            await #expect(throws: AttachmentError.invalidHost) { try await check.check(try #require(URL(string: url))) }
        }
    }

    @Test func aNameIsCheckedAndConnectedToInOneSpelling() async throws {
        let check = DestinationCheck(allowHosts: try HostAllowList.parse(["localhost"]).get())
        let destination = try await check.check(try #require(URL(string: "http://LocalHost:8080/a")))
        #expect(destination.hostIsName)
        #expect(destination.host == "localhost")
        #expect(destination.url.absoluteString == "http://localhost:8080/a")
        #expect(destination.addresses.allSatisfy { $0.scope == .loopback })
    }
}
