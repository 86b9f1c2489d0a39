package strs

// ASCII case folding, as Redis's strcasecmp and tolower do in the "C" locale: only A-Z and a-z
// fold, every other byte compares as itself. Command names, options, CONFIG names, SCAN TYPE and
// glob patterns with nocase all use these.

// Lower folds an ASCII upper-case letter to lower case.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Upper folds an ASCII lower-case letter to upper case.
func Upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// EqualFold reports whether b and s are equal ignoring ASCII case, without allocating.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if b[i] != s[i] && Lower(b[i]) != Lower(s[i]) {
			return false
		}
	}
	return true
}

// HasPrefixFold reports whether b starts with s ignoring ASCII case.
func HasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && EqualFold(b[:len(s)], s)
}

// AppendLower appends b folded to lower case to dst.
func AppendLower(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, Lower(c))
	}
	return dst
}

// AppendUpper appends b folded to upper case to dst.
func AppendUpper(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, Upper(c))
	}
	return dst
}
