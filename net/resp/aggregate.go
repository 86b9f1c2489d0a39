package resp

// AppendArrayLen appends an array header for n elements: "*" n CRLF.
func AppendArrayLen(dst []byte, n int) []byte {
	return appendPrefixed(dst, '*', int64(n))
}

// AppendMapLen appends a map header for n key-value pairs: "%" n in RESP3, a flat array of 2n elements
// in RESP2.
func AppendMapLen(dst []byte, proto, n int) []byte {
	if proto >= 3 {
		return appendPrefixed(dst, '%', int64(n))
	}
	return appendPrefixed(dst, '*', 2*int64(n))
}

// AppendSetLen appends a set header: "~" n in RESP3, an array in RESP2.
func AppendSetLen(dst []byte, proto, n int) []byte {
	if proto >= 3 {
		return appendPrefixed(dst, '~', int64(n))
	}
	return appendPrefixed(dst, '*', int64(n))
}

// AppendPushLen appends a push header (pub/sub messages, invalidations): ">" n in RESP3, an array in
// RESP2.
func AppendPushLen(dst []byte, proto, n int) []byte {
	if proto >= 3 {
		return appendPrefixed(dst, '>', int64(n))
	}
	return appendPrefixed(dst, '*', int64(n))
}

// AppendAttrLen appends an attribute header for n key-value pairs: "|" n CRLF; the attribute's pairs
// and then the reply it describes follow. RESP3 only: RESP2 has no attributes (Redis asserts), so the
// caller must not send one to a RESP2 client.
func AppendAttrLen(dst []byte, n int) []byte {
	return appendPrefixed(dst, '|', int64(n))
}

// Deferred lengths. Some replies learn their element count only after writing the elements (Redis's
// addReplyDeferredLen / setDeferredArrayLen). Remember at := len(dst) before the elements, then call an
// Insert function: it inserts the header at dst[at], moving the elements after it, and gives exactly the
// bytes a known length would have given. Nothing is allocated when dst has room for the header.

// InsertArrayLen inserts an array header for n elements at dst[at].
func InsertArrayLen(dst []byte, at, n int) []byte {
	return insertPrefixed(dst, at, '*', int64(n))
}

// InsertMapLen inserts a map header for n pairs at dst[at] (see AppendMapLen).
func InsertMapLen(dst []byte, at, proto, n int) []byte {
	if proto >= 3 {
		return insertPrefixed(dst, at, '%', int64(n))
	}
	return insertPrefixed(dst, at, '*', 2*int64(n))
}

// InsertSetLen inserts a set header for n elements at dst[at] (see AppendSetLen).
func InsertSetLen(dst []byte, at, proto, n int) []byte {
	if proto >= 3 {
		return insertPrefixed(dst, at, '~', int64(n))
	}
	return insertPrefixed(dst, at, '*', int64(n))
}

func insertPrefixed(dst []byte, at int, prefix byte, n int64) []byte {
	var tmp [24]byte
	h := appendPrefixed(tmp[:0], prefix, n)
	end := len(dst)
	dst = append(dst, h...) // grow by len(h); the bytes are overwritten below
	copy(dst[at+len(h):], dst[at:end])
	copy(dst[at:], h)
	return dst
}
