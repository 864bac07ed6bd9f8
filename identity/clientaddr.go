package identity

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Proxies are the reverse proxies whose X-Forwarded-For a server believes
// (a deployment's load balancer). The zero value believes none: the
// client's address is the connection's peer, and no header may claim
// another.
type Proxies struct {
	nets []netip.Prefix
}

// ParseProxies reads a list of addresses and CIDR prefixes ("10.0.0.5",
// "172.30.80.0/24", "::1"). An entry that is neither is fault.ErrInvalid
// naming it.
func ParseProxies(list []string) (Proxies, error) {
	var p Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if pre, err := netip.ParsePrefix(s); err == nil {
			p.nets = append(p.nets, pre.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return Proxies{}, fmt.Errorf("trusted proxy %q is neither an IP address nor a CIDR prefix: %w", s, fault.ErrInvalid)
		}
		a = a.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// String lists the proxies as ParseProxies reads them back: prefixes,
// comma-separated ("" for none).
func (p Proxies) String() string {
	out := make([]string, len(p.nets))
	for i, n := range p.nets {
		out[i] = n.String()
	}
	return strings.Join(out, ",")
}

// peer is r's connection peer: its host as given, its address, and
// whether it is one of the proxies (an address that does not parse is
// none).
func (p Proxies) peer(r *http.Request) (string, netip.Addr, bool) {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	return host, a, err == nil && len(p.nets) > 0 && p.Trusts(a)
}

// Trusts reports whether addr is one of the proxies.
func (p Proxies) Trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, n := range p.nets {
		if n.Contains(addr) {
			return true
		}
	}
	return false
}

// ClientAddr is the address that made r: the connection's peer, unless the
// peer is a trusted proxy; then X-Forwarded-For is read from the right,
// each hop a trusted proxy added being skipped, and the first address no
// trusted proxy vouches for is the client. A malformed hop ends the walk
// at the last trusted one, so a client cannot pass itself off as someone
// else by sending the header through a proxy that appends to it.
func (p Proxies) ClientAddr(r *http.Request) string {
	peer, a, trusted := p.peer(r)
	if !trusted {
		return peer
	}
	client := a.Unmap()
	hops := r.Header.Values("X-Forwarded-For")
	var all []string
	for _, h := range hops {
		all = append(all, strings.Split(h, ",")...)
	}
	for i := len(all) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(all[i]))
		if err != nil {
			break
		}
		client = hop.Unmap()
		if !p.Trusts(client) {
			break
		}
	}
	return client.String()
}

// Origin is the origin (scheme://host[:port]) r was sent to, as the
// client saw it: the connection's (https when it is TLS) and its Host,
// unless the peer is a trusted proxy; then its X-Forwarded-Proto (http or
// https) and X-Forwarded-Host, when set, say what the client asked for.
// A client's own X-Forwarded-* headers count for nothing. A default
// port (80 for http, 443 for https) is left out, as browsers leave it out
// of an Origin header. Lower case.
func (p Proxies) Origin(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if _, _, trusted := p.peer(r); trusted {
		first := func(name string) string {
			v, _, _ := strings.Cut(r.Header.Get(name), ",")
			return strings.TrimSpace(v)
		}
		if v := strings.ToLower(first("X-Forwarded-Proto")); v == "http" || v == "https" {
			scheme = v
		}
		if v := first("X-Forwarded-Host"); v != "" {
			host = v
		}
	}
	return OriginOf(scheme, host)
}

// OriginOf is the origin of scheme and host, lower case, without the
// scheme's default port.
func OriginOf(scheme, host string) string {
	scheme, host = strings.ToLower(scheme), strings.ToLower(host)
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host
}
