package identity_test

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestClientAddr(t *testing.T) {
	proxies, err := identity.ParseProxies([]string{"10.0.0.5", " 172.30.80.0/24 ", ""})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		xff        []string
		proxies    identity.Proxies
		want       string
	}{
		{"no proxies: the header is ignored", "192.0.2.7:5555", []string{"198.51.100.1"}, identity.Proxies{}, "192.0.2.7"},
		{"untrusted peer: the header is ignored", "192.0.2.7:5555", []string{"198.51.100.1"}, proxies, "192.0.2.7"},
		{"trusted peer: the hop it added", "10.0.0.5:80", []string{"198.51.100.1"}, proxies, "198.51.100.1"},
		{"a claim before the real hop is not believed", "10.0.0.5:80", []string{"203.0.113.9, 198.51.100.1"}, proxies, "198.51.100.1"},
		{"chained trusted proxies are skipped", "10.0.0.5:80", []string{"198.51.100.1, 172.30.80.3"}, proxies, "198.51.100.1"},
		{"several header lines read as one list", "10.0.0.5:80", []string{"203.0.113.9", "198.51.100.1"}, proxies, "198.51.100.1"},
		{"trusted peer without the header", "172.30.80.9:80", nil, proxies, "172.30.80.9"},
		{"malformed hop ends the walk", "10.0.0.5:80", []string{"198.51.100.1, junk"}, proxies, "10.0.0.5"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.5]:80", []string{"198.51.100.1"}, proxies, "198.51.100.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.peer
			for _, h := range c.xff {
				r.Header.Add("X-Forwarded-For", h)
			}
			if got := c.proxies.ClientAddr(r); got != c.want {
				t.Fatalf("ClientAddr = %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseProxiesRefusesJunk(t *testing.T) {
	_, err := identity.ParseProxies([]string{"10.0.0.1", "proxy.local"})
	if !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("err = %v, want fault.ErrInvalid", err)
	}
}

// FuzzClientAddr: whatever the peer and X-Forwarded-For say, the address
// is one of them, never a panic; without trusted proxies it is the peer's
// host, and a header from an untrusted peer names no one. The request's
// origin (Origin) likewise reads X-Forwarded-Proto and -Host only from a
// trusted peer.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.5:80", "198.51.100.1", "10.0.0.0/8")
	f.Add("10.0.0.5:80", "203.0.113.9, 198.51.100.1, 10.0.0.7", "10.0.0.5,10.0.0.7")
	f.Add("[::ffff:10.0.0.5]:80", "2001:db8::1", "10.0.0.5")
	f.Add("192.0.2.7:5555", "junk, ,,", "192.0.2.0/24")
	f.Add("not an address", "198.51.100.1", "")
	f.Fuzz(func(t *testing.T, peer, xff, trusted string) {
		p, err := identity.ParseProxies(strings.Split(trusted, ","))
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("ParseProxies(%q): %v", trusted, err)
			}
			return
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xff)
		r.Header.Set("X-Forwarded-Proto", "https")
		r.Header.Set("X-Forwarded-Host", xff)
		got := p.ClientAddr(r)
		host := peer
		if h, _, err := net.SplitHostPort(peer); err == nil {
			host = h
		}
		// The request's origin reads forwarded headers only from a trusted
		// peer: anyone else's is the connection's own.
		if own := identity.OriginOf("http", r.Host); (identity.Proxies{}).Origin(r) != own {
			t.Fatalf("no proxies: origin %q, want %q", (identity.Proxies{}).Origin(r), own)
		}
		if a, err := netip.ParseAddr(host); (err != nil || !p.Trusts(a)) && p.Origin(r) != identity.OriginOf("http", r.Host) {
			t.Fatalf("untrusted peer %q: origin %q", peer, p.Origin(r))
		}
		if plain := (identity.Proxies{}).ClientAddr(r); plain != host {
			t.Fatalf("no proxies: %q, want the peer's host %q", plain, host)
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !p.Trusts(a) {
			if got != host {
				t.Fatalf("untrusted peer %q: %q", peer, got)
			}
			return
		}
		if got == a.Unmap().String() {
			return
		}
		for _, h := range strings.Split(xff, ",") {
			if hop, err := netip.ParseAddr(strings.TrimSpace(h)); err == nil && hop.Unmap().String() == got {
				return
			}
		}
		t.Fatalf("trusted peer %q, header %q: %q is neither the peer nor a hop", peer, xff, got)
	})
}

// Origin is the request's own origin: the connection's scheme and Host,
// or a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host; a default
// port is left out, and anyone else's forwarded headers count for nothing.
func TestOrigin(t *testing.T) {
	proxies, err := identity.ParseProxies([]string{"10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	fwd := map[string]string{"X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "Tools.Example, inner"}
	for _, c := range []struct {
		peer, host string
		tls        bool
		hdr        map[string]string
		want       string
	}{
		{"192.0.2.1", "console.test:8080", false, nil, "http://console.test:8080"},
		{"192.0.2.1", "console.test:443", true, nil, "https://console.test"},
		{"192.0.2.1", "CONSOLE.test:80", false, fwd, "http://console.test"},
		{"10.0.0.5", "inner:8080", false, fwd, "https://tools.example"},
		{"10.0.0.5", "inner:8080", false, map[string]string{"X-Forwarded-Proto": "gopher"}, "http://inner:8080"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr, r.Host = c.peer+":4711", c.host
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		for k, v := range c.hdr {
			r.Header.Set(k, v)
		}
		if got := proxies.Origin(r); got != c.want {
			t.Errorf("%s %s %v: Origin = %q, want %q", c.peer, c.host, c.hdr, got, c.want)
		}
	}
}
