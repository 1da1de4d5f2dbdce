import Testing

@testable import ServiceExtensions

/// The address classifier behind the attachment download's safety rule, as pure values.
@Suite struct AddressClassificationTests {
    @Test(arguments: [
        // IPv4
        ("0.0.0.0", IPAddress.Scope.unspecified), ("0.1.2.3", .unspecified),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.0", .private), ("10.255.255.255", .private),
        ("172.16.0.1", .private), ("172.31.255.255", .private), ("172.15.255.255", .public), ("172.32.0.0", .public),
        ("192.168.0.1", .private), ("192.169.0.1", .public),
        ("100.64.0.1", .private), ("100.127.255.255", .private), ("100.63.255.255", .public), ("100.128.0.0", .public),
        ("169.254.169.254", .linkLocal), ("169.253.0.1", .public),
        ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.255", .reserved),
        ("8.8.8.8", .public), ("93.184.216.34", .public), ("1.1.1.1", .public), ("223.255.255.255", .public),
        // IPv6
        ("::", .unspecified), ("::1", .loopback), ("[::1]", .loopback),
        ("fe80::1", .linkLocal), ("fe80::1%eth0", .linkLocal), ("febf::1", .linkLocal),
        ("fc00::1", .private), ("fd12:3456::1", .private), ("fec0::1", .private),
        ("ff02::1", .multicast), ("ff0e::1", .multicast),
        ("2001:db8::1", .public), ("2606:4700::1111", .public), ("fbff::1", .public),
        // IPv4 embedded in IPv6: judged by the IPv4 address they reach.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:10.1.2.3", .private),
        ("::ffff:169.254.169.254", .linkLocal), ("::ffff:0.0.0.0", .unspecified), ("::ffff:8.8.8.8", .public),
        ("::127.0.0.1", .loopback), ("::10.0.0.1", .private), ("::0.0.0.2", .unspecified),
        ("64:ff9b::a00:1", .private), ("64:ff9b::808:808", .public),
        ("2002:7f00:1::", .loopback), ("2002:c0a8:101::1", .private), ("2002:808:808::1", .public),
        // Special-purpose blocks that are no internet destination (each public before).
        ("64:ff9b:1::1", .private), ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", .private), ("64:ff9b:1::808:808", .private),
        ("2001::1", .specialPurpose), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", .specialPurpose),
        ("192.0.0.1", .specialPurpose), ("192.0.0.255", .specialPurpose), ("192.0.1.0", .public), ("191.255.255.255", .public),
        ("198.18.0.1", .specialPurpose), ("198.19.255.255", .specialPurpose), ("198.17.255.255", .public), ("198.20.0.0", .public),
        ("::ffff:198.18.0.1", .specialPurpose), ("64:ff9b::c000:1", .specialPurpose),
    ])
    func scopes(text: String, expected: IPAddress.Scope) throws {
        let address = try #require(IPAddress(text))
        #expect(address.scope == expected)
        #expect(address.scope.isPublic == (expected == .public))
    }

    @Test(arguments: [
        "", "localhost", "example.com", "256.0.0.1", "1.2.3", "1.2.3.4.5", "::g", "1.2.3.4/8", "[1.2.3.4",
        // A zone belongs to IPv6 only, and is an interface name.
        "8.8.8.8%x.example.test", "8.8.8.8%eth0", "fe80::1%", "fe80::1%a/b", "fe80::1%a b",
    ])
    func nonAddressesDoNotParse(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func addressesPrintInTheirUsualForm() throws {
        // Leading zeros are refused: some parsers read them as octal, so the meaning is ambiguous.
        #expect(IPAddress("010.000.000.001") == nil)
        #expect(IPAddress("0x7f.0.0.1") == nil)
        #expect(try #require(IPAddress("2001:0db8:0000::0001")).description == "2001:db8::1")
        #expect(try #require(IPAddress("::ffff:10.0.0.1")).description == "::ffff:10.0.0.1")
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true), ("10.0.0.0/8", "11.0.0.1", false),
        ("10.1.2.3/8", "10.9.9.9", true),  // host bits are cleared
        ("192.168.1.0/24", "192.168.1.255", true), ("192.168.1.0/24", "192.168.2.1", false),
        ("172.16.0.0/12", "172.31.0.1", true), ("172.16.0.0/12", "172.32.0.1", false),
        ("127.0.0.1", "127.0.0.1", true), ("127.0.0.1", "127.0.0.2", false),
        ("0.0.0.0/0", "8.8.8.8", true), ("0.0.0.0/0", "::1", false),
        ("127.0.0.0/8", "::ffff:127.0.0.1", true),  // a mapped address is the IPv4 one
        ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false),
        ("::1", "::1", true), ("::1/128", "::2", false), ("fe80::/10", "febf::ffff", true),
        ("::/0", "10.0.0.1", false),
    ])
    func rangesContainTheirAddresses(range: String, address: String, contained: Bool) throws {
        let cidr = try #require(CIDRRange(range))
        #expect(cidr.contains(try #require(IPAddress(address))) == contained)
    }

    @Test(arguments: ["10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/", "/8", "10.0.0.0/8/8", "example.com/8", "10.0.0.0/ 8"])
    func invalidRangesDoNotParse(text: String) {
        #expect(CIDRRange(text) == nil)
    }

    @Test func allowListsSortNamesFromRanges() throws {
        let list = try HostAllowList.parse(["Media.Example.com.", "10.0.0.0/8", "::1", "localhost"]).get()
        #expect(list.hostNames == ["media.example.com", "localhost"])
        #expect(list.ranges.count == 2)
        #expect(list.allowsName("MEDIA.example.COM"))
        #expect(!list.allowsName("other.example.com"))
        #expect(list.allowsAddress(try #require(IPAddress("10.1.1.1"))))
        #expect(list.allowsAddress(try #require(IPAddress("::1"))))
        #expect(!list.allowsAddress(try #require(IPAddress("127.0.0.1"))))
        for bad in ["http://example.com", "exa mple.com", "", "a..b", "10.0.0.0/99"] {
            #expect(throws: HostAllowList.InvalidEntry.self) { try HostAllowList.parse([bad]).get() }
        }
    }

    @Test func theCheckRefusesEveryNonPublicScopeUnlessAllowed() async throws {
        let strict = DestinationCheck(allowHosts: try HostAllowList.parse([]).get())
        let lenient = DestinationCheck(allowHosts: try HostAllowList.parse(["10.0.0.0/8", "intranet"]).get())
        for text in ["127.0.0.1", "10.0.0.1", "169.254.1.1", "224.0.0.1", "0.0.0.0", "::1", "::ffff:10.0.0.1", "fe80::1"] {
            let address = try #require(IPAddress(text))
            #expect(throws: AttachmentError.self) { try strict.judge(address, host: text, allowedByName: false) }
        }
        try lenient.judge(try #require(IPAddress("10.2.3.4")), host: "10.2.3.4", allowedByName: false)
        try lenient.judge(try #require(IPAddress("::ffff:10.2.3.4")), host: "x", allowedByName: false)
        try lenient.judge(try #require(IPAddress("192.168.0.1")), host: "INTRANET", allowedByName: false)
        #expect(throws: AttachmentError.addressNotAllowed(host: "x", address: try #require(IPAddress("192.168.0.1")), scope: .private)) {
            try lenient.judge(try #require(IPAddress("192.168.0.1")), host: "x", allowedByName: false)
        }
        try strict.judge(try #require(IPAddress("8.8.8.8")), host: "8.8.8.8", allowedByName: false)
    }
}
