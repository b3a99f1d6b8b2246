package authserver

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
)

// TestCMAddressCheck: the dialer's Control hook refuses every internal
// destination, IPv4-mapped and NAT64 forms included, and any port but 443.
// Row CM-07 (docs/security-tests.md).
func TestCMAddressCheck(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"127.0.0.1", "127.8.9.10", "::1", "10.0.0.1", "172.16.5.4", "192.168.1.1",
		"100.64.0.1", "100.127.255.254", "169.254.169.254", "169.254.0.1", "fe80::1", "fc00::1", "fd12::1",
		"224.0.0.1", "ff02::1", "0.0.0.0", "0.1.2.3", "::", "255.255.255.255", "240.0.0.1", "198.18.0.1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a00:1",
		"2002:7f00:1::", "2001::1", "fec0::1", "192.0.0.8"} {
		addr := netip.AddrPortFrom(netip.MustParseAddr(a), 443).String()
		for _, network := range []string{"tcp4", "tcp6"} {
			if err := checkDialAddr(network, addr, nil); !errors.Is(err, errForbiddenAddr) {
				t.Errorf("CM-07: %s %s allowed", network, addr)
			}
		}
	}
	for _, a := range []string{"93.184.216.34:443", "[2606:2800:220:1:248:1893:25c8:1946]:443"} {
		if err := checkDialAddr("tcp4", a, nil); err != nil {
			t.Errorf("public %s refused: %v", a, err)
		}
	}
	for _, a := range []string{"93.184.216.34:80", "93.184.216.34:8443", "not-an-address:443"} {
		if err := checkDialAddr("tcp4", a, nil); err == nil {
			t.Errorf("%s allowed", a)
		}
	}
	if err := checkDialAddr("udp4", "93.184.216.34:443", nil); err == nil {
		t.Errorf("udp allowed")
	}
}

// TestCMAddressCheckRealAddresses runs the check against this machine's
// own loopback and private addresses: every one of them is refused, and
// a real listener on loopback is never connected to. The port is set to
// 443 before the check, so that only the address decides.
// Row CM-07 (docs/security-tests.md).
func TestCMAddressCheckRealAddresses(t *testing.T) {
	t.Parallel()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := p.Addr()
		if !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
			continue // a public address of this machine is not internal to it
		}
		checked++
		if !forbiddenAddr(ip) {
			t.Errorf("CM-07: this machine's address %s is allowed", ip)
		}
	}
	if checked == 0 {
		t.Fatal("no loopback or private address on this machine to check")
	}

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := NewCIMDDialer()
	d.Control = func(network, address string, c syscall.RawConn) error {
		ap := netip.MustParseAddrPort(address)
		return checkDialAddr(network, netip.AddrPortFrom(ap.Addr(), 443).String(), c)
	}
	if conn, err := d.DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, errForbiddenAddr) {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("CM-07: dialing the loopback listener: %v, want the address refused", err)
	}
	// Had the refused dial connected, the listener would accept it first.
	plain, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	got, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.RemoteAddr().String() != plain.LocalAddr().String() {
		t.Errorf("CM-07: the listener's first connection came from %s, not the plain dial %s", got.RemoteAddr(), plain.LocalAddr())
	}
}
