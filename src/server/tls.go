package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The TLS context, as Redis's tlsConfigure builds it from the tls-* directives: built when the
// server listens on a tls-port (or tls-replication / tls-cluster is on) and again on every CONFIG
// SET of one of tlsDirectives, which fails with Redis's message and changes nothing when the new
// context cannot be built. Connections open keep the context they shook hands with; the next one
// gets the new context (net/transport asks per connection). What Go's crypto/tls cannot do that
// OpenSSL does is in docs/decisions.md, "TLS".

// tlsDirectives are the directives the TLS context is built from (Redis's applyTlsCfg).
var tlsDirectives = []string{"tls-cert-file", "tls-key-file", "tls-key-file-pass",
	"tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file",
	"tls-ca-cert-file", "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
	"tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
	"tls-session-cache-timeout"}

const (
	errTLSUpdate    = "Unable to update TLS configuration. Check server logs."
	errTLSConfigure = "Failed to configure TLS. Check logs for more info."
)

// tlsContext is one built context: a configuration per tls-auth-clients value (no, yes,
// optional), sharing certificates and session-ticket keys.
type tlsContext [3]*tls.Config

// tlsState is the server's current TLS context (nil until one is needed) and the tls-port its
// listeners are bound to (changed under the config store's writer lock).
type tlsState struct {
	ctx  atomic.Pointer[tlsContext]
	port string
}

// initTLS registers the CONFIG SET hook that rebuilds the context and, for tls-port, moves the
// TLS listeners (Redis's applyTLSPort: the new port is bound before the old one is closed).
func (s *Server) initTLS() {
	s.cfg.OnApplyGroup(append([]string{"tls-port"}, tlsDirectives...), func(get func(string) string) error {
		var ctx *tlsContext
		if tlsWanted(get) && !s.onlyTLSPort(get) {
			var err error
			if ctx, err = buildTLS(get); err != nil {
				s.log.Warn(err.Error())
				return errors.New(errTLSUpdate)
			}
		}
		if port := get("tls-port"); s.tr != nil && port != s.tls.port {
			if err := s.rebindTLS(get("bind"), port); err != nil {
				s.log.Warn("Unable to listen on the TLS port", "tls-port", port, "err", err)
				return errors.New("Unable to listen on this port. Check server logs.")
			}
		}
		if ctx != nil {
			s.tls.ctx.Store(ctx)
		}
		return nil
	})
}

// onlyTLSPort reports that a CONFIG SET changes tls-port and no other TLS directive while a
// context exists: Redis then keeps the context it has (applyTLSPort configures TLS only when it
// is not yet). The store's snapshot still holds the old values while apply hooks run.
func (s *Server) onlyTLSPort(get func(string) string) bool {
	if s.tls.ctx.Load() == nil || get("tls-port") == s.cfg.String("tls-port") {
		return false
	}
	for _, n := range tlsDirectives {
		if get(n) != s.cfg.String(n) {
			return false
		}
	}
	return true
}

// rebindTLS moves the TLS listeners to port on bind's addresses (none for port 0).
func (s *Server) rebindTLS(bind, port string) error {
	var addrs []string
	if n, _ := strconv.Atoi(port); n != 0 {
		var err error
		if addrs, err = bindAddrs(bind, n); err != nil {
			return err
		}
	}
	if err := s.tr.SetTLSAddrs(addrs); err != nil {
		return err
	}
	s.tls.port = port
	return nil
}

// tlsWanted is Redis's condition for configuring TLS at all.
func tlsWanted(get func(string) string) bool {
	return get("tls-port") != "0" || get("tls-replication") == "yes" || get("tls-cluster") == "yes"
}

// startTLS builds the first context; an error stops the server from starting, as Redis exits.
func (s *Server) startTLS() error {
	if !tlsWanted(s.cfg.String) {
		return nil
	}
	ctx, err := buildTLS(s.cfg.String)
	if err != nil {
		s.log.Warn(err.Error())
		return errors.New(errTLSConfigure)
	}
	s.tls.ctx.Store(ctx)
	return nil
}

// tlsConfig is the configuration for the next handshake: the current context under the
// current tls-auth-clients (Redis reads it at each accept).
func (s *Server) tlsConfig() *tls.Config {
	ctx := s.tls.ctx.Load()
	if ctx == nil {
		return nil
	}
	return ctx[max(0, min(2, int(s.cfg.Int("tls-auth-clients"))))]
}

