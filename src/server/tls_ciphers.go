package server

import (
	"crypto/tls"
	"errors"
	"strings"
)

// OpenSSL's names for the TLS 1.2 cipher suites crypto/tls implements (IANA names on the right).
// tls-ciphers is an OpenSSL cipher list; HotKV honours the names below, and treats OpenSSL's
// keywords (HIGH, DEFAULT, ECDHE+AESGCM, ...) as Go's default suites: Go has no cipher-string
// language. Exclusions (!NAME, -NAME) remove named suites; excluded keywords change nothing,
// since Go's defaults hold no NULL, anonymous, export, RC4 or 3DES suite.
var opensslCiphers = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"ECDHE-ECDSA-AES128-SHA256":     "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-AES128-SHA256":       "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
	"AES128-SHA256":                 "TLS_RSA_WITH_AES_128_CBC_SHA256",
	"DES-CBC3-SHA":                  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
	"ECDHE-RSA-DES-CBC3-SHA":        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
	"ECDHE-ECDSA-RC4-SHA":           "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
	"ECDHE-RSA-RC4-SHA":             "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
	"RC4-SHA":                       "TLS_RSA_WITH_RC4_128_SHA",
}

// opensslKeywords are the cipher-list words that select groups of suites.
var opensslKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`DEFAULT ALL HIGH MEDIUM LOW COMPLEMENTOFDEFAULT COMPLEMENTOFALL
		aNULL eNULL NULL kRSA aRSA RSA kECDHE kEECDH ECDHE EECDH ECDH aECDSA ECDSA AES AES128 AES256
		AESGCM AESCCM AESCCM8 CHACHA20 SHA SHA1 SHA256 SHA384 TLSv1.2 TLSv1.0 TLSv1 SSLv3 3DES DES RC4
		MD5 PSK SRP DH DHE EDH kDHE kEDH ADH AECDH CAMELLIA ARIA SEED IDEA DSS aDSS EXP EXPORT kPSK`) {
		opensslKeywords[k] = true
	}
}

// tlsCiphers turns tls-ciphers into Go's TLS 1.2 suites; nil (unset) is Go's default. A list
// that selects nothing fails, as OpenSSL's SSL_CTX_set_cipher_list does.
func tlsCiphers(v string) ([]uint16, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	ids := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		ids[s.Name] = s.ID
	}
	for _, s := range tls.InsecureCipherSuites() {
		ids[s.Name] = s.ID
	}
	var out []uint16
	var keyword bool
	drop := map[uint16]bool{}
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		neg := strings.HasPrefix(tok, "!") || strings.HasPrefix(tok, "-")
		name := strings.TrimLeft(tok, "!-+")
		if id, ok := ids[opensslCiphers[name]]; ok {
			if neg {
				drop[id] = true
			} else {
				out = append(out, id)
			}
			continue
		}
		if !neg && isCipherKeyword(name) {
			keyword = true
		}
	}
	if keyword {
		for _, s := range tls.CipherSuites() {
			out = append(out, s.ID)
		}
	}
	kept := out[:0]
	seen := map[uint16]bool{}
	for _, id := range out {
		if !drop[id] && !seen[id] {
			seen[id] = true
			kept = append(kept, id)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("Failed to configure ciphers: " + v)
	}
	return kept, nil
}

// isCipherKeyword reports whether tok is a keyword, a '+' combination of keywords, or a
// directive such as @STRENGTH or @SECLEVEL=2.
func isCipherKeyword(tok string) bool {
	if strings.HasPrefix(tok, "@") {
		return false // selects nothing by itself
	}
	for _, p := range strings.Split(tok, "+") {
		if !opensslKeywords[p] {
			return false
		}
	}
	return tok != ""
}

// tls13Suites are the TLS 1.3 suite names OpenSSL knows; Go implements the first three and always
// offers them, in its own order, so tls-ciphersuites is checked but cannot narrow them.
var tls13Suites = map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true,
	"TLS_CHACHA20_POLY1305_SHA256": true, "TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_CCM_8_SHA256": true}

// tlsCipherSuites13 checks tls-ciphersuites as OpenSSL's SSL_CTX_set_ciphersuites does: every
// name must be a TLS 1.3 suite.
func tlsCipherSuites13(v string) error {
	if v == "" {
		return nil
	}
	for _, name := range strings.Split(v, ":") {
		if !tls13Suites[name] {
			return errors.New("Failed to configure ciphersuites: " + v)
		}
	}
	return nil
}
