// Package tlstest makes throwaway certificates for tests: a CA, a server certificate for the
// loopback addresses and a client certificate, all signed by that CA and valid for one day. Keys
// are generated in memory on every call and written only where a test asks (its TempDir); none is
// ever committed.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is one throwaway CA with a server and a client certificate it signed.
type Certs struct {
	CA                   *x509.CertPool
	CAPEM                []byte
	CertPEM, KeyPEM      []byte // server: CN localhost, SANs localhost, 127.0.0.1, ::1
	ClientPEM, ClientKey []byte // client: CN client
	key                  *ecdsa.PrivateKey
}

// Files are Certs written as PEM files.
type Files struct{ CA, Cert, Key, ClientCert, ClientKey string }

// New makes a fresh CA and its two certificates, with name as the CA's common name.
func New(t testing.TB, name string) *Certs {
	t.Helper()
	caKey := newKey(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	c := &Certs{CA: x509.NewCertPool(), CAPEM: certPEM(caDER)}
	c.CA.AddCert(caCert)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) ([]byte, []byte, *ecdsa.PrivateKey) {
		k := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return certPEM(der), keyPEM(t, k), k
	}
	c.CertPEM, c.KeyPEM, c.key = leaf(2, "localhost", x509.ExtKeyUsageServerAuth, true)
	c.ClientPEM, c.ClientKey, _ = leaf(3, "client", x509.ExtKeyUsageClientAuth, false)
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// EncryptedKeyPEM is the server key in the legacy encrypted PEM form (Proc-Type 4,ENCRYPTED,
// AES-256-CBC) that both OpenSSL and HotKV read with tls-key-file-pass.
func (c *Certs) EncryptedKeyPEM(t testing.TB, pass string) []byte {
	der, err := x509.MarshalECPrivateKey(c.key)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the legacy form is the one OpenSSL and Go both still read
	b, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", der, []byte(pass), x509.PEMCipherAES256) //nolint:staticcheck
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(b)
}

// Write puts the PEM files in dir (a test's TempDir).
func (c *Certs) Write(t testing.TB, dir string) Files {
	t.Helper()
	f := Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, "server.crt"),
		Key: filepath.Join(dir, "server.key"), ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey: filepath.Join(dir, "client.key")}
	for path, b := range map[string][]byte{f.CA: c.CAPEM, f.Cert: c.CertPEM, f.Key: c.KeyPEM,
		f.ClientCert: c.ClientPEM, f.ClientKey: c.ClientKey} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// ServerConfig is a server configuration with the server certificate that asks for client
// certificates of the CA when auth is set.
func (c *Certs) ServerConfig(t testing.TB, auth tls.ClientAuthType) *tls.Config {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: c.CA, ClientAuth: auth}
}

// ClientConfig trusts the CA and presents the client certificate when withCert is set.
func (c *Certs) ClientConfig(t testing.TB, withCert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: c.CA, ServerName: "localhost"}
	if withCert {
		pair, err := tls.X509KeyPair(c.ClientPEM, c.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}