// buildTLS is Redis's tlsConfigure with Go's crypto/tls; its errors are Redis's log lines.
func buildTLS(get func(string) string) (*tlsContext, error) {
	certFile, keyFile := get("tls-cert-file"), get("tls-key-file")
	switch {
	case certFile == "":
		return nil, errors.New("No tls-cert-file configured!")
	case keyFile == "":
		return nil, errors.New("No tls-key-file configured!")
	}
	caFile, caDir := get("tls-ca-cert-file"), get("tls-ca-cert-dir")
	if (get("tls-auth-clients") != "no" || get("tls-replication") == "yes" || get("tls-cluster") == "yes") &&
		caFile == "" && caDir == "" {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	pair, err := loadKeyPair(certFile, keyFile, get("tls-key-file-pass"))
	if err != nil {
		return nil, err
	}
	if cf := get("tls-client-cert-file"); cf != "" { // for replication and cluster links: checked now
		if _, err := loadKeyPair(cf, get("tls-client-key-file"), get("tls-client-key-file-pass")); err != nil {
			return nil, err
		}
	}
	if f := get("tls-dh-params-file"); f != "" {
		if err := checkDHParams(f); err != nil {
			return nil, err
		}
	}
	pool, err := loadCAs(caFile, caDir)
	if err != nil {
		return nil, err
	}
	minV, maxV, err := tlsProtocols(get("tls-protocols"))
	if err != nil {
		return nil, err
	}
	suites, err := tlsCiphers(get("tls-ciphers"))
	if err != nil {
		return nil, err
	}
	if err := tlsCipherSuites13(get("tls-ciphersuites")); err != nil {
		return nil, err
	}
	base := &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientCAs: pool, MinVersion: minV, MaxVersion: maxV,
		CipherSuites: suites, SessionTicketsDisabled: get("tls-session-caching") != "yes",
	}
	if timeout, _ := strconv.ParseInt(get("tls-session-cache-timeout"), 10, 64); !base.SessionTicketsDisabled {
		sessionTimeout(base, time.Duration(timeout)*time.Second)
	}
	var ctx tlsContext
	for i, auth := range []tls.ClientAuthType{tls.NoClientCert, tls.RequireAndVerifyClientCert, tls.VerifyClientCertIfGiven} {
		ctx[i] = base.Clone()
		ctx[i].ClientAuth = auth
	}
	return &ctx, nil
}

// loadKeyPair reads a certificate and its key; an encrypted key (the legacy PEM encryption
// OpenSSL writes with -aes256 and friends) is decrypted with pass.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	if b, _ := pem.Decode(keyPEM); b != nil {
		switch {
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: encrypted PKCS#8 keys are not supported (HotKV reads legacy encrypted PEM keys only)", keyFile)
		case x509.IsEncryptedPEMBlock(b): //nolint:staticcheck // the legacy form is what OpenSSL's -aes256 writes
			der, err := x509.DecryptPEMBlock(b, []byte(pass)) //nolint:staticcheck
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
			}
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: der})
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	return pair, nil
}

// loadCAs reads the CA file and every PEM certificate in the CA directory. A directory that
// cannot be read is no error, as OpenSSL looks certificates up there only when it needs one.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	const msg = "Failed to configure CA certificate(s) file and/or directory: "
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %v", msg, file, err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s%s: no certificate found", msg, file)
		}
	}
	if dir != "" {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && e.Type().IsRegular() {
				pool.AppendCertsFromPEM(b)
			}
		}
	}
	return pool, nil
}

// checkDHParams checks that the file holds DH parameters. Go offers no DHE cipher suite, so they
// are not used (docs/decisions.md).
func checkDHParams(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("Failed to load %s: %v", file, err)
	}
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != "DH PARAMETERS" {
		return fmt.Errorf("Failed to load %s: no DH parameters found", file)
	}
	return nil
}

// tlsProtocols turns tls-protocols into the version range Go can express; unset is Redis's
// default, TLSv1.2 and TLSv1.3.
func tlsProtocols(v string) (lo, hi uint16, err error) {
	if v == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	versions := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11,
		"tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	for _, p := range strings.Split(v, " ") { // Redis splits on each space: two make an empty name
		ver, ok := versions[strings.ToLower(p)]
		if !ok {
			return 0, 0, errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		if lo == 0 || ver < lo {
			lo = ver
		}
		hi = max(hi, ver)
	}
	return lo, hi, nil
}

// sessionTimeout makes session tickets older than d unusable (tls-session-cache-timeout): each
// ticket carries its issue time beside Go's own state.
func sessionTimeout(cfg *tls.Config, d time.Duration) {
	const tag = "hotkv-issued"
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		ss.Extra = append(ss.Extra, binary.BigEndian.AppendUint64([]byte(tag), uint64(time.Now().Unix())))
		return cfg.EncryptTicket(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := cfg.DecryptTicket(identity, cs)
		if err != nil || ss == nil {
			return nil, err
		}
		for _, e := range ss.Extra {
			if len(e) == len(tag)+8 && string(e[:len(tag)]) == tag {
				issued := time.Unix(int64(binary.BigEndian.Uint64(e[len(tag):])), 0)
				if time.Since(issued) <= d {
					return ss, nil
				}
			}
		}
		return nil, nil // expired or not ours: a full handshake
	}
}

// tlsListenAddrs are the TLS listen addresses: bind's addresses on tls-port (none when it is 0).
func (s *Server) tlsListenAddrs() ([]string, error) {
	s.tls.port = s.cfg.String("tls-port")
	port := int(s.cfg.Int("tls-port"))
	if port == 0 {
		return nil, nil
	}
	return bindAddrs(s.cfg.String("bind"), port)
}

// logTLSError is the transport's report of a failed handshake, as Redis logs it.
func (s *Server) logTLSError(remote net.Addr, err error) {
	s.log.Warn("Error accepting a client connection: "+err.Error(), "addr", remote.String())
}
